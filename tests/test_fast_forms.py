"""The fast paths equal the slow ones they replace, exactly (counts) or to the last bits (time).

Closed forms, busiest GPUs and one-level times of the ring, K-channel, bidirectional and
hierarchical rings are computed at a few GPUs (`algorithms._sparse`); here they are held
against every GPU counted (`_counts.Tally`) and every port priced (`_step_times.ring_phase`),
for odd sizes (G not dividing N) on several topologies. Plan validation checks runs of
steps at once; here it must refuse exactly what the step-by-step check refuses.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from ringsim.algorithms import ALGORITHMS, _multiring, bidirectional_ring, hierarchical, make_plan, ring
from ringsim.algorithms._counts import from_tally
from ringsim.algorithms._step_times import WRAP, Clock, affine_phase, ring_phase
from ringsim.algorithms.timing import estimate
from ringsim.cost.model import CostModel
from ringsim.core.errors import RingsimError
from ringsim.core.plan import Plan, Step, _validate_step
from ringsim.studies.sweep import parse_sizes, sweep
from ringsim.cost.topology import load
from ringsim.cost.topology_model import Level, Topology

SIZES = st.integers(1, 64)
ELEMENTS = st.integers(0, 400)
MODELS = {
    "flat": CostModel.flat(alpha=2e-6, bandwidth=50e9, reduce_bandwidth=400e9),
    "flat, no reduce cost": CostModel.flat(),
    "dgx-h100": CostModel(load("dgx-h100")),
    "pcie-gen4": CostModel(load("pcie-gen4")),
    "ethernet-100g": CostModel(load("ethernet-100g"), itemsize=2),
}


def _figures(form):
    return (form.total.value, form.busiest_sent.value, form.busiest_received.value,
            form.steps.value, form.messages.value, form.busiest_sender, form.busiest_receiver)


def _ring_phases(model, phases, segments, elements):
    """The time every port priced (`ring_phase` over whole order arrays), as before the fast path."""
    clock = Clock()
    for orders, bases, width, gather in phases:
        clock.add(*ring_phase(model, orders, bases, width, segments, elements, gather))
    return clock.estimate("every GPU's ports")


def _same_time(fast, slow):
    """Equal to the last bit: the shortcut prices each step with the same arithmetic, and
    Clock sums up to EXPAND equal steps one by one, as the slow path does."""
    assert fast.seconds == slow.seconds
    assert fast.level == slow.level


@settings(max_examples=150, deadline=None)
@given(g=SIZES, n=ELEMENTS, channels=st.integers(1, 3), backward=st.booleans())
def test_rings_in_gpu_order_counted_at_a_few_gpus(g, n, channels, backward):
    """K rings (some against GPU order): closed form and busiest GPU == every GPU counted."""
    directions = tuple(-1 if backward and c % 2 else 1 for c in range(channels))
    orders = _multiring.as_array(g, directions)
    assert _figures(_multiring.closed_form(g, n, directions)) == \
        _figures(_multiring.closed_form(g, n, orders))
    assert _multiring.busiest_gpu(g, n, directions) == _multiring.busiest_gpu(g, n, orders)


@settings(max_examples=150, deadline=None)
@given(g=SIZES, n=ELEMENTS, data=st.data())
def test_hierarchical_counted_at_a_few_gpus(g, n, data):
    """Hierarchical: closed form and busiest GPU == every GPU counted, for every M dividing G."""
    nodes = data.draw(st.sampled_from([d for d in range(1, g + 1) if g % d == 0]))
    tally = hierarchical.tally(g, n, nodes)
    slow = from_tally(tally, hierarchical.TEXTS, 0)
    fast = hierarchical.closed_form(g, n, nodes)
    assert _figures(fast)[:3] + _figures(fast)[4:] == _figures(slow)[:3] + _figures(slow)[4:]
    assert hierarchical.busiest_gpu(g, n, nodes) == _multiring.moved_most(tally)


@settings(max_examples=100, deadline=None)
@given(g=st.integers(1, 200), n=st.integers(0, 1000))
def test_ring_busiest_gpu_at_a_few_gpus(g, n):
    """The ring's busiest GPU: the first k whose segments k, k+1, k+1, k+2 hold the fewest long ones."""
    big = (np.arange(g) < n % g).astype(np.int64)
    expected = int(np.argmin(big + 2 * np.roll(big, -1) + np.roll(big, -2))) if g >= 3 else 0
    assert ring.busiest_gpu(g, n) == expected


