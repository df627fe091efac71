"""Laid-out rings and one-node machines at scale: the work done once per G, not per size.

Rings given GPU by GPU (--ring-order, rails:P) are priced from port profiles built once per
orders; tree columns and sweeps on a node that holds every GPU price as on one flat level.
Each is held here to the figures of the work it replaces, to the last bit.
"""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from ringsim.algorithms import _fold, _multiring, _ring_orders, _trees, nccl_tree
from ringsim.algorithms._step_times import Clock, ring_phase
from ringsim.algorithms.timing import estimate, machine_options
from ringsim.cli import main
from ringsim.core.errors import RingsimError
from ringsim.cost import ports
from ringsim.cost.model import CostModel
from ringsim.cost.topology_model import Level, Topology
from ringsim.studies import sweep as sweep_module
from ringsim.training import overlap
from ringsim.training.models import llama_7b, parse_layers


def _every_gpu_sampled(model, gpus):
    """The node size as it is, even where one node holds every GPU (the slow way)."""
    return model.topology.gpus_per_node


def _two_level(per_node: int) -> CostModel:
    """A rail-optimised machine of `per_node` GPUs per node (NVLink inside, 400 Gb/s across)."""
    return CostModel(Topology("t", "test", per_node,
                              {"inside": Level("inside", "nv", 1e-6, 450e9),
                               "across": Level("across", "ib", 3e-6, 50e9)}, 100e9), 4)


def _one_node(per_node: int = 1_000_000) -> CostModel:
    """A machine whose one node holds every GPU asked about (an across level it never uses)."""
    return CostModel(Topology("bigg", "one big node", per_node,
                              {"inside": Level("inside", "nv", 0.47e-6, 450e9),
                               "across": Level("across", "ib", 2.7e-6, 50e9)}, 100e9), 4)


def _phases_equal(model, orders, sizes):
    rings, gpus = orders.shape
    loads = _multiring._PortLoads(model, orders)
    for elements in sizes:
        for gather in (False, True):
            slow = ring_phase(model, orders, np.arange(rings) * gpus, 1, rings * gpus,
                              int(elements), gather)
            fast = loads.phase(model, int(elements), gather)
            assert np.array_equal(slow[0], fast[0]), (elements, gather)
            assert np.array_equal(slow[1], fast[1]), (elements, gather)


@pytest.mark.parametrize("model, gpus, rings", [
    (_two_level(16), 64, 16), (_two_level(16), 96, 2), (CostModel.of("dgx-h100"), 48, 8),
    (CostModel.of("dgx-h100"), 40, 4),
])
def test_profiles_price_laid_out_rings_as_the_port_queues_do(model, gpus, rings):
    rng = np.random.default_rng(gpus * rings)
    segments = rings * gpus
    sizes = [0, 1, 7, segments - 1, segments, segments + gpus // 2, 5 * segments + 3 * gpus + 1,
             10**9 + 7, int(rng.integers(1, 10**7))]
    orders = [np.stack([rng.permutation(gpus) for _ in range(rings)])]
    if gpus % rings == 0:
        orders.append(np.array(_ring_orders.rail_orders(f"rails:{rings}", gpus)) - 1)
    for order in orders:
        _phases_equal(model, order, sizes)


def test_profiles_sum_the_queues_in_the_batches_ring_phase_takes():
    # Above 2^18 / 3 GPUs ring_phase adds two rings at a time, then the third: the same sums.
    rng = np.random.default_rng(3)
    gpus = 90_000
    orders = np.stack([rng.permutation(gpus) for _ in range(3)])
    assert _multiring._PortLoads(_two_level(8), orders).batch == 2
    _phases_equal(_two_level(8), orders, [3 * gpus - 1, 3 * gpus + gpus + 5, 10**9 + 7])


def test_rails_orders_are_built_once_and_priced_from_one_array():
    first = _ring_orders.parse_orders("rails:4", 64)
    assert _ring_orders.parse_orders("rails:4", 64) is first
    assert _ring_orders.parse_orders(first, 64) is first
    array = _ring_orders.order_array(first, 4, 64)
    assert _ring_orders.order_array(first, 4, 64) is array
    assert not array.flags.writeable
    assert (array + 1).tolist() == [list(ring) for ring in first]


