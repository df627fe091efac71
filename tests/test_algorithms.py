"""Every algorithm with every option: real sums, bitwise-identical GPUs, exact closed forms, and
the same schedule as an independent reference written from the papers (tests/references.py)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import ringsim
from ringsim import ALGORITHMS, Layout, RingsimError, allreduce, check, closed_form, make_plan, measure
from ringsim.core.plan import Plan, Step
from ringsim.core.reference import reference_sum

from references import reference
from strategies import gradients

NEW = ["tree", "double-tree", "recursive-doubling", "halving-doubling", "bidirectional-ring",
       "hierarchical"]


@st.composite
def options_for(draw, name: str, g: int) -> dict:
    """Options an algorithm takes, drawn over their whole range (empty: the defaults)."""
    if name in ("tree", "double-tree", "nvls"):
        return {"chunks": draw(st.integers(1, 8))}
    if name == "nccl-tree":
        per = draw(st.sampled_from([d for d in range(1, g + 1) if g % d == 0]))
        return {"chunks": draw(st.integers(1, 8)), "gpus_per_node": per}
    if name == "ring":
        k = draw(st.integers(1, 4))
        if draw(st.booleans()):
            perms = st.permutations(list(range(1, g + 1))).map(tuple)
            rings = draw(st.lists(perms, min_size=1, max_size=1) | st.lists(perms, min_size=k, max_size=k))
            return {"channels": k, "ring_order": rings}
        return {"channels": k}
    if name == "hierarchical":
        return {"nodes": draw(st.sampled_from([m for m in range(1, g + 1) if g % m == 0]))}
    return {}


@st.composite
def setups(draw, max_gpus: int = 32, max_elements: int = 300, names=None):
    name = draw(st.sampled_from(names or sorted(ALGORITHMS)))
    g = draw(st.integers(1, max_gpus) | st.sampled_from([3, 5, 6, 7, 12]))
    n = draw(st.integers(0, max_elements))
    return name, g, n, draw(options_for(name, g))


def moves(plan: Plan, n: int) -> list[set]:
    """The plan's steps as sets of (src, dst, first element, end element, op)."""
    layout = Layout(plan.segments, n)
    return [{(t.src, t.dst, layout.offset(t.first), layout.offset(t.last + 1), t.op)
             for t in step.transfers()} for step in plan.steps]


@settings(max_examples=80)
@given(setups())
def test_the_plan_is_the_papers_schedule(setup):
    name, g, n, options = setup
    expected = reference(name, g, n, options)
    if expected is None:
        return  # master: its own tests (test_seed, test_properties)
    assert moves(make_plan(name, g, **options), n) == expected


@settings(max_examples=80)
@given(setups())
def test_checker_passes_and_the_ledger_equals_the_closed_forms_exactly(setup):
    name, g, n, options = setup
    plan = make_plan(name, g, **options)
    assert check(plan) == []
    assert plan.transfer_count() == ringsim.algorithms.transfers(name, g, **options)
    if name == "ring" and not options.get("ring_order") and options.get("channels", 1) == 1 and n % g:
        return  # the plain ring's uneven forms are the hardening branch's (tests/test_exact.py)
    ledger = measure(plan, Layout(plan.segments, n))
    form = closed_form(name, g, n, **options)
    assert ledger.total == form.total.value
    assert max(ledger.sent.tolist(), default=0) == form.busiest_sent.value
    assert max(ledger.received.tolist(), default=0) == form.busiest_received.value
    assert ledger.steps == len(plan.steps) == form.steps.value
    assert ledger.messages == form.messages.value


@settings(max_examples=60)
@given(st.data())
def test_numeric_equals_the_sum_all_gpus_bitwise_identical_inputs_unchanged(data):
    name, g, n, options = data.draw(setups(max_gpus=16, max_elements=120))
    x = data.draw(gradients(g, n))
    arrays = [row.copy() for row in x]
    result = allreduce(arrays, name, **options)
    assert all(np.array_equal(a, b, equal_nan=True) for a, b in zip(arrays, x))
    out = np.stack(result.outputs)
    assert len({row.tobytes() for row in out}) <= 1
    if x.dtype.kind in "iu" and n:
        assert np.array_equal(out[0], reference_sum(x))
    assert result.ledger.total == result.closed_form.total.value


@settings(max_examples=40)
@given(setups(max_gpus=12, max_elements=40), st.sampled_from(["float16", "float32", "float64"]))
def test_integer_valued_floats_sum_exactly_and_the_simulation_agrees(setup, dtype):
    name, g, n, options = setup
    x = np.random.default_rng(g * 1000 + n).integers(-64, 64, (g, n)).astype(dtype)
    sim = ringsim.Simulation.create(name, g, n, gradients=x, **options)
    sim.run()
    assert sim.correct(), sim.problems()
    assert np.array_equal(sim.values(), np.broadcast_to(x.sum(axis=0, dtype=np.float64).astype(dtype), x.shape))


