"""ringsim sweep: sizes, best algorithm per size, crossovers found exactly, table, plot, SVG."""

import json
import xml.etree.ElementTree as ET

import re

import pytest

from ringsim.cli import main
from ringsim.algorithms.timing import estimate
from ringsim.cost.model import CostModel
from ringsim.core.errors import RingsimError
from ringsim.studies.svgplot import loglog_svg
from ringsim.studies.sweep import parse_sizes, sweep
from ringsim.cost.topology import load


def test_size_ranges():
    sizes = parse_sizes("1KiB..8GiB")
    assert len(sizes) == 24 and sizes[0] == 1024 and sizes[-1] == 8 * 2**30
    assert parse_sizes("1KiB..64KiB:x4") == [1024, 4096, 16384, 65536]
    assert parse_sizes("1MiB,1KiB") == [1024, 2**20]
    assert parse_sizes("1MiB..4MiB:+1MiB") == [2**20, 2 * 2**20, 3 * 2**20, 4 * 2**20]
    assert parse_sizes("10..40:+16") == [10, 26]  # the end is a row only if a step lands on it
    for bad, words in (("8GiB..1KiB", "must go up"), ("1KiB..8GiB:x1", "at least 2"),
                       (",".join(map(str, range(1, 300))), "at most 200 sizes"), ("", "give a range")):
        with pytest.raises(RingsimError, match=words):
            parse_sizes(bad)


def test_crossover_is_exact_to_the_element():
    model = CostModel(load("dgx-h100"), 4)
    result = sweep(64, parse_sizes("1KiB..8GiB"), model)
    # Every algorithm is timed: latency-bound ones win small sizes, bandwidth-bound ones large.
    assert result.points[0].best != result.points[-1].best and result.crossovers
    for cross in result.crossovers:
        n = cross.nbytes // 4
        times = lambda n: {a: estimate(result.algorithm(a), 64, n, model, **result.options(a)).seconds  # noqa
                           for a in (cross.before, cross.after)}
        before, at = times(n - 1), times(n)
        assert before[cross.before] <= before[cross.after] and at[cross.after] < at[cross.before]


def test_sweep_cli_table_json_and_svg(tmp_path, capsys):
    svg = tmp_path / "sweep.svg"
    assert main(["sweep", "--gpus", "16", "--sizes", "1KiB..1GiB:x8", "--svg", str(svg),
                 "--no-plot"]) == 0
    out = capsys.readouterr().out
    assert "fastest" in out and "Crossover: " in out
    root = ET.parse(svg).getroot()
    lines = root.findall("{http://www.w3.org/2000/svg}polyline")
    from ringsim.algorithms import ALGORITHMS
    # Every algorithm the flat machine can run: NVLS needs a switch that adds, its one forwards.
    assert [l.get("data-series") for l in lines] == ["NCCL's model"] + [
        spec.title for spec in ALGORITHMS.values() if not spec.unavailable(load("flat"), 16)]
    xs = [float(p.split(",")[0]) for p in lines[0].get("points").split()]
    assert len(xs) == 7 and xs == sorted(xs)
    assert main(["sweep", "--gpus", "16", "--sizes", "1KiB..1GiB:x8", "--json"]) == 0
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["type"] for r in records].count("size") == 7
    sizes = [r for r in records if r["type"] == "size"]
    # On one flat level halving-doubling has the ring's bandwidth terms in 2·lg G steps
    # instead of 2·(G−1) (Thakur, Rabenseifner & Gropp 2005): at 16 GPUs it wins large sizes.
    assert records[-1]["type"] == "crossover" and records[-1]["after"] == "halving-doubling"
    assert len(sizes) == 7
    assert {"seconds", "algbw", "busbw", "bottleneck"} <= set(records[0]["algorithms"]["ring"])


def test_terminal_plot_is_drawn_by_plotext(capsys):
    pytest.importorskip("plotext")
    assert main(["sweep", "--gpus", "8", "--sizes", "1KiB..1GiB:x4"]) == 0
    out = capsys.readouterr().out
    assert "All-reduce modelled time, 8 GPUs, flat" in out and "bytes per GPU" in out
    assert "\x1b[" not in out  # not a terminal: no colour codes
    from ringsim.cli._plot import MARKERS
    lines = out.splitlines()
    top = next(i for i, line in enumerate(lines) if "┌" in line)
    bottom = next(i for i, line in enumerate(lines) if "└" in line)
    plot = "\n".join(lines[top:bottom + 1])
    assert sum(marker in plot for marker in MARKERS[:9]) >= 5  # one character per algorithm