def test_rails_times_equal_the_plain_port_queues():
    """estimate('ring', ring_order='rails:P') as the step-by-step queues of every port give it."""
    model = _two_level(16)
    gpus, rings = 256, 16
    orders = np.array(_ring_orders.rail_orders(f"rails:{rings}", gpus)) - 1
    for elements in (1, 4096, 7 * rings * gpus + 2 * gpus + 3, 10**8 + 1):
        got = estimate("ring", gpus, elements, model, ring_order=f"rails:{rings}")
        clock = Clock()
        for gather in (False, True):
            clock.add(*ring_phase(model, orders, np.arange(rings) * gpus, 1, rings * gpus,
                                  elements, gather))
        assert got == clock.estimate("every GPU's ports")


def test_an_overlap_sweep_prices_each_bucket_once_and_gives_each_step_as_simulate_does(monkeypatch):
    model, gpus = _two_level(8), 64
    options = {"options": {"ring_order": "rails:8"}}
    sizes = [1, 5, 25, 250, float("inf")]
    alone = [overlap.simulate(llama_7b(), gpus, model, bucket_mb=mb, **options) for mb in sizes]
    calls = []
    real = overlap.estimate
    monkeypatch.setattr(overlap, "estimate", lambda *a, **k: calls.append(a[2]) or real(*a, **k))
    swept = overlap.sweep(llama_7b(), gpus, model, sizes, **options)
    assert swept == alone
    assert len(calls) == len(set(calls))  # no bucket size priced twice


def test_overlap_prints_the_step_at_its_bucket_from_its_sweep(capsys):
    main(["overlap", "-g", "64", "--topology", "dgx-h100", "--json", "--bucket-mb", "7"])
    out = json.loads(capsys.readouterr().out)
    step = overlap.simulate(llama_7b(), 64, CostModel.of("dgx-h100"), bucket_mb=7.0)
    assert out["step_seconds"] == step.step_seconds
    assert out["exposed_seconds"] == step.exposed_seconds
    rails = overlap.simulate(llama_7b(), 64, CostModel.of("dgx-h100"), bucket_mb=7.0,
                             options={"ring_order": "rails:8"})
    assert out["rails"]["step_seconds"] == rails.step_seconds


@pytest.mark.parametrize("name, module", [("tree", _trees), ("double-tree", _trees),
                                          ("nccl-tree", nccl_tree)])
def test_trees_on_one_node_price_as_on_one_flat_level(monkeypatch, name, module):
    """A node of P ≥ G GPUs: nothing crosses it, so the trees' ports are sampled as on one flat
    level (a few GPUs per tree level), not over a period of P (every GPU)."""
    model, gpus = _one_node(), 6000  # above the 4,096 GPUs priced one by one
    sizes = (4, 4096 * 1000 + 3, 1 << 28)
    fast = [estimate(name, gpus, n, model) for n in sizes]
    _trees._port_columns.cache_clear()
    nccl_tree._ports.cache_clear()
    monkeypatch.setattr(module, "node_period", _every_gpu_sampled)
    slow = [estimate(name, gpus, n, model) for n in sizes]
    _trees._port_columns.cache_clear()
    nccl_tree._ports.cache_clear()
    assert fast == slow


def test_a_sweep_in_one_node_equals_the_sweep_on_its_own_topology(monkeypatch):
    """Every column, the crossovers and NCCL's picks: the same whether the columns are priced on
    the node of P ≥ G GPUs or on its inside level alone."""
    model, gpus = _one_node(), 5000
    sizes = sweep_module.parse_sizes("4B..1GiB:x4")
    fast = sweep_module.sweep(gpus, sizes, model)
    for module in (ports, _trees, nccl_tree, _fold):
        monkeypatch.setattr(module, "node_period", _every_gpu_sampled)
    _trees._port_columns.cache_clear()
    nccl_tree._ports.cache_clear()
    slow = sweep_module.sweep(gpus, sizes, model)
    _trees._port_columns.cache_clear()
    nccl_tree._ports.cache_clear()
    assert fast.points == slow.points
    assert fast.crossovers == slow.crossovers
    assert fast.nccl == slow.nccl
    assert fast.model is model  # what the sweep reports is the topology given


def test_the_ports_see_one_node_as_no_node_only_there():
    assert ports.node_period(_one_node(), 5000) is None
    two = _two_level(8)
    assert ports.node_period(two, 64) == 8                     # several nodes
    assert ports.node_period(two, 8) is None                   # all G in one node
    assert ports.node_period(CostModel(), 64) is None           # flat already
    across_only = CostModel(dataclasses.replace(
        two.topology, levels={"across": two.topology.levels["across"]}), 4)
    assert ports.node_period(across_only, 16) == 8


