"""Answers' explanations quote only the values they use, and the course's tables line up."""

from __future__ import annotations

import re

import pytest

from ringsim.lessons import load_lessons
from ringsim.lessons.text import fenced_blocks, misaligned
from ringsim.lessons.letters import letter_values, substitute
from ringsim.sim.scenario import Scenario

WORKED = re.compile(r"is (?P<formula>.+?); with (?P<given>.+?) that is (?P<rest>.+)\.$")


def _explanations(gpus: int | None = None):
    for lesson in load_lessons(gpus=gpus):
        for section in lesson.sections():
            for question in section.questions:
                yield lesson.number, question


@pytest.mark.parametrize("gpus", [None, 8])
def test_worked_formulas_name_and_replace_exactly_the_letters_they_use(gpus):
    seen = 0
    for number, question in _explanations(gpus):
        found = WORKED.search(question.why)
        if not found:
            continue
        seen += 1
        formula, given, rest = found.group("formula", "given", "rest")
        named = re.findall(r"\b([A-Z]) = ", given)
        assert named, (number, question.why)
        for name in named:  # a value the formula does not use is noise (N in 2·(G−1))
            assert re.search(rf"(?<![A-Za-z]){name}(?![A-Za-z₀-₉])", formula) or named == ["G"], \
                (number, question.why)
        worked = rest.rsplit(" = ", 1)[0] if " = " in rest else ""
        # No letter is left standing in the worked line: 'C + 2·⌈log₂8⌉ − 1' was half done.
        assert not re.search(r"(?<![A-Za-z])[A-Z](?![A-Za-z])", worked), (number, question.why)
    assert seen >= 5


def test_the_ring_steps_explanation_leaves_n_out():
    whys = [q.why for n, q in _explanations() if n == 8 and "number of steps is 2·(G−1)" in q.why]
    assert whys and all("N = " not in why and "2·(25−1) = 48" in why for why in whys), whys


def test_the_tree_steps_explanation_substitutes_its_chunks():
    whys = [q.why for n, q in _explanations() if n == 11 and "C + 2·⌈log₂G⌉ − 1" in q.why]
    # it names the G it asks about: 1,000 GPUs (20 steps), not the board's 4
    assert [re.search(r"C = 1 that is 1 \+ 2·⌈log₂([\d,]+)⌉ − 1 = (\d+)", why).groups()
            for why in whys] == [("1,000", "20")], whys


def test_substitute_refuses_a_formula_with_a_name_it_has_no_value_for():
    values = letter_values(Scenario("tree", 8, 8))
    assert values["C"] == 1 and substitute("C + 2·⌈log₂G⌉ − 1", values) == "1 + 2·⌈log₂8⌉ − 1"
    assert substitute("2·lg p2 + 2", values) is None
    # N₁ is another quantity than N: a half-done N₁ would read 8₁.
    assert substitute("1·N₁ + 3·N₂ (N₁, N₂: the two trees' halves)", values) is None


def test_misaligned_finds_a_cell_one_column_off_and_forgives_right_aligned_numbers():
    table = ("        in all   steps      time\n"
             "ring    2·N      2·G      1.2 ms\n"
             "tree    N        lg G    10.4 ms\n")
    assert misaligned(table) == []
    shifted = table + "hd      2·N     2·G      1.0 ms\n"
    assert misaligned(shifted) == ["hd      2·N     2·G      1.0 ms"]


def test_misaligned_measures_terminal_columns_not_characters():
    # A wide glyph takes two columns: lined up by characters, its row is off by one.
    table = "name  a     b\nx     1     2\n"
    assert misaligned(table + "全    1     2\n") == []
    assert misaligned(table + "全     1     2\n") == ["全     1     2"]


@pytest.mark.parametrize("gpus", [None, 8, 16])
def test_every_table_in_the_course_lines_up(gpus):
    tables = 0
    for lesson in load_lessons(gpus=gpus):
        for section in lesson.sections():
            for block in fenced_blocks(section.text):
                tables += 1
                assert misaligned(block) == [], (lesson.number, block)
    assert tables > 10


def test_a_closed_form_of_steps_is_worked_out_with_the_letters_of_its_options():
    # L and M (GPUs per node, nodes) are nowhere else in lesson 10: the reason fills them in.
    whys = [q.why for n, q in _explanations() if n == 10 and "Hierarchical" in q.why]
    assert whys == ["Hierarchical (2-D) ring on 64 GPUs runs 28 steps one after another (its "
                    "closed form 2·(L−1) + 2·(M−1) = 2·(8−1) + 2·(8−1) = 28), each paying α at "
                    "least once."]


def test_lesson_7_sets_the_textbook_form_beside_the_ring_unless_g_does_not_divide_n(capsys):
    from ringsim.cli import main
    assert main(["lesson", "7", "--no-pause"]) == 0
    out = capsys.readouterr().out
    assert "the busiest GPU sends and receives 2·(G−1)·N/G = 12 each" in out
    assert "⌊N/G⌋" not in out
    # G = 3 does not divide N = 8: the segments differ, and the exact form is the one that holds.
    assert main(["lesson", "7", "--no-pause", "--gpus", "3", "--elements", "8"]) == 0
    assert "the busiest GPU sends and receives 2·(N − ⌊N/G⌋) − 1 = 11 each" in capsys.readouterr().out


def test_lesson_14_says_what_mending_each_fault_alone_saves(capsys):
    # "What each costs, the other kept: the link 0 s, GPU5 0 s" left a newcomer to work out
    # which time was meant; the lesson says what mending one fault alone buys.
    from ringsim.cli import main
    assert main(["lesson", "14", "--no-pause"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "the other kept" not in out
    assert "Mend the link alone and the ring saves 0 s; mend GPU5 alone and it saves 0 s." in out


def test_lesson_10_sets_no_two_equal_rounded_times_side_by_side(capsys):
    # Halving-doubling and hierarchical both round to 9.9 ms at 1 GiB on dgx-h100: printed
    # one after the other they read as a slip, so the sentence names them without the time.
    from ringsim.cli import main
    assert main(["lesson", "10", "--no-pause"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "halving-doubling's 9.9 ms and hierarchical's" not in out
    assert ("faster still than hierarchical and than halving-doubling (ringsim compare, below, "
            "prints all three to the hundredth of a millisecond)") in out
