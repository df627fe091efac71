"""The "This iteration" box shows every sentence of the step just carried out, whichever way
the step was reached (forward, back, reset, autoplay), read off the rendered screen."""

import re

import pytest

from ringsim import Simulation
from ringsim.algorithms import ALGORITHMS
from ringsim.tui.app import RingsimApp

WIDE = (140, 45)


def box_text(app, selector: str = "#transfers-box") -> str:
    """The words a box shows on screen (its border and wrapping removed), one space apart."""
    box = app.screen.query_one(selector)
    region = box.region
    rows = [strip.text for strip in app.screen._compositor.render_strips()]
    inside = [row[region.x + 1:region.right - 1] for row in rows[region.y + 1:region.bottom - 1]]
    return " ".join(" ".join(inside).split())


def missing(app) -> list[str]:
    shown = box_text(app)
    return [s for s in app.sim.sentences() if " ".join(s.split()) not in shown]


@pytest.mark.parametrize("name", list(ALGORITHMS))
async def test_every_sentence_is_on_screen_forward_back_and_forward_again(name):
    app = RingsimApp(Simulation.create(name, 4, 8))
    async with app.run_test(size=WIDE) as pilot:
        await pilot.pause()
        steps = len(app.sim.plan)
        walk = ["n"] * steps + ["p"] * steps + ["n"] * steps
        for key in walk:
            await pilot.press(key)
            await pilot.pause()
            assert missing(app) == [], (name, key, app.sim.position)


async def test_reset_then_autoplay_shows_every_sentence():
    app = RingsimApp()
    async with app.run_test(size=WIDE) as pilot:
        await pilot.press("n", "n", "r")
        await pilot.pause()
        app.action_play()  # space: the timer steps; one tick at a time is what matters here
        await pilot.pause()
        app.action_play()
        app._tick()
        await pilot.pause()
        assert app.sim.position == 1
        assert missing(app) == []


async def test_a_wrapped_sentence_is_shown_whole_on_80_columns():
    app = RingsimApp(Simulation.create("halving-doubling", 4, 8))
    async with app.run_test(size=(80, 24)) as pilot:
        for key in "npn":
            await pilot.press(key)
            await pilot.pause()
        assert app.sim.position == 1
        assert missing(app) == []
        assert not re.search(r"\w…$", box_text(app))
