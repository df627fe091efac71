"""ringsim figure and ringsim.figures: the SVG contract (every GPU, segment and transfer an element
the tests can read), checked against the seed's 4-GPU ring and every algorithm at G = 2..16,
and every output format, bound and error."""

from __future__ import annotations

import io
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

pytest.importorskip("drawsvg", reason="the figures extra (drawsvg) is not installed")

from ringsim.algorithms import ALGORITHMS  # noqa: E402
from ringsim.algorithms.collectives import COLLECTIVES  # noqa: E402
from ringsim.core.errors import RingsimError  # noqa: E402
from ringsim.figures.frames import MAX_TERMS  # noqa: E402
from ringsim.figures.output import parse_size, render, write  # noqa: E402
from ringsim.figures.render import figure_svg  # noqa: E402
from ringsim.sim.simulation import Simulation  # noqa: E402

SVG = "{http://www.w3.org/2000/svg}"


def classed(svg: str, name: str) -> list[ET.Element]:
    """Every element of the SVG whose class is `name`."""
    root = ET.fromstring(svg)
    return [e for e in root.iter() if name in (e.get("class") or "").split()]


def text_of(element: ET.Element) -> str:
    """The text an element shows (its <text> children; a <title> in the heat map)."""
    shown = [t.text or "" for t in element.iter(SVG + "text")]
    return "".join(shown) if shown else "".join(t.text or "" for t in element.iter(SVG + "title"))


def edges(svg: str) -> list[tuple[int, int, str]]:
    """(src, dst, op) of every transfer, 1-based as the SVG writes them."""
    return [(int(e.get("data-src")), int(e.get("data-dst")), e.get("data-op"))
            for e in classed(svg, "transfer")]


def ring4() -> Simulation:
    return Simulation.create("ring", 4)


# --- the seed's example: four GPUs on a ring ------------------------------------------------

def test_the_start_shows_every_gpus_own_segments_and_no_arrow():
    svg = figure_svg(ring4(), 0)
    assert len(classed(svg, "gpu")) == 4
    cells = classed(svg, "segment")
    assert len(cells) == 16
    labels = {(int(c.get("data-gpu")), int(c.get("data-segment"))): text_of(c) for c in cells}
    assert labels[(1, 1)] == "a₁" and labels[(2, 4)] == "b₄" and labels[(4, 3)] == "d₃"
    assert classed(svg, "transfer") == []


@pytest.mark.parametrize("iteration", [1, 2, 3])
def test_reduce_scatter_iterations_match_the_seed(iteration):
    # The seed: in iteration s GPU k sends segment ((k − s) mod G) + 1 to GPU (k mod G) + 1,
    # which adds it into its own copy.
    svg = figure_svg(ring4(), iteration)
    transfers = classed(svg, "transfer")
    assert [(int(t.get("data-src")), int(t.get("data-dst")), t.get("data-op"),
             int(t.get("data-first"))) for t in transfers] == [
        (k, k % 4 + 1, "reduce", (k - iteration) % 4 + 1) for k in range(1, 5)]
    title = classed(svg, "title")[0]
    assert "".join(title.itertext()) == f"Reduce-scatter · iteration {iteration} of 3"


def test_the_seeds_sent_segments_and_sums():
    one = [t.get("data-sent") for t in classed(figure_svg(ring4(), 1), "transfer")]
    assert one == ["a₁", "b₂", "c₃", "d₄"]
    two = classed(figure_svg(ring4(), 2), "transfer")
    assert [t.get("data-sent") for t in two] == ["d₄+a₄", "a₁+b₁", "b₂+c₂", "c₃+d₃"]
    assert "".join(two[0].find(SVG + "title").itertext()) == \
        "GPU1 sends (d₄+a₄) to GPU2, where it is added to b₄"
    cells = {(int(c.get("data-gpu")), int(c.get("data-segment"))): c
             for c in classed(figure_svg(ring4(), 3), "segment")}
    # After G − 1 iterations GPU k holds the complete sum of segment (k mod G) + 1.
    for k in range(1, 5):
        cell = cells[(k, k % 4 + 1)]
        s = k % 4 + 1
        assert text_of(cell) == "+".join(f"{x}{'₁₂₃₄'[s - 1]}" for x in "abcd")
        assert cell.get("data-complete") == "true"
    assert text_of(cells[(2, 4)]) == "d₄+a₄+b₄"  # in the order added, as the walkthrough


