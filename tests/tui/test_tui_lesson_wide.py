"""A lesson's table wider than the panel keeps one row a line (cut at the edge, with a line
saying where all of it shows), and key f shows the whole section at the terminal's width."""

from rich.cells import cell_len

from ringsim.tui.app import RingsimApp
from ringsim.tui.widgets.lesson_markdown import cut_lines, wide_hint
from ringsim.tui.screens.lesson_page import LessonPage
from ringsim.tui.widgets.lesson_panel import LessonPanel

from .test_tui_small import screen_rows, until

CUT = "↔ cut at the"


def test_cut_lines_cuts_only_the_long_lines_and_marks_them():
    code = "short\n" + "x" * 30 + "\nα = 5 µs, 100 GB/s"
    cut, widest = cut_lines(code, 12)
    assert widest == 30
    assert cut.splitlines() == ["short", "x" * 11 + "…", "α = 5 µs, 1…"]
    assert all(cell_len(line) <= 12 for line in cut.splitlines())
    assert cut_lines(code, 40) == (code, 30)
    # wide characters count as two cells: none is split in half (a space takes its place)
    cut, _ = cut_lines("汉字汉字汉字", 6)
    assert cut == "汉字 …" and cell_len(cut) == 6
    # a tab is measured as the code block shows it, trailing spaces are not, and no width is
    # narrower than the … itself
    assert cut_lines("\tabcdefgh", 8) == ("    abc…", 12)
    assert cut_lines("abc" + " " * 40 + "\nde", 10) == ("abc\nde", 3)
    assert cut_lines("abc", 0) == ("…", 3)


def test_the_hint_names_f_only_where_the_full_width_page_holds_the_block():
    assert wide_hint(55, 120) == "↔ cut at the panel's edge: f shows it whole"
    assert wide_hint(75, 81) == "↔ cut at the panel's edge: f shows it whole"
    assert wide_hint(75, 80) == "↔ cut at the edge: a terminal of 81 columns shows it whole"


def _rows_between(rows: list[str], first: str, last: str) -> list[str]:
    top = next(i for i, r in enumerate(rows) if first in r)
    bottom = next(i for i, r in enumerate(rows) if last in r)
    return rows[top:bottom + 1]


async def test_lesson_9s_table_keeps_a_row_a_line_beside_the_gpus_and_f_shows_it_whole():
    app = RingsimApp(lesson=9)
    async with app.run_test(size=(120, 40)) as pilot:
        panel = app.screen.query_one(LessonPanel)
        await pilot.press("right_square_bracket", "right_square_bracket")  # the priced table
        assert await until(pilot, lambda: any("nccl-tree (C=64)" in r for r in screen_rows(app)))
        rows = screen_rows(app)
        table = _rows_between(rows, "ring        ", "nccl-tree (C=64)")
        # ten algorithms, one screen row each (wrapped, each would take two)
        assert len(table) == 10, table
        assert any("…" in r for r in table)
        assert any("cut at the panel's edge: f shows it whole" in r for r in rows)
        assert "75.76 GB/s" not in "\n".join(rows)  # the busbw column is past the edge
        await pilot.press("f")
        assert await until(pilot, lambda: isinstance(app.screen, LessonPage))
        rows = screen_rows(app)
        text = "\n".join(rows)
        assert "Lesson 9 of" in rows[0]
        for row in ("ring                   510     10.5 ms   75.76 GB/s",
                    "halving-doubling        16      8.0 ms   99.01 GB/s <"):
            assert row in text
        assert CUT not in text
        await pilot.press("escape")
        assert await until(pilot, lambda: not isinstance(app.screen, LessonPage))
        assert app.screen.query_one(LessonPanel) is panel and panel.section_index == 2


async def test_a_table_that_fits_shows_no_hint():
    app = RingsimApp(lesson=9)
    async with app.run_test(size=(80, 40)) as pilot:  # under 110 columns the panel is full width
        await pilot.press("right_square_bracket", "right_square_bracket")
        assert await until(pilot, lambda: any("nccl-tree (C=64)" in r for r in screen_rows(app)))
        text = "\n".join(screen_rows(app))
        assert "75.76 GB/s" in text and CUT not in text


async def test_a_block_no_page_can_hold_names_the_terminal_width_that_can():
    # Lesson 1's training table has a 75-column line; at 80 columns the panel (full width
    # there) cuts it, and the page would be only as wide, so the hint names 81 columns.
    app = RingsimApp(lesson=1)
    async with app.run_test(size=(80, 40)) as pilot:
        await pilot.press(*["right_square_bracket"] * 2)
        assert await until(pilot, lambda: any("epoch  loss" in r for r in screen_rows(app)))
        text = "\n".join(screen_rows(app))
        assert "a terminal of 81 columns shows it whole" in text
        assert "f shows it whole" not in text


async def test_the_full_width_page_keeps_the_question_and_says_more_only_where_it_scrolls():
    app = RingsimApp(lesson=5)
    async with app.run_test(size=(120, 40)) as pilot:
        panel = app.screen.query_one(LessonPanel)
        while panel.question is None:
            await pilot.press("right_square_bracket")
        prompt = panel.question.prompt
        await pilot.press("f")
        assert await until(pilot, lambda: isinstance(app.screen, LessonPage))
        await pilot.pause()
        text = " ".join(" ".join(screen_rows(app)).split())
        assert " ".join(prompt.split())[:40] in text
        assert "answer it in the lesson panel" in text
        box = app.screen.query_one("#lesson-page")
        assert (box.max_scroll_y > 0) == ("more" in str(box.border_subtitle))
        assert "escape or f to close" in str(box.border_subtitle)
        await pilot.press("escape")
        assert await until(pilot, lambda: not isinstance(app.screen, LessonPage))
