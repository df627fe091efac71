"""The whole-number expressions lesson files write: log2up, the levels of a binary tree."""

from __future__ import annotations

import pytest

from ringsim.core.errors import RingsimError
from ringsim.lessons.expr import evaluate


@pytest.mark.parametrize("gpus, levels", [(1, 0), (2, 1), (3, 2), (4, 2), (5, 3), (8, 3), (9, 4),
                                          (1000, 10), (1 << 20, 20)])
def test_log2up_is_the_levels_of_a_binary_tree(gpus, levels):
    assert evaluate("log2up(G)", gpus, 8) == levels
    assert evaluate("2*log2up(G)", gpus, 8) == 2 * levels


@pytest.mark.parametrize("text, said", [
    ("log2up(0)", "log2up() takes one whole number from 1, got 1 (0)"),
    ("log2up(G, N)", "log2up() takes one whole number from 1, got 2 (4, 8)"),
    ("log2up()", "log2up() needs numbers"),
    ("pow(G, 2)", "only min(), max() and log2up() may be called"),
])
def test_log2up_refuses_what_has_no_levels(text, said):
    with pytest.raises(RingsimError, match=r".*" + said.replace("(", r"\(").replace(")", r"\)")):
        evaluate(text, 4, 8)


def test_a_reply_with_no_digit_is_a_slip_only_where_a_number_is_asked_for():
    import io

    from ringsim.lessons import load_lessons
    from ringsim.lessons.model import Question
    from ringsim.lessons.runner import run_lesson
    assert Question("How many?", "24").unreadable("abc")
    assert not Question("How many?", "24").unreadable("") and not Question("?", "24").unreadable("2x")
    assert Question("Size?", "50 MiB").unreadable("fifty")
    assert not Question("What does GPU1 hold?", "a₁+b₁").unreadable("c")  # not a number: marked
    lesson = next(x for x in load_lessons() if x.number == 11)
    out = io.StringIO()
    run_lesson(lesson, out, io.StringIO("\nabc\n20\n\n48\n" + "\n" * 20))
    text = out.getvalue()
    assert text.count("The answer is a number: type it, or Enter to see it:") == 1
    assert "End of lesson 11: 2 of 2 answers right." in text
