"""The arrow that closes a ring's loop (from the last GPU of a row, or of a node's part of
it, back to the first; or across a ring's turn between its two rows) leaves the sender level
with the cells it sends and reaches the receiver level with the cells that receive, around the
outside of the columns."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

pytest.importorskip("drawsvg", reason="the figures extra (drawsvg) is not installed")

from ringsim.figures.draw import cell_width  # noqa: E402
from ringsim.figures.routes import route  # noqa: E402
from ringsim.figures.layout import CELL_H, HEADER_H, around_slots, layout  # noqa: E402
from ringsim.figures.render import figure_svg, frame_at  # noqa: E402
from ringsim.sim.simulation import Simulation  # noqa: E402


def _drawn(sim: Simulation, step: int):
    f = frame_at(sim, step)
    return f, layout(sim.plan, f.shape, f.lanes, f.nodes, cell_width(sim.plan.gpus, sim.plan.segments))


def _rows(lay, gpu: int, first: int, last: int) -> tuple[float, float]:
    """The top and bottom (px) of a GPU's cells first..last (0-based)."""
    top = lay.y[gpu] + HEADER_H
    return top + CELL_H * first, top + CELL_H * (last + 1)


def _move(f, src: int, dst: int):
    return next(m for m in f.moves if (m.src, m.dst) == (src, dst))


def test_a_nodes_ring_closes_into_the_rows_that_receive():
    sim = Simulation.create("hierarchical", 8, nodes=2)
    f, lay = _drawn(sim, 2)
    m = _move(f, 3, 0)  # GPU4 sends c5+d5, c6+d6; GPU1 adds them into its cells 5 and 6
    assert (m.first, m.last) == (4, 5)
    r = route(lay, m)
    (x0, y0), (x1, y1) = r.points[0], r.points[-1]
    top, bottom = _rows(lay, 3, m.first, m.last)
    assert top < y0 < bottom and x0 == lay.x[3] + lay.width  # out of GPU4's right side
    top, bottom = _rows(lay, 0, 4, 5)
    assert top < y1 < bottom and x1 == lay.x[0]  # into GPU1's left side at its cells 5-6
    sent = _rows(lay, 0, 6, 7)  # not under d8+a8, which GPU1 sends on in the same step
    assert not sent[0] <= y1 <= sent[1]
    # Around the outside: beside the two columns, then below the node's box.
    (xa, _), (_, level), (xb, _) = r.points[1], r.points[2], r.points[4]
    assert xa > lay.x[3] + lay.width + 3 and xb < lay.x[0] - 3
    box = next(b for b in lay.boxes if b[0] == 0)
    assert level > box[2] + box[4]
    assert box[1] < xb and xa < box[1] + box[3]  # its legs inside the node's box
    # The picture draws that route: the arrowhead's tip is the route's end.
    svg = ET.fromstring(figure_svg(sim, 2))
    arrow = next(e for e in svg.iter() if "transfer" in (e.get("class") or "").split()
                 and (e.get("data-src"), e.get("data-dst")) == ("4", "1"))
    tip = [e for e in arrow.iter() if e.tag.endswith("path")][-1].get("d").split()[0].strip("M")
    assert tuple(round(float(v), 1) for v in tip.split(",")) == (round(x1, 1), round(y1, 1))


@pytest.mark.parametrize("step", [1, 2, 3])
def test_every_step_of_the_nodes_ring_reaches_the_receivers_rows(step):
    sim = Simulation.create("hierarchical", 16, nodes=4)  # a node per row
    f, lay = _drawn(sim, step)
    for src, dst in ((3, 0), (7, 4), (11, 8), (15, 12)):
        m = _move(f, src, dst)
        r = route(lay, m)
        assert not r.curved
        top, bottom = _rows(lay, src, m.first, m.last)
        assert top < r.points[0][1] < bottom
        top, bottom = _rows(lay, dst, m.first, m.last)
        assert top < r.points[-1][1] < bottom
        # Its tag on the run below the row, under none of the columns' cells.
        ty = r.at(r.tag_at)[1]
        assert ty > lay.y[src] + lay.height


def test_a_rings_turn_runs_beside_the_rows_ends():
    sim = Simulation.create("ring", 8)  # GPU1-GPU4 above, GPU8-GPU5 back under them
    f, lay = _drawn(sim, 2)
    for src, dst, side in ((7, 0, "left"), (3, 4, "right")):
        m = _move(f, src, dst)
        assert lay.outer_sides(src, dst) == (side, side)
        r = route(lay, m)
        top, bottom = _rows(lay, dst, m.first, m.last)
        assert top < r.points[-1][1] < bottom
        run = r.points[1][0]
        assert run < lay.x[src] - 3 if side == "left" else run > lay.x[src] + lay.width + 3
        assert lay.right > run + 16 > 16  # room for the tag beside it


def test_other_shapes_keep_their_arcs():
    sim = Simulation.create("halving-doubling", 6)  # GPU4 and GPU6: partners at a row's ends
    f, lay = _drawn(sim, 1)
    hops = [(m.src, m.dst) for m in f.moves]
    assert around_slots(lay, hops) == [None] * len(hops)


def test_many_lanes_around_at_once_take_lines_of_their_own():
    sim = Simulation.create("ring", 8, ring_order="rails:4")  # four rings, wrapping at once
    f, lay = _drawn(sim, 2)
    slots = around_slots(lay, [(m.src, m.dst) for m in f.moves])
    legs: dict[int, list[float]] = {}
    for m, slot in zip(f.moves, slots):
        if slot is None:
            continue
        r = route(lay, m, slot=slot)
        for end, (x, _) in ((m.src, r.points[1]), (m.dst, r.points[-2])):
            legs.setdefault(end, []).append(x)
        box = next(b for b in lay.boxes if b[0] == lay.node_of[m.src])
        assert box[1] < r.points[1][0] < box[1] + box[3]  # inside the sender's node box
    assert len(legs[0]) == 4  # three lanes from GPU4 and one from GPU8 into GPU1
    for xs in legs.values():
        assert len(set(xs)) == len(xs)


def test_an_arrow_down_to_another_column_lands_on_the_cells_not_the_title():
    # Halving-doubling at G = 6 folds GPU3 into GPU4, one row down and two columns left: the
    # arrow reaches GPU4's side level with the cells it adds into, clear of GPU5 between them.
    sim = Simulation.create("halving-doubling", 6)
    f, lay = _drawn(sim, 1)
    m = _move(f, 2, 3)
    r = route(lay, m)
    (x1, y1) = r.points[-1]
    top, bottom = _rows(lay, 3, m.first, m.last)
    assert top < y1 < bottom and x1 == lay.x[3] + lay.width  # into GPU4's right side
    # No stretch of it runs through GPU5's column, which stands between the two.
    box = (lay.x[4], lay.y[4], lay.x[4] + lay.width, lay.y[4] + lay.height)
    for (xa, ya), (xb, yb) in zip(r.points, r.points[1:]):
        assert not (min(xa, xb) < box[2] and max(xa, xb) > box[0]
                    and min(ya, yb) < box[3] and max(ya, yb) > box[1]), r.points
