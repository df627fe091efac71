"""Lesson 11 shows the tree the learner is looking at, parents and all, before asking about
it; asks about trees of other sizes, so that the run's own counters never give an answer
away; and walks the whole run, the total coming back down included."""

from __future__ import annotations

import pytest

from ringsim.cli import main
from ringsim.lessons import load_lessons


def _run(capsys, *argv: str) -> str:
    assert main(["lesson", "11", "--no-pause", *argv]) == 0
    return capsys.readouterr().out


def _questions(out: str) -> list[int]:
    return [i for i in range(len(out)) if out.startswith("Question:", i)]


@pytest.mark.parametrize("gpus, parents", [
    (None, "GPU2 and GPU4 send up to GPU3; GPU3 sends up to GPU1"),
    ("2", "GPU2 sends up to GPU1"),
    ("8", "GPU2 and GPU4 send up to GPU3; GPU6 and GPU8 send up to GPU7; GPU3 and GPU7 send "
          "up to GPU5; GPU5 sends up to GPU1"),
])
def test_the_board_and_the_trees_parents_come_before_the_first_question(capsys, gpus, parents):
    out = _run(capsys, *(["--gpus", gpus] if gpus else []))
    g = int(gpus or 4)
    start = out.index("─── Start: every GPU holds only its own gradient")
    first, second = _questions(out)
    assert start < first
    board = out[start:first].split("\n\n")[0].splitlines()[1:]  # under its title, to a blank line
    assert [line.split()[0] for line in board] == [f"GPU{k}" for k in range(1, g + 1)]
    assert parents in " ".join(out[start:first].split())
    assert out.index("Tree reduce · iteration 1 of") < second


@pytest.mark.parametrize("gpus, down", [(None, 3), ("3", 2), ("8", 5), ("2", 1)])
def test_the_run_is_read_to_its_end_with_the_total_coming_down(capsys, gpus, down):
    out = _run(capsys, *(["--gpus", gpus] if gpus else []))
    done = out.index("─── Done: every GPU holds the sum")
    section = out[done:out.index("The whole run")]
    assert "The total comes back down" in section
    # the root's first hand-down, and at G > 2 the last step's too
    assert section.count("down the tree to") == down


def test_the_questions_ask_about_other_trees_than_the_boards():
    lesson = next(x for x in load_lessons() if x.number == 11)
    asked = [q for s in lesson.sections() for q in s.questions]
    assert [q.expression for q in asked] == ["formula.steps.value gpus=1000",
                                             "formula.busiest_sent.value gpus=2*G elements=2*N"]
    assert [q.answer for q in asked] == ["20", "48"]
