"""--ring-order rails:P: one ring per NIC, as NCCL lays out its channels on rail-optimised nodes."""

import json
import math

import pytest

from ringsim.algorithms import make_plan
from ringsim.algorithms._ring_orders import parse_orders
from ringsim.cli import main
from ringsim.studies.compare import nccl_layout_estimate
from ringsim.cost.model import CostModel, price
from ringsim.core.errors import RingsimError
from ringsim.cost.topology import load


@pytest.mark.parametrize("per_node, nodes", [(1, 3), (2, 2), (4, 3), (8, 2)])
def test_each_ring_leaves_every_node_through_its_own_gpu(per_node, nodes):
    gpus = per_node * nodes
    orders = parse_orders(f"rails:{per_node}", gpus)
    assert len(orders) == per_node
    for ring in orders:
        assert sorted(ring) == list(range(1, gpus + 1))
    for node in range(nodes):
        members = set(range(node * per_node + 1, node * per_node + per_node + 1))
        # where each ring leaves this node: the last of its GPUs before the order moves on
        exits = []
        for ring in orders:
            inside = [i for i, g in enumerate(ring) if g in members]
            assert inside == list(range(inside[0], inside[0] + per_node))  # one visit per node
            exits.append(ring[inside[-1]])
        assert sorted(exits) == sorted(members)  # every GPU's NIC carries exactly one ring


@pytest.mark.parametrize("text, gpus, message", [
    ("rails:3", 8, "ring_order='rails:3' needs 3 GPUs per node to divide G = 8"),
    ("rails:0", 8, "ring_order='rails:P' needs at least 1 GPU per node, got rails:0"),
    ("rails:16", 8, "ring_order='rails:16' needs 16 GPUs per node to divide G = 8"),
    ("rails", 8, "ring_order='rails' needs the GPUs per node, as rails:8, got 'rails'"),
    ("rails:x", 8, "ring_order='rails' needs the GPUs per node, as rails:8, got 'rails:x'"),
])
def test_bad_rails_are_one_line(text, gpus, message):
    with pytest.raises(RingsimError) as error:
        parse_orders(text, gpus)
    assert str(error.value) == message


@pytest.mark.parametrize("nodes, elements", [(2, 8 * 16 * 1000), (3, 8 * 24 * 7)])
def test_rails_time_against_the_port_queues_by_hand(nodes, elements):
    """α = 0, free reduces, K·G dividing N: each GPU queues P−1 segments on NVLink and one on its NIC."""
    topo = load("dgx-h100").with_overrides(alpha={None: 0.0}, reduce_bandwidth=math.inf)
    model = CostModel(topo, 4)
    per_node, gpus = 8, 8 * nodes
    segment = elements // (per_node * gpus) * 4
    step = max((per_node - 1) * segment / 450e9, segment / 50e9)
    expected = 2 * (gpus - 1) * step
    priced = price(make_plan("ring", gpus, ring_order="rails:8"), elements, model).seconds
    assert priced == pytest.approx(expected, rel=1e-12)
    assert nccl_layout_estimate("ring", gpus, elements, model).seconds == pytest.approx(
        expected, rel=1e-12)
    one_ring = price(make_plan("ring", gpus), elements, model).seconds
    assert one_ring == pytest.approx(2 * (gpus - 1) * 8 * segment / 50e9, rel=1e-12)


def test_compare_times_the_rail_layout_as_a_row(capsys):
    assert main(["compare", "--time", "--topology", "dgx-h100", "--nodes", "4", "--size", "1GiB"]) == 0
    out = capsys.readouterr().out
    model = CostModel.of("dgx-h100", "float32")
    seconds = price(make_plan("ring", 32, ring_order="rails:8"), 2**28, model).seconds
    row = [line for line in out.splitlines() if line.startswith("Ring all-reduce (ring order rails:8)")][-1]
    assert row.split()[5:7] == [f"{seconds * 1e3:.2f}", "ms"]
    assert "369.11 GB/s" in row  # NCCL measures about 370 GB/s here (docs/cost.md)
    assert " 1  Ring " in row  # the fastest textbook row, and a schedule NCCL has


