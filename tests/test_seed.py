"""The seed's own example (G = 4) must come out of ringsim word for word."""

import pytest

import ringsim
from ringsim import Simulation

ITERATION_1 = [
    "GPU1 sends a₁ to GPU2, where it is added to b₁",
    "GPU2 sends b₂ to GPU3, where it is added to c₂",
    "GPU3 sends c₃ to GPU4, where it is added to d₃",
    "GPU4 sends d₄ to GPU1, where it is added to a₄",
]
ITERATION_2 = [
    "GPU1 sends (d₄+a₄) to GPU2, where it is added to b₄",
    "GPU2 sends (a₁+b₁) to GPU3, where it is added to c₁",
    "GPU3 sends (b₂+c₂) to GPU4, where it is added to d₂",
    "GPU4 sends (c₃+d₃) to GPU1, where it is added to a₃",
]


@pytest.fixture
def seed():
    return Simulation.create("ring", 4, 8)


def test_iteration_1_sentences(seed):
    seed.step()
    assert seed.sentences() == ITERATION_1
    assert seed.banner == "Reduce-scatter · iteration 1 of 3"


def test_iteration_2_sentences(seed):
    seed.goto(2)
    assert seed.sentences() == ITERATION_2
    assert seed.sentences(0) == ITERATION_1


def test_after_reduce_scatter_every_gpu_holds_one_complete_segment(seed):
    seed.goto(3)
    complete = {g: [j for j in range(4) if seed.symbolic.is_complete(g, j)] for g in range(4)}
    # GPU k holds the complete sum of segment (k mod G) + 1: GPU1 → segment 2, …, GPU4 → 1.
    assert complete == {0: [1], 1: [2], 2: [3], 3: [0]}
    assert seed.symbolic.label(0, 1) == "a₂+b₂+c₂+d₂"
    assert seed.symbolic.label(3, 0) == "a₁+b₁+c₁+d₁"


def test_reduce_scatter_order_is_the_seeds_rule():
    plan = ringsim.make_plan("ring", 4)
    for s in range(1, 4):
        step = plan.steps[s - 1]
        for t in step.transfers():
            k = t.src + 1  # the seed's 1-based numbering
            assert t.first + 1 == ((k - s) % 4) + 1
            assert t.dst + 1 == (k % 4) + 1
            assert t.op == "reduce"


def test_all_gather_copies_complete_segments_and_ends_synchronised(seed):
    seed.goto(4)
    assert seed.banner == "All-gather · iteration 1 of 3"
    assert seed.sentences()[0] == "GPU1 sends (a₂+b₂+c₂+d₂) to GPU2, where it replaces b₂"
    seed.run()
    assert seed.banner == "Done: every GPU holds the sum"
    assert all(seed.symbolic.label(g, j) == "+".join(f"{c}{'₁₂₃₄'[j]}" for c in "abcd")
               for g in range(4) for j in range(4))
    values = seed.values()
    assert (values == seed.inputs.sum(axis=0)).all()


def test_seed_counts(seed):
    seed.run()
    ledger = seed.ledger()
    assert ledger.total == 2 * 3 * 8 == 48
    assert ledger.sent.tolist() == [12] * 4 == [2 * 3 * 8 // 4] * 4
    assert ledger.received.tolist() == [12] * 4
    master = Simulation.create("master", 4, 8)
    master.run()
    assert master.ledger().total == 48
    assert master.ledger().received[0] == 3 * 8 and master.ledger().sent[0] == 3 * 8
    naive = Simulation.create("naive", 4, 8)
    naive.run()
    assert naive.ledger().total == 4 * 3 * 8


def test_the_checker_says_what_is_wrong_where(seed):
    problems = seed.problems()
    assert "GPU1 segment 1 holds a₁, should hold a₁+b₁+c₁+d₁" in problems
    assert "GPU3's numbers differ from the element-wise sum" in problems
    seed.goto(2)
    assert "GPU3 segment 1 holds a₁+b₁+c₁, should hold a₁+b₁+c₁+d₁" in seed.problems()
    seed.run()
    assert seed.problems() == [] and seed.correct()