ROUND = re.compile(r"(1|10|100|1,000) (ns|µs|ms|s)|(1|10|100) (kB|MB|GB|TB)/s")


@pytest.mark.parametrize("argv", [[], ["--plot", "busbw"], ["--topology", "dgx-h100", "-g", "16"]])
def test_terminal_plot_labels_round_values_and_keeps_its_legend_outside(argv, capsys):
    pytest.importorskip("plotext")
    assert main(["sweep", *argv]) == 0
    lines = capsys.readouterr().out.splitlines()
    top = next(i for i, line in enumerate(lines) if "┌" in line)
    bottom = next(i for i, line in enumerate(lines) if "└" in line)
    labels = [line.split("┤")[0].strip() for line in lines[top:bottom + 1] if "┤" in line]
    assert len(labels) >= 3 and all(ROUND.fullmatch(label) for label in labels), labels
    # Every algorithm the machine can run: neither sweep's switch adds, so NVLS is left out.
    names = [spec.title for spec in __import__("ringsim").algorithms.ALGORITHMS.values()
             if spec.name != "nvls"]
    inside = "\n".join(lines[top:bottom + 1])
    below = "\n".join(lines[bottom + 1:])
    assert not any(name in inside for name in names)  # the legend covers no curve
    assert all(name in below for name in names)


def test_svg_legend_fits_and_labels_are_round(tmp_path):
    svg = tmp_path / "sweep.svg"
    assert main(["sweep", "--svg", str(svg), "--no-plot"]) == 0
    root = ET.parse(svg).getroot()
    ns = "{http://www.w3.org/2000/svg}"
    width = float(root.get("width"))
    texts = root.findall(f"{ns}text")
    legend = [t for t in texts if t.text and t.text.startswith("Halving-doubling (Rabenseifner)")]
    assert legend, "the longest name is written whole"
    from ringsim.studies.svgplot import CHAR_WIDTH
    for t in texts:
        if t.get("text-anchor") is None:  # legend names run rightwards from x
            assert float(t.get("x")) + len(t.text) * CHAR_WIDTH <= width, (t.text, width)
    ylabels = [t.text for t in texts if t.get("text-anchor") == "end"]
    assert ylabels and all(ROUND.fullmatch(label) for label in ylabels), ylabels


