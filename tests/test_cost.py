"""The α-β-γ model: plans priced step by step against the textbook and the closed forms.

Reference formulas are written from Thakur, Rabenseifner & Gropp, "Optimization of Collective
Communication Operations in MPICH" (IJHPCA 2005), Table 1 and §4, for p GPUs, n bytes per GPU,
p dividing n, one flat level: they are independent of ringsim's plans and closed forms.
"""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ringsim.algorithms import ALGORITHMS, checked_options, make_plan
from ringsim.algorithms.timing import estimate, timed_algorithms
from ringsim.cost.model import CostModel, algbw, busbw, price
from ringsim.core.errors import RingsimError
from ringsim.core.layout import Layout
from ringsim.execute.ledger import measure
from ringsim.cost.topology import load, presets
from ringsim.cost.topology_model import Level, Topology

ALPHA, BANDWIDTH, REDUCE = 3e-6, 80e9, 500e9


def flat(alpha=ALPHA, bandwidth=BANDWIDTH, reduce=REDUCE) -> CostModel:
    """One level, one port per GPU: the textbook machine (4-byte elements)."""
    return CostModel(Topology("t", "t", None, {"inside": Level("inside", "t", alpha, bandwidth)},
                              reduce), 4)


def lg(p):
    return p.bit_length() - 1


a, b, c = ALPHA, 1 / BANDWIDTH, 1 / REDUCE
TEXTBOOK = {  # time for p GPUs and n bytes per GPU
    "ring": lambda p, n: 2 * (p - 1) * a + 2 * (p - 1) / p * n * b + (p - 1) / p * n * c,
    "master": lambda p, n: 2 * (p - 1) * (a + n * b) + (p - 1) * n * c,
    "naive": lambda p, n: (p - 1) * (a + n * b + n * c),
    "recursive-doubling": lambda p, n: lg(p) * (a + n * b + n * c),
    "halving-doubling": lambda p, n: 2 * lg(p) * a + 2 * (p - 1) / p * n * b + (p - 1) / p * n * c,
}
POWER_OF_TWO_ONLY = {"recursive-doubling", "halving-doubling"}


@pytest.mark.parametrize("name", sorted(TEXTBOOK))
@pytest.mark.parametrize("p", [2, 3, 4, 8, 16, 64, 256])
def test_plan_priced_time_is_the_textbook_formula(name, p):
    if name not in ALGORITHMS:
        pytest.skip(f"{name} is not registered yet: its plan lands with the algorithms branch")
    if name in POWER_OF_TWO_ONLY and p & (p - 1):
        pytest.skip(f"{name} is defined here for p a power of two")
    if name == "naive" and p > 64:
        p = 64  # p·(p−1) transfers: keep the test fast
    elements = p * 1000
    plan = ALGORITHMS[name].plan(p)
    priced = price(plan, elements, flat()).seconds
    assert priced == pytest.approx(TEXTBOOK[name](p, elements * 4), rel=1e-9)


def test_each_step_reports_its_bottleneck_port():
    # Master on 4 GPUs: the master's in port queues 3 reduces, then its out port 3 copies.
    cost = price(make_plan("master", 4), 400, flat())
    assert [str(s.port) for s in cost.steps] == ["GPU1 receiving inside a node",
                                                 "GPU1 sending inside a node"]
    n = 1600
    assert cost.steps[0].seconds == pytest.approx(3 * (a + n * b + n * c), rel=1e-12)
    assert cost.clock()[-1] == pytest.approx(cost.seconds)


def test_two_levels_the_ring_waits_on_the_network():
    model = CostModel(load("dgx-h100"), 4)
    cost = price(make_plan("ring", 16), 16 * 2**20, model)
    assert cost.bottleneck_level() == "across"
    inside, across = model.topology.level("inside"), model.topology.level("across")
    segment = 2**20 * 4
    step = across.alpha + segment * across.beta
    assert cost.steps[-1].seconds == pytest.approx(step, rel=1e-12)  # all-gather: no γ
    # Ties go to the across level, the in port, the lowest GPU: GPU1 receiving from GPU16.
    assert str(cost.steps[-1].port) == "GPU1 receiving across nodes"
    assert step > inside.alpha + segment * inside.beta


