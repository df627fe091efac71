"""Brackets reach the screen as written: Textual reads "[plot]" or "[b]" in a plain string as
markup and drops it, so every text the TUI shows goes in as Text or Content."""

import sys
from pathlib import Path

from ringsim.lessons import load_lessons
from ringsim.tui.app import RingsimApp
from ringsim.tui.widgets.lesson_panel import LessonPanel

from .test_tui_transfers_shown import screen

LESSONS = Path(__file__).resolve().parents[2] / "lessons"


async def test_the_plot_extras_install_hint_keeps_its_brackets(monkeypatch):
    monkeypatch.setitem(sys.modules, "textual_plotext", None)  # as if the extra were not installed
    app = RingsimApp()
    async with app.run_test(size=(140, 45)) as pilot:
        await pilot.press("w")
        await pilot.pause()
        text = " ".join(screen(app).replace("│", " ").split())
        assert "pip install '.[plot]' from a clone of ringsim" in text


async def test_a_notice_with_brackets_shows_them():
    app = RingsimApp()
    async with app.run_test(size=(140, 45)) as pilot:
        app.notify("held[3][1] is not [b]bold[/b]; pip install '.[mpi]'")
        app.simulator.query_one(LessonPanel).notify("press [ or ]")  # a widget's notice too
        await pilot.pause()
        shown = [(n.message, n.markup) for n in app._notifications]
        # Textual's toast shows a notice with markup=False as written (Content, not markup).
        assert shown == [("held[3][1] is not [b]bold[/b]; pip install '.[mpi]'", False),
                         ("press [ or ]", False)]


async def test_a_lesson_title_and_heading_with_brackets_show_them(tmp_path):
    source = sorted(LESSONS.glob("01-*.md"))[0]
    text = source.read_text(encoding="utf-8")
    text = text.replace("title: Why GPUs must talk", "title: GPUs [b]talk[/b] [plot]", 1)
    text = text.replace("# Why GPUs must talk", "# Why [red]GPUs[/red] talk", 1)
    (tmp_path / source.name).write_text(text, encoding="utf-8")
    lessons = load_lessons(tmp_path)
    app = RingsimApp()
    async with app.run_test(size=(140, 45)) as pilot:
        await pilot.pause()
        app.simulator.query_one(LessonPanel).load(lessons)
        await pilot.press("l")
        await pilot.pause()
        shown = screen(app)
        assert "Lesson 1 of 1: GPUs [b]talk[/b] [plot]" in shown
        assert "Why [red]GPUs[/red] talk" in shown
        assert "[ ] sections · { } lessons" in shown


async def test_the_help_screen_shows_bracket_keys():
    app = RingsimApp()
    async with app.run_test(size=(140, 45)) as pilot:
        await pilot.press("question_mark", "end")
        await pilot.pause()
        shown = screen(app)
        assert "]  [" in shown and "}  {" in shown


async def test_ctrl_c_says_which_key_quits_in_plain_words():
    # Textual's own hint reads "Press [b]ctrl+q[/b] to quit the app", in markup, which the
    # app's plain notices would show as typed; the app says it plainly, naming its q.
    app = RingsimApp()
    async with app.run_test(size=(140, 45)) as pilot:
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert [(n.title, n.message) for n in app._notifications] == [
            ("Do you want to quit?", "Press q to quit")]
        assert app.is_running
