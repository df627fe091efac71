"""Every object the Python API hands a notebook user shows itself in one short line: what it is,
its algorithm, G and N, and never its arrays (a plan of 64 GPUs once printed 186,790 characters)."""

from __future__ import annotations

import numpy as np
import pytest

import ringsim
from ringsim.cost.model import CostModel, price
from ringsim.cost.topology import load

G, N = 64, 1000
LIMIT = 120  # characters: one line of a notebook cell's output


@pytest.fixture(scope="module")
def grads():
    rng = np.random.default_rng(0)
    return [rng.random(N).astype(np.float32) for _ in range(G)]


@pytest.fixture(scope="module")
def plan():
    return ringsim.make_plan("ring", G)


def objects(grads, plan):
    """(what, object, facts its repr must state) for every object the API hands out."""
    result = ringsim.allreduce(grads, "halving-doubling")
    scattered = ringsim.reduce_scatter(grads)
    gathered = ringsim.all_gather(grads)
    ledger = ringsim.measure(plan, ringsim.Layout(G, N))
    costs = price(plan, N, CostModel.of("dgx-h100"))
    dgx = load("dgx-h100")
    return [
        ("AllReduceResult", result,
         ["AllReduceResult", "halving-doubling", "64 GPUs", "1,000 float32 elements per GPU",
          f"{result.ledger.total:,} elements moved", f"{len(result.plan)} steps"]),
        ("AllReduceResult with options", ringsim.allreduce(grads, "tree", chunks=4),
         ["tree (4 chunks)", "64 GPUs", "1,000 float32 elements per GPU"]),
        ("reduce-scatter", scattered,
         ["CollectiveResult", "reduce-scatter", "64 GPUs", "1,000 float32 elements per GPU",
          f"{scattered.ledger.total:,} elements moved"]),
        ("all-gather", gathered,
         ["CollectiveResult", "all-gather", "64 GPUs", "1,000 float32 elements per GPU"]),
        ("Plan", plan, ["Plan", "ring", "64 GPUs", "126 steps", "8,064 transfers"]),
        ("Plan with a switch", ringsim.make_plan("nvls", G),
         ["nvls", "64 GPUs", "1 switch", "1 segment each"]),
        ("Step", plan.steps[0], ["Step", "Reduce-scatter 1 of 63", "64 transfers", "reduce"]),
        ("Transfer", next(plan.steps[0].transfers()), ["Transfer", "src=", "dst=", "'reduce'"]),
        ("Layout", ringsim.Layout(G, N), ["Layout", "64", "1000"]),
        ("Ledger", ledger, ["Ledger", "64 GPUs", "126 steps", "126,000 elements",
                            "8,064 messages", "busiest GPU41 sent 1,970, received 1,970"]),
        ("ClosedForm", ringsim.closed_form("ring", G, N),
         ["ClosedForm", "126,000 elements", "8,064 messages", "126 steps",
          "GPU40 sends most (1,970), GPU41 receives most (1,970)"]),
        ("Formula", ringsim.closed_form("ring", G, N).total, ["Formula", "2·(G−1)·N", "126,000"]),
        ("SymbolicState", ringsim.run_symbolic(plan),
         ["SymbolicState", "64 GPUs", "64 segments each", "4,096 of 4,096 buffers hold the sum"]),
        ("Simulation", ringsim.Simulation.create("ring", gpus=G, elements=N),
         ["Simulation", "ring", "64 GPUs", "1,000 elements per GPU", "step 0 of 126"]),
        ("NumericExecutor", ringsim.NumericExecutor(plan, ringsim.Layout(G, N), np, np.float32),
         ["NumericExecutor", "ring", "64 GPUs", "1,000 float32 elements per GPU", "numpy"]),
        ("PlanCost", costs, ["PlanCost", "126 steps", "bottleneck mostly"]),
        ("StepCost", costs.steps[0], ["StepCost", "bottleneck GPU"]),
        ("Port", costs.steps[0].port, ["Port", "gpu="]),
        ("CostModel", CostModel.of("dgx-h100"),
         ["CostModel", "dgx-h100", "8 GPUs per node", "inside", "across", "4-byte elements"]),
        ("Topology", dgx, ["Topology", "dgx-h100", "8 GPUs per node", "450.00 GB/s"]),
        ("Level", dgx.levels["across"], ["Level", "across", "50.00 GB/s"]),
        ("AlgorithmSpec", ringsim.ALGORITHMS["ring"], ["AlgorithmSpec", "ring", "Ring all-reduce"]),
    ]


