"""Pilot tests: press keys in the real App and check what the engine and the widgets hold."""

import io
import json
from contextlib import redirect_stdout

from ringsim import Simulation
from ringsim.execute.backend import to_numpy
from ringsim.cli import main
from ringsim.tui.app import RingsimApp
from ringsim.tui.screens.help import HelpScreen
from ringsim.tui.widgets.counters import Counters
from ringsim.tui.widgets.gpu_grid import GpuGrid
from ringsim.tui.widgets.gpu_panel import GpuPanel
from ringsim.tui.widgets.phase_banner import PhaseBanner
from ringsim.tui.widgets.transfer_list import TransferList

SIZE = (120, 40)


def cell(app, gpu: int, segment: int):
    """What the panel of 1-based GPU `gpu` shows in its cell for 1-based `segment`."""
    return app.screen.query_one(f"#gpu-{gpu}", GpuPanel).cells[segment - 1]


def notices(app) -> list[str]:
    return [n.message for n in app._notifications]


async def test_first_iteration_names_the_seeds_transfers(plain):
    app = RingsimApp()
    async with app.run_test(size=SIZE) as pilot:
        assert "Start" in plain(app.screen.query_one(PhaseBanner))
        await pilot.press("n")
        lines = app.screen.query_one(TransferList).lines
        assert lines[0] == "GPU1 sends a₁ to GPU2, where it is added to b₁"
        assert lines[3] == "GPU4 sends d₄ to GPU1, where it is added to a₄"
        assert "Reduce-scatter · iteration 1 of 3" in plain(app.screen.query_one(PhaseBanner))
        sender, receiver = cell(app, 1, 1), cell(app, 2, 1)
        assert sender.sending and sender.note == "→ GPU2"
        assert receiver.receiving and receiver.note == "← GPU1 +"
        assert receiver.text == "a₁+b₁"
        assert not cell(app, 3, 1).sending and cell(app, 3, 1).note == ""


async def test_three_iterations_complete_gpu1_segment_2_and_back_and_reset_undo():
    app = RingsimApp()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n", "n", "right")
        assert app.sim.position == 3
        assert app.sim.symbolic.is_complete(0, 1)
        complete = cell(app, 1, 2)
        assert complete.complete and complete.text == "a₂+b₂+c₂+d₂ ✓"
        await pilot.press("p")
        assert app.sim.position == 2
        assert not cell(app, 1, 2).complete
        assert cell(app, 1, 2).text == "a₂"
        assert cell(app, 1, 3).text == "c₃+d₃+a₃"
        await pilot.press("left")
        assert app.sim.position == 1
        await pilot.press("r")
        assert app.sim.position == 0
        assert [cell(app, 2, j).text for j in range(1, 5)] == ["b₁", "b₂", "b₃", "b₄"]
        await pilot.press("p")
        assert app.sim.position == 0 and "Already at the start." in notices(app)


async def test_run_to_the_end_shows_done_and_refuses_more(plain):
    app = RingsimApp()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"nnnnnn")
        assert "Done: every GPU holds the sum" in plain(app.screen.query_one(PhaseBanner))
        assert all(c.complete for p in app.screen.query(GpuPanel) for c in p.cells)
        await pilot.press("n")
        assert app.sim.position == 6
        assert any("done" in n for n in notices(app))


async def test_a_cycles_the_algorithms_and_shows_the_master_and_the_flood(plain):
    app = RingsimApp()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("a")
        assert app.sim.plan.algorithm == "master"
        await pilot.press("n")
        assert "Reduce to GPU1" in plain(app.screen.query_one(PhaseBanner))
        assert app.screen.query_one("#gpu-1").has_class("-master")
        assert cell(app, 1, 1).note == "← 3 GPUs +"
        assert cell(app, 2, 3).note == "→ GPU1"
        await pilot.press("a")
        assert app.sim.plan.algorithm == "naive" and app.sim.position == 0
        await pilot.press("n")
        assert len(app.screen.query_one(TransferList).lines) == 12
        assert cell(app, 3, 2).state == "exchanging" and cell(app, 3, 2).note == "⇄ 3 GPUs"
        await pilot.press("a")
        assert app.sim.plan.algorithm == "tree"  # then the other algorithms, and back to ring


