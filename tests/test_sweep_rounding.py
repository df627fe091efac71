"""ringsim sweep rounds a size that is not whole elements down as nccl-tests and predict do,
and says so; one that rounds to 0 B is an empty call."""

import json

from ringsim.cli import main


def _out(capsys, *argv: str) -> str:
    assert main(["sweep", *argv]) == 0
    return capsys.readouterr().out


def _json(capsys, *argv: str) -> list[dict]:
    return [json.loads(line) for line in _out(capsys, *argv, "--json").splitlines()
            if json.loads(line)["type"] == "size"]


def _first_column(out: str) -> list[str]:
    """The size column of the first table: its rows run from under the rule to a blank line."""
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("─")) + 1
    end = lines.index("", start)
    return [line.split()[0] for line in lines[start:end]]


def test_a_size_that_is_not_whole_elements_is_rounded_down_and_named(capsys):
    out = _out(capsys, "--dtype", "float64", "--sizes", "4,8,1001", "-g", "8", "--no-plot")
    words = " ".join(out.split())
    assert ("2 sizes that are not whole float64 elements (8 B each) were rounded down, as "
            "nccl-tests does (count = size / wordSize): 4 B → 0 B, 1,001 B → 1,000 B.") in words
    assert _first_column(out) == ["0B", "8B", "1,000B"]
    assert "(at 0 B every algorithm takes no time)" in words


def test_whole_sizes_say_nothing_of_rounding(capsys):
    assert "rounded" not in _out(capsys, "--sizes", "1KiB..4KiB", "--no-plot")


def test_the_rounded_size_is_priced_as_the_size_it_rounds_to(capsys):
    rounded = _json(capsys, "--sizes", "1001,4099", "-g", "8")
    whole = _json(capsys, "--sizes", "1000,4096", "-g", "8")
    assert [(p["bytes"], p["requested_bytes"], p["elements"]) for p in rounded] == [
        (1000, 1001, 250), (4096, 4099, 1024)]
    assert [p["requested_bytes"] for p in whole] == [1000, 4096]
    for a, b in zip(rounded, whole):
        assert a["algorithms"] == b["algorithms"] and a["nccl"] == b["nccl"] and a["best"] == b["best"]


def test_sweep_rounds_as_predict_does(capsys):
    sizes = "1,3,5,1001,1023,65537,1048575"
    for dtype, nccl in (("float32", "float"), ("float16", "half"), ("float64", "double"),
                        ("int8", "int8")):
        swept = [p["bytes"] for p in _json(capsys, "--sizes", sizes, "--dtype", dtype, "-g", "8")]
        assert main(["predict", "--sizes", sizes, "--dtype", nccl, "-g", "8", "--json"]) == 0
        predicted = [json.loads(line)["bytes"] for line in capsys.readouterr().out.splitlines()]
        assert swept == predicted, dtype


def test_sizes_that_all_round_to_nothing_are_empty_calls(capsys):
    out = _out(capsys, "--sizes", "1..3", "--no-plot")
    words = " ".join(out.split())
    assert "2 sizes that are not whole float32 elements (4 B each) were rounded down" in words
    assert "1 B → 0 B, 2 B → 0 B." in words
    assert out.strip().splitlines()[-1] == (
        "No crossover: every size swept is 0 B, an empty call, which takes every algorithm no time.")
    points = _json(capsys, "--sizes", "1..3")
    assert [(p["bytes"], p["requested_bytes"], p["nccl"]) for p in points] == [(0, 1, None),
                                                                               (0, 2, None)]


def test_the_help_says_sizes_are_rounded(capsys):
    try:
        main(["sweep", "--help"])
    except SystemExit as done:
        assert done.code == 0
    words = " ".join(capsys.readouterr().out.split())
    assert "rounded down to whole elements as nccl-tests and predict do" in words
    assert "a size that rounds to 0 B is an empty call" in words



def test_an_empty_call_has_no_fastest_algorithm(capsys):
    from ringsim.cli import main
    assert main(["sweep", "--sizes", "1,2,1KiB", "-g", "8", "--json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(r["bytes"], r["requested_bytes"], r["best"]) for r in rows] == [
        (0, 1, None), (0, 2, None), (1024, 1024, "recursive-doubling")]
    assert main(["sweep", "--sizes", "1,1KiB", "-g", "8", "--no-plot"]) == 0
    empty = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("  0B"))
    assert empty.split()[-4:] == ["—", "—", "—", "—"]


def test_predict_says_a_listed_size_is_printed_once_as_asked(capsys):
    from ringsim.cli import main
    assert main(["predict", "--sizes", "1002,1001,1000", "-g", "8"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "# the sizes asked for are printed in increasing order, each once" in out
    assert "1,001 B → 1,000 B, 1,002 B → 1,000 B" in out


def test_sizes_too_close_for_two_labels_get_one(tmp_path, capsys):
    import re

    from ringsim.cli import main
    path = tmp_path / "s.svg"
    assert main(["sweep", "--sizes", "1001,1KiB,6", "-g", "8", "--svg", str(path), "--no-plot"]) == 0
    labels = re.findall(r'<text x="([\d.]+)" y="\d+" text-anchor="middle">([^<]*B)</text>',
                        path.read_text())
    assert [label for _, label in labels] == ["4B", "1,000B"]  # 1KiB sits 2 px from 1,000B
    assert path.read_text().count('stroke="#e0e0e0"/>') >= 3  # every size keeps its grid line
