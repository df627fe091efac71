"""Closed forms for G that is not a power of two speak of p2 and rem: wherever one is printed,
a line says what they stand for, with their values."""

from ringsim.cli import main

P2_1000 = "p2 = 512, the largest power of two ≤ G; rem = G − p2 = 488"


def printed(capsys, command: str) -> str:
    """What `ringsim COMMAND` prints, its lines joined again where a sentence wrapped."""
    assert main(command.split()) == 0
    return " ".join(capsys.readouterr().out.split())


def test_compare_says_what_p2_and_rem_are_where_its_forms_use_them(capsys):
    assert P2_1000 in printed(capsys, "compare --gpus 1000 --elements 8")
    assert "p2 =" not in printed(capsys, "compare --gpus 1024 --elements 8")


def test_walk_says_it_under_its_ledger(capsys):
    out = printed(capsys, "walk -a halving-doubling --gpus 6")
    assert "2·lg p2 + 2 = 6" in out
    assert "p2 = 4, the largest power of two ≤ G; rem = G − p2 = 2" in out
    assert "p2 =" not in printed(capsys, "walk -a halving-doubling --gpus 8")


def test_a_lessons_reason_says_it_too(capsys):
    out = printed(capsys, "lesson 9 --no-pause")
    assert "(its closed form 2·lg p2 + 2 = 20, with " + P2_1000 in out


def test_a_formulas_reason_in_a_lesson_says_it_too(capsys):
    out = printed(capsys, "lesson 12 --no-pause")
    assert ("the number of steps is 2·lg p2 + 2; with G = 24 (p2 = 16, the largest power of two "
            "≤ G; rem = G − p2 = 8, the GPUs folded into partners first) that is 10.") in out


def test_walk_says_what_m_and_l_are_for_the_hierarchical_ring(capsys):
    out = printed(capsys, "walk -a hierarchical --gpus 12 --nodes 3")
    assert "2·(L−1) + 2·(M−1) = 10" in out  # 2·(4−1) + 2·(3−1)
    assert "M = 3 nodes; L = G/M = 4 GPUs in each" in out
    assert "M = " not in printed(capsys, "walk -a ring --gpus 12")
