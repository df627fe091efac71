"""Where a figure puts its GPUs: a chain (a tree with one GPU on each level, as NCCL's chain
inside a node) stands in a row, root first, so that every hop is between neighbours; a real
tree keeps its parents above their children."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

pytest.importorskip("drawsvg", reason="the figures extra (drawsvg) is not installed")

from ringsim.figures.layout import layout  # noqa: E402
from ringsim.figures.render import (
    figure_svg,  # noqa: E402
    frame_at,  # noqa: E402
)
from ringsim.sim.simulation import Simulation  # noqa: E402


def _layout(sim: Simulation):
    f = frame_at(sim, 0)
    return layout(sim.plan, f.shape, f.lanes, f.nodes, 100)


def test_a_chain_inside_one_node_is_a_row_not_a_column():
    sim = Simulation.create("nccl-tree", 8)  # one node of 8: the chain alone
    lay = _layout(sim)
    assert lay.rows == ((0, 1, 2, 3, 4, 5, 6, 7),)
    svg = ET.fromstring(figure_svg(sim, 2))
    width, height = (float(v) for v in svg.get("viewBox").split()[2:])
    assert width > 2 * height  # a strip for a slide, not a 680 × 1382 column
    # Every hop of the chain's reduce is between neighbours in the row.
    for step in sim.plan.steps:
        for t in step.transfers():
            assert lay.neighbours(t.src, t.dst), (t.src, t.dst)


def test_a_long_chain_snakes_back_along_a_second_row():
    sim = Simulation.create("nccl-tree", 12, gpus_per_node=12)
    lay = _layout(sim)
    assert lay.rows == ((0, 1, 2, 3, 4, 5), (11, 10, 9, 8, 7, 6))
    assert lay.x[5] == lay.x[6]  # the turn: GPU6 above GPU7


def test_across_nodes_and_in_a_binary_tree_the_layout_is_as_before():
    assert _layout(Simulation.create("nccl-tree", 16)).rows == (tuple(range(8)), tuple(range(8, 16)))
    tree = _layout(Simulation.create("tree", 8)).rows
    assert len(tree) > 2 and len(tree[0]) == 1  # the root alone on top, its children below
    assert _layout(Simulation.create("tree", 2)).rows == ((0,), (1,))  # a parent above its child


def test_two_nodes_of_four_stand_one_above_the_other_as_wide_as_a_ring():
    sim = Simulation.create("nccl-tree", 8, gpus_per_node=4)
    lay = _layout(sim)
    assert lay.rows == ((0, 1, 2, 3), (4, 5, 6, 7))  # a row per node, not one strip of eight
    assert [box[0] for box in lay.boxes] == [0, 1]
    assert lay.boxes[1][2] > lay.boxes[0][2] + lay.boxes[0][4]  # node 2's box below node 1's

    def width(s: Simulation) -> float:
        return float(ET.fromstring(figure_svg(s, 1)).get("viewBox").split()[2])
    # No wider than the plain ring of 8 GPUs, drawn as a loop of two rows of four.
    assert width(sim) <= 1.15 * width(Simulation.create("ring", 8))
    # A ring through the nodes in turn keeps them side by side: each hop to the next node is
    # then between neighbours, where a row per node would slant every one of them.
    assert _layout(Simulation.create("ring", 8, ring_order="rails:4")).rows == (tuple(range(8)),)