async def test_gpus_and_elements_change_and_out_of_range_is_refused_with_a_notice():
    app = RingsimApp()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("G")
        assert app.sim.plan.gpus == 5 and len(app.screen.query(".gpu-panel")) == 5
        await pilot.press("g", "g", "g", "g")
        assert app.sim.plan.gpus == 1
        await pilot.press("g", "g", "g", "g")  # a held key: one notice, not a stack of copies
        assert app.sim.plan.gpus == 1 and notices(app).count("The view shows 1 to 64 GPUs.") == 1
        await pilot.press("E")
        assert app.sim.layout.elements == 9
        await pilot.press(*"e" * 9)
        assert app.sim.layout.elements == 0
        await pilot.press("e")
        assert app.sim.layout.elements == 0
        assert "The view shows 0 to 4,096 elements per GPU." in notices(app)


async def test_the_upper_limits_are_refused_too():
    app = RingsimApp(Simulation.create("ring", 64, 4096))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("G", "E")
        assert (app.sim.plan.gpus, app.sim.layout.elements) == (64, 4096)
        assert len(notices(app)) == 2
        await pilot.press("e", "g")
        assert (app.sim.plan.gpus, app.sim.layout.elements) == (63, 2048)


async def test_more_than_8_gpus_switch_to_the_heat_map(plain):
    app = RingsimApp(Simulation.create("ring", 8, 8))
    async with app.run_test(size=SIZE) as pilot:
        assert not app.screen.has_class("-heat")
        await pilot.press("G", "n")
        assert app.screen.has_class("-heat")
        assert len(app.screen.query_one(GpuGrid).children) == 0
        heat = "\n".join(app.screen.query_one("#heat").lines)
        assert "GPU9" in heat and "complete" in heat and "partial sum" in heat
        assert app.screen.query_one(TransferList).lines[0] == "GPU1 sends a₁ to GPU2, where it is added to b₁"


async def test_v_shows_the_numbers_each_buffer_holds():
    app = RingsimApp()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n", "v")
        values = to_numpy(app.sim.values())
        # GPU2's segment 1 now holds a₁+b₁: elements 0 and 1 of its buffer.
        assert cell(app, 2, 1).text == f"{values[1, 0]} {values[1, 1]}"
        assert values[1, 0] == to_numpy(app.sim.inputs)[0, 0] + to_numpy(app.sim.inputs)[1, 0]
        await pilot.press("v")
        assert cell(app, 2, 1).text == "a₁+b₁"


def walk_summary(*args: str) -> dict:
    out = io.StringIO()
    with redirect_stdout(out):
        assert main(["walk", "--json", *args]) == 0
    return json.loads(out.getvalue().splitlines()[-1])


async def test_counters_match_ringsim_walk_json(plain):
    for algorithm, keys in (("ring", "nnnnnn"), ("master", "nn"), ("naive", "n")):
        summary = walk_summary("--algorithm", algorithm, "--gpus", "4", "--elements", "10")
        app = RingsimApp(Simulation.create(algorithm, 4, 10))
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press(*keys)
            ledger = app.sim.ledger()
            assert ledger.total == summary["total_elements"] == summary["formula_total"]
            assert ledger.sent.tolist() == summary["sent"]
            assert ledger.received.tolist() == summary["received"]
            assert (ledger.messages, ledger.steps) == (summary["messages"], summary["steps"])
            text = plain(app.screen.query_one(Counters))
            assert f"moved so far {summary['total_elements']}" in " ".join(text.split())
            assert f"busiest GPU{summary['busiest_gpu']}" in text
            for g, (sent, received) in enumerate(zip(summary["sent"], summary["received"]), 1):
                row = next(line for line in text.splitlines() if line.startswith(f"GPU{g} "))
                numbers = row.split()[1:]  # the bars are coloured blanks
                assert [int(x) for x in numbers] == [sent, received]


async def test_help_presentation_and_small_terminal(plain):
    app = RingsimApp()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)
        await pilot.press("P")
        assert app.screen.has_class("-present")
        await pilot.press("P")
        assert not app.screen.has_class("-present")
    app = RingsimApp()
    async with app.run_test(size=(60, 20)):
        assert app.screen.has_class("-too-small")
        assert "60×20" in plain(app.screen.query_one("#too-small"))
    app = RingsimApp()
    async with app.run_test(size=(80, 24)) as pilot:  # the view fits; presentation mode does not
        assert not app.screen.has_class("-too-small")
        await pilot.press("P")
        await pilot.pause()
        assert app.screen.has_class("-too-small")
        said = " ".join(plain(app.screen.query_one("#too-small")).split())
        assert "presentation mode (P) needs at least 100×30" in said
        assert "Press P to leave it" in said
        await pilot.press("P")
        await pilot.pause()
        assert not app.screen.has_class("-too-small")


