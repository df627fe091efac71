"""The walkthrough, the comparison table and the benchmark, as a user runs them."""

import json
import subprocess
import sys

import pytest

from ringsim.cli import main


def run(argv, capsys):
    status = main(argv)
    out = capsys.readouterr()
    return status, out.out, out.err


def test_walk_defaults_to_the_seed(capsys):
    status, out, _ = run(["walk"], capsys)
    assert status == 0
    assert out.startswith("Ring all-reduce · 4 GPUs · 8 elements per GPU\n")
    lines = [line.strip() for line in out.splitlines()]
    assert lines.index("Reduce-scatter · iteration 1 of 3") < lines.index(
        "GPU1 sends a₁ to GPU2, where it is added to b₁") < lines.index(
        "Reduce-scatter · iteration 2 of 3") < lines.index(
        "GPU1 sends (d₄+a₄) to GPU2, where it is added to b₄") < lines.index("All-gather")
    assert "GPU1 sends (a₂+b₂+c₂+d₂) to GPU2, where it replaces b₂" in lines
    assert "Every GPU holds the sum: yes" in lines
    assert any(line.startswith("elements moved") and line.endswith("2·(G−1)·N = 48")
               and " 48 " in line for line in lines)


def test_walk_values_shows_real_sums(capsys):
    status, out, _ = run(["walk", "--values", "--gpus", "2", "--elements", "2"], capsys)
    assert status == 0
    start = out.index("Start")
    gpu_lines = [line.split(":")[1].split("|") for line in out[start:].splitlines()
                 if line.strip().startswith("GPU") and ":" in line and "sends" not in line]
    first = [[int(v) for v in cell.split()] for cell in gpu_lines[0]]
    second = [[int(v) for v in cell.split()] for cell in gpu_lines[1]]
    final = [[int(v) for v in cell.split()] for cell in gpu_lines[-1]]
    assert final == [[a[0] + b[0]] for a, b in zip(first, second)]


def test_walk_json_lines(capsys):
    status, out, _ = run(["walk", "--json"], capsys)
    records = [json.loads(line) for line in out.splitlines()]
    steps, summary = records[:-1], records[-1]
    assert status == 0 and len(steps) == 6
    first = steps[0]
    assert first["type"] == "step" and first["phase"] == "Reduce-scatter" and first["iteration"] == 1
    assert first["transfers"][0] == {
        "src": 1, "dst": 2, "segment": 1, "op": "reduce", "elements": 2, "label": "a₁",
        "sentence": "GPU1 sends a₁ to GPU2, where it is added to b₁"}
    assert steps[1]["transfers"][0]["label"] == "d₄+a₄"
    assert steps[3]["transfers"][0]["op"] == "copy"
    assert summary == {"type": "summary", "algorithm": "ring", "gpus": 4, "elements_per_gpu": 8,
                       "total_elements": 48, "formula_total": 48, "sent": [12] * 4,
                       "received": [12] * 4, "steps": 6, "messages": 24, "busiest_gpu": 1,
                       "correct": True}


@pytest.mark.parametrize("algorithm, total, steps, messages", [
    ("naive", 5 * 4 * 7, 1, 20), ("master", 2 * 4 * 7, 2, 8)])
def test_walk_json_other_algorithms(capsys, algorithm, total, steps, messages):
    _, out, _ = run(["walk", "--json", "-a", algorithm, "-g", "5", "-n", "7"], capsys)
    summary = json.loads(out.splitlines()[-1])
    assert (summary["total_elements"], summary["steps"], summary["messages"]) == (total, steps, messages)
    assert summary["formula_total"] == total and summary["correct"] is True


