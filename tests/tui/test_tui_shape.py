"""Pilot tests of the shape beside the panels, the clock in the banner, and the keys a, c/C, t."""

from ringsim import Simulation
from ringsim.algorithms import ALGORITHMS
from ringsim.tui.app import RingsimApp
from ringsim.tui.widgets.gpu_panel import GpuPanel
from ringsim.tui.widgets.phase_banner import PhaseBanner
from ringsim.tui.widgets.shape import ShapeView

SIZE = (120, 40)
ARROWS = set("→←↑↓↗↘↙↖")


def notices(app) -> list[str]:
    return [n.message for n in app._notifications]


def rows(plain, app) -> list[str]:
    return plain(app.screen.query_one(ShapeView)).splitlines()


def where(lines: list[str], char: str) -> tuple[int, int]:
    """(row, column) of the one place `char` stands on the canvas."""
    found = [(r, line.index(char)) for r, line in enumerate(lines[:11]) if char in line]
    assert len(found) == 1, (char, lines)
    return found[0]


async def test_ring_is_drawn_as_a_ring_with_this_steps_links_lit(plain):
    app = RingsimApp()
    async with app.run_test(size=SIZE) as pilot:
        lines = rows(plain, app)
        assert lines[11] == "ring" and not ARROWS & set("".join(lines[:11]))
        # GPUs on a circle, clockwise from the top: 1 top, 2 right, 3 bottom, 4 left.
        (r1, c1), (r2, c2), (r3, c3), (r4, c4) = (where(lines, str(g)) for g in (1, 2, 3, 4))
        assert r1 < r2 == r4 < r3 and c4 < c1 == c3 < c2
        await pilot.press("n")
        await pilot.pause()
        lines = rows(plain, app)
        assert sum(ch in ARROWS for ch in "".join(lines[:11])) == 4  # 1→2, 2→3, 3→4, 4→1
        assert lines[r2][c2 - 1] == "→" or lines[r2 - 1][c2 - 1] in "↘→"  # the head points at GPU2
        assert app.screen.query_one(ShapeView).region.width > 0


async def test_tree_parent_above_children(plain):
    # NCCL's binary tree for 8 ranks (src/graph/trees.cc, ncclGetBtree): 0 → 4; 4 → 2, 6;
    # 2 → 1, 3; 6 → 5, 7 (0-based), written down here from NCCL, not from the plan.
    parents = {5: 1, 3: 5, 7: 5, 2: 3, 4: 3, 6: 7, 8: 7}  # 1-based child: parent
    app = RingsimApp(Simulation.create("tree", 8, 8))
    async with app.run_test(size=SIZE):
        lines = rows(plain, app)
        assert lines[11].startswith("tree")
        for child, parent in parents.items():
            assert where(lines, str(parent))[0] < where(lines, str(child))[0], (child, parent)


async def test_recursive_doubling_shows_its_pairs(plain):
    app = RingsimApp(Simulation.create("recursive-doubling", 8, 8))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n")
        await pilot.pause()
        assert rows(plain, app)[12] == "1⇄2 3⇄4 5⇄6 7⇄8"
        await pilot.press("n")
        await pilot.pause()
        assert rows(plain, app)[12] == "1⇄3 2⇄4 5⇄7 6⇄8"


async def test_channels_get_their_own_colours_and_c_changes_them(plain):
    app = RingsimApp()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("C")
        await pilot.pause()
        assert app.sim.plan.options["channels"] == 2 and app.sim.plan.segments == 8
        lines = rows(plain, app)
        assert lines[11] == "2 rings" and lines[12].split() == ["■1", "■2"]
        shape = app.screen.query_one(ShapeView).content
        colours = {str(span.style) for span in shape.spans if "■" in shape.plain[span.start:span.end]}
        assert len(colours) == 2
        await pilot.press("c", "c")
        await pilot.pause()
        assert app.sim.plan.options.get("channels", 1) == 1 and app.sim.plan.segments == 4
        assert any("At least one channel" in n for n in notices(app))


