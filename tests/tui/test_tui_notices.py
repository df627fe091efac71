"""The App's notices as the screen shows them: one copy of the same words at a time, again
once it has gone, and other words beside it."""

import asyncio

from ringsim import Simulation
from ringsim.tui.app import RingsimApp

SIZE = (120, 40)
FEW_GPUS = "The view shows 1 to 64 GPUs."
FEW_ELEMENTS = "The view shows 0 to 4,096 elements per GPU."


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
        assert await toasts(app, pilot) == [
            "With 3 GPUs the master you set no longer holds: back to the default."]