def test_compare_answers_the_interview_at_scale(capsys):
    status, out, _ = run(["compare", "--gpus", "1000", "--elements", "7000000000", "--json"], capsys)
    rows = {r["algorithm"]: r for r in map(json.loads, out.splitlines())}
    assert status == 0
    assert rows["ring"]["total_elements"] == rows["ring"]["formula_total"] == 2 * 999 * 7_000_000_000
    assert rows["ring"]["busiest_sent"] == 2 * 999 * 7_000_000_000 // 1000
    assert rows["master"]["busiest_received"] == 999 * 7_000_000_000
    assert rows["naive"]["total_elements"] == 1000 * 999 * 7_000_000_000
    assert rows["ring"]["steps"] == 1998 and rows["master"]["steps"] == 2


def test_compare_table(capsys):
    status, out, _ = run(["compare"], capsys)
    assert status == 0
    assert "Ring all-reduce" in out and "GPU1: 12 / 12" in out and "GPU1: 24 / 24" in out
    assert "G·(G−1)·N = 96" in out
    assert out.strip().splitlines()[-1].endswith("the ring's load per GPU is 2·(G−1)·N/G = 12.")


@pytest.mark.parametrize("gpus, elements, textbook, exact", [
    (3, 8, "10.67", "2·(N − ⌊N/G⌋) − 1 = 11"), (5, 12, "19.20", "2·(N − ⌊N/G⌋) = 20")])
def test_compare_gives_the_textbook_formula_its_own_value(capsys, gpus, elements, textbook, exact):
    # Where G does not divide N, 2·(G−1)·N/G is not what the busiest GPU sends: its value
    # and the exact expression's stand side by side, as walk prints them.
    status, out, _ = run(["compare", "-g", str(gpus), "-n", str(elements)], capsys)
    assert status == 0
    assert out.strip().splitlines()[-1].endswith(
        f"what the ring's busiest GPU sends: 2·(G−1)·N/G = {textbook}; exactly {exact}.")


def test_bench_measures_every_algorithm_but_those_that_send_whole_gradients():
    # The efficiency cases come from the registry: an algorithm added to it is benchmarked
    # too, unless its busiest GPU sends a whole gradient to each of the others.
    from ringsim.algorithms import ALGORITHMS, DEFAULT_ALGORITHM, make_plan
    from ringsim.core.layout import Layout
    from ringsim.execute.ledger import measure
    from ringsim.studies.bench import OTHER_ALGORITHMS
    assert list(OTHER_ALGORITHMS) == [n for n in ALGORITHMS if n in OTHER_ALGORITHMS]
    assert DEFAULT_ALGORITHM not in OTHER_ALGORITHMS
    assert {"nccl-tree", "nvls"} <= set(OTHER_ALGORITHMS)
    gpus, elements = 8, 64
    for name in ALGORITHMS:
        if name == DEFAULT_ALGORITHM:
            continue
        plan = make_plan(name, gpus)
        busiest = int(measure(plan, Layout(plan.segments, elements)).sent.max())
        assert (name in OTHER_ALGORITHMS) == (busiest < (gpus - 1) * elements), name
    assert set(ALGORITHMS) - set(OTHER_ALGORITHMS) == {DEFAULT_ALGORITHM, "master", "naive"}


def test_bench_help_says_what_its_rows_are():
    """The help said "Each figure is a ratio of two rates measured in the same run", but most
    rows are a time, a peak memory or a file size over a budget (plan building, compare,
    sweep, predict, timeline, overlap, figures); only the efficiency rows divide two rates."""
    proc = subprocess.run([sys.executable, "-m", "ringsim", "bench", "--help"],
                          capture_output=True, text=True, check=True)
    text = " ".join(proc.stdout.split())
    assert "Each figure is a ratio of two rates" not in text
    assert "over NumPy's own copy bandwidth measured in the same run" in text
    assert "a time, a peak memory or a file size over its budget (lower is better)" in text
    assert "A full run takes minutes; --quick, seconds." in text