@settings(max_examples=120, deadline=None)
@given(g=SIZES, n=ELEMENTS, channels=st.integers(1, 3), topo=st.sampled_from(sorted(MODELS)))
def test_multiring_time_equals_every_port_priced(g, n, channels, topo):
    """K rings and the bidirectional ring: one-level shortcut == ring_phase over every port."""
    model = MODELS[topo]
    for directions in ((1,) * channels, bidirectional_ring.DIRECTIONS):
        orders = _multiring.as_array(g, directions)
        k = len(directions)
        slow = _ring_phases(model, [(orders, np.arange(k) * g, 1, gather) for gather in (False, True)],
                            k * g, n)
        _same_time(_multiring.seconds(g, n, model, directions), slow)
        if directions == (1,) and (g <= (model.topology.gpus_per_node or g) or
                                   "across" in model.topology.levels):
            plain = ring.seconds(g, n, model)  # counts equal steps as count × seconds
            assert plain.seconds == pytest.approx(slow.seconds, rel=1e-12, abs=1e-300)
            assert plain.level == slow.level
    _same_time(bidirectional_ring.seconds(g, n, model), _multiring.seconds(g, n, model, _multiring.as_array(
        g, bidirectional_ring.DIRECTIONS)))


@settings(max_examples=120, deadline=None)
@given(g=SIZES, n=ELEMENTS, topo=st.sampled_from(sorted(MODELS)), data=st.data())
def test_hierarchical_time_equals_every_port_priced(g, n, topo, data):
    """Hierarchical: the one-level shortcut == ring_phase over every port, for every M dividing G.
    With M = 1 or M = G it is one ring of all G GPUs, priced as the ring all-reduce prices it:
    the same steps summed in another order, equal to the last few bits."""
    nodes = data.draw(st.sampled_from([d for d in range(1, g + 1) if g % d == 0]))
    model = MODELS[topo]
    slow = _ring_phases(model, hierarchical._phases(g, nodes), g, n)
    fast = hierarchical.seconds(g, n, model, nodes)
    if nodes in (1, g) and (g <= (model.topology.gpus_per_node or g)
                            or "across" in model.topology.levels):
        assert fast.seconds == pytest.approx(slow.seconds, rel=1e-12, abs=1e-300)
        assert fast.level == slow.level
    else:
        _same_time(fast, slow)


TWO_LEVELS = {
    "dgx-h100": CostModel(load("dgx-h100"), 4),
    "dgx-h200": CostModel(load("dgx-h200"), 2),
    "ethernet-100g": CostModel(load("ethernet-100g"), 1),   # one GPU per node
    "pcie-gen4": CostModel(load("pcie-gen4"), 8),           # no across level: across hops cost 0
    "3 per node": CostModel(Topology("t", "t", 3, {"inside": Level("inside", "i", 1e-6, 1e11),
                                                   "across": Level("across", "x", 3e-6, 2e10)}, 1e12), 4),
}
LARGER = (1000, 1001, 4096)  # 1001: the last node of 8 holds one GPU


def _same_steps(fast, slow):
    assert np.array_equal(fast[0], slow[0]) and np.array_equal(fast[1], slow[1])


