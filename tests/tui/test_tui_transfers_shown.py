"""The "This iteration" box shows every sentence of the step just carried out, whichever way
the step was reached (forward, back, reset, autoplay), read off the rendered screen."""


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
        shown, sentences = box_text(app), app.sim.sentences()
        visible = [s for s in sentences if s in shown]
        # What shows is whole sentences, wrapped word by word; the rest is counted.
        assert visible and shown == " ".join(visible)
        hidden = len(sentences) - len(visible)
        title = app.screen.query_one("#transfers-box").border_title
        assert (f"{hidden} more below" in title) if hidden else title == "This iteration"


SMALL = (80, 24)


def screen(app) -> str:
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


@pytest.mark.parametrize("name", list(ALGORITHMS))
async def test_80x24_shows_every_segment_or_says_how_many_more_and_how(name):
    app = RingsimApp(Simulation.create(name, 4, 8))
    async with app.run_test(size=SMALL) as pilot:
        await pilot.press("n")
        await pilot.pause()
        text, box = screen(app), app.screen.query_one("#transfers-box")
        segments = app.sim.plan.segments
        # Every segment of every GPU is on screen (one row a cell where two would not fit).
        view = app.screen.query_one("#view")
        assert view.max_scroll_y == 0, name
        for panel in range(1, 5):
            cells = app.screen.query_one(f"#gpu-{panel}").cells
            assert len(cells) == segments
        # The sentences that do not fit are counted on the box's edge, with the keys to see them.
        shown = box_text(app)
        hidden = [s for s in app.sim.sentences() if " ".join(s.split()) not in shown]
        if hidden:
            assert f"This iteration · {len(hidden)} more below: tab here, then ↓" in text, name
            await pilot.press("tab")  # the keys go to the transfer list
            await pilot.pause()
            assert app.focused is box
            assert f"{len(hidden)} more below: ↓ pgdn end" in screen(app)
            await pilot.press("end")
            await pilot.pause()
            last = app.sim.sentences()[-1]
            assert " ".join(last.split()) in box_text(app)
            assert "more below" not in screen(app)
        else:
            assert "more below" not in text


async def test_80x24_bidirectional_ring_shows_all_8_segments_in_one_row_cells():
    app = RingsimApp(Simulation.create("bidirectional-ring", 4, 8))
    async with app.run_test(size=SMALL) as pilot:
        await pilot.press("n")
        await pilot.pause()
        text = screen(app)
        for label in ("a₁  → GPU2", "a₁+b₁  ← GPU1 +", "a₈  → GPU4", "a₈+d₈  ← GPU1 +"):
            assert label in text


async def test_80x24_eight_gpus_with_16_segments_say_which_segments_are_below():
    app = RingsimApp(Simulation.create("bidirectional-ring", 8, 16))
    async with app.run_test(size=SMALL) as pilot:
        await pilot.press("n")
        await pilot.pause()
        text = screen(app)
        assert "▼ segments 11–16 of 16 below: ↓ pgdn end" in text  # the GPU view has the keys
        await pilot.press("end")
        await pilot.pause()
        assert "▼ segments" not in screen(app) and "a₁₆" in screen(app)


async def test_80x24_lesson_shows_its_question_and_its_title_once():
    from ringsim.lessons import load_lessons
    from ringsim.tui.widgets.lesson_panel import LessonPanel
    lessons = load_lessons()
    app = RingsimApp()
    async with app.run_test(size=SMALL) as pilot:
        await pilot.press("l")
        await pilot.pause()
        panel = app.screen.query_one(LessonPanel)
        for lesson in lessons[:6]:
            for index, section in enumerate(lesson.sections()):
                await pilot.pause()
                text = screen(app)
                words = " ".join(text.replace("│", " ").split())
                # Inside the panel (its edge names the lesson): the heading once, no boxed repeat.
                assert box_text(app, "#lesson").count(lesson.title.split(" —")[0]) <= 1, (lesson.number, index)
                if section.questions:
                    prompt = " ".join(section.questions[0].prompt.split())
                    assert prompt[:60] in words, (lesson.number, index)
                await pilot.press("right_square_bracket")
        assert panel.lesson.number == 7


async def test_nvls_cells_name_the_switch_they_sent_to_and_heard_from():
    # The switch is a participant after the GPUs with no panel of its own: the GPUs' cells
    # say they sent to it, then that its sum replaced theirs.
    app = RingsimApp(Simulation.create("nvls", 4, 8))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("n")
        await pilot.pause()
        rows = [strip.text for strip in app.screen._compositor.render_strips()]
        assert sum(r.count("→ the switch") for r in rows) == 4, rows
        await pilot.press("n")
        await pilot.pause()
        rows = [strip.text for strip in app.screen._compositor.render_strips()]
        assert sum(r.count("← the switch =") for r in rows) == 4, rows


@pytest.mark.parametrize("gpus, size, keys", [
    (64, (120, 40), "n"), (48, (120, 40), "n"), (64, (140, 40), "n"),
    (64, (180, 40), "nw"), (64, (200, 40), "nw"), (48, (140, 40), "wn"), (32, (140, 40), "nw")])
async def test_a_wide_terminal_shows_every_segment_of_the_heat_map(gpus, size, keys):
    # Beside a heat map too wide for the 64-column boxes (or its half of what the sweep plot
    # leaves), the boxes narrow, down to the 36 columns a transfer sentence needs, and then go
    # under it, rather than hiding the last segments, where the complete sums appear.
    app = RingsimApp(Simulation.create("ring", gpus, gpus))
    async with app.run_test(size=size) as pilot:
        for key in keys:
            await pilot.press(key)
            await pilot.pause()
        row = next(line for line in screen(app).splitlines() if line.lstrip().startswith("GPU 1/2"))
        assert row.split("│")[0].count("▀") == gpus, row  # one cell per segment, none cut off
        assert app.screen.has_class("-heat")
