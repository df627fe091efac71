"""The lesson panel's replies end with one full stop, whatever the reason or answer ends with."""

from ringsim.tui.app import RingsimApp
from ringsim.tui.widgets.lesson_panel import LessonPanel, full_stop, split_heading

from .test_tui_markup import screen


def test_full_stop_is_added_only_where_missing():
    assert full_stop("a₁+b₁") == "a₁+b₁."
    assert full_stop("… it holds d₄+a₄.") == "… it holds d₄+a₄."
    assert full_stop(24) == "24."
    assert full_stop("Really?") == "Really?"


def test_split_heading_takes_the_first_heading_line_only():
    assert split_heading("# Why GPUs talk\n\nText [x].") == ("Why GPUs talk", "Text [x].")
    assert split_heading("## Step 1\nMore") == ("Step 1", "More")
    assert split_heading("No heading\n# Later") == ("", "No heading\n# Later")


async def test_a_wrong_reply_gives_the_reason_with_one_full_stop(plain):
    app = RingsimApp()
    async with app.run_test(size=(140, 45)) as pilot:
        await pilot.press("l", "right_curly_bracket")  # lesson 2: the master
        panel = app.screen.query_one(LessonPanel)
        replies = 0
        while panel.lesson.number == 2:
            if panel.question is not None:
                reason = panel.question.explain()
                assert reason.endswith(".")  # the engine's reasons are sentences already
                verdict = panel.reply("999999")
                replies += 1
                assert verdict == f"Not quite: {reason}" and not verdict.endswith("..")
                await pilot.pause()
                shown = " ".join(screen(app).replace("│", " ").split())
                assert " ".join(reason.split())[-30:] in shown
                assert ".." not in plain(panel.query_one("#lesson-reply"))
                continue
            await pilot.press("right_square_bracket")
        assert replies >= 3


async def test_a_reply_with_no_number_to_a_number_question_keeps_it_open():
    app = RingsimApp()
    async with app.run_test(size=(140, 45)) as pilot:
        await pilot.press("l", "right_curly_bracket")  # lesson 2: the master
        panel = app.screen.query_one(LessonPanel)
        while panel.question is None:
            await pilot.press("right_square_bracket")
        question, asked = panel.question, panel.asked
        verdict = panel.reply("abc")
        assert verdict == "The answer is a number: type it, or Enter with nothing to see it."
        assert panel.question is question and panel.asked == asked  # not marked, still open
        await pilot.pause()
        assert panel.query_one("#lesson-reply").display  # the learner sees why
        assert "The answer is a number" in " ".join(screen(app).replace("│", " ").split())
        assert panel.reply(question.answer).startswith("Right:")