@pytest.mark.slow
def test_bench_quick_json(capsys):
    status, out, _ = run(["bench", "--quick", "--json", "--backend", "numpy"], capsys)
    records = [json.loads(line) for line in out.splitlines()]
    assert status == 0
    from ringsim import ALGORITHMS
    from ringsim.studies.bench import OTHER_ALGORITHMS
    assert [r["case"] for r in records] == ["ring-efficiency", "ring-scale",
                                            *(f"{n}-efficiency" for n in OTHER_ALGORITHMS),
                                            *(f"{n}-plan" for n in ALGORITHMS), "ring-peak-memory",
                                            "compare-time-1M", "compare-memory-1M",
                                            "compare-time-1M-dgx-h100", "sweep-1024", "predict-1M",
                                            "timeline-ring", "overlap-7b",
                                            *(f"figure-{k}-4" for k in ("svg", "png", "pdf", "gif", "html")),
                                            "figure-svg-16", "figure-png-16", "figure-gif-size"]
    for r in records:
        assert {"case", "gpus", "elements", "seconds", "ratio"} <= set(r)
        assert r["ratio"] > 0
    # A quick run scales to 128 GPUs, and draws the animations for the 4-GPU example only.
    assert records[0]["gpus"] == 8 and records[1]["gpus"] == 128
    assert next(r for r in records if r["case"] == "ring-peak-memory")["gpus"] == 128
    assert "G=128 over" in records[1]["meaning"]
    gif = next(r for r in records if r["case"] == "figure-gif-4")
    assert gif["meaning"].startswith("the 4-GPU example's .gif (ring, 7 pictures")
    # The same records as text: a quick run claims no verdict on the targets.
    from ringsim.cli.bench import text_lines
    text = "\n".join(text_lines(records, quick=True))
    assert all(r["quick"] is True for r in records)
    assert "NOT met" not in text and " met" not in text
    # said once, above the rows, not at the end of each
    assert text.count("not comparable with the targets") == 1
    assert text.splitlines()[0].startswith("quick run")
    assert "met" in "\n".join(text_lines(records, quick=False))


def test_help_on_every_command():
    for command in ["walk", "compare", "bench"]:
        proc = subprocess.run([sys.executable, "-m", "ringsim", command, "--help"],
                              capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0 and "usage: ringsim " + command in proc.stdout


def test_compare_time_on_four_dgx_nodes(capsys):
    status, out, _ = run(["compare", "--time", "--topology", "dgx-h100", "--nodes", "4",
                          "--size", "1GiB", "--json"], capsys)
    # the textbook rows at their default options (the rails ring and NCCL's pick are extra rows)
    rows = {r["algorithm"]: r for r in map(json.loads, out.splitlines())
            if r.get("model") == "textbook" and not r["options"]}
    assert status == 0
    ring = rows["ring"]
    assert ring["gpus"] == 32 and ring["elements"] == 2**28 and ring["bytes_per_gpu"] == 2**30
    assert {"seconds", "algbw", "busbw", "bottleneck", "rank"} <= set(ring)
    assert ring["algbw"] == pytest.approx(2**30 / ring["seconds"])
    assert ring["busbw"] == pytest.approx(ring["algbw"] * 2 * 31 / 32)
    # Ranks follow the modelled times (halving-doubling and the 2-D ring keep their big
    # pieces on NVLink, so on two levels they can beat the ring, whose every step crosses).
    textbook = [r for r in map(json.loads, out.splitlines())
                if r.get("model") == "textbook" and r["seconds"] is not None]  # not NVLS: no switch adds
    assert ring["rank"] == 1 + sum(r["seconds"] < ring["seconds"] for r in textbook)
    assert "InfiniBand" in ring["bottleneck"]
    # The network's 50 GB/s bounds busbw; α and γ keep the ring a little below it.
    assert 45e9 < ring["busbw"] < 50e9
    assert rows["ring"]["total_elements"] == 2 * 31 * 2**28  # today's fields are kept


def test_compare_time_table(capsys):
    status, out, _ = run(["compare", "--time", "--gpus", "8", "--size", "1MiB"], capsys)
    assert status == 0
    assert "Modelled time on flat · 8 GPUs" in out and "Flat (textbook)" in out and "busbw = algbw·2(G−1)/G" in out
    lines = out.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("algorithm") and " time " in line)
    from ringsim.studies.compare import compare
    from ringsim.cost.model import CostModel
    timed = compare(8, 2**18, CostModel.of("flat"))
    fastest = next(r.title for r in timed if r.timing.rank == 1)
    assert lines[header + 2].startswith(fastest)  # rows in rank order


