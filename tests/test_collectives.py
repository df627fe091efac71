"""Reduce-scatter and all-gather: their goals, plans, closed forms, times and API."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import ringsim
from ringsim import RingsimError
from ringsim.algorithms import collectives as C
from ringsim.cost.model import CostModel, price
from ringsim.core.layout import Layout
from ringsim.execute.ledger import measure
from ringsim.core.plan import Plan
from ringsim.core.reference import tolerance


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(sorted(C.COLLECTIVES)), st.integers(1, 12), st.integers(0, 60))
def test_plans_reach_their_goal_and_closed_forms_are_exact(name, gpus, elements):
    c = C.COLLECTIVES[name]
    plan = c.plan(gpus)
    assert c.check(plan) == []
    if c is C.ALL_REDUCE:
        return  # the all-reduce's closed forms are the algorithms' own (tests/test_properties.py)
    ledger, form = measure(plan, Layout(plan.segments, elements)), c.closed_form(gpus, elements)
    assert form.total.value == ledger.total and form.messages.value == ledger.messages
    assert form.busiest_sent.value == max(ledger.sent) and form.busiest_received.value == max(ledger.received)
    assert form.steps.value == len(plan.steps)


@settings(max_examples=30, deadline=None)
@given(st.sampled_from([C.REDUCE_SCATTER, C.ALL_GATHER]), st.integers(1, 20), st.integers(0, 100),
       st.sampled_from(["flat", "dgx-h100", "ethernet-100g"]))
def test_closed_form_time_equals_the_priced_plan(c, gpus, elements, topology):
    model = CostModel.of(topology)
    assert math.isclose(c.seconds(gpus, elements, model).seconds,
                        price(c.plan(gpus), elements, model).seconds, rel_tol=1e-12, abs_tol=1e-18)


def test_the_goals_are_checked():
    # A reduce-scatter is not an all-gather, and half a reduce-scatter is not a reduce-scatter.
    rs = C.REDUCE_SCATTER.plan(4)
    assert len(C.ALL_GATHER.check(rs)) > 0
    half = Plan(rs.algorithm, 4, rs.steps[:2])
    assert C.REDUCE_SCATTER.check(half)[0].startswith("GPU1 segment 1 holds")
    # Reduce-scatter's goal leaves the other segments free; the ring all-reduce meets it too.
    assert C.REDUCE_SCATTER.check(ringsim.make_plan("ring", 4)) == []


# nccl-tests' correction factors, doc/PERFORMANCE.md ("Summary"), written out here on their own:
# https://github.com/NVIDIA/nccl-tests/blob/master/doc/PERFORMANCE.md
NCCL_TESTS_FACTORS = {
    "all-reduce": lambda n: Fraction(2 * (n - 1), n),    # AllReduce : 2*(n-1)/n
    "reduce-scatter": lambda n: Fraction(n - 1, n),      # ReduceScatter : (n-1)/n
    "all-gather": lambda n: Fraction(n - 1, n),          # AllGather : (n-1)/n
}


def test_bus_factors_follow_nccl_tests():
    assert C.collective("all-reduce").bus_factor(8) == Fraction(14, 8)
    assert C.collective("reduce-scatter").bus_factor(8) == Fraction(7, 8)
    assert C.collective("all-gather").bus_factor(8) == Fraction(7, 8)
    assert set(C.COLLECTIVES) == set(NCCL_TESTS_FACTORS)
    for name, factor in NCCL_TESTS_FACTORS.items():
        for n in range(1, 65):
            assert C.COLLECTIVES[name].bus_factor(n) == factor(n), (name, n)


def _stated_goal(name: str, gpu: int, segment: int, gpus: int):
    """Each collective's goal as NCCL states it (GPU g's shard is segment g); None: scratch."""
    everyone = set(range(gpus))
    if name == "all-reduce":
        return everyone
    if name == "reduce-scatter":
        return everyone if segment == gpu else None
    return {segment}  # all-gather: every GPU ends with GPU j's shard in segment j


@pytest.mark.parametrize("name", sorted(C.COLLECTIVES))
@pytest.mark.parametrize("gpus", range(2, 9))
def test_each_goal_is_what_the_checker_verifies_for_the_ring(name, gpus):
    c = C.COLLECTIVES[name]
    plan = c.plan(gpus, "ring")
    state = c.initial_state(gpus, plan.segments)
    for step in plan.steps:
        state.apply(step)
    for g in range(gpus):
        for s in range(plan.segments):
            want = c.goal(g, s, gpus)
            assert want == _stated_goal(name, g, s, gpus)
            if want is not None:  # the ring ends with exactly the goal: each copy summed once
                assert sorted(state.held[g][s]) == sorted(want)
    assert c.check(plan) == [] and c.state_problems(state) == []
    # The checker holds the run to that goal: one step short misses it.
    short = Plan(plan.algorithm, gpus, plan.steps[:-1])
    assert c.check(short) != []


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 9), st.integers(0, 6), st.sampled_from(["int32", "float64"]), st.data())
def test_reduce_scatter_then_all_gather_is_all_reduce(gpus, per_gpu, dtype, data):
    n = gpus * per_gpu
    values = data.draw(st.lists(st.integers(-1000, 1000), min_size=gpus * n, max_size=gpus * n))
    x = np.array(values, dtype=dtype).reshape(gpus, n)
    before = x.copy()
    rs = ringsim.reduce_scatter(list(x))
    ag = ringsim.all_gather(rs.outputs)
    ar = ringsim.allreduce(list(x))
    for g in range(gpus):
        np.testing.assert_array_equal(ag.outputs[g].reshape(-1), ar.outputs[g])
    np.testing.assert_array_equal(x, before)
    # In the ledger: the two halves move what the ring all-reduce moves, GPU by GPU.
    assert rs.ledger.total + ag.ledger.total == ar.ledger.total
    assert rs.ledger.messages + ag.ledger.messages == ar.ledger.messages
    assert rs.ledger.steps + ag.ledger.steps == ar.ledger.steps
    np.testing.assert_array_equal(rs.ledger.sent + ag.ledger.sent, ar.ledger.sent)
    np.testing.assert_array_equal(rs.ledger.received + ag.ledger.received, ar.ledger.received)


def test_reduce_scatter_of_floats_and_uneven_shards():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((5, 13))
    out = ringsim.reduce_scatter(x).outputs
    assert [len(o) for o in out] == [3, 3, 3, 2, 2]
    np.testing.assert_allclose(np.concatenate(out), x.sum(0), atol=float(tolerance(x).max()))


def test_errors():
    with pytest.raises(RingsimError, match="ring only"):
        C.REDUCE_SCATTER.plan(4, "tree")
    with pytest.raises(RingsimError, match="unknown collective"):
        C.collective("broadcast")
    with pytest.raises(RingsimError, match="same shape"):
        ringsim.all_gather([np.zeros(2), np.zeros(3)])


def test_cli_walk_compare_timeline_take_the_collective(capsys):
    from ringsim.cli import main
    import json
    assert main(["walk", "--collective", "reduce-scatter", "--gpus", "3", "-n", "6"]) == 0
    out = capsys.readouterr().out
    assert "Every GPU holds its shard of the sum (GPU k: segment k): yes" in out
    assert "(G−1)·N = 12" in out
    # Its first iteration is not the all-reduce's (GPU1 sends a₃, GPU2 b₁): the walk says why.
    first = out.split("iteration 1 of 2")[1].split("iteration 2 of 2")[0].splitlines()[1:4]
    assert [line.split(" to ")[0].strip() for line in first] == [
        "GPU1 sends a₃", "GPU2 sends b₁", "GPU3 sends c₂"]
    assert "one segment earlier than the all-reduce's first phase, so that GPU k ends with " \
           "segment k" in out
    assert main(["walk", "--gpus", "3", "-n", "6"]) == 0
    assert "one segment earlier" not in capsys.readouterr().out
    assert main(["walk", "--collective", "all-gather", "--gpus", "4", "--json"]) == 0
    assert json.loads(capsys.readouterr().out.splitlines()[-1])["correct"] is True
    assert main(["compare", "--collective", "all-gather", "--json", "--time", "-g", "8",
                 "-n", "800"]) == 0
    row = json.loads(capsys.readouterr().out)
    assert row["total_elements"] == 7 * 800 and math.isclose(row["busbw"], row["algbw"] * 7 / 8)
    assert main(["timeline", "--collective", "reduce-scatter", "-g", "4", "-n", "8", "--json"]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert len(lines) == 13 and lines[-1]["collective"] == "reduce-scatter"
    assert main(["walk", "--collective", "all-gather", "-a", "tree"]) == 2
    assert capsys.readouterr().err.startswith("ringsim walk: error: all-gather is built for the ring only")


def test_compare_refuses_an_algorithm_option_for_a_half_instead_of_ignoring_it(capsys):
    from ringsim.cli import main
    for option in (["--ring-order", "rails:4"], ["--chunks", "2"], ["--channels", "2"]):
        assert main(["compare", "--collective", "all-gather", "-g", "8", *option]) == 2
        err = capsys.readouterr().err.strip()
        assert "takes no options" in err and len(err.splitlines()) == 1


@pytest.mark.parametrize("gpus, elements", [(1, 5), (2, 0), (3, 7), (7, 100), (40, 999_999),
                                            (1000, 12_345), (3, 1 << 63)])
def test_each_gpus_sent_and_received_is_every_segment_but_the_one_it_keeps(gpus, elements):
    # counted segment by segment from Layout, as the plans cut them
    from ringsim.algorithms.collectives import ALL_GATHER, REDUCE_SCATTER
    from ringsim.core.layout import Layout
    sizes = Layout(gpus, elements).sizes()
    for half in (REDUCE_SCATTER, ALL_GATHER):
        want = (([elements - sizes[(g + half.lag) % gpus] for g in range(gpus)],
                 [elements - sizes[(g - 1 + half.lag) % gpus] for g in range(gpus)])
                if gpus > 1 else ([0], [0]))
        assert half.per_gpu(gpus, elements) == want