@pytest.mark.parametrize("topo", sorted(TWO_LEVELS))
def test_rings_in_gpu_order_priced_from_a_few_gpus(topo):
    """`affine_phase` == `ring_phase` over every port, step by step to the last bit: G 2..64
    and a few larger (last node partly filled), K rings each way, N not divisible by K·G."""
    model = TWO_LEVELS[topo]
    per = model.topology.gpus_per_node
    rng = np.random.default_rng(10)
    kinds = ((1,), (-1,), (1, -1), (1, 1, 1), (-1, 1, -1))
    for g in list(range(2, 65)) + list(LARGER):
        for directions in (kinds[g % 5], kinds[(g + 2) % 5]):   # every kind, every residue mod 8
            k = len(directions)
            sizes = {g % 7, k * g - 1, 5 * k * g + g // 2 + 1, int(rng.integers(0, 10 * k * g))}
            for n in sizes:
                for gather in (False, True):
                    fast = affine_phase(model, g, directions, n, gather)
                    if fast is None:
                        assert g < 2 * WRAP + 2 * per + 2
                        continue
                    orders = _multiring.as_array(g, directions)
                    _same_steps(fast, ring_phase(model, orders, np.arange(k) * g, 1, k * g, n, gather))


@pytest.mark.parametrize("g, nodes", [(1000, 8), (1000, 25), (1000, 40), (1001, 7), (1001, 13),
                                      (1001, 77), (1001, 143), (4096, 64), (4096, 2), (4096, 512)])
def test_hierarchical_priced_from_a_sample_of_rings(g, nodes):
    """Hierarchical across nodes: ring_phase over one ring per residue mod P and block sizes
    == over every ring, phase by phase and step by step, on every topology of two levels."""
    rng = np.random.default_rng(g + nodes)
    for topo, model in TWO_LEVELS.items():
        for n in (1, g - 1, g + 1, 7 * g + int(rng.integers(1, g))):
            sampled = hierarchical._sampled_phases(g, nodes, n, model.topology.gpus_per_node)
            for (o, b, w, gather), (so, sb, sw, sgather) in zip(hierarchical._phases(g, nodes), sampled):
                assert gather == sgather and len(so) <= len(o)
                _same_steps(ring_phase(model, so, sb, sw, g, n, gather),
                            ring_phase(model, o, b, w, g, n, gather))


def test_a_million_gpus_answer_at_once():
    """The sampled forms hold at G = 1,000,000 as the textbook says when the sizes divide."""
    g, n = 10**6, 2 * 10**6 * 7
    form = bidirectional_ring.closed_form(g, n)
    assert form.busiest_sent.value == 2 * (g - 1) * n // g
    assert hierarchical.closed_form(g, n).total.value == 2 * (g - 1) * n
    model = CostModel.flat(alpha=1e-6, bandwidth=1e11)
    t = bidirectional_ring.seconds(g, n, model).seconds
    assert t == pytest.approx(2 * (g - 1) * (2 * 1e-6 + n / g * 4 / 1e11), rel=1e-9)


# --- plan validation: runs of steps at once refuse what step-by-step refuses ------------------

def _step_by_step(plan_gpus, segments, steps):
    for index, step in enumerate(steps):
        _validate_step(plan_gpus, segments, index, step)


def _message(check, *args):
    try:
        check(*args)
    except RingsimError as error:
        return str(error)
    return None


FAULTS = ("first", "last", "src", "dst", "op")


@settings(max_examples=150, deadline=None)
@given(name=st.sampled_from(["ring", "bidirectional-ring", "hierarchical", "naive", "tree",
                             "halving-doubling"]),
       g=st.integers(2, 12), data=st.data())
def test_batched_validation_refuses_what_each_step_refuses(name, g, data):
    """One changed transfer: Plan() raises the very message the step-by-step check gives (or none)."""
    steps = list(make_plan(name, g).steps)
    index = data.draw(st.integers(0, len(steps) - 1))
    step = steps[index]
    t = data.draw(st.integers(0, len(step) - 1))
    fault = data.draw(st.sampled_from(FAULTS))
    cols = {k: np.array(getattr(step, k)) for k in ("src", "dst", "first", "last", "ops")}
    segments = make_plan(name, g).segments
    value = data.draw(st.integers(-1, max(g, segments)))
    if fault == "op":
        cols["ops"][t] = 1 - cols["ops"][t]
    else:
        cols[fault][t] = value
    steps[index] = Step.build(step.phase, step.iteration, step.iterations, cols["ops"], cols["src"],
                              cols["dst"], cols["first"], cols["last"])
    expected = _message(_step_by_step, g, segments, steps)
    got = _message(Plan, name, g, tuple(steps), {}, segments)
    assert got == expected


# --- sweep: the bisection compares only the algorithms that can win -------------------------

@settings(max_examples=60, deadline=None)
@given(name=st.sampled_from(sorted(ALGORITHMS)), g=st.integers(1, 40), n=st.integers(0, 3000),
       topo=st.sampled_from(["flat", "dgx-h100"]))
def test_time_never_falls_as_n_grows(name, g, n, topo):
    """What the sweep's pruning rests on: one more element never makes an algorithm faster."""
    model = MODELS[topo]
    assert estimate(name, g, n + 1, model).seconds >= estimate(name, g, n, model).seconds


@pytest.mark.parametrize("gpus, topo", [(24, "flat"), (96, "dgx-h100"), (1000, "flat")])
def test_sweep_crossovers_equal_bisection_over_every_algorithm(gpus, topo):
    """Crossovers found comparing every algorithm at each probe: the same sizes and names."""
    model = MODELS[topo]
    result = sweep(gpus, parse_sizes("1KiB..1GiB"), model)
    names = result.columns

    def best(elements):  # priced as the sweep prices each column: its algorithm and options
        times = {name: estimate(result.algorithm(name), gpus, elements, model,
                                **result.options(name)).seconds for name in names}
        return min(names, key=times.__getitem__)

    expected = []
    for left, right in zip(result.points, result.points[1:]):
        if left.best != right.best:
            low, high = left.elements, right.elements
            while high - low > 1:
                middle = (low + high) // 2
                low, high = (middle, high) if best(middle) == left.best else (low, middle)
            expected.append((left.best, best(high), high * model.itemsize))
    assert expected and [(c.before, c.after, c.nbytes) for c in result.crossovers] == expected
