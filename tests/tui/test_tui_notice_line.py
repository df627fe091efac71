"""Where the notices show: in the key footer's row at the bottom, taking rows from the boxes
above when there are more, never over the counters (80×24, 120×40, presentation mode); the oldest
go first when wrapped ones would take rows from the GPU view."""

import pytest

from ringsim import Simulation
from ringsim.tui.app import RingsimApp

LONG = "has neither chunks nor channels"  # about 100 characters: two rows on 80 columns


async def settled(pilot) -> None:
    for _ in range(3):
        await pilot.pause()


def notice_regions(app) -> list:
    """The screen regions of the notices shown."""
    return [toast.region for toast in app.screen.query("Toast")]


def assert_clear_of_the_counters(app) -> None:
    screen = app.screen
    regions = notice_regions(app)
    assert regions and all(region for region in regions)
    assert max(region.bottom for region in regions) == screen.size.height  # the footer's row
    for box in ("#counters", "#counters-box"):
        counters = screen.query_one(box).region
        assert counters, box
        assert not any(region.overlaps(counters) for region in regions), (box, counters, regions)


@pytest.mark.parametrize("size, present", [((80, 24), False), ((120, 40), False), ((120, 40), True)],
                         ids=["80x24", "120x40", "present"])
async def test_notices_leave_the_counters_in_view(size, present):
    app = RingsimApp(Simulation.create("master", 5, 8, master=5), present=present)
    async with app.run_test(size=size, notifications=True) as pilot:
        await settled(pilot)
        await pilot.press(*"n" * 3)  # the run is done
        await settled(pilot)
        assert_clear_of_the_counters(app)
        await pilot.press("less_than_sign", "s", "g")  # GPU5 slowed, then gone: two notices
        await settled(pilot)
        assert len(notice_regions(app)) == 2
        assert_clear_of_the_counters(app)
        await pilot.press("c")  # a notice two rows long on 80 columns
        await settled(pilot)
        assert any(LONG in str(toast.render()) for toast in app.screen.query("Toast"))
        assert_clear_of_the_counters(app)
        # Every counter row stays in view: the rows for the notices come from the boxes above.
        assert app.screen.query_one("#counters-box").max_scroll_y == 0


async def test_one_notice_takes_only_the_footers_row():
    app = RingsimApp()
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await settled(pilot)
        before = {box: app.screen.query_one(box).region for box in ("#view", "#transfers-box", "#counters-box")}
        await pilot.press(*"n" * 7)
        await settled(pilot)
        assert [(r.y, r.height) for r in notice_regions(app)] == [(23, 1)]
        # Nothing moves, nothing is covered.
        assert {box: app.screen.query_one(box).region for box in before} == before


async def test_notices_that_wrap_give_way_before_the_gpu_view_does():
    app = RingsimApp(Simulation.create("master", 5, 8, master=5))
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await settled(pilot)
        await pilot.press("less_than_sign", "s", "g")  # two notices of one row each
        await settled(pilot)
        await pilot.press("c")  # a third, two rows long: four rows would not fit
        await settled(pilot)
        texts = [str(toast.render()) for toast in app.screen.query("Toast")]
        assert len(texts) == 2 and LONG in texts[-1]  # the oldest went; the newest shows whole
        assert sum(region.height for region in notice_regions(app)) == 3
        view = app.screen.query_one("#view")
        assert view.max_scroll_y == 0  # every GPU panel's bottom edge in view
        assert not any(region.overlaps(view.region) for region in notice_regions(app))
        assert_clear_of_the_counters(app)
