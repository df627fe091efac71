"""Pilot tests of the selected GPU and `s`, the sweep plot (w, W), the training-step pane (o, O),
and the clock and counters at 80×24: what is on screen, held against the engine and the CLI."""

import contextlib
import io
import json
import subprocess
import sys

from ringsim import Simulation
from ringsim.algorithms import ALGORITHMS
from ringsim.cli import main
from ringsim.cost.nccl import nccl_choice
from ringsim.tui.app import RingsimApp
from ringsim.tui.clock import Clock, fitting
from ringsim.tui.widgets.counters import Counters
from ringsim.tui.widgets.gpu_panel import GpuPanel
from ringsim.tui.widgets.heat_map import HeatMap
from ringsim.tui.widgets.overlap_pane import OverlapPane
from ringsim.tui.widgets.phase_banner import PhaseBanner, phase_line, shortest_phase
from ringsim.tui.widgets.sweep_plot import INSTALL, SweepPanel
from ringsim.tui.widgets.timeline_pane import TimelinePane
from ringsim.core.units import format_bandwidth, format_seconds

WIDE = (140, 40)
SMALL = (80, 24)


def screen_rows(app) -> list[str]:
    """The screen as the terminal shows it: one string per row."""
    return [strip.text for strip in app.screen._compositor.render_strips()]