@pytest.mark.parametrize("nodes, size", [(2, "1GiB"), (2, "64KiB"), (3, "8MiB")])
def test_the_rail_row_takes_what_the_timeline_of_that_ring_takes(capsys, nodes, size):
    common = ["--topology", "dgx-h100", "--nodes", str(nodes), "--size", size, "--json"]
    assert main(["compare", "--time", *common]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    rail = [r for r in rows if r.get("options") == {"ring_order": "rails:8"}]
    assert len(rail) == 1
    assert main(["timeline", "--ring-order", "rails:8", *common]) == 0
    summary = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert summary["type"] == "summary"
    # the row is the lockstep model the timeline checks itself against; the events overlap
    # uneven segments' steps a little (at most a few parts per million here)
    assert rail[0]["seconds"] == pytest.approx(summary["lockstep_seconds"], rel=1e-12)
    assert rail[0]["seconds"] == pytest.approx(summary["seconds"], rel=1e-5)


def test_a_ring_order_given_replaces_the_rail_row(capsys):
    assert main(["compare", "--time", "--topology", "dgx-h100", "--nodes", "2", "--size", "1MiB",
                 "--ring-order", "rails:4", "--json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    rings = [r for r in rows if r.get("nccl_name") == "Ring"]
    assert [r["options"] for r in rings] == [{"ring_order": "rails:4"}]
    model = CostModel.of("dgx-h100", "float32")
    assert rings[0]["seconds"] == pytest.approx(
        price(make_plan("ring", 16, ring_order="rails:4"), 2**18, model).seconds, rel=1e-12)


def test_no_rail_line_on_one_node(capsys):
    assert main(["compare", "--time", "--topology", "dgx-h100", "--gpus", "8"]) == 0
    assert "rails" not in capsys.readouterr().out
    assert nccl_layout_estimate("ring", 8, 1024, CostModel.of("dgx-h100")) is None
    assert nccl_layout_estimate("ring", 12, 1024, CostModel.of("dgx-h100")) is None  # a part-filled node


def test_the_ring_alone_declares_nccls_layout_where_it_differs_from_one_ring():
    # compare, sweep, overlap, zero and the lessons add a row for each layout the registry
    # declares: the ring's on several nodes, unless its own layout options are given.
    from ringsim.algorithms.timing import LAYOUT_LIMIT, nccl_layouts
    dgx = CostModel.of("dgx-h100")
    assert nccl_layouts(64, dgx) == [("ring", {"ring_order": "rails:8"})]
    assert nccl_layouts(64, dgx, {"chunks": 4, "master": 2}) == nccl_layouts(64, dgx)
    for given in ({"channels": 2}, {"channels": 1}, {"ring_order": "rails:4"}):
        assert nccl_layouts(64, dgx, given) == []
    for gpus in (8, 12, LAYOUT_LIMIT + 8):  # one node, a part-filled node, too many to price
        assert nccl_layouts(gpus, dgx) == []
    assert nccl_layouts(64, CostModel()) == [] and nccl_layouts(64, None) == []


def test_sweep_sets_the_rail_ring_beside_the_fastest_at_its_largest_size(capsys):
    assert main(["sweep", "--topology", "dgx-h100", "--nodes", "8", "--sizes", "1MiB,1GiB",
                 "--no-plot"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    model = CostModel.of("dgx-h100", "float32")
    seconds = price(make_plan("ring", 64, ring_order="rails:8"), 2**28, model).seconds
    assert f"(--ring-order rails:8), the ring takes {seconds * 1e3:.2f} ms at 1GiB" in out
    assert main(["sweep", "--gpus", "64", "--sizes", "1MiB,1GiB", "--no-plot"]) == 0
    assert "rails" not in capsys.readouterr().out  # one level: no NICs to spread over


def test_a_rails_ring_is_named_so_and_drawn_in_its_nodes(tmp_path):
    # The orders rails:4 builds on 8 GPUs, given as numbers or as rails:4, are one plan: its
    # title says rails:4 (the four channels are its four rings), and a figure boxes its two
    # nodes of four GPUs, each ring crossing between them.
    from ringsim.algorithms import option_text, plan_nodes
    from ringsim.figures.frames import node_groups
    spelled = "1,2,3,4,5,6,7,8;2,3,4,1,6,7,8,5;3,4,1,2,7,8,5,6;4,1,2,3,8,5,6,7"
    for given in ("rails:4", spelled):
        plan = make_plan("ring", 8, ring_order=given)
        assert option_text(plan) == "ring order rails:4" and plan_nodes(plan) == 2
        assert node_groups(plan) == ((0, 1, 2, 3), (4, 5, 6, 7))
    # One node (rails:8 of 8), one ring, or orders that wander between nodes: no boxes.
    assert plan_nodes(make_plan("ring", 8, ring_order="rails:8")) == 1
    assert node_groups(make_plan("ring", 8, ring_order="rails:8")) == ()
    assert plan_nodes(make_plan("ring", 8, ring_order="rails:1")) is None
    wander = make_plan("ring", 8, ring_order="1,5,2,6,3,7,4,8;1,2,3,4,5,6,7,8")
    assert plan_nodes(wander) is None and option_text(wander).startswith("2 channels, ring order 1,5,")
    out = tmp_path / "rails.svg"
    assert main(["figure", str(out), "-g", "8", "--ring-order", "rails:4"]) == 0
    svg = out.read_text(encoding="utf-8")
    assert svg.count('class="node"') == 2 and "node 2" in svg


def test_walk_fills_every_segment_as_the_figure_and_the_tui_do(capsys):
    # Left out, N is 8 or one per segment where the plan has more: walk, tui and figure alike,
    # so that the walk of a command line tells the story its figure draws.
    assert main(["walk", "--ring-order", "rails:4", "-g", "8"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].endswith("· 8 GPUs · 32 elements per GPU")
    assert "empty segment" not in out
    assert main(["walk", "-g", "16"]) == 0
    out = capsys.readouterr().out
    assert "16 elements per GPU" in out.splitlines()[0] and "empty segment" not in out
    assert main(["walk", "-g", "16", "-n", "8"]) == 0  # asked for: as given
    assert "empty segment" in capsys.readouterr().out
