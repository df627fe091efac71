"""NCCL's tree (chains inside nodes, the double binary tree across) and NVLS (the switch adds),
held against references written from NVIDIA/nccl's source (tests/references.py)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from ringsim import Layout, RingsimError, allreduce, check, make_plan, measure
from ringsim.algorithms import nccl_tree, nvls
from ringsim.algorithms.timing import estimate, timed_algorithms
from ringsim.cost.model import CostModel, algbw, busbw, price
from ringsim.cost.topology import load
from ringsim.cost.topology_model import Topology
from ringsim.core.reference import reference_sum
from ringsim.studies.compare import compare

from references import nccl_tree_links


@pytest.mark.parametrize("gpus, per", [(2, 1), (2, 2), (8, 1), (8, 2), (8, 4), (16, 4), (24, 8),
                                       (40, 8), (9, 3), (12, 2), (35, 5), (64, 8), (7, 7)])
def test_the_trees_are_connect_cc_s(gpus, per):
    """Every GPU's parent in both trees, as ncclTopoPreset and connectTrees wire them."""
    for second, links in zip((False, True), nccl_tree_links(gpus, per)):
        got = nccl_tree.parents(gpus, per, second)
        assert got.tolist() == [links[r][0] for r in range(gpus)]
        kids = {r: sorted(links[r][1]) for r in range(gpus)}
        assert all(sorted(np.flatnonzero(got == r).tolist()) == kids[r] for r in range(gpus))


def test_chains_inside_nodes_and_the_balanced_pattern():
    # 16 GPUs in 4 nodes of 4: node n's chain is GPUs 4n … 4n+3 (1-based 4n+1 …).
    first = nccl_tree.parents(16, 4, False)
    assert [first[g] for g in (1, 2, 3)] == [0, 1, 2]            # the chain of node 0
    # btree on 4 nodes: node 1 → node 2 (its first child: attaches to GPU9, node 2's second
    # GPU), node 2 → node 0 and node 3 → node 2 (second children: their parents' first GPUs).
    assert (first[4], first[8], first[12]) == (9, 0, 8) and first[0] == -1
    second = nccl_tree.parents(16, 4, True)
    assert second[12] == -1  # the mirrored tree's root is the last node's first GPU


def test_one_gpu_per_node_is_the_double_binary_tree():
    for g in (2, 5, 8, 13):
        a, b = make_plan("nccl-tree", g, gpus_per_node=1, chunks=2), make_plan("double-tree", g, chunks=2)
        assert [sorted(s.transfers()) for s in a.steps] == [sorted(s.transfers()) for s in b.steps]


def test_the_default_node_is_the_largest_divisor_up_to_8():
    assert [nccl_tree.default_gpus_per_node(g) for g in (1, 4, 12, 16, 17, 24)] == [1, 4, 6, 8, 1, 8]
    with pytest.raises(RingsimError, match="does not divide 12 GPUs"):
        make_plan("nccl-tree", 12, gpus_per_node=5)


def test_nccl_tree_sums_bitwise_alike_and_its_ledger_is_its_closed_form():
    x = np.random.default_rng(3).standard_normal((12, 101)).astype(np.float32)
    out = np.stack(allreduce(list(x), "nccl-tree", gpus_per_node=4, chunks=3).outputs)
    assert len({row.tobytes() for row in out}) == 1
    assert np.allclose(out[0], reference_sum(x), atol=1e-5)
    plan = make_plan("nccl-tree", 12, gpus_per_node=4, chunks=3)
    ledger = measure(plan, Layout(plan.segments, 101))
    form = nccl_tree.closed_form(12, 101, 4, 3)
    assert (ledger.total, ledger.steps, ledger.sent.max(), ledger.busiest()) == \
        (form.total.value, form.steps.value, form.busiest_sent.value, form.busiest_sender)


def test_nvls_every_gpu_sends_n_and_the_switch_carries_g_times_n():
    g, n = 6, 50
    plan = make_plan("nvls", g, chunks=4)
    assert plan.switches == 1 and plan.participants == g + 1 and check(plan) == []
    ledger = measure(plan, Layout(plan.segments, n))
    assert ledger.sent.tolist() == [n] * g and ledger.received.tolist() == [n] * g
    assert ledger.switch_received.tolist() == [g * n] and ledger.switch_sent.tolist() == [g * n]
    assert ledger.total == 2 * g * n == nvls.closed_form(g, n, 4).total.value
    assert set(ledger.links()) == {(k, g) for k in range(g)} | {(g, k) for k in range(g)}
    assert len(plan) == 4 + 1