def test_sweep_errors(tmp_path, capsys):
    assert main(["sweep", "--svg", str(tmp_path)]) == 2
    assert "is a folder" in capsys.readouterr().err
    assert main(["sweep", "--svg", str(tmp_path / "no" / "x.svg")]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert not (tmp_path / "no").exists()
    # SVG text in a file named .png would not open as a picture: refused before any work.
    assert main(["sweep", "--svg", str(tmp_path / "out.png"), "--no-plot"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["ringsim sweep: error: --svg writes SVG text: the file name must end in .svg, "
                   "not 'out.png'"]
    assert not (tmp_path / "out.png").exists()
    # One value given twice is refused, not the last kept silently.
    assert main(["sweep", "--sizes", "1KiB..8GiB", "--sizes", "4,8"]) == 2
    assert capsys.readouterr().err == "ringsim sweep: error: --sizes is given twice: give it once\n"


def test_svg_writer_maps_decades_linearly():
    text = loglog_svg("t", "x", "y", {"a": [(1.0, 1.0), (10.0, 10.0), (100.0, 100.0)]},
                      [(1.0, "1"), (100.0, "100")])
    points = ET.fromstring(text).find("{http://www.w3.org/2000/svg}polyline").get("points")
    (x1, y1), (x2, y2), (x3, y3) = [tuple(map(float, p.split(","))) for p in points.split()]
    assert x2 - x1 == pytest.approx(x3 - x2) and y1 - y2 == pytest.approx(y2 - y3) and y3 < y1
    with pytest.raises(ValueError):
        loglog_svg("t", "x", "y", {"a": [(0.0, 1.0)]}, [])


def test_without_plotext_the_table_and_one_line(monkeypatch, capsys):
    monkeypatch.setitem(__import__("sys").modules, "plotext", None)  # import plotext fails
    assert main(["sweep", "--gpus", "8", "--sizes", "1KiB..1MiB:x32"]) == 0
    out = capsys.readouterr().out
    assert "fastest" in out and out.strip().splitlines()[-1] == (
        "(no plot: install plotext, e.g. pip install '.[plot]' from a clone of ringsim)")


# 12 series: NCCL's model, every algorithm but NVLS (no switch here adds), and the ring as
# NCCL lays out its channels on the two nodes (one ring per NIC).
EVERY_SERIES = ["sweep", "--topology", "dgx-h100", "--nodes", "2", "--sizes", "1KiB..1GiB:x16"]
RAILS_SERIES = "Ring all-reduce (ring order rails:8)"


def _series_names(every: bool = False) -> list[str]:
    from ringsim.algorithms import ALGORITHMS
    return ["NCCL's model"] + [spec.title for spec in ALGORITHMS.values()
                               if every or spec.name != "nvls"] + [RAILS_SERIES]


def test_every_terminal_series_has_its_own_marker_in_unicode_and_ascii(capsys):
    pytest.importorskip("plotext")
    from ringsim.cli._plot import MARKERS
    from ringsim.core.textout import ascii_form
    # Any sweep: more markers than series, and none two alike once written in ASCII.
    assert len(MARKERS) >= len(_series_names(every=True))
    assert len({ascii_form(m) for m in MARKERS}) == len(MARKERS)
    assert main(EVERY_SERIES) == 0
    out = capsys.readouterr().out
    legend = out[out.rindex("bytes per GPU"):]
    for text in (out, ascii_form(out)):
        shown = ascii_form(legend) if text is not out else legend
        markers = [re.search(rf"(\S) {re.escape(name)}", shown).group(1)
                   for name in _series_names()]
        assert len(set(markers)) == len(markers) == 12, markers


def test_every_svg_series_has_its_own_colour_and_dash(tmp_path):
    from ringsim.studies.svgplot import style
    assert len({style(n) for n in range(40)}) == 40 >= len(_series_names(every=True))
    svg = tmp_path / "sweep.svg"
    assert main(EVERY_SERIES + ["--svg", str(svg), "--no-plot"]) == 0
    ns = "{http://www.w3.org/2000/svg}"
    root = ET.parse(svg).getroot()
    lines = root.findall(f"{ns}polyline")
    drawn = [(l.get("stroke"), l.get("stroke-dasharray")) for l in lines]
    assert [l.get("data-series") for l in lines] == _series_names()
    assert len(set(drawn)) == len(drawn) == 12, drawn
    # The legend draws each series' stroke as its line does.
    keys = [(l.get("stroke"), l.get("stroke-dasharray")) for l in root.findall(f"{ns}line")
            if l.get("stroke-width") == "3"]
    assert keys == drawn


def test_nccls_model_has_no_time_for_an_empty_call(capsys):
    # NCCL discards a call of 0 elements before it chooses anything (src/enqueue.cc,
    # taskAppend), so the sweep's NCCL column is empty there, as predict's row is.
    result = sweep(8, [0, 256])
    assert result.nccl[0] is None and result.nccl[1] is not None
    assert result.nccl_busbw(0) is None and result.nccl_busbw(1) > 0
    assert main(["sweep", "-g", "8", "--sizes", "0,1KiB", "--no-plot"]) == 0
    zero = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("  0B"))
    assert zero.split()[-2:] == ["—", "—"]
    assert main(["sweep", "-g", "8", "--sizes", "0,1KiB", "--json"]) == 0
    first = json.loads(capsys.readouterr().out.splitlines()[0])
    assert first["nccl"] is None and "discards" in first["nccl_note"]


@pytest.mark.parametrize("sizes, words", [
    ("8..8G:x1.01", "the factor after :x must be a whole number of at least 2 (nccl-tests' -f), got '1.01'"),
    ("8..8G:x1", "the factor after :x must be a whole number of at least 2 (nccl-tests' -f), got '1'"),
    ("1..1e30:x2", "sizes: NCCL's model prices 0 B to 1PiB per GPU, got 6.34e+29 B (the largest "
                   "size the range reaches)"),
    ("2PiB", "sizes: NCCL's model prices 0 B to 1PiB per GPU, got 2PiB")])
def test_predict_names_what_is_wrong_with_its_sizes(capsys, sizes, words):
    assert main(["predict", "--sizes", sizes]) == 2
    err = capsys.readouterr().err
    assert words in err and err.count("\n") == 1


# --- the ring as NCCL lays out its channels (one ring per NIC) beside the one ring ----------

DGX = CostModel(load("dgx-h100"), 4)  # what --topology dgx-h100 builds: float32


def _rails_row(gpus: int, elements: int):
    from ringsim.studies.compare import compare
    (row,) = [r for r in compare(gpus, elements, DGX) if r.as_nccl]
    return row


def test_on_eight_dgx_nodes_the_fastest_at_1gib_is_the_rails_ring_compare_prices():
    result = sweep(64, parse_sizes("1KiB..8GiB"), DGX)
    top = next(p for p in result.points if p.nbytes == 2**30)
    row = _rails_row(64, top.elements)
    assert result.layouts == (("ring", {"ring_order": "rails:8"}),) and top.best == "ring rails:8"
    # The same time compare --time ranks first, to the last bit, and the same label.
    assert top.estimates[top.best].seconds == row.timing.estimate.seconds
    assert row.timing.rank == 1 and result.title(top.best) == row.label
    assert result.algorithm(top.best) == "ring" and result.options(top.best)["ring_order"] == "rails:8"
    # It beats the textbook's best schedule there, which the table still prices.
    assert top.estimates[top.best].seconds < top.estimates["halving-doubling"].seconds


def test_the_sweep_table_names_the_rails_ring_fastest_with_compares_time(capsys):
    from ringsim.core.units import format_bandwidth, format_seconds
    assert main(["sweep", "--topology", "dgx-h100", "--nodes", "8", "--no-plot"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    header = next(line for line in lines if line.lstrip().startswith("size") and "fastest" in line)
    heads = re.split(r"\s{2,}", header.strip())
    assert heads[:3] == ["size", "ring", "ring rails:8"]  # beside the one ring it lays out otherwise
    row = next(line for line in lines if line.lstrip().startswith("1GiB "))
    cells = re.split(r"\s{2,}", row.strip())
    compared = _rails_row(64, 2**28).timing
    assert cells[heads.index("fastest textbook")] == "ring rails:8"
    assert cells[heads.index("ring rails:8")] == format_seconds(compared.estimate.seconds) == "5.92 ms"
    assert cells[heads.index("its busbw")] == format_bandwidth(compared.busbw)
    # The sentence under the table says what the column is, and gives figures at the one size
    # it names, the largest, where the fastest other column is halving-doubling.
    tail = " ".join(out.split("Crossover: ")[-1].split("\n", 1)[1].split())
    top = sweep(64, [8 * 2**30], DGX).points[0]
    rails = top.estimates["ring rails:8"].seconds
    assert tail.startswith("ring rails:8 is the ring as NCCL lays out its channels: 8 rings")
    assert tail.endswith(f"(--ring-order rails:8), the ring takes {format_seconds(rails)} at 8GiB "
                         f"(busbw {format_bandwidth(top.busbw('ring rails:8', 64))}), against "
                         f"{format_seconds(top.estimates['halving-doubling'].seconds)} for "
                         f"halving-doubling, the fastest other column there.")
    assert min(top.estimates[n].seconds for n in sweep(64, [8 * 2**30], DGX).algorithms) == \
        top.estimates["halving-doubling"].seconds


def test_the_plain_rings_column_is_the_one_ring_as_before(capsys):
    from ringsim.core.units import format_seconds
    sizes = parse_sizes("1KiB..8GiB")
    result, without = sweep(64, sizes, DGX), sweep(64, sizes, DGX, rails=False)
    assert without.layouts == () and without.columns == without.algorithms == result.algorithms
    for point, before in zip(result.points, without.points):
        # One ring in GPU order, priced as the engine prices the ring with no options.
        assert point.estimates["ring"].seconds == estimate("ring", 64, point.elements, DGX).seconds
        assert {n: e.seconds for n, e in before.estimates.items()} == \
            {n: point.estimates[n].seconds for n in result.algorithms}
    assert main(["sweep", "--topology", "dgx-h100", "--nodes", "8", "--no-plot"]) == 0
    row = next(line for line in capsys.readouterr().out.splitlines() if line.lstrip().startswith("1GiB "))
    assert re.split(r"\s{2,}", row.strip())[1] == format_seconds(
        estimate("ring", 64, 2**28, DGX).seconds) == "43.58 ms"


def test_crossovers_to_the_rails_ring_are_exact_to_the_element():
    result = sweep(64, parse_sizes("1KiB..8GiB"), DGX)
    assert [(c.before, c.after) for c in result.crossovers] == [
        ("recursive-doubling", "halving-doubling"), ("halving-doubling", "ring rails:8")]

    def seconds(column: str, elements: int) -> float:  # priced apart from the sweep
        if column == "ring rails:8":
            return estimate("ring", 64, elements, DGX, ring_order="rails:8").seconds
        return estimate(column, 64, elements, DGX).seconds
    cross = result.crossovers[-1]
    n = cross.nbytes // 4
    assert seconds("ring rails:8", n) < seconds("halving-doubling", n)
    assert seconds("ring rails:8", n - 1) >= seconds("halving-doubling", n - 1)


def test_the_rails_ring_only_where_nccls_layout_differs_from_one_ring(capsys):
    # One node (dgx-h100 at 8 GPUs), no nodes (flat), or a chosen list of algorithms: no column.
    for gpus, model in ((8, DGX), (64, CostModel(load("flat"), 4))):
        assert sweep(gpus, [2**20], model).layouts == ()
    assert sweep(64, [2**20], DGX, algorithms=["ring", "tree"]).columns == ("ring", "tree")
    assert main(["sweep", "--topology", "dgx-h100", "-g", "8", "--no-plot"]) == 0
    assert "rails" not in capsys.readouterr().out
    # --json: the column by its name, with the algorithm and ring order compare --json gives.
    assert main(["sweep", "--topology", "dgx-h100", "--nodes", "2", "--sizes", "1GiB", "--json"]) == 0
    (size,) = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    entry = size["algorithms"]["ring rails:8"]
    assert size["best"] == "ring rails:8" and entry["nccl_name"] == "Ring"
    assert entry["algorithm"] == "ring" and entry["options"] == {"ring_order": "rails:8"}
    assert entry["seconds"] == _rails_row(16, 2**28).timing.estimate.seconds


def test_above_its_limit_the_rails_column_is_left_out_with_a_reason(capsys):
    from ringsim.studies.sweep import RAILS_SWEEP_LIMIT
    gpus = 2 * RAILS_SWEEP_LIMIT // 8
    result = sweep(gpus, [2**20], DGX)
    assert result.layouts == () and result.columns == result.algorithms
    assert f"left out above {RAILS_SWEEP_LIMIT // 8:,} GPUs" in result.rails_note
    assert sweep(RAILS_SWEEP_LIMIT // 8, [2**20], DGX).layouts == (("ring", {"ring_order": "rails:8"}),)
    assert main(["sweep", "--topology", "dgx-h100", "-g", str(gpus), "--sizes", "1MiB", "--no-plot"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert result.rails_note + "." in out and "ring rails:8 is the ring" not in out


def test_an_older_release_names_nccls_curve_and_the_title(capsys):
    pytest.importorskip("plotext")
    argv = ["sweep", "--topology", "dgx-h100", "--nodes", "2", "--sizes", "1KiB..1GiB:x32"]
    assert main([*argv, "--nccl", "2.21.5", "--plot", "busbw"]) == 0
    lines = capsys.readouterr().out.splitlines()
    bottom = next(i for i, line in enumerate(lines) if "└" in line)
    assert "• NCCL 2.21.5's model" in "\n".join(lines[bottom + 1:])
    assert any("textbook vs NCCL 2.21.5's model" in line for line in lines[:bottom])
    top = next(i for i, line in enumerate(lines) if "┌" in line)
    labels = [line.split("┤")[0].strip() for line in lines[top:bottom + 1] if "┤" in line]
    assert len(labels) >= 3 and all(ROUND.fullmatch(label) for label in labels), labels


def test_an_empty_size_ties_every_algorithm_and_does_not_name_the_fastest(capsys):
    # At 0 B every algorithm takes no time; the fastest is the one at the sizes that move.
    assert main(["sweep", "--sizes", "0,1KiB", "--no-plot"]) == 0
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert last == ("No crossover: recursive-doubling is the fastest at every size swept "
                    "(at 0 B every algorithm takes no time).")
    assert main(["sweep", "--sizes", "0", "--no-plot"]) == 0
    assert capsys.readouterr().out.strip().splitlines()[-1] == (
        "No crossover: every size swept is 0 B, an empty call, which takes every algorithm no time.")