def test_the_sweep_command_in_one_big_node_matches_the_flat_machine_figures(tmp_path, capsys):
    """The one-node sweep of 1,000,000 GPUs (every column, NCCL's picks): its textbook columns
    are those of the flat machine with the node's inside level, as nothing crosses nodes."""
    path = tmp_path / "bigg.toml"
    path.write_text('gpus_per_node = 1000000\narch = "hopper"\n[inside]\nname = "NV"\n'
                    'alpha = "0.47us"\nbandwidth = "450GB/s"\n[across]\nname = "IB"\n'
                    'alpha = "2.7us"\nbandwidth = "400Gb/s"\n')
    model = CostModel.of(str(path))
    got = sweep_module.sweep(1_000_000, [4096, 1 << 20], model)
    flat = dataclasses.replace(model, topology=dataclasses.replace(
        model.topology, gpus_per_node=None, levels={"inside": model.topology.levels["inside"]}))
    for point in got.points:
        for name, value in point.estimates.items():
            assert value == estimate(name, 1_000_000, point.elements, flat,
                                     **machine_options(name, 1_000_000, model))
    assert main(["sweep", "--topology", str(path), "--nodes", "1", "--no-plot",
                 "--sizes", "1KiB,1MiB"]) == 0
    assert "1,000,000 GPUs" in capsys.readouterr().out


T16 = ('gpus_per_node = 16\narch = "hopper"\n[inside]\nname = "nv"\nalpha = "1us"\n'
       'bandwidth = "450GB/s"\n[across]\nname = "ib"\nalpha = "3us"\nbandwidth = "400Gb/s"\n')
DISTINCT_300 = ",".join(str(7_000_000 + i) for i in range(300))  # each layer a bucket of its own


def test_a_laid_out_ring_at_too_many_bucket_sizes_is_refused_before_any_price(monkeypatch):
    monkeypatch.setattr(overlap, "estimate", lambda *a, **k: pytest.fail("priced before the refusal"))
    net = parse_layers(DISTINCT_300)
    model = _two_level(16)
    with pytest.raises(RingsimError) as error:
        overlap.simulate(net, 1_000_000, model, bucket_mb=1, options={"ring_order": "rails:16"})
    assert str(error.value) == (
        "the ring laid out GPU by GPU (its ring order) would be priced at 300 distinct bucket "
        "sizes × 1,000,000 GPUs (300,000,000, about 42.00 s); the limit is 50,000,000: at most "
        "50 distinct bucket sizes at 1,000,000 GPUs, or at most 166,666 GPUs for 300")
    with pytest.raises(RingsimError, match="would be priced at 563 distinct bucket sizes"):
        overlap.sweep(net, 1_000_000, model, overlap.SWEEP_MB, options={"ring_order": "rails:16"})
    # Within one node, or without a ring order, a price does not grow with G: nothing to refuse.
    assert overlap.laid_out_work(net, 16, model, overlap.SWEEP_MB, {"ring_order": "rails:16"}) == 0
    assert overlap.laid_out_work(net, 1_000_000, model, overlap.SWEEP_MB, {"channels": 16}) == 0


def test_the_overlap_command_refuses_it_in_one_line(tmp_path, capsys):
    path = tmp_path / "t16.toml"
    path.write_text(T16)
    assert main(["overlap", "-g", "1000000", "--ring-order", "rails:16", "--topology", str(path),
                 "--layers", DISTINCT_300]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith("ringsim overlap: error: the ring laid out GPU by GPU (its ring order) "
                          "would be priced at 563 distinct bucket sizes × 1,000,000 GPUs")


def test_nccls_layout_is_left_out_with_a_note_where_it_would_take_too_long(monkeypatch, capsys):
    monkeypatch.setattr(overlap, "MAX_GPU_BUCKETS", 64 * 10)  # 10 bucket sizes at 64 GPUs
    assert main(["overlap", "-g", "64", "--topology", "dgx-h100"]) == 0
    out = capsys.readouterr().out
    assert ("NCCL's layout, one ring per NIC (--ring-order rails:8), is left out: pricing it at "
            "19 bucket sizes × 64 GPUs would take about") in out
    assert "NCCL lays its rings out one per NIC" not in out
    assert main(["overlap", "-g", "64", "--topology", "dgx-h100", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["rails"] is None
    monkeypatch.setattr(overlap, "MAX_GPU_BUCKETS", 64 * 19)  # just enough
    assert main(["overlap", "-g", "64", "--topology", "dgx-h100"]) == 0
    assert "NCCL lays its rings out one per NIC" in capsys.readouterr().out