def test_compare_answers_a_million_gpus_with_exact_integers(capsys):
    status, out, _ = run(["compare", "--gpus", "1000", "--elements", "10000000000000000",
                          "--json"], capsys)
    rows = {r["algorithm"]: r for r in map(json.loads, out.splitlines())}
    assert rows["naive"]["total_elements"] == 1000 * 999 * 10**16
    status, out, _ = run(["compare", "--gpus", "1000", "--elements", "10000000000000000"], capsys)
    assert "The master sends 500× what the ring's busiest GPU sends" in out
    status, out, _ = run(["compare", "--gpus", "1000000", "--elements", "7000000000", "--time",
                          "--topology", "dgx-h100", "--json"], capsys)
    rows = {r["algorithm"]: r for r in map(json.loads, out.splitlines())
            if r.get("model") == "textbook"}
    assert status == 0 and rows["ring"]["steps"] == 2 * 999_999
    timed = [r for r in rows.values() if "rank" in r]
    assert sorted(r["rank"] for r in timed) == list(range(1, len(timed) + 1))
    assert [r["algorithm"] for r in rows.values() if "rank" not in r] == ["nvls"]  # no switch adds
    assert all(r["busiest_gpu"] is not None for r in rows.values())


@pytest.mark.parametrize("argv, words", [
    (["--size", "1GiB", "--elements", "4"], "give --size or --elements, not both"),
    (["--size", "1001"], "not a whole number of float32 elements"),
    (["--size", "12 parsecs"], "--size: unknown unit"),
    (["--alpha", "5"], "needs a unit"),
    (["--bandwidth", "up=5GB/s"], "must be inside or across"),
    (["--nodes", "2"], "topology flat has no nodes"),
    (["--topology", "pcie-gen4", "--nodes", "2"], "has no [across] level (the link across nodes)"),
    (["--topology", "dgx-h100", "--nodes", "2", "--gpus", "8"], "disagrees with --nodes 2"),
])
def test_compare_time_errors_are_one_line(capsys, argv, words):
    status, _, err = run(["compare", "--time", *argv], capsys)
    assert status == 2 and words in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("columns", ["80", None])
def test_diagnose_plot_labels_busbw_at_round_decades(columns, capsys, monkeypatch):
    # Left to plotext, a log axis reads 460.7180, 36.3129, 0.0001: values nobody rounds in
    # their head. The y labels are powers of ten with their unit, at 80 columns and in a pipe.
    pytest.importorskip("plotext")
    import re
    from pathlib import Path
    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    paste = Path(__file__).parent / "data" / "nccl_outputs" / "a3mega_h100_2node_all_reduce.txt"
    status, out, _ = run(["diagnose", str(paste)], capsys)
    assert status == 0
    lines = out.splitlines()
    top = next(i for i, line in enumerate(lines) if "┌" in line)
    bottom = next(i for i, line in enumerate(lines) if "└" in line)
    assert lines[top - 1].strip() == "busbw over size, 16 GPUs, dgx-h100"
    labels = [line.split("┤")[0].strip() for line in lines[top:bottom + 1] if "┤" in line]
    # measured busbw here runs from about 100 kB/s at 8 B to about 400 GB/s at 8 GiB
    assert labels == ["1 TB/s", "100 GB/s", "10 GB/s", "1 GB/s", "100 MB/s", "10 MB/s",
                      "1 MB/s", "100 kB/s"]
    assert all(re.fullmatch(r"1(00?)? [kMGT]B/s", label) for label in labels)
    if columns is not None:
        assert max(len(line) for line in lines[top - 1:bottom + 2]) <= 80
