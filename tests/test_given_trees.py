"""nccl-tree with the trees given GPU by GPU (--tree-parents): the sum, the counts, the price."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ringsim import Layout, allreduce, check, closed_form, make_plan, measure
from ringsim.algorithms import ALGORITHMS, checked_options, transfers
from ringsim.algorithms.timing import estimate
from ringsim.core.errors import RingsimError
from ringsim.cost.model import CostModel, price
from ringsim.cost.topology import load, presets


@st.composite
def given_trees(draw, max_gpus: int = 12):
    """G GPUs and 1..3 random trees over them, written as --tree-parents reads them."""
    g = draw(st.integers(1, max_gpus))
    trees = []
    for _ in range(draw(st.integers(1, 3))):
        order = draw(st.permutations(range(g)))
        parents = [0] * g
        for i, gpu in enumerate(order[1:], 1):  # each GPU hangs from one placed before it
            parents[gpu] = order[draw(st.integers(0, i - 1))] + 1
        trees.append(parents)
    return g, ";".join(",".join(map(str, t)) for t in trees), trees


@settings(max_examples=60, deadline=None)
@given(given_trees(), st.integers(0, 60), st.integers(1, 3))
def test_any_given_trees_sum_exactly_and_count_as_their_closed_form(case, n, chunks):
    g, text, trees = case
    plan = make_plan("nccl-tree", g, tree_parents=text, chunks=chunks)
    assert check(plan) == []
    assert plan.segments == len(trees) * chunks
    assert sum(len(s.src) for s in plan.steps) == transfers("nccl-tree", g, tree_parents=text,
                                                             chunks=chunks)
    ledger = measure(plan, Layout(plan.segments, n))
    form = closed_form("nccl-tree", g, n, tree_parents=text, chunks=chunks)
    assert (ledger.total, ledger.steps, ledger.messages) == \
        (form.total.value, form.steps.value, form.messages.value)
    assert ledger.sent.max(initial=0) == form.busiest_sent.value
    assert ledger.received.max(initial=0) == form.busiest_received.value
    assert ALGORITHMS["nccl-tree"].busiest_gpu(g, n, **checked_options(plan)) == ledger.busiest()
    x = np.random.default_rng(g * 100 + n).integers(-1000, 1000, (g, n)).astype(np.float32)
    out = allreduce(list(x), "nccl-tree", tree_parents=text, chunks=chunks).outputs
    expected = x.sum(axis=0, dtype=np.float64).astype(np.float32)  # whole numbers: exact
    assert all(o.tobytes() == expected.tobytes() for o in out)


@settings(max_examples=60, deadline=None)
@given(given_trees(max_gpus=8), st.integers(0, 5000), st.sampled_from(presets()))
def test_the_time_hook_equals_the_plan_priced_step_by_step(case, n, topology):
    g, text, _ = case
    model = CostModel(load(topology), 4)
    if model.topology.gpus_per_node and "across" not in model.topology.levels \
            and g > model.topology.gpus_per_node:
        return  # a one-node preset holds at most its node's GPUs
    plan = make_plan("nccl-tree", g, tree_parents=text)
    priced = price(plan, n, model)
    hook = estimate("nccl-tree", g, n, model, tree_parents=text)
    assert hook.seconds == pytest.approx(priced.seconds, rel=1e-12, abs=1e-300)
    assert hook.level == priced.bottleneck_level()


def test_given_trees_that_are_nccls_own_make_nccls_own_plan():
    from ringsim.algorithms.nccl_tree import parents
    trees = [parents(16, 4, second) + 1 for second in (False, True)]
    text = ";".join(",".join(map(str, t)) for t in trees)
    mine, ncclss = make_plan("nccl-tree", 16, tree_parents=text), make_plan("nccl-tree", 16, gpus_per_node=4)
    assert len(mine.steps) == len(ncclss.steps)
    for a, b in zip(mine.steps, ncclss.steps):
        assert (a.src.tolist(), a.dst.tolist(), a.first.tolist(), a.phase) == \
            (b.src.tolist(), b.dst.tolist(), b.first.tolist(), b.phase)


@pytest.mark.parametrize("text, message", [
    ("0,1,2", "gives 3 parents for 4 GPUs"),
    ("0,1,2,9", "GPU4's parent 9 is not a GPU of 1..4"),
    ("0,2,2,3", "GPU2's parent 2 is its own parent"),
    ("0,1,0,3", "2 roots (GPU1, GPU3)"),
    ("2,3,1,1", "no root"),
    ("0,3,4,2", "cycle: GPU2 → GPU3 → GPU4 → GPU2"),
    ("0,1,a,3", "each GPU's parent (0 for the root) separated by commas"),
    (";".join(["0,1,2,3"] * 65), "at most 64"),
    ("0,1,2,3;0,1,1,1;0,5,2,3", "tree 3: GPU2's parent 5"),
])
def test_bad_trees_are_one_line_errors(text, message):
    with pytest.raises(RingsimError, match=None) as error:
        make_plan("nccl-tree", 4, tree_parents=text)
    assert message in str(error.value) and "\n" not in str(error.value)


def test_given_trees_too_large_to_count_one_by_one_are_refused_first():
    chain = ",".join(str(k) for k in range(4096))  # GPU k+1's parent is GPU k
    with pytest.raises(RingsimError, match="at most 5,000,000"):
        closed_form("nccl-tree", 4096, 10, tree_parents=";".join([chain] * 64), chunks=16)


def test_given_trees_leave_no_room_for_a_chain_length():
    with pytest.raises(RingsimError, match="leave out gpus_per_node$"):
        make_plan("nccl-tree", 4, tree_parents="0,1,2,3", gpus_per_node=2)


def test_the_title_names_the_given_trees():
    from ringsim.algorithms import option_text
    assert option_text(make_plan("nccl-tree", 2, tree_parents="0,1;2,0")) == "2 given trees 0,1;2,0"
