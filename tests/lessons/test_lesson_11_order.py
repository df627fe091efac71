"""Lesson 11 shows the tree the learner is looking at before asking about it, and asks about
another number of GPUs only once the whole run of this one has been read."""

from __future__ import annotations

import pytest

from ringsim.cli import main
from ringsim.lessons import load_lessons


def _run(capsys, *argv: str) -> str:
    assert main(["lesson", "11", "--no-pause", *argv]) == 0
    return capsys.readouterr().out


def _questions(out: str) -> list[int]:
    return [i for i in range(len(out)) if out.startswith("Question:", i)]


@pytest.mark.parametrize("gpus", [None, "8", "5"])
def test_each_question_on_this_tree_comes_after_its_board(capsys, gpus):
    out = _run(capsys, *(["--gpus", gpus] if gpus else []))
    g = int(gpus or 4)
    start = out.index("─── Start: every GPU holds only its own gradient")
    first, second, third = _questions(out)
    assert start < first
    board = out[start:first].split("\n\n")[0].splitlines()[1:]  # under its title, to a blank line
    assert [line.split()[0] for line in board] == [f"GPU{k}" for k in range(1, g + 1)]
    assert out.index("Tree reduce · iteration 1 of") < second < out.index("Step 2")
    # the question on another number of GPUs comes once this run has been read to its end
    assert out.index("The whole run") < out.index("Apply it") < third
    assert out[third:].startswith("Question: At 1,000 GPUs the ring takes 1,998 steps.")


def test_the_questions_are_asked_at_the_runs_start_and_first_step_then_after_its_end():
    lesson = next(x for x in load_lessons() if x.number == 11)
    sections = lesson.sections()
    asked = [s for s in sections if s.questions]
    assert [s.stop for s in asked[:2]] == [0, 1]
    assert [q.answer for s in asked for q in s.questions] == ["4", "24", "20"]
    last_stop = max(i for i, s in enumerate(sections) if s.stop is not None)
    assert sections.index(asked[2]) > last_stop and asked[2].stop is None