def test_nvls_results_are_the_switch_s_one_sum():
    x = np.random.default_rng(5).standard_normal((7, 33)).astype(np.float32)
    x[2, 4] = np.nan
    out = np.stack(allreduce(list(x), "nvls", chunks=3).outputs)
    assert len({row.tobytes() for row in out}) == 1  # one multicast: the same bits everywhere
    finite = np.isfinite(reference_sum(x))
    assert np.allclose(out[0][finite], reference_sum(x)[finite], atol=1e-5)


def _reducing(topology: Topology) -> Topology:
    """The topology with a switch that adds on every level (NVLink SHARP / InfiniBand SHARP)."""
    levels = {k: dataclasses.replace(v, in_network_reduction=True) for k, v in topology.levels.items()}
    return dataclasses.replace(topology, levels=levels)


def test_nvls_busbw_passes_the_link_rate_only_with_a_switch_that_adds():
    flat = CostModel.flat(alpha=0.5e-6, bandwidth=450e9)
    g, n, chunks = 8, 1 << 28, 64
    assert "nvls" not in timed_algorithms(flat, g)       # an ordinary switch only forwards
    adding = CostModel(_reducing(flat.topology), 4)
    assert "nvls" in timed_algorithms(adding, g)
    t = estimate("nvls", g, n, adding, chunks=chunks).seconds
    # (C + 1) steps of α + (N/C elements)·β: the push of chunk k beside the multicast of k−1.
    assert t == pytest.approx((chunks + 1) * (0.5e-6 + n * 4 / chunks / 450e9), rel=1e-12)
    assert t == pytest.approx(price(make_plan("nvls", g, chunks=chunks), n, adding).seconds, rel=1e-12)
    bus = busbw(algbw(n * 4, t), g)
    assert 450e9 < bus < 2 * (g - 1) / g * 450e9
    ring = busbw(algbw(n * 4, estimate("ring", g, n, adding).seconds), g)
    assert ring < 450e9 < bus


def test_compare_times_nvls_where_the_switch_adds_and_says_why_not_elsewhere():
    model = CostModel(load("pcie-gen4"), 4)
    rows = {r.algorithm: r for r in compare(8, 1 << 20, model)}
    assert rows["nvls"].timing is None and rows["ring"].timing is not None
    assert "does not add" in nvls.unavailable(model.topology, 8)
    # dgx-h100's NVSwitch adds (in_network_reduction inside a node); its InfiniBand does not.
    model = CostModel(load("dgx-h100"), 4)
    assert nvls.unavailable(model.topology, 8) == "" and nvls.unavailable(model.topology, 16)
    rows = {r.algorithm: r for r in compare(8, 1 << 20, model)}
    assert rows["nvls"].timing.rank == 1
    # Across nodes the reducing switch is the network's: its links are the across level.
    across = estimate("nvls", 16, 1 << 20, CostModel(_reducing(model.topology), 4))
    assert across.level == "across"


def test_the_switch_is_named_and_drawn():
    from ringsim import Simulation
    from ringsim.tui.widgets.shape import draw
    sim = Simulation.create("nvls", 4, 8, chunks=2)
    sim.step()
    sim.step()
    words = sim._sentences[1]
    assert "GPU1 sends a₂ to the switch, which adds it up with what the other GPUs send" in words
    assert "The switch sends (a₁+b₁+c₁+d₁) by multicast to GPU1, where it replaces a₁" in words
    assert "the switch → GPU2 seg₁ :=" in str(sim.plan)
    picture = draw(sim.plan, sim.plan.steps[1]).plain
    assert "S" in picture and "GPUs around the switch" in picture


def test_an_mpi_rank_plays_the_switch_beside_its_gpu():
    # rank 0 hosts switch 0 (participant G); its steps read the switch's own buffer
    from ringsim.mpi.executor import host, played_by, rank_steps
    from ringsim.mpi.collective import plan_for
    plan = plan_for("nvls", 4, {})
    assert played_by(plan, 0) == [0, 4] and played_by(plan, 1) == [1]
    assert host(plan, 4) == 0 and host(plan, 3) == 3
    push, multicast = rank_steps(plan, Layout(plan.segments, 8), 0)
    assert [r[:3] for r in push.receives] == [(0, 4, 0), (1, 4, 1), (2, 4, 2), (3, 4, 3)]
    assert [s[:2] for s in push.sends] == [(0, 0)]  # GPU1's push: a message to itself
    assert [s[:2] for s in multicast.sends] == [(0, 4), (1, 4), (2, 4), (3, 4)]


