"""The sweep pane's y labels span the curves (1280×720 ≈ 160×45 cells); the timeline pane shows steps."""

import re

import pytest

from ringsim.algorithms import make_plan
from ringsim.timeline import simulate
from ringsim.tui.app import RingsimApp
from ringsim.tui.widgets.sweep_plot import series
from ringsim.tui.widgets.timeline_pane import MARKS, TimelinePane, step_ends

BROWSER = (160, 45)  # a 1280×720 window at 8×16 pixels a cell
ROUND = re.compile(r"(1|10|100|1,000) (ns|µs|ms|s)|(1|10|100) (B|kB|MB|GB|TB)/s")
SECONDS = {"ns": 1e-9, "µs": 1e-6, "ms": 1e-3, "s": 1.0}


def screen_rows(app) -> list[str]:
    return [strip.text for strip in app.screen._compositor.render_strips()]


def _seconds(label: str) -> float:
    number, unit = label.split()
    return float(number.replace(",", "")) * SECONDS[unit]


@pytest.mark.parametrize("size", [BROWSER, (140, 40)])
async def test_the_sweep_pane_labels_below_and_above_every_curve(size):
    pytest.importorskip("textual_plotext")
    from ringsim.tui.sweeps import sweep_view
    app = RingsimApp()
    async with app.run_test(size=size) as pilot:
        await pilot.press("w")
        await pilot.pause()
        labels = [m.group(1) for row in screen_rows(app)
                  for m in [re.search(r"([\d,]+ (?:ns|µs|ms|s))\s*┤", row)] if m]
        assert len(labels) >= 3 and all(ROUND.fullmatch(l) for l in labels), labels
        values = [_seconds(l) for l in labels]
        view = sweep_view(app.sim.plan.gpus, app.state.topology, app.sim.layout.elements)
        times = [y for points in series(view, "time").values() for _, y in points]
        assert min(values) < 100e-6  # the small sizes' times have labels under them
        assert min(values) <= min(times) and max(times) <= max(values)


def test_step_ends_are_where_each_steps_last_transfer_arrives():
    timeline = simulate(make_plan("ring", 4), 8)
    assert step_ends(timeline, 60) == [9, 19, 29, 39, 49, 59]  # six equal steps


async def test_the_timeline_pane_shows_step_boundaries(plain):
    app = RingsimApp()
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.press("n", "T")
        await pilot.pause()
        lines = plain(app.screen.query_one(TimelinePane)).splitlines()
        ruler, strips = lines[1], lines[2:6]
        assert lines[0].index("▼") == ruler.index("┊")  # the current step's end, marked over it
        assert ruler.count("┊") == 6  # one mark where each of the ring's 6 steps ends
        for line in strips:
            cells = line.split()[1]
            # Steps alternate marks: 6 runs of 10 columns, █ for odd steps, ▒ for even ones.
            runs = re.findall(r"(█+|▒+)", cells)
            assert [len(r) for r in runs] == [10] * 6
            assert [r[0] for r in runs] == [MARKS[0], MARKS[1]] * 3


def test_every_algorithm_of_the_sweep_panel_has_its_own_colour():
    from ringsim.algorithms import ALGORITHMS
    from ringsim.tui.widgets.sweep_plot import COLOURS, MARK, NCCL
    shown = COLOURS[:len(ALGORITHMS)]
    assert len(COLOURS) >= len(ALGORITHMS) and len(set(shown)) == len(shown)
    assert NCCL not in shown and MARK not in shown  # NCCL's line and the size mark stand apart