@pytest.mark.parametrize("name", sorted(ALGORITHMS))
@pytest.mark.parametrize("g", [2, 3, 4, 5, 8])
def test_nan_payloads_and_signed_zeros_end_bitwise_identical(name, g):
    quiet = np.array([np.nan]) * 0                     # one NaN payload …
    with np.errstate(invalid="ignore"):                # inf - inf on purpose
        other = np.array([np.inf]) - np.array([np.inf])  # … and another (the sign bit differs on x86)
    rows = [quiet if k % 2 == 0 else other for k in range(g)]
    rows = [np.concatenate([r, [-0.0, 0.0 if k == 1 else -0.0]]) for k, r in enumerate(rows)]
    out = np.stack(allreduce(rows, name).outputs)
    assert len({row.tobytes() for row in out}) == 1
    sim = ringsim.Simulation.create(name, g, 3, gradients=np.stack(rows))
    sim.run()
    assert sim.correct()


def test_the_naive_flood_of_two_nans_agrees_bit_for_bit():
    # Each GPU once added "received + own", and x86 keeps the first NaN's payload.
    with np.errstate(invalid="ignore"):  # inf - inf on purpose
        other = np.array([np.inf]) - np.array([np.inf])
    result = allreduce([np.array([np.nan]), other], "naive")
    assert result.outputs[0].view(np.uint64) == result.outputs[1].view(np.uint64)


def test_the_check_sees_bits_that_differ_between_gpus():
    sim = ringsim.Simulation.create("ring", 2, 1, gradients=np.array([[1.0], [2.0]]))
    sim.run()
    assert sim.correct()
    nan_a, nan_b = np.array([np.nan]), -np.array([np.nan])
    forged = np.stack([nan_a, nan_b])
    from ringsim.core.reference import bitwise_strays
    assert bitwise_strays(forged) == [1]
    assert bitwise_strays(np.stack([nan_a, nan_a])) == []
    assert bitwise_strays(np.array([[0.0], [-0.0]])) == [1]


def _swapped(plan: Plan):
    """The plan with two transfers of one step trading segment ranges (every such pair, first valid one)."""
    for index, step in enumerate(plan.steps):
        for j in range(1, len(step)):
            if step.first[j] == step.first[0] or (step.last[j] - step.first[j]) != (step.last[0] - step.first[0]):
                continue
            first, last = step.first.copy(), step.last.copy()
            first[[0, j]], last[[0, j]] = first[[j, 0]], last[[j, 0]]
            steps = list(plan.steps)
            steps[index] = Step.build(step.phase, step.iteration, step.iterations, step.ops,
                                      step.src, step.dst, first, last)
            try:
                return Plan(plan.algorithm, plan.gpus, tuple(steps), plan.options, segments=plan.segments)
            except RingsimError:
                continue  # that swap made arrivals overlap: try the next pair
    raise AssertionError("no transfer pair could be swapped")


@pytest.mark.parametrize("name, options", [("tree", {"chunks": 3}), ("double-tree", {"chunks": 2}),
                                           ("halving-doubling", {}), ("recursive-doubling", {}),
                                           ("hierarchical", {"nodes": 2}), ("ring", {"channels": 2}),
                                           ("bidirectional-ring", {})])