@pytest.mark.parametrize("iteration", [1, 2, 3])
def test_all_gather_copies_on_the_same_ring(iteration):
    svg = figure_svg(ring4(), 3 + iteration)
    assert edges(svg) == [(k, k % 4 + 1, "copy") for k in range(1, 5)]
    sent = [t.get("data-sent") for t in classed(svg, "transfer")]
    assert all(len(s.split("+")) == 4 for s in sent)  # complete segments only
    assert all(c.get("data-complete") == "true" for c in classed(figure_svg(ring4(), 6), "segment"))


def test_counters_say_what_moved_so_far():
    counters = "".join(classed(figure_svg(ring4(), 2), "counters")[0].itertext())
    assert "step 2 of 6" in counters and "16 elements moved in 8 messages" in counters


# --- every algorithm, G = 2..16 ---------------------------------------------------------------

@pytest.mark.parametrize("name", list(ALGORITHMS))
@pytest.mark.parametrize("gpus", range(2, 17))
def test_every_algorithm_keeps_the_contract(name, gpus):
    sim = Simulation.create(name, gpus)
    plan = sim.plan
    for position in sorted({0, (len(plan) + 1) // 2, len(plan)}):
        svg = figure_svg(sim, position)
        assert len(classed(svg, "gpu")) == gpus
        cells = classed(svg, "segment")
        assert len(cells) == gpus * plan.segments
        sim.goto(position)
        for cell in cells[:: max(1, len(cells) // 24)]:
            g, s = int(cell.get("data-gpu")) - 1, int(cell.get("data-segment")) - 1
            assert text_of(cell) == sim.symbolic.label(g, s, max_terms=MAX_TERMS)
        want = [] if position == 0 else [(t.src + 1, t.dst + 1, t.op)
                                         for t in plan.steps[position - 1].transfers()]
        # Arrows that pass behind a row come first in the document (drawn under the columns).
        assert sorted(edges(svg)) == sorted(want)
        assert {op for _, _, op in edges(svg)} <= {"reduce", "copy"}


@pytest.mark.parametrize("gpus", [17, 32])
def test_beyond_16_gpus_a_heat_map_keeps_the_contract(gpus):
    sim = Simulation.create("ring", gpus)
    svg = figure_svg(sim, 3)
    assert len(classed(svg, "gpu")) == gpus
    assert len(classed(svg, "segment")) == gpus * gpus
    assert edges(svg) == [(k, k % gpus + 1, "reduce") for k in range(1, gpus + 1)]
    assert "how much of the sum" in svg


@pytest.mark.parametrize("name", [n for n in COLLECTIVES])
def test_every_collective_draws(name):
    c = COLLECTIVES[name]
    sim = Simulation(c.plan(4, c.algorithms[0]), 8, collective=c)
    svg = figure_svg(sim, 1)
    assert len(classed(svg, "transfer")) == len(sim.plan.steps[0])


def test_a_switch_shows_what_it_holds_and_arrows_into_one_column_spread_out():
    sim = Simulation.create("nvls", 4)
    start, reduced = classed(figure_svg(sim, 0), "switch-segment"), classed(figure_svg(sim, 1), "switch-segment")
    assert [text_of(c) for c in start] == ["empty"] and [text_of(c) for c in reduced] == ["a₁+b₁+c₁+d₁"]
    ends = set()
    for arrow in classed(figure_svg(sim, 1), "transfer"):
        head = [e for e in arrow.iter() if e.tag.endswith("path")][-1].get("d")
        ends.add(head.split()[0])  # the arrowhead's first corner: its tip
    assert len(ends) == 4  # four GPUs into the switch: four places, not one


def test_an_arrow_past_a_row_goes_behind_it():
    svg = figure_svg(Simulation.create("master", 16), 2)  # GPU1 copies to two rows below it
    root = ET.fromstring(svg)
    order = [e.get("class") for e in root.iter() if e.get("class") in ("transfer", "gpu")]
    far = [e for e in classed(svg, "transfer") if int(e.get("data-dst")) >= 10]
    assert len(far) == 7 and order[:7] == ["transfer"] * 7 and order[7] == "gpu"


def test_a_ring_across_nodes_closes_its_loop_beside_the_columns():
    sim = Simulation.create("hierarchical", 16)  # four nodes of four, one above another
    step = next(p for p in range(1, len(sim.plan) + 1)
                if (13, 1, "reduce") in edges(figure_svg(sim, p)))
    svg = figure_svg(sim, step)
    arrow = next(e for e in classed(svg, "transfer") if (e.get("data-src"), e.get("data-dst")) == ("13", "1"))
    line = [e for e in arrow.iter() if e.tag.endswith("path")][-2].get("d")
    corners = [tuple(map(float, p.strip("ML ").split(","))) for p in line.split(" L")]
    assert len(corners) == 6  # out of GPU13's top, up the gap beside the columns, into GPU1
    side = corners[2][0]
    columns = [(float(r.get("x")), float(r.get("x")) + float(r.get("width")))
               for g in classed(svg, "gpu") for r in list(g)[:1]]
    assert not any(x0 <= side <= x1 for x0, x1 in columns)


def test_channels_are_lanes_and_nodes_are_boxes():
    lanes = figure_svg(Simulation.create("ring", 4, channels=2), 1)
    colours = {re.search(r'stroke="(#[0-9a-f]+)" stroke-width="2.2"', ET.tostring(t, encoding="unicode")
                         .replace("ns0:", "")).group(1) for t in classed(lanes, "transfer")}
    assert len(colours) == 2  # one colour per ring
    nodes = figure_svg(Simulation.create("hierarchical", 8, nodes=2), 1)
    assert len(classed(nodes, "node")) == 2


def test_small_nodes_stand_in_one_row_and_large_ones_one_below_another():
    from ringsim.figures.frames import node_groups
    from ringsim.figures.layout import layout
    from ringsim.algorithms.spec import Shape

    def rows(sim):
        return layout(sim.plan, Shape.RING, 1, node_groups(sim.plan), 100).rows
    # rails:2 on 8 GPUs: four nodes of two, side by side in one row, as wide as a slide.
    assert rows(Simulation.create("ring", 8, ring_order="rails:2")) == ((0, 1, 2, 3, 4, 5, 6, 7),)
    # Four nodes of four: 16 columns would not fit one row, so a node per row.
    assert rows(Simulation.create("hierarchical", 16)) == ((0, 1, 2, 3), (4, 5, 6, 7),
                                                          (8, 9, 10, 11), (12, 13, 14, 15))
    # Each node's label is drawn after the arrows, haloed, so an arc between nodes never hides it.
    svg = figure_svg(Simulation.create("hierarchical", 8, nodes=4), 2)
    labels = classed(svg, "node-label")
    assert [e.text for e in labels] == ["node 1", "node 2", "node 3", "node 4"]
    assert all(e.get("paint-order") == "stroke" for e in labels)
    order = [(e.get("class") or "").split() for e in ET.fromstring(svg).iter()]
    last_arrow = max(i for i, c in enumerate(order) if "transfer" in c)
    assert min(i for i, c in enumerate(order) if "node-label" in c) > last_arrow


def test_nccl_trees_chains_sit_in_node_boxes_and_crossing_arrows_keep_their_tags_apart():
    sim = Simulation.create("nccl-tree", 16, gpus_per_node=4)
    assert len(classed(figure_svg(sim, 1), "node")) == 4  # a chain inside each node of four
    svg = figure_svg(sim, 9)  # the two trees' arrows between nodes 2 and 3 cross at their middles
    boxes = [(float(r.get("x")), float(r.get("y")), float(r.get("width")))
             for r in (tag.find(f"{SVG}rect") for tag in classed(svg, "tag"))]
    assert len(boxes) == 8
    for i, (x, y, w) in enumerate(boxes):
        for u, v, wu in boxes[:i]:
            assert abs(x + w / 2 - u - wu / 2) >= (w + wu) / 2 or abs(y - v) >= 15, (x, y, u, v)


def test_themes_differ_and_a_size_scales_the_picture():
    light, dark = figure_svg(ring4(), 1, "light"), figure_svg(ring4(), 1, "dark")
    assert light != dark and "#111827" in dark
    root = ET.fromstring(figure_svg(ring4(), 1, size=(400, 0)))
    assert root.get("width") == "400"
    with pytest.raises(RingsimError, match="unknown theme"):
        figure_svg(ring4(), 1, "pink")


def test_a_simulation_shows_itself_in_jupyter():
    sim = ring4()
    sim.goto(2)
    assert sim._repr_svg_() == figure_svg(sim, 2)
    assert sim.position == 2


# --- files --------------------------------------------------------------------------------------

def test_every_format_is_written(tmp_path):
    from PIL import Image
    sim = ring4()
    for suffix in (".svg", ".png", ".pdf", ".gif", ".html"):
        path = tmp_path / f"ring{suffix}"
        write(sim, path)
        assert path.stat().st_size > 0
    assert (tmp_path / "ring.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    gif = Image.open(tmp_path / "ring.gif")
    assert gif.n_frames == 7  # the start and six steps
    assert (tmp_path / "ring.gif").stat().st_size < 1_000_000
    pdf = (tmp_path / "ring.pdf").read_bytes()
    assert pdf[:5] == b"%PDF-" and len(re.findall(rb"/Type\s*/Page\b", pdf)) == 7
    page = (tmp_path / "ring.html").read_text(encoding="utf-8")
    assert page.count('class="frame"') == 7 and 'data-part="play"' in page and 'data-part="next"' in page
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        f"ring{s}" for s in (".svg", ".png", ".pdf", ".gif", ".html"))  # no temporary files left


def test_the_counters_say_one_message_in_the_singular():
    svg = figure_svg(Simulation.create("tree", 3), 1)
    counters = text_of(classed(svg, "counters")[0])
    assert "8 elements moved in 1 message ·" in counters


def test_the_counters_give_one_gpus_sent_and_received():
    # The master after its reduce: GPU1 has received 24 and sent nothing; the others sent 8.
    # Both counts belong to one named GPU, as the TUI's counters and the lessons give them,
    # never the most any GPU sent beside the most any GPU received.
    svg = figure_svg(Simulation.create("master", 4), 1)
    assert "busiest GPU1 sent 0 of 24, received 24 of 24" in text_of(classed(svg, "counters")[0])
    svg = figure_svg(Simulation.create("ring", 4), 6)
    assert "busiest GPU1 sent 12 of 12, received 12 of 12" in text_of(classed(svg, "counters")[0])
    # The busiest GPU is the whole run's: early on it may not have moved yet, and "of" says
    # how much is still to come (the ring's GPU1 after its first step: 2 of 12).
    svg = figure_svg(Simulation.create("ring", 4), 1)
    assert "busiest GPU1 sent 2 of 12, received 2 of 12" in text_of(classed(svg, "counters")[0])


def test_long_counters_are_squeezed_into_the_picture_rather_than_cut():
    # A million elements on 2 GPUs: the counters' line is wider than the 680 px picture.
    from ringsim.figures.cells import text_width
    svg = figure_svg(Simulation.create("master", 2, 1_000_000), 2)
    width = float(ET.fromstring(svg).get("viewBox").split()[2])
    counters = classed(svg, "counters")[0]
    assert text_width(text_of(counters), 12) > width - 36  # too long as set
    assert float(counters.get("textLength")) <= width - 36 and counters.get("lengthAdjust")
    assert "received 1,000,000" in text_of(counters)  # every number whole
    for step in range(7):  # the 4-GPU example's lines fit as they are set, never stretched
        assert classed(figure_svg(ring4(), step), "counters")[0].get("textLength") is None, step


def test_the_pdf_deck_is_vector_and_searchable():
    pypdfium2 = pytest.importorskip("pypdfium2", reason="reads the deck back (the test extras)")
    sim = ring4()
    deck = render(sim, ".pdf")
    assert b"/Subtype/Image" not in deck and b"/FontFile" in deck  # paths and text, no pixels
    assert render(sim, ".pdf") == deck  # no date inside: the same frames give the same bytes
    pdf = pypdfium2.PdfDocument(deck)
    assert len(pdf) == 7 and pdf[1].get_size() == (510.0, 376.5)  # 680 x 502 CSS px at 0.75 pt
    words = pdf[1].get_textpage().get_text_range()
    assert "Reduce-scatter · iteration 1 of 3" in words and "d₄+a₄" in words and "a₁+b₁" in words
    one = pypdfium2.PdfDocument(render(sim, ".pdf", 2, size=parse_size("800x600")))
    assert len(one) == 1 and one[0].get_size() == (600.0, 450.0)


def test_a_png_is_twice_the_natural_size_unless_dimensions_say_otherwise():
    from PIL import Image
    root = ET.fromstring(figure_svg(ring4(), 1))
    natural = (float(root.get("width")), float(root.get("height")))
    with Image.open(io.BytesIO(render(ring4(), ".png", 1))) as image:
        assert image.size == (round(2 * natural[0]), round(2 * natural[1]))
    with Image.open(io.BytesIO(render(ring4(), ".png", 1, size=parse_size(str(round(natural[0])))))) as image:
        assert image.size == (round(natural[0]), round(natural[1]))


def test_a_png_of_a_given_width(tmp_path):
    from PIL import Image
    data = render(ring4(), ".png", 1, size=parse_size("500"))
    assert Image.open(io.BytesIO(data)).width == 500


@pytest.mark.parametrize("suffix", [".png", ".gif"])
def test_a_raster_of_a_given_width_and_height(suffix):
    from PIL import Image
    data = render(ring4(), suffix, 1, "dark", size=parse_size("300x100"))
    with Image.open(io.BytesIO(data)) as image:
        assert image.size == (300, 100)  # as the SVG's width and height, the drawing letterboxed
        assert image.convert("RGB").getpixel((2, 50)) == (0x11, 0x18, 0x27)  # the band: the theme's


def test_an_existing_file_is_replaced_whole(tmp_path):
    path = tmp_path / "x.svg"
    path.write_text("old")
    write(ring4(), path, step=2)
    assert path.read_text(encoding="utf-8").startswith("<?xml")


@pytest.mark.parametrize("text", ["0", "10", "5000", "80x", "axb", "-3", "1e3"])
def test_bad_sizes_are_refused(text):
    with pytest.raises(RingsimError, match="--dimensions"):
        parse_size(text)


@pytest.mark.parametrize("argv, elements", [([], 8), (["-g", "16"], 16), (["-g", "16", "-n", "4"], 4),
                                            (["-a", "bidirectional-ring", "-g", "8"], 16),
                                            (["-a", "bidirectional-ring", "-g", "3"], 8)])
def test_the_default_elements_leave_no_segment_empty(tmp_path, argv, elements):
    from ringsim.cli import main
    path = tmp_path / "f.svg"
    assert main(["figure", str(path), *argv]) == 0
    svg = path.read_text(encoding="utf-8")
    assert f"{elements} elements per GPU" in svg
    assert ("nothing moves" in svg) == ("-n" in argv)  # only a user's small N leaves segments empty


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ringsim", "figure", *args], capture_output=True,
                          text=True, timeout=120)


@pytest.mark.parametrize("args, words", [
    (["ring.txt"], "must end in"),
    (["{tmp}/missing/ring.svg"], "does not exist"),
    (["{tmp}/ring.svg", "-g", "200"], "at most 128 GPUs"),
    (["{tmp}/ring.svg", "--step", "7"], "--step must be from 0"),
    (["{tmp}/ring.svg", "--dimensions", "99999"], "--dimensions must be from"),
    (["{tmp}/ring.png", "--dimensions", "²x²"], "--dimensions must be a width"),  # int('²') fails
    (["{tmp}/ring.png", "--dimensions", "9" * 5000], "--dimensions must be from"),
    (["{tmp}/ring.svg", "-n", "10000000"], "at most 1,000,000 elements"),
    (["{tmp}/ring.gif", "-g", "128"], "draw one step"),
    ([], "say which file"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path, args, words):
    out = run_cli(*[a.replace("{tmp}", str(tmp_path)) for a in args])
    assert out.returncode == 2, out.stderr
    assert words in out.stderr and out.stderr.count("\n") == 1 and "Traceback" not in out.stderr


def test_an_unwritable_folder_is_one_line(tmp_path):
    # /proc takes no new files, even from root (whom a folder's permissions do not stop).
    if not Path("/proc/self").is_dir():
        pytest.skip("needs Linux's /proc")
    out = run_cli("/proc/ringsim-figure.svg")
    assert out.returncode == 2 and "cannot write the figure /proc/ringsim-figure.svg" in out.stderr
    assert out.stderr.count("\n") == 1


@pytest.mark.parametrize("suffix", [".svg", ".png", ".pdf"])
def test_a_full_disk_is_one_line(tmp_path, suffix):
    # /dev/full fails every write with 'no space left on device'; a link gives it a suffix.
    if not Path("/dev/full").exists():
        pytest.skip("needs Linux's /dev/full")
    link = tmp_path / f"full{suffix}"
    link.symlink_to("/dev/full")
    out = run_cli(str(link))
    # the machine failed, not the input: status 1, as a full stdout gets
    assert out.returncode == 1 and out.stderr.count("\n") == 1, out.stderr
    assert "cannot write the figure" in out.stderr and "No space left on device" in out.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == [link.name]  # no temporary file beside it


def test_the_command_writes_the_file(tmp_path):
    out = run_cli(str(tmp_path / "tree.svg"), "-a", "tree", "-g", "8", "--step", "2", "--theme", "dark")
    assert out.returncode == 0, out.stderr
    svg = Path(tmp_path / "tree.svg").read_text(encoding="utf-8")
    assert edges(svg) == [(3, 5, "reduce"), (7, 5, "reduce")]


def test_a_timeline_shows_itself_as_a_bar_per_transfer():
    from ringsim.algorithms import make_plan
    from ringsim.timeline.model import simulate
    timeline = simulate(make_plan("ring", 4), 1_000_000)
    svg = timeline._repr_svg_()
    bars = classed(svg, "transfer")
    assert len(bars) == len(timeline) == 24
    assert [(int(b.get("data-src")), int(b.get("data-dst"))) for b in bars[:4]] == \
        [(k, k % 4 + 1) for k in range(1, 5)]
    assert len(classed(svg, "gpu")) == 4


def test_a_timeline_chart_gives_the_switch_a_row_of_its_own():
    from ringsim.algorithms import make_plan
    from ringsim.cost.model import CostModel
    from ringsim.timeline import simulate
    svg = simulate(make_plan("nvls", 4), 8, CostModel.of("dgx-h100"))._repr_svg_()
    assert [text_of(row) for row in classed(svg, "switch")] == ["the switch"]
    assert "GPU5" not in svg
    assert float(ET.fromstring(svg).get("height")) == 64 + 5 * 18 + 50  # 4 GPUs and the switch


def test_a_sweep_shows_itself_as_its_chart():
    from ringsim.studies.sweep import sweep
    result = sweep(8, [2 ** k for k in range(10, 31, 4)])
    svg = result._repr_svg_()
    assert svg.count("<polyline") == len(result.algorithms)
    assert "All-reduce modelled time, 8 GPUs" in svg
    # A terminal REPL prints the text repr: one line, not every estimate.
    assert repr(result).startswith("<Sweep of 8 GPUs on flat · 6 sizes, 1KiB to 1GiB · ")
    assert "\n" not in repr(result) and len(repr(result)) < 120


@pytest.mark.parametrize("name", ["naive", "bidirectional-ring", "recursive-doubling", "ring"])
def test_no_tag_hides_an_arrowhead(name):
    # Two GPUs side by side sending to each other: a tag near each sender would sit on the
    # other arrow's head, so each sits mid-gap and the second steps off the first.
    from ringsim import Simulation
    sim = Simulation.create(name, gpus=4, elements=8)
    sim.step()
    root = ET.fromstring(figure_svg(sim))
    svg = "{http://www.w3.org/2000/svg}"
    boxes, tips = [], []
    for group in root.iter(f"{svg}g"):
        if group.get("class") == "tag":
            rect = group.find(f"{svg}rect")
            boxes.append(tuple(float(rect.get(k)) for k in ("x", "y", "width", "height")))
        if group.get("class") == "transfer":
            head = [p for p in group.findall(f"{svg}path") if p.get("fill") not in (None, "none")]
            corners = re.findall(r"(-?[\d.]+),(-?[\d.]+)", head[-1].get("d"))
            # the middle of the arrowhead's triangle: covered, the head cannot be seen
            tips.append((sum(float(x) for x, _ in corners) / len(corners),
                         sum(float(y) for _, y in corners) / len(corners)))
    assert boxes and tips
    for x, y in tips:
        assert not any(u - 1 < x < u + w + 1 and v - 1 < y < v + h + 1 for u, v, w, h in boxes), \
            (name, (x, y), boxes)
    for i, (x, y, w, h) in enumerate(boxes):
        for (u, v, p, q) in boxes[i + 1:]:
            assert x + w <= u or u + p <= x or y + h <= v or v + q <= y, (name, boxes)


def test_all_into_a_file_or_below_one_is_one_line_and_status_2(tmp_path, capsys):
    from ringsim.cli import main
    file = tmp_path / "taken.svg"
    file.write_text("mine", encoding="utf-8")
    assert main(["figure", "--all", str(file)]) == 2
    err = capsys.readouterr().err  # long paths are shortened in the middle, as every file error does
    assert err.startswith("ringsim figure: error: /") and err.endswith("taken.svg is not a folder\n")
    assert main(["figure", "--all", str(file / "pictures")]) == 2
    assert capsys.readouterr().err.endswith("taken.svg, which is a file\n")
    assert file.read_text(encoding="utf-8") == "mine"


def test_the_html_player_keeps_to_itself_in_a_page_it_shares():
    # A notebook shows the page inside its own: no id to clash with a second player, no style
    # outside the player's class, and keys read by the player's own (focusable) element only.
    from ringsim.figures.page import ROOT
    page = render(ring4(), ".html").decode()
    assert not re.search(r"\sid=", page)
    style = re.search(r"<style>(.*?)</style>", page, re.DOTALL)[1]
    selectors = [rule.split("{")[0].strip() for rule in style.split("}") if "{" in rule]
    assert selectors and all(s.startswith(f".{ROOT}") for s in selectors), selectors
    assert f'class="{ROOT}" tabindex="0"' in page
    script = re.search(r"<script>(.*?)</script>", page, re.DOTALL)[1]
    assert "document.addEventListener" not in script and "root.addEventListener('keydown'" in script