async def test_autoplay_steps_on_its_own_and_pauses():
    app = RingsimApp()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("plus", "plus", "space")
        assert app.state.playing
        # Autoplay at 0.25 s per iteration: a step or two, not the whole run (6 steps, after
        # which autoplay stops itself and space would start it again).
        await pilot.pause(0.6)
        await pilot.press("space")
        assert not app.state.playing and app.sim.position >= 1
        position = app.sim.position
        await pilot.pause(0.3)
        assert app.sim.position == position
        await pilot.press("plus", "plus")
        assert "Autoplay runs at 2 to 0.1 s per iteration." in notices(app)


async def test_lesson_panel_moves_the_simulator_to_each_stop(plain):
    from ringsim.lessons import load_lessons
    from ringsim.tui.widgets.lesson_panel import LessonPanel
    lessons = load_lessons()
    app = RingsimApp()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("l")
        panel = app.screen.query_one(LessonPanel)
        assert app.screen.has_class("-lesson") and app.focused is panel
        assert panel.lesson.number == 1 and lessons[0].title in plain(panel.query_one("#lesson-head"))
        # Lesson 3 (naive all-to-all): the simulator switches to its scenario.
        await pilot.press("right_curly_bracket", "right_curly_bracket")
        assert panel.lesson.number == 3
        assert app.sim.plan.algorithm == lessons[2].scenario.algorithm == "naive"
        for index, section in enumerate(lessons[2].sections()):
            if index:
                await pilot.press("right_square_bracket")
            assert panel.section.text == section.text
            if section.stop is not None:
                assert app.sim.position == section.stop
        # Lesson 5, the seed's reduce-scatter: each section's stop is the simulator's position.
        await pilot.press("right_curly_bracket", "right_curly_bracket")
        assert panel.lesson.number == 5 and app.sim.plan.algorithm == "ring"
        # A section without a stop (the title and objectives) leaves the simulator where it is:
        # at the scenario's start when the lesson opens.
        stops, where = [], 0
        for section in lessons[4].sections():
            where = where if section.stop is None else section.stop
            stops.append(where)
        seen = [app.sim.position]
        for _ in stops[1:]:
            await pilot.press("right_square_bracket")
            seen.append(app.sim.position)
        assert seen == stops and 3 in stops
        assert app.screen.query_one(TransferList).lines == app.sim.sentences()
        await pilot.press("left_square_bracket")
        assert app.sim.position == stops[-2]
        # The simulator keys still work while reading; l closes the panel.
        await pilot.press("n")
        assert app.sim.position == stops[-2] + 1
        await pilot.press("l")
        assert not app.screen.has_class("-lesson")


async def test_the_busiest_row_names_the_gpu_its_target_belongs_to(plain):
    # Halving-doubling on 6 GPUs: after step 1 GPU1 has sent most so far, but the target,
    # 2·(p2−1)·N/p2 + N = 20, is GPU2's (it takes GPU6's fold and hands the sum back).
    app = RingsimApp(Simulation.create("halving-doubling", 6, 8))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n")
        await pilot.pause()
        assert app.sim.ledger().busiest() == 0 and app.sim.busiest_gpu() == 1
        text = " ".join(plain(app.screen.query_one(Counters)).split())
        sent = int(app.sim.ledger().sent[1])
        assert f"busiest GPU2 sent {sent} of 2·(p2−1)·N/p2 + N = 20" in text


async def test_the_counters_say_what_p2_and_rem_are_where_their_formulas_use_them(plain):
    app = RingsimApp(Simulation.create("halving-doubling", 6, 8))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        text = " ".join(plain(app.screen.query_one(Counters)).split())
        assert "p2 = 4, the largest power of two ≤ G; rem = G − p2 = 2" in text
        await pilot.press("G", "G")  # 8 GPUs, a power of two: no p2 in the formulas
        await pilot.pause()
        assert "p2" not in " ".join(plain(app.screen.query_one(Counters)).split())


async def test_the_legend_under_the_gpus_is_never_cut_by_the_sweep_plot_beside_it():
    from rich.cells import cell_len
    app = RingsimApp(Simulation.create("ring", 4, 8))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        legend = app.screen.query_one("#legend")
        assert "v: numbers" in str(legend.content)  # the whole legend where there is room
        await pilot.press("w")  # the plot takes 56 of the 120 columns
        await pilot.pause()
        await pilot.pause()
        shown = str(legend.content)
        assert cell_len(shown) <= legend.content_region.width
        assert "✓ complete sum" in shown