def _options(draw, name: str, g: int) -> dict:
    """Options of every kind the algorithm takes, drawn small enough to stay fast."""
    if name == "master":
        return {"master": draw(st.integers(1, g))}  # 1-based, as users write it
    if name in ("tree", "double-tree", "nvls"):
        return {"chunks": draw(st.integers(1, 8))}
    if name == "ring":
        channels = draw(st.integers(1, 4))
        if draw(st.booleans()):
            return {"channels": channels}
        rings = draw(st.sampled_from([1, channels]))
        orders = [draw(st.permutations(range(1, g + 1))) for _ in range(rings)]
        return {"channels": channels, "ring_order": ";".join(",".join(map(str, o)) for o in orders)}
    if name == "hierarchical":
        return {"nodes": draw(st.sampled_from([d for d in range(1, g + 1) if g % d == 0]))}
    if name == "nccl-tree":
        return {"gpus_per_node": draw(st.sampled_from([d for d in range(1, g + 1) if g % d == 0])),
                "chunks": draw(st.integers(1, 4))}
    return {}


@st.composite
def cases(draw):
    name = draw(st.sampled_from(timed_algorithms()))
    topo = draw(st.sampled_from(presets()))
    per_node = load(topo).gpus_per_node
    top = per_node if per_node and "across" not in load(topo).levels else 40  # one-node presets
    g = draw(st.integers(1, top))
    n = draw(st.one_of(st.integers(0, 3 * g), st.integers(0, 5000)))
    return name, topo, g, n, draw(st.sampled_from([1, 2, 4, 8])), _options(draw, name, g)


def _plan(name, g, options):
    """The plan make_plan builds from the options as users give them."""
    return make_plan(name, g, **options)


@settings(max_examples=200, deadline=None)
@given(cases())
def test_every_time_closed_form_equals_the_priced_plan(case):
    """Every registered algorithm and option: the `seconds` hook == the plan priced, any N."""
    name, topo, g, n, size, options = case
    model = CostModel(load(topo), size)
    plan = _plan(name, g, options)
    priced, closed = price(plan, n, model), estimate(name, g, n, model, **options)
    assert closed.seconds == pytest.approx(priced.seconds, rel=1e-9, abs=1e-300)
    assert closed.level == priced.bottleneck_level()


@settings(max_examples=150, deadline=None)
@given(cases())
def test_busiest_gpu_is_the_one_the_ledger_picks(case):
    """Every algorithm and option: busiest_gpu == Ledger.busiest() (most sent + received, lowest)."""
    name, _, g, n, _, options = case
    plan = _plan(name, g, options)
    ledger = measure(plan, Layout(plan.segments, n))
    assert ALGORITHMS[name].busiest_gpu(g, n, **checked_options(plan)) == ledger.busiest()


def test_every_registered_algorithm_has_both_hooks():
    assert set(timed_algorithms()) == set(ALGORITHMS)
    # NVLS needs a switch that adds: where no topology level says so, compare leaves it out.
    assert "nvls" not in timed_algorithms(CostModel(load("pcie-gen4"), 4), 8)
    assert all(hasattr(spec, "busiest_gpu") for spec in ALGORITHMS.values())


@pytest.mark.parametrize("name", sorted(ALGORITHMS))
@pytest.mark.parametrize("p", [97, 256])
def test_closed_forms_hold_up_to_256_gpus_on_two_levels(name, p):
    if name == "naive" and p > 100:
        p = 100
    model = CostModel(load("dgx-h100"), 2)
    for n in (p * 3 + 5, 10**6 + 1):
        priced = price(make_plan(name, p), n, model)
        closed = estimate(name, p, n, model)
        assert closed.seconds == pytest.approx(priced.seconds, rel=1e-9)
        assert closed.level == priced.bottleneck_level()


@pytest.mark.parametrize("name", sorted(TEXTBOOK))
@pytest.mark.parametrize("p", [2, 16, 1024, 2**20])
def test_time_hook_is_the_textbook_formula_without_a_plan(name, p):
    """The hooks alone, far beyond what a plan could hold: still the textbook to 1e-9."""
    elements = p * 1000
    closed = estimate(name, p, elements, flat())
    assert closed.seconds == pytest.approx(TEXTBOOK[name](p, elements * 4), rel=1e-9)
    assert closed.level == "inside"


def test_bandwidths_as_nccl_tests_defines_them():
    # nccl-tests doc/PERFORMANCE.md: algbw = S/t; all-reduce busbw = algbw·2(n−1)/n.
    assert algbw(10**9, 0.5) == 2e9 and busbw(2e9, 8) == 2e9 * 14 / 8
    assert algbw(10**9, 0.0) is None and busbw(None, 8) is None
    # Without latency or reduce cost, the ring's busbw is exactly the link bandwidth.
    model = flat(alpha=0.0, reduce=math.inf)
    p, n = 8, 8 * 2**20
    t = estimate("ring", p, n, model).seconds
    assert busbw(algbw(n * 4, t), p) == pytest.approx(BANDWIDTH, rel=1e-12)


