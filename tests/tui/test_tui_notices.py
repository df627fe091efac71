"""The App's notices as the screen shows them: one copy of the same words at a time, again
once it has gone, and other words beside it; a notice goes as soon as what it speaks of changes."""

import asyncio

import pytest

from ringsim import Simulation
from ringsim.tui.app import RingsimApp

SIZE = (120, 40)
FEW_GPUS = "The view shows 1 to 64 GPUs."
FEW_ELEMENTS = "The view shows 0 to 4,096 elements per GPU."
RUN_DONE = "The run is done: press r to start again."
MASTER_GONE = "With 3 GPUs the master you set no longer holds: back to the default."


async def toasts(app, pilot) -> list[str]:
    """The words of each notice on screen, once Textual has drawn them."""
    await pilot.pause()
    await pilot.pause()
    return [str(toast.render()) for toast in app.screen.query("Toast")]


def at_the_minimum() -> RingsimApp:
    """An App on 1 GPU and 0 elements, where g and e are refused with a notice."""
    return RingsimApp(Simulation.create("ring", 1, 0))


async def test_a_held_key_shows_its_notice_once():
    app = at_the_minimum()
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await pilot.press(*"g" * 6)
        assert await toasts(app, pilot) == [FEW_GPUS]


async def test_other_words_show_beside_it():
    app = at_the_minimum()
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await pilot.press("g", "e", "g", "e")
        assert await toasts(app, pilot) == [FEW_GPUS, FEW_ELEMENTS]


async def test_the_same_words_show_again_once_the_notice_has_gone():
    app = at_the_minimum()
    # Long enough to be seen on a loaded machine; the test waits for the notice to go.
    app.NOTIFICATION_TIMEOUT = 2.0
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await pilot.press("g")
        assert await toasts(app, pilot) == [FEW_GPUS]
        for _ in range(150):
            await asyncio.sleep(0.1)
            if not await toasts(app, pilot):
                break
        assert await toasts(app, pilot) == []
        await pilot.press("g", "g")
        assert await toasts(app, pilot) == [FEW_GPUS]


async def test_the_same_words_show_again_after_the_notices_are_cleared():
    app = at_the_minimum()
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await pilot.press("g")
        assert await toasts(app, pilot) == [FEW_GPUS]
        app.clear_notifications()
        assert await toasts(app, pilot) == []
        await pilot.press("g")
        assert await toasts(app, pilot) == [FEW_GPUS]


async def test_a_master_gone_with_fewer_gpus_is_said_and_one_that_stays_is_kept():
    app = RingsimApp(Simulation.create("master", 4, 8, master=4))
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await pilot.press("G")  # 5 GPUs: GPU4 is still there
        assert dict(app.state.scenario.options) == {"master": 4}
        assert await toasts(app, pilot) == []
        await pilot.press("g", "g")  # 3 GPUs: GPU4 is gone
        assert dict(app.state.scenario.options) == {}
        assert await toasts(app, pilot) == [MASTER_GONE]


# r resets, p steps back, space plays from the start, g G a e E change the scenario.
@pytest.mark.parametrize("key", ["r", "p", "space", "g", "G", "a", "e", "E"])
async def test_the_run_done_notice_goes_as_soon_as_the_run_is_not_done(key):
    app = RingsimApp()
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await pilot.press(*"n" * 7)  # six steps, then once more
        assert await toasts(app, pilot) == [RUN_DONE]
        await pilot.press(key)
        assert await toasts(app, pilot) == []


async def test_the_run_done_notice_stays_while_the_run_is_still_done():
    app = RingsimApp()
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await pilot.press(*"n" * 7)
        await pilot.press("v", "T", "n")  # numbers, the timeline, n again: still done
        assert await toasts(app, pilot) == [RUN_DONE]


async def test_a_notice_about_the_change_stays_and_goes_with_the_next_change():
    app = RingsimApp(Simulation.create("master", 4, 8, master=4))
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await pilot.press(*"n" * 3)
        assert await toasts(app, pilot) == [RUN_DONE]
        await pilot.press("g")  # the run done goes; the notice about 3 GPUs comes
        assert await toasts(app, pilot) == [MASTER_GONE]
        await pilot.press("n", "v")
        assert await toasts(app, pilot) == [MASTER_GONE]
        await pilot.press("g")
        assert await toasts(app, pilot) == []


async def test_a_rule_stays_and_keeps_its_toast_when_a_notice_beside_it_goes():
    app = at_the_minimum()  # no steps: the run is done from the start
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await pilot.press("g", "n")
        assert await toasts(app, pilot) == [FEW_GPUS, RUN_DONE]
        rule = app.screen.query("Toast").first()
        await pilot.press("E")  # one element: a fresh run
        assert await toasts(app, pilot) == [FEW_GPUS]
        assert app.screen.query("Toast").first() is rule


async def test_a_notice_about_a_lesson_section_goes_when_the_reader_moves_on():
    app = RingsimApp(lesson=1)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await pilot.pause()
        await pilot.press("left_square_bracket")
        assert await toasts(app, pilot) == ["That is the first section."]
        await pilot.press("right_square_bracket")
        assert await toasts(app, pilot) == []


async def test_three_notices_at_most_the_oldest_goes_first():
    app = at_the_minimum()
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await pilot.press("g", "e", "n", "minus", "minus")  # the slowest speed, then slower
        slowest = "Autoplay runs at 2 to 0.1 s per iteration."
        assert await toasts(app, pilot) == [FEW_ELEMENTS, RUN_DONE, slowest]
        await pilot.press("g")  # gone, so it shows again
        assert await toasts(app, pilot) == [RUN_DONE, slowest, FEW_GPUS]


async def test_a_notice_clicked_away_stays_away_and_its_words_show_again_when_asked():
    app = at_the_minimum()
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await pilot.press("g")
        assert await toasts(app, pilot) == [FEW_GPUS]
        await pilot.click("Toast")  # a click takes a notice away
        assert await toasts(app, pilot) == []
        # Another notice comes and goes as its run changes: the clicked one does not come back.
        await pilot.press("n")
        assert await toasts(app, pilot) == [RUN_DONE]
        await pilot.press("E")
        assert await toasts(app, pilot) == []
        # Asked again, its words show again: nothing on screen holds them.
        await pilot.press("g")
        assert FEW_GPUS in await toasts(app, pilot)