@pytest.fixture(scope="module")
def shown(grads, plan):
    return [(what, obj, repr(obj), facts) for what, obj, facts in objects(grads, plan)]


def test_every_repr_is_one_short_line_without_arrays(shown):
    for what, _, text, _ in shown:
        assert "\n" not in text, what
        assert len(text) <= LIMIT, (what, len(text), text)
        assert "[" not in text and "array(" not in text, (what, text)
        assert " object at 0x" not in text, (what, text)


def test_every_repr_states_its_key_facts(shown):
    for what, _, text, facts in shown:
        for fact in facts:
            assert fact in text, (what, fact, text)


def test_the_readme_example_reads_as_one_line(grads):
    result = ringsim.allreduce(grads[:8], algorithm="halving-doubling")
    assert repr(result) == ("<AllReduceResult of halving-doubling · 8 GPUs · 1,000 float32 "
                            "elements per GPU · 14,000 elements moved in 6 steps>")
    assert repr(ringsim.make_plan("ring", 4)) == "<Plan of ring · 4 GPUs · 6 steps · 24 transfers>"
    assert repr(ringsim.measure(ringsim.make_plan("ring", 4), ringsim.Layout(4, 8))) == \
        "<Ledger of 4 GPUs · 6 steps · 48 elements in 24 messages · busiest GPU1 sent 12, received 12>"


def test_a_simulation_says_where_it_is_and_still_draws_itself():
    sim = ringsim.Simulation.create("ring", gpus=4, elements=8)
    assert repr(sim) == "<Simulation of ring · 4 GPUs · 8 elements per GPU · step 0 of 6>"
    sim.step()
    assert repr(sim).endswith("· step 1 of 6>")
    sim.run()
    assert repr(sim).endswith("· step 6 of 6>")
    assert callable(getattr(sim, "_repr_svg_", None))
    master = ringsim.Simulation.create("master", gpus=4, elements=8, master=3)
    assert repr(master).startswith("<Simulation of master (GPU3) · 4 GPUs")


def test_a_symbolic_state_counts_the_buffers_that_hold_the_sum():
    plan = ringsim.make_plan("ring", 8)
    start = ringsim.SymbolicState(8)
    assert "0 of 64 buffers hold the sum" in repr(start)
    # The ring's reduce-scatter half leaves each GPU one finished segment of its eight.
    half = ringsim.Plan("half", 8, plan.steps[:7])
    state = ringsim.run_symbolic(half)
    assert 64 - len(state.problems()) == 8
    assert "8 of 64 buffers hold the sum" in repr(state)
    assert "64 of 64 buffers hold the sum" in repr(ringsim.run_symbolic(plan))
    assert "1 of 1 buffer holds the sum" in repr(ringsim.run_symbolic(ringsim.make_plan("ring", 1)))


def test_reprs_follow_the_object_not_a_fixed_text():
    assert repr(ringsim.make_plan("ring", 4).steps[-1]) == "<Step All-gather 3 of 3 · 4 transfers · copy>"
    tree = ringsim.make_plan("tree", 8, chunks=4)
    assert [repr(step).endswith("· mixed>") for step in tree.steps] == [step.mixed for step in tree.steps]
    assert any(step.mixed for step in tree.steps)
    one = ringsim.closed_form("ring", 1, 8)
    assert repr(one) == ("<ClosedForm · 0 elements in 0 messages · 0 steps · "
                         "busiest GPU1 sends 0, receives 0>")
    assert "1 step ·" in repr(ringsim.Plan("one", 2, ringsim.make_plan("ring", 2).steps[:1]))
    costs = price(ringsim.make_plan("ring", 1), N)
    assert repr(costs) == "<PlanCost of 0 steps · 0 s · nothing moved>"


def test_the_registry_shows_names_not_functions():
    text = repr(ringsim.ALGORITHMS)
    assert "\n" not in text and "function" not in text and " at 0x" not in text
    assert all(f"<AlgorithmSpec {name}: " in text for name in ringsim.ALGORITHMS)


def test_reprs_leave_equality_alone():
    assert ringsim.Layout(4, 8) == ringsim.Layout(4, 8)
    assert ringsim.closed_form("ring", 8, 100) == ringsim.closed_form("ring", 8, 100)
    assert ringsim.closed_form("ring", 8, 100).total == 1400
    assert CostModel.of("dgx-h100") == CostModel.of("dgx-h100")