async def test_c_on_an_algorithm_without_chunks_or_channels_says_so():
    app = RingsimApp(Simulation.create("naive", 4, 8))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("C")
        await pilot.pause()
        assert app.sim.plan.algorithm == "naive"
        assert any("neither chunks nor channels (chunks: tree, double-tree, nccl-tree, nvls; "
                   "channels: ring)" in n for n in notices(app))


async def test_tree_chunks_follow_c():
    app = RingsimApp(Simulation.create("tree", 4, 8))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("C", "C")
        await pilot.pause()
        assert app.sim.plan.options["chunks"] == 3 and app.sim.plan.segments == 3


async def test_a_cycles_through_all_eleven_algorithms():
    app = RingsimApp()
    async with app.run_test(size=SIZE) as pilot:
        seen = [app.sim.plan.algorithm]
        for _ in range(len(ALGORITHMS)):
            await pilot.press("a")
            await pilot.pause()
            seen.append(app.sim.plan.algorithm)
        assert seen[:-1] == list(ALGORITHMS) and seen[-1] == "ring" and len(ALGORITHMS) == 11


async def test_clock_in_the_banner_and_t_changes_the_topology(plain):
    # Flat: α = 5 µs, 100 GB/s; a ring step at G = 4, N = 8 moves 2 float32s = 8 bytes per
    # port: 5 µs + 0.08 ns, six steps (Thakur et al. 2005, Table 1).
    app = RingsimApp()
    async with app.run_test(size=SIZE) as pilot:
        banner = plain(app.screen.query_one(PhaseBanner))
        assert "α-β-γ step 0 s · 0 s of 30.00 µs · flat · NCCL Ring/LL" in banner
        await pilot.press("n", "n")
        await pilot.pause()
        banner = plain(app.screen.query_one(PhaseBanner))
        assert "step 5.00 µs · so far 10.00 µs · end 30.00 µs · flat" in banner
        await pilot.press("t")
        await pilot.pause()
        banner = plain(app.screen.query_one(PhaseBanner))
        from ringsim.tui.clock import fitting
        after_flat = fitting(app.sim.plan.gpus)[0][1]  # the next preset in name order
        assert app.clock.topology == after_flat and f"· {after_flat}" in banner
        assert "end 30.00 µs" not in banner


async def test_bottleneck_gpu_is_marked():
    app = RingsimApp(Simulation.create("master", 4, 8))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n")
        await pilot.pause()
        # Every GPU sends to the master at once: its in port queues three transfers.
        titles = [str(p.border_title) for p in app.screen.query(GpuPanel)]
        assert titles[0].endswith("●") and not any(t.endswith("●") for t in titles[1:])


async def test_shape_is_hidden_at_80x24():
    app = RingsimApp()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("n")
        await pilot.pause()
        assert app.screen.query_one(ShapeView).region.width == 0


async def test_help_lists_the_new_keys(plain):
    app = RingsimApp()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("question_mark")
        await pilot.pause()
        text = "\n".join(plain(w) for w in app.screen.query("Static"))
        for words in ("fewer chunks", "next topology", "timeline pane", "0.5×, 0.25×",
                      "select the previous GPU", "sweep plot", "training step"):
            assert words in text, words
        # The counts come from the registry: `a` visits every algorithm, c / C name all that take chunks.
        assert f"next algorithm (all {len(ALGORITHMS)} in turn)" in text
        assert "fewer chunks (tree, double-tree, nccl-tree, nvls) or channels (ring)" in " ".join(text.split())


async def test_timeline_pane_and_slow_gpu(plain):
    from ringsim.tui.widgets.timeline_pane import TimelinePane
    app = RingsimApp()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n", "T")
        await pilot.pause()
        pane = app.screen.query_one(TimelinePane)
        lines = plain(pane).splitlines()
        assert pane.region.width > 0 and "▼ step 1" in lines[0]
        # Flat ring at G = 4: every GPU's out port busy in each of the 6 equal steps.
        assert [line.split()[0] for line in lines[2:6]] == ["GPU1", "GPU2", "GPU3", "GPU4"]
        assert all(set(line.split()[1]) == {"█", "▒"} for line in lines[2:6])
        # Half-speed GPU1 (Fault 'slow-gpu'): its sends take twice as long; so does step 1.
        await pilot.press("s")
        await pilot.pause()
        banner = plain(app.screen.query_one(PhaseBanner))
        assert "step 10.00 µs" in banner and "GPU1 at 0.5× speed" in banner
        assert "with GPU1 at 0.5× speed" in plain(pane)
        await pilot.press("s")  # a quarter of the speed: four times as long
        await pilot.pause()
        assert "step 20.00 µs" in plain(app.screen.query_one(PhaseBanner))
        await pilot.press("s", "T")  # full speed again
        await pilot.pause()
        assert "step 5.00 µs" in plain(app.screen.query_one(PhaseBanner))
        assert pane.region.width == 0