def cli_json(*args: str) -> list[dict]:
    """The JSON objects a `ringsim` command prints, one per line."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(list(args)) == 0
    return [json.loads(line) for line in out.getvalue().splitlines() if line.strip()]


def titles(app) -> list[str]:
    return [str(p.border_title) for p in app.screen.query(GpuPanel)]


async def test_selection_moves_and_s_slows_the_selected_gpu_as_ringsim_timeline_does(plain):
    app = RingsimApp()
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert "▸" not in "".join(titles(app))  # no mark until the selection is used
        await pilot.press("greater_than_sign")
        assert app.state.selected == 1 and titles(app)[1].startswith("▸ GPU2")
        assert not titles(app)[0].startswith("▸") and not app.screen.query_one("#gpu-1").has_class("-selected")
        await pilot.press("less_than_sign", "less_than_sign")  # round the GPUs: GPU1, then GPU4
        assert app.state.selected == 3 and titles(app)[3].startswith("▸ GPU4")
        await pilot.press("greater_than_sign", "greater_than_sign")  # GPU1, GPU2
        await pilot.press("n", "T")
        banner = plain(app.screen.query_one(PhaseBanner))
        assert "end 30.00 µs" in banner
        for factor, gpu_text in ((0.5, "GPU2 at 0.5× speed"), (0.25, "GPU2 at 0.25× speed")):
            await pilot.press("s")
            await pilot.pause()
            summary = cli_json("timeline", "-g", "4", "-n", "8", "--slow-gpu", f"2:{factor}", "--json")[-1]
            banner = plain(app.screen.query_one(PhaseBanner))
            assert f"end {format_seconds(summary['seconds'])} · flat · {gpu_text}" in banner
            assert summary["seconds"] > 30e-6
            assert f"GPU2 ×{factor:g}" in titles(app)[1]
            # the slow GPU's transfer arrives last, so it, not the lockstep model's GPU1, held the step up
            assert app.clock.bottleneck(app.sim.plan, 8, 1) == 1
            assert titles(app)[1].endswith("●") and not titles(app)[0].endswith("●")
            assert f"with {gpu_text}" in plain(app.screen.query_one(TimelinePane))
        await pilot.press("s")  # full speed again
        await pilot.pause()
        # full speed: NCCL's own model's pick for the call comes back beside the textbook clock
        nccl = nccl_choice("flat", 4, 32)
        assert (f"end 30.00 µs · flat · NCCL {nccl.algorithm}/{nccl.protocol} "
                f"{format_seconds(nccl.seconds)}\n") in plain(app.screen.query_one(PhaseBanner))
        assert app.clock.slow == {} and "×" not in titles(app)[1]
        # A slow GPU that leaves the run (g) is forgotten; the selection stays inside G.
        await pilot.press("greater_than_sign", "greater_than_sign", "s", "g")
        await pilot.pause()
        assert app.sim.plan.gpus == 3 and app.state.selected == 2 and app.clock.slow == {}
        assert any("GPU4 left the run" in str(n.message) for n in app._notifications)


async def test_selection_in_the_heat_map_and_slow_gpu_beyond_8():
    app = RingsimApp(Simulation.create("ring", 16, 16))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press(*["greater_than_sign"] * 11, "s", "n")
        await pilot.pause()
        assert app.state.selected == 11 and app.clock.slow == {11: 0.5}
        summary = cli_json("timeline", "-g", "16", "-n", "16", "--slow-gpu", "12:0.5", "--json")[-1]
        assert app.clock.reading(app.sim.plan, 16, 1).end == summary["seconds"]
        heat = app.screen.query_one(HeatMap)
        marked = [line.split()[0] for line, strip in zip(heat.lines, heat.strips)
                  if list(strip) and list(strip)[0].style.reverse]
        assert marked == ["GPU12"]  # the selected GPU's name in reverse video


async def test_sweep_plot_shows_the_engines_sweep_and_follows_t_g_and_n():
    from ringsim.cost.model import CostModel
    from ringsim.studies.sweep import sweep
    app = RingsimApp()
    async with app.run_test(size=WIDE) as pilot:
        await pilot.press("w")
        await pilot.pause()
        panel = app.screen.query_one(SweepPanel)
        assert panel.region.width >= 50 and panel.region.height >= 30
        text = "\n".join(screen_rows(app))
        # The engine's figures at the scenario's size (N = 8 float32s = 32 bytes per GPU).
        here = sweep(4, [32], CostModel.of("flat")).points[0]
        assert f"now 32B per GPU: ring {format_seconds(here.estimates['ring'].seconds)}" in text
        assert f"fastest there: {here.best} {format_seconds(here.estimates[here.best].seconds)}" in text
        for name in ALGORITHMS:
            assert name in text
        assert "nvls not drawn: its links (one switch) end in a" in text  # flat's switch does not add
        assert "all-reduce time · 4 GPUs · flat" in text and "bytes per GPU" in text
        assert "4B" in text and "1KiB" in text  # the log axis' ticks
        assert any(c in text for c in "⠁⠊⣀⠤")  # lines drawn by plotext in braille
        await pilot.press("t", "G")
        await pilot.pause()
        text = "\n".join(screen_rows(app))
        topology = app.clock.topology
        assert f"all-reduce time · 5 GPUs · {topology}" in text and panel.region.width > 0
        await pilot.press("W")  # busbw, from the same engine point
        await pilot.pause()
        text = "\n".join(screen_rows(app))
        here = sweep(5, [app.sim.layout.elements * 4], CostModel.of(topology)).points[0]
        assert f"all-reduce busbw · 5 GPUs · {topology}" in text
        assert f"ring {format_bandwidth(here.busbw('ring', 5))} busbw" in text
        await pilot.press("w")
        await pilot.pause()
        assert app.state.plot is None and panel.region.width == 0


async def test_sweep_plot_on_a_narrow_terminal_is_a_one_line_hint():
    app = RingsimApp()
    async with app.run_test(size=SMALL) as pilot:
        await pilot.press("w")
        await pilot.pause()
        assert app.screen.query_one(SweepPanel).region.width == 0
        rows = screen_rows(app)
        assert any("Sweep plot (w): needs 120 columns, this terminal has 80." in r for r in rows)
        assert app.screen.query_one("#counters-box").max_scroll_y == 0  # the counters still fit
        assert "? Help" in rows[-1] and "q Quit" in rows[-1]
    app = RingsimApp()
    async with app.run_test(size=(100, 40)) as pilot:  # taller: the hint on a row of its own
        await pilot.press("w")
        await pilot.pause()
        assert app.screen.query_one("#plot-hint").region.height == 1
        assert "this terminal has 100" in "\n".join(screen_rows(app))


async def test_sweep_plot_without_textual_plotext_says_how_to_get_it(monkeypatch, plain):
    monkeypatch.setitem(sys.modules, "textual_plotext", None)
    app = RingsimApp()
    async with app.run_test(size=WIDE) as pilot:
        await pilot.press("w")
        await pilot.pause()
        assert plain(app.screen.query_one("#plot-missing")).strip() == INSTALL  # brackets kept
        assert "now 32B per GPU" in plain(app.screen.query_one("#plot-legend"))


async def test_training_step_pane_shows_ringsim_overlaps_step(plain):
    app = RingsimApp()
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("o")
        await pilot.pause()
        pane = app.screen.query_one(OverlapPane)
        assert pane.region.width > 0 and app.screen.query_one(Counters).region.width == 0
        for model, keys, topology, algorithm in (("llama-7b", (), "flat", "ring"),
                                                  ("resnet-50", ("O",), "flat", "ring"),
                                                  ("resnet-50", ("t",), None, "ring"),
                                                  ("resnet-50", ("a",), None, "master")):
            await pilot.press(*keys)
            await pilot.pause()
            topology = topology or app.clock.topology
            expected = cli_json("overlap", "--model", model, "-g", "4", "--topology", topology,
                                "-a", algorithm, "--json")[0]
            text = plain(pane)
            lines = text.splitlines()
            assert lines[0].startswith("compute  ") and lines[1].startswith("comm     ")
            assert set(lines[0][9:].strip()) <= set("▒█▌·") and "█" in lines[0]
            assert "█" in lines[1]
            assert (f"step {format_seconds(expected['step_seconds'])} · exposed "
                    f"{format_seconds(expected['exposed_seconds'])} of "
                    f"{format_seconds(expected['communication_seconds'])} communication") in " ".join(text.split())
            assert (f"{len(expected['buckets'])} buckets of up to 25 MiB (the first 1 MiB, as DDP), "
                    f"{algorithm} all-reduce") in " ".join(text.split())
            title = str(app.screen.query_one("#overlap-box").border_title)
            assert f"{model} · {algorithm} · {topology}" in title
        await pilot.press("T")  # the timeline takes the place; o again brings the step back
        await pilot.pause()
        assert pane.region.width == 0 and app.screen.query_one(TimelinePane).region.width > 0
        await pilot.press("o", "o")
        await pilot.pause()
        assert pane.region.width == 0 and app.screen.query_one(Counters).region.width > 0


def test_the_clock_fits_beside_every_phase_at_80_columns():
    # Every algorithm at G = 4 and 8, every position, every preset G fits, with and without
    # a quarter-speed GPU: the phase and the clock fit the banner's 78 columns uncut.
    for name in ALGORITHMS:
        for gpus in (4, 8):
            sim = Simulation.create(name, gpus, 8)
            for topology in fitting(gpus)[0]:
                for slow in ({}, {gpus - 1: 0.25}):
                    clock = Clock(topology, tuple(slow.items()))
                    for position in range(len(sim.plan) + 1):
                        sim.goto(position)
                        reading = clock.reading(sim.plan, 8, position)
                        phase, gap, words = phase_line(sim.banner, reading, 78)
                        assert len(phase + gap + words) <= 78, (name, gpus, phase, words)
                        assert gap.strip() == "" and len(gap) >= 2
                        if slow and not reading.untimed:  # NVLS on a switch that only forwards
                            assert f"GPU{gpus} ×0.25" in words or f"GPU{gpus} at 0.25× speed" in words
                        nccl = reading.nccl_wordings()
                        if nccl and len(shortest_phase(sim.banner) + "  " + nccl[-1]) <= 78:
                            # whose each time is, wherever NCCL's shortest wording fits
                            assert "α-β-γ" in words and "NCCL" in words
                            assert words.endswith(reading.nccl_time), words


async def test_80x24_clock_and_counters_fit_without_cutting_or_scrolling(plain):
    app = RingsimApp()
    async with app.run_test(size=SMALL) as pilot:
        for _ in ALGORITHMS:
            await pilot.press("n", "greater_than_sign", "s")
            await pilot.pause()
            rows = screen_rows(app)
            timed = "not timed on flat" not in rows[1]  # NVLS: flat's switch does not add
            assert "…" not in rows[1] and ("×0.5" in rows[1]) == timed, rows[1]
            box = app.screen.query_one("#counters-box")
            assert box.max_scroll_y == 0, app.sim.plan.algorithm
            text = "\n".join(rows)
            for words in ("moved so far", "busiest GPU", "messages", "steps"):
                assert words in text
            await pilot.press("s", "s", "a")  # full speed again, next algorithm
        assert app.sim.plan.algorithm == "ring"


def test_import_ringsim_and_the_tui_do_not_load_plotext():
    code = ("import sys, ringsim, ringsim.tui.app; "
            "print(','.join(m for m in ('plotext', 'textual_plotext') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == ""


async def test_sweep_plot_of_one_gpu_has_no_busbw_and_says_so():
    app = RingsimApp(Simulation.create("ring", 1, 8))
    async with app.run_test(size=WIDE) as pilot:
        await pilot.press("w", "o")  # one GPU: every time is 0 s, and 0 has no place on a log axis
        await pilot.pause()
        assert "no all-reduce time to plot on 1 GPU" in "\n".join(screen_rows(app))
        await pilot.press("W")
        await pilot.pause()
        text = "\n".join(screen_rows(app))
        assert "no all-reduce busbw to plot on 1 GPU" in text
        assert "exposed 0 s" in text  # one GPU: no all-reduce, nothing exposed


def test_the_tracks_cover_what_the_engine_says_each_stream_is_busy():
    import numpy as np
    import pytest
    from ringsim.tui.training import training_step
    from ringsim.tui.widgets.overlap_pane import coverage, tracks
    assert coverage(np.array([[0.0, 0.5]]), 1.0, 4).tolist() == [1.0, 1.0, 0.0, 0.0]
    assert coverage(np.array([[0.1, 0.35]]), 1.0, 4).tolist() == pytest.approx([0.6, 0.4, 0.0, 0.0])
    step = training_step("llama-7b", 8, "dgx-h100", "ring")
    o, width = step.step, 50
    busy = np.array([[b.start, b.end] for b in o.buckets])
    # The columns' busy shares add up to the engine's communication time: nothing lost or doubled.
    assert coverage(busy, o.step_seconds, width).sum() * o.step_seconds / width == \
        pytest.approx(o.communication_seconds)
    compute, comm, end = tracks(step, width)
    assert len(compute) == len(comm) == width
    assert end == round(o.computed / o.step_seconds * width)  # backward ends here; red after it
    assert compute[0] == "▒" and compute[end - 1] == "█" and set(compute[end:]) <= {"·", "▌"}
    assert comm[-1] == "█"  # the last all-reduce runs after the backward pass: exposed


async def test_nvls_is_not_timed_where_the_switch_does_not_add(plain):
    # The clock treats NVLS on flat as compare --time, walk --time and the sweep pane do.
    from ringsim.algorithms.timing import unavailable
    from ringsim.cost.model import CostModel
    why = unavailable("nvls", CostModel.of("flat"), 4)
    app = RingsimApp(Simulation.create("nvls", 4, 8))
    async with app.run_test(size=WIDE) as pilot:
        await pilot.press("n")
        await pilot.pause()
        reading = app.clock.reading(app.sim.plan, 8, 1)
        assert reading.untimed == why and reading.wordings()[0] == f"not timed on flat: {why}"
        banner = plain(app.screen.query_one(PhaseBanner))
        assert "not timed on flat" in banner and "µs" not in banner
        assert app.clock.bottlenecks(app.sim.plan, 8, 1) == ()
        await pilot.press("T")  # no timeline where there is no time
        await pilot.pause()
        assert app.state.pane is None and app.screen.query_one(TimelinePane).region.width == 0
    app = RingsimApp(Simulation.create("nvls", 8, 8))
    app.clock = Clock("dgx-h100")
    assert not app.clock.reading(app.sim.plan, 8, 0).untimed
    assert app.clock.reading(app.sim.plan, 8, 2).end > 0