def test_a_wrong_plan_fails_the_checker_with_the_gpu_segment_and_what_it_should_hold(name, options):
    plan = make_plan(name, 4, **options)
    if plan.segments == 1:  # one segment: nothing to trade; send one transfer to the wrong GPU instead
        step = plan.steps[0]
        dst = step.dst.copy()
        dst[0] = next(g for g in range(4) if g not in (step.src[0], step.dst[0]))
        steps = (Step.build(step.phase, 1, 1, step.ops, step.src, dst, step.first, step.last),
                 *plan.steps[1:])
        wrong = Plan(plan.algorithm, 4, steps, plan.options, segments=1)
    else:
        wrong = _swapped(plan)
    problems = check(wrong)
    assert problems
    for problem in problems:
        gpu, rest = problem.split(" segment ", 1)
        segment = int(rest.split(" ")[0])
        assert gpu.startswith("GPU") and 1 <= int(gpu[3:]) <= 4 and 1 <= segment <= plan.segments
        sub = str(segment).translate(str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉"))
        assert " holds " in rest and rest.endswith(", should hold " + "+".join(c + sub for c in "abcd"))


def test_seed_sentences_in_each_algorithms_language():
    sim = ringsim.Simulation.create("tree", 4, 8)
    sim.step()
    assert sim.banner == "Tree reduce · iteration 1 of 2"
    assert sim.sentences() == ["GPU2 sends b₁ up the tree to GPU3, where it is added to c₁",
                               "GPU4 sends d₁ up the tree to GPU3, where it is added to c₁"]
    sim.step()
    assert sim.sentences() == ["GPU3 sends (b₁+c₁+d₁) up the tree to GPU1, where it is added to a₁"]
    sim.step()
    assert sim.banner == "Broadcast · iteration 1 of 2"
    assert sim.sentences() == ["GPU1 sends (a₁+b₁+c₁+d₁) down the tree to GPU3, where it replaces (b₁+c₁+d₁)"]
    hd = ringsim.Simulation.create("halving-doubling", 4, 8)
    hd.step()
    assert hd.banner == "Recursive halving · iteration 1 of 2"
    assert hd.sentences()[0] == "GPU1 and GPU2 swap halves: GPU1 sends a₃, a₄ to GPU2, where they are added to b₃, b₄"
    rd = ringsim.Simulation.create("recursive-doubling", 3, 3)
    rd.step()
    assert rd.banner == "Fold in the extra GPUs · iteration 1 of 1"
    assert rd.sentences() == ["GPU1 sends a₁ to GPU2, where it is added to b₁"]
    rd.run()
    assert rd.sentences() == ["GPU2 sends (a₁+b₁+c₁) back to GPU1, where it replaces a₁"]


def test_the_seed_ring_is_unchanged_by_segments():
    plan = make_plan("ring", 4)
    assert plan.segments == 4 and Plan("ring", 4, plan.steps).segments == 4
    assert make_plan("ring", 4, channels=2).segments == 8
    assert make_plan("tree", 5, chunks=3).segments == 3
    assert make_plan("double-tree", 5, chunks=3).segments == 6
    assert make_plan("halving-doubling", 6).segments == 4
    assert make_plan("recursive-doubling", 6).segments == 1


@pytest.mark.parametrize("call, message", [
    (lambda: make_plan("ring", 4, chunks=2), "ring takes channels, ring_order, not chunks "
                                             "(chunks is for tree, double-tree, nccl-tree, nvls)"),
    (lambda: make_plan("tree", 4, chunks=0), "chunks must be a whole number from 1 to 1,024, got 0"),
    (lambda: make_plan("hierarchical", 6, nodes=4), "nodes=4 does not divide 6 GPUs: every node holds "
                                                    "G/M GPUs; try 1, 2, 3, 6"),
    (lambda: make_plan("ring", 4, ring_order="1,2,2,4"), "ring order 1 must list each of GPU1..GPU4 once "
                                                         "(1..4), got 1,2,2,4"),
    (lambda: make_plan("ring", 4, channels=3, ring_order="1,2,3,4;4,3,2,1"),
     "ring_order gives 2 rings but channels is 3: give one order for every channel, or one order for all"),
    (lambda: make_plan("naive", 4, nodes=2), "naive takes no options, not nodes (nodes is for hierarchical)"),
    (lambda: Plan("ring", -2, ()), "a plan's number of GPUs must be a whole number of at least 1, got -2"),
    (lambda: ringsim.SymbolicState(4).label(-1, 0), "GPU must be a whole number from 0 to 3 (0-based), got -1"),
    (lambda: ringsim.SymbolicState(4).label(9, 9), "GPU must be a whole number from 0 to 3 (0-based), got 9"),
    (lambda: ringsim.SymbolicState(4, 2).label(0, 2), "segment must be a whole number from 0 to 1 (0-based), got 2"),
    (lambda: Plan("x", 2, (Step.build("p", 1, 1, "reduce", 0, 1, 2),), segments=2),
     "step 1 (p 1): a segment is outside 1..2"),
    (lambda: Step.build("p", 1, 1, "add", 0, 1, 0), "unknown transfer op 'add'; expected one of reduce, copy"),
])
def test_wrong_options_and_plans_get_one_clear_line(call, message):
    with pytest.raises(RingsimError) as info:
        call()
    assert str(info.value) == message


def test_a_mixed_step_reports_its_ops_per_transfer():
    plan = make_plan("tree", 4, chunks=2)
    mixed = [s for s in plan.steps if s.mixed]
    assert mixed and {t.op for t in mixed[0].transfers()} == {"reduce", "copy"}
    assert set(mixed[0].reduces.tolist()) == {True, False}


def test_compare_sized_closed_forms_take_no_plan():
    for name in NEW + ["ring"]:
        form = closed_form(name, 1_000_000, 7_000_000_000)
        assert form.total.value > 0


def test_a_contrast_names_another_registered_algorithm():
    # compare's closing sentence sets two registered rows side by side: a contrast with itself,
    # or with a name the registry lacks, would never print.
    declared = {name: spec.contrast for name, spec in ALGORITHMS.items() if spec.contrast}
    assert declared == {"master": "ring"}
    assert all(other in ALGORITHMS and other != name for name, other in declared.items())