async def test_timeline_pane_fits_80x24(plain):
    from ringsim.tui.widgets.timeline_pane import TimelinePane
    app = RingsimApp()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("n", "n", "T")
        await pilot.pause()
        pane = app.screen.query_one(TimelinePane)
        assert pane.region.width >= 69 and pane.region.height >= 3


def test_export_svg_carries_the_shape(tmp_path):
    from ringsim.cli import main
    assert main(["export", "--svg", str(tmp_path), "-a", "tree", "-g", "8", "-n", "8"]) == 0
    start = (tmp_path / "00-start.svg").read_text(encoding="utf-8")
    first = sorted(tmp_path.glob("01-*.svg"))[0].read_text(encoding="utf-8")
    assert "tree:&#160;parent&#160;above&#160;children" in start
    assert "bottleneck" in first and "bottleneck" not in start


async def test_t_skips_and_g_leaves_a_topology_g_does_not_fit():
    from ringsim.tui.clock import fitting
    app = RingsimApp(Simulation.create("ring", 8, 8))
    async with app.run_test(size=SIZE) as pilot:
        for _ in range(fitting(8)[0].index("pcie-gen4")):
            await pilot.press("t")
            await pilot.pause()
        assert app.clock.topology == "pcie-gen4"  # 8 GPUs fit its node
        await pilot.press("G")
        await pilot.pause()
        assert any("9 GPUs do not fit pcie-gen4" in n for n in notices(app))
        for _ in range(3):
            await pilot.press("G")
            await pilot.pause()
        assert app.sim.plan.gpus == 12 and app.clock.topology == "flat"
        assert not any("do not fit" in n for n in notices(app))  # it spoke of 9 GPUs
        await pilot.press(*["t"] * len(fitting(12)[0]))
        await pilot.pause()
        assert app.clock.topology == "flat"  # every preset 12 GPUs fit, then round to the start
        assert any("Skipped pcie-gen4" in n for n in notices(app))


async def test_the_heat_map_shows_a_position_the_same_when_stepped_back_to():
    from ringsim import Simulation
    from ringsim.tui.app import RingsimApp
    from ringsim.tui.widgets.heat_map import HeatMap
    app = RingsimApp(Simulation.create("naive", 16, 16))
    async with app.run_test(size=(120, 40)) as pilot:
        seen = []
        for key in "npnpn":
            await pilot.press(key)
            await pilot.pause()
            seen.append(list(app.screen.query_one(HeatMap).lines))
    assert seen[0] == seen[2] == seen[4] and seen[1] == seen[3] and seen[0] != seen[1]
    assert any("⇄" in line for line in seen[0]) and not any("⇄" in line for line in seen[1])


def test_the_tui_page_lists_what_a_t_and_c_visit():
    import re
    from pathlib import Path
    from ringsim.cost.topology import presets
    from ringsim.tui.app import taking
    doc = (Path(__file__).resolve().parents[2] / "docs" / "tui.md").read_text(encoding="utf-8")
    keys = {m.group(1): m.group(2) for m in re.finditer(r"^\| `(\w)`[^|]*\| (.*) \|$", doc, re.M)}
    assert keys["a"].startswith(f"next algorithm: all {len(ALGORITHMS)} in turn ({', '.join(ALGORITHMS)};")
    assert f"({', '.join(presets())};" in keys["t"]
    assert f"chunks ({taking('chunks')}) or channels ({taking('channels')})" in doc