def test_a_million_gpus_without_a_plan():
    model = CostModel(load("dgx-h100"), 4)
    ring = estimate("ring", 1_000_000, 7_000_000_000, model)
    assert ring.level == "across" and ring.seconds > 0
    with pytest.raises(RingsimError, match=r"has no \[across\] level \(the link across nodes\)"):
        estimate("ring", 16, 16, CostModel(load("pcie-gen4"), 4))


def test_compare_and_sweep_build_no_plan(monkeypatch):
    from ringsim.core import plan as plan_module
    from ringsim.studies.compare import compare
    from ringsim.studies.sweep import parse_sizes, sweep

    def refuse(self):
        raise AssertionError("a plan was built")
    monkeypatch.setattr(plan_module.Plan, "__post_init__", refuse)
    model = CostModel(load("dgx-h100"), 4)
    rows = compare(1_000_000, 7_000_000_001, model)
    assert {r.algorithm for r in rows if r.timing} == set(timed_algorithms(model, 1_000_000))
    assert all(r.busiest_gpu is not None for r in rows)
    last = sweep(1024, parse_sizes("1KiB..8GiB"), model).points[-1]
    assert last.best == min(last.estimates, key=lambda name: last.estimates[name].seconds)
    # On two levels the ring waits on the network in every step, while halving-doubling
    # swaps its big halves inside the nodes first: the model prefers it at 8 GiB.
    assert last.estimates["halving-doubling"].seconds < last.estimates["ring"].seconds


# Forms derived by hand on one flat level (p GPUs, n bytes per GPU, every split even), from
# the model's rules, not from the hooks: K rings queue K·α per step on each port (NCCL's
# channels, and the bidirectional ring's two rings); the 2-D ring is a ring of L inside
# the groups plus a ring of M on n/L bytes; the binary tree (one chunk, p = 2^k ≥ 4) queues
# two children on an in port while reducing and two sends on an out port while broadcasting.
def _channels(p, n, k):
    return 2 * (p - 1) * (k * a + n / p * b) + (p - 1) / p * n * c


def _hierarchical(p, n, m):
    inner = p // m
    return (2 * (inner - 1) * a + 2 * (inner - 1) / inner * n * b + (inner - 1) / inner * n * c
            + 2 * (m - 1) * a + 2 * (m - 1) / p * n * b + (m - 1) / p * n * c)


def _tree(p, n):
    return (2 * lg(p) - 1) * (2 * a + 2 * n * b + n * c)


HAND = [("ring", {"channels": 3}, lambda p, n: _channels(p, n, 3)),
        ("bidirectional-ring", {}, lambda p, n: _channels(p, n, 2)),
        ("hierarchical", {"nodes": 2}, lambda p, n: _hierarchical(p, n, 2)),
        ("hierarchical", {"nodes": 4}, lambda p, n: _hierarchical(p, n, 4)),
        ("tree", {}, _tree)]


@pytest.mark.parametrize("name, options, form", HAND)
@pytest.mark.parametrize("p", [4, 16, 64])
def test_hand_derived_flat_forms(name, options, form, p):
    elements = p * 6000
    expected = form(p, elements * 4)
    assert estimate(name, p, elements, flat(), **options).seconds == pytest.approx(expected, rel=1e-9)
    assert price(make_plan(name, p, **options), elements, flat()).seconds == pytest.approx(expected, rel=1e-9)


@pytest.mark.parametrize("gpus", [2, 3, 5, 33, 64, 100, 129, 257])
def test_sampled_trees_equal_the_whole_trees(gpus):
    """The trees' sample (`_btree.sample`, used above 4,096 GPUs) forced on small G: same answers."""
    from ringsim.algorithms import _btree, _trees
    custom = CostModel(Topology("t", "t", 3, {"inside": Level("inside", "i", 1e-6, 1e11),
                                              "across": Level("across", "x", 3e-6, 2e10)}, 1e12), 4)
    for two in (False, True):
        trees = [_btree.Tree(gpus)] + ([_btree.Tree(gpus, True)] if two else [])
        name = "double-tree" if two else "tree"
        for chunks, n in ((1, 10007), (3, gpus + 1)):
            plan = make_plan(name, gpus, chunks=chunks)
            ledger = measure(plan, Layout(plan.segments, n))
            form = _trees.closed_form(gpus, n, trees, chunks, full=4)
            assert form.busiest_sent.value == max(ledger.sent)
            assert form.busiest_sender == ledger.busiest()
            for model in (custom, CostModel(load("dgx-h100"), 2)):
                priced, closed = price(plan, n, model), _trees.seconds(gpus, n, model, trees, chunks, full=4)
                assert closed.seconds == pytest.approx(priced.seconds, rel=1e-9)
                assert closed.level == priced.bottleneck_level()