def test_a_plan_s_switches_are_checked_like_gpus():
    from ringsim.core.plan import Plan, Step
    step = Step.build("push", 1, 1, "reduce", [0, 1], [3, 3], [0, 0])
    with pytest.raises(RingsimError, match="outside"):
        Plan("x", 2, (step,), segments=1, switches=1)
    with pytest.raises(RingsimError, match="switches"):
        Plan("x", 2, (), segments=1, switches=-1)


@pytest.mark.parametrize("topology", ["flat", "dgx-h100"])
@pytest.mark.parametrize("gpus, per, chunks", [(48, 4, 3), (64, 8, 2), (40, 1, 2), (96, 8, 1),
                                                (30, 5, 4), (60, 60, 2), (33, 1, 1), (512, 8, 2),
                                                (384, 2, 1)])
def test_one_gpu_per_signature_prices_as_every_gpu(topology, gpus, per, chunks):
    """Past nccl_tree.FULL GPUs only one GPU of each signature is priced: forced here at small
    G, the time and bottleneck level are the plan's, priced port by port."""
    model = CostModel(load(topology), 4)
    sampled = nccl_tree._signatures(gpus, per, model.topology.gpus_per_node, 0)
    assert len(sampled) <= gpus and (gpus < 384 or len(sampled) < 0.6 * gpus)
    for n in (0, 7, 12345):
        fast = nccl_tree.seconds(gpus, n, model, per, chunks, full=0)
        plan = price(make_plan("nccl-tree", gpus, gpus_per_node=per, chunks=chunks), n, model)
        assert fast.seconds == pytest.approx(plan.seconds, rel=1e-9, abs=1e-300)
        assert fast.level == plan.bottleneck_level()


def _signatures_from_parents(gpus, per, topo_per_node):
    """The lowest GPU of each signature, read off the full parent arrays one GPU at a time."""
    from ringsim.algorithms._phases import depths, heights
    rows = [[] for _ in range(gpus)]
    for second in (False, True):
        up = nccl_tree.parents(gpus, per, second)
        height, depth = heights(up), depths(up)
        link = lambda a, b: int(a // topo_per_node != b // topo_per_node) if topo_per_node else 0  # noqa: E731
        kids = [[] for _ in range(gpus)]
        for g in range(gpus):
            if up[g] >= 0:
                kids[up[g]].append(int(height[g]) * 2 + link(g, up[g]))
        for g in range(gpus):
            rows[g] += [int(height[g]), int(depth[g]), link(g, up[g]) if up[g] >= 0 else -1,
                        tuple(sorted(kids[g]))]
    lowest = {}
    for g, row in enumerate(rows):
        lowest.setdefault(tuple(row), g)
    return sorted(lowest.values())


@pytest.mark.parametrize("gpus, per, topo", [(48, 4, 8), (40, 1, 8), (96, 8, 8), (30, 5, 4), (60, 60, None),
                                             (33, 1, None), (512, 8, 8), (384, 2, 8), (384, 8, 3),
                                             (1000, 4, 8), (999, 3, 2)])
def test_signatures_by_formula_are_the_lowest_gpu_of_each_kind(gpus, per, topo):
    """The signatures worked out from node arithmetic (no array of G) are exactly the lowest GPU
    of every signature the full trees give, and the closed form's busiest GPU is every GPU's."""
    assert nccl_tree._signatures(gpus, per, topo, 0).tolist() == _signatures_from_parents(gpus, per, topo)
    for n in (1, 7, 12345):
        sent = np.zeros(gpus, np.int64)
        q, r = divmod(n, 2)
        for t, second in enumerate((False, True)):
            up = nccl_tree.parents(gpus, per, second)
            moves = np.bincount(up[up >= 0], minlength=gpus) + (up >= 0)
            sent += moves * (q + (t < r))
        form = nccl_tree.closed_form(gpus, n, per, 1)
        assert (form.busiest_sender, form.busiest_sent.value) == (int(np.argmax(sent)), int(sent.max()))
