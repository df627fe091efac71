"""Where each transfer's arrow runs in a frame: a curve, a run beside the columns, or lines
around the outside that leave the sent cells and reach the received ones."""

from __future__ import annotations

from dataclasses import dataclass

from .frames import Move
from .layout import CELL_H, GAP_X, GAP_Y, HEADER_H, LEG_GAP, LEVEL_GAP, NODE_PAD, SIDE_OUT, TURN_GAP, Layout


def _curve(lay: Layout, m: Move, repeat: int, count: int = 1,
           fan: tuple[float | None, float | None] = (None, None)
           ) -> tuple[tuple[float, float], tuple[float, float], tuple[float, float]]:
    """Start, control point and end of a transfer's arrow (a quadratic curve); `repeat` of
    `count` arrows on the same hop. `fan` places the start and the end across the column
    (from its centre, in px) where many arrows leave or reach one GPU or switch."""
    a, b, w, h = m.src, m.dst, lay.width, lay.height
    ra, ia = lay.row_of(a)
    rb, ib = lay.row_of(b)
    ax, bx = lay.x[a], lay.x[b]
    if ra == rb and abs(ia - ib) == 1:  # side by side: level with the segments it moves
        ym = lay.y[a] + HEADER_H + CELL_H * ((m.first + m.last) / 2 + 0.5)
        ym += -3 if bx > ax else 3
        start = (ax + w, ym) if bx > ax else (ax, ym)
        end = (bx, ym) if bx > ax else (bx + w, ym)
        return start, ((start[0] + end[0]) / 2, ym), end
    if ra == rb:  # the same row, further apart: an arc above (rightwards) or below (leftwards)
        up = bx > ax
        rise = min(118.0, 34 + 20 * abs(ia - ib)) + 9 * repeat
        edge = lay.y[a] if up else lay.y[a] + h
        sx, ex = ax + w / 2 + (8 if up else -8), bx + w / 2 + (-8 if up else 8)
        return (sx, edge), ((sx + ex) / 2, edge - rise if up else edge + rise), (ex, edge)
    # A pair sending both ways: two lines side by side; many lanes on one hop (NCCL's
    # channels) close together, so that every line stays over its own column.
    apart = 16.0 if count <= 2 else min(16.0, (w / 2 - 4) / (count - 1))
    shift = (-10 if a < b else 10) + (apart if a < b else -apart) * repeat
    down = lay.y[b] > lay.y[a]
    out_dx, in_dx = fan
    start = (ax + w / 2 + (shift if out_dx is None else out_dx + 6 * repeat), lay.y[a] + h if down else lay.y[a])
    end = (bx + w / 2 + (shift if in_dx is None else in_dx + 6 * repeat), lay.y[b] if down else lay.y[b] + h)
    return start, ((start[0] + end[0]) / 2, (start[1] + end[1]) / 2), end


def beside(lay: Layout, m: Move, repeat: int) -> list[tuple[float, float]] | None:
    """The corners of an arrow between two columns one above the other with rows between them
    (a ring across nodes closing its loop): it runs down the gap beside the columns, so that it
    is neither hidden behind the rows between nor laid over the arrows from row to row. None
    for any other arrow."""
    a, b, w, h = m.src, m.dst, lay.width, lay.height
    ra, rb = lay.row_of(a)[0], lay.row_of(b)[0]
    if abs(ra - rb) < 2 or abs(lay.x[a] - lay.x[b]) > 0.5:
        return None
    # Only in a grid (a column at the same place in every row between): there the run beside
    # the columns lies in the gap between two of them. Else it goes behind (draw_frame).
    for row in lay.rows[min(ra, rb) + 1:max(ra, rb)]:
        if not any(abs(lay.x[k] - lay.x[a]) < 0.5 for k in row):
            return None
    x = lay.x[a] + w - 14 - 5 * repeat  # where it leaves and enters the columns
    side = lay.x[a] + w + 7 + 3 * repeat  # outside the column's frame, inside a node's box
    if lay.y[b] > lay.y[a]:  # down: from the bottom of one to the top of the other
        y0, y1 = lay.y[a] + h, lay.y[b]
        return [(x, y0), (x, y0 + 12), (side, y0 + 12), (side, y1 - 12), (x, y1 - 12), (x, y1)]
    y0, y1 = lay.y[a], lay.y[b] + h
    return [(x, y0), (x, y0 - 12), (side, y0 - 12), (side, y1 + 12), (x, y1 + 12), (x, y1)]


@dataclass(frozen=True)
class Route:
    """A transfer's arrow: a curve (start, control point, end) or corners joined by lines."""

    points: tuple[tuple[float, float], ...]
    curved: bool
    # Lines only: the straight stretch where the tag may sit, and its place along it (0: the first end).
    stretch: tuple[tuple[float, float], tuple[float, float]] = ((0.0, 0.0), (0.0, 0.0))
    tag_at: float = 0.5

    def at(self, u: float) -> tuple[float, float]:
        """The point a fraction u along the curve, or along the tag's stretch of the lines."""
        if self.curved:
            (x0, y0), (cx, cy), (x1, y1) = self.points
            return ((1 - u) ** 2 * x0 + 2 * u * (1 - u) * cx + u * u * x1,
                    (1 - u) ** 2 * y0 + 2 * u * (1 - u) * cy + u * u * y1)
        (x0, y0), (x1, y1) = self.stretch
        return x0 + (x1 - x0) * u, y0 + (y1 - y0) * u


def _rows_y(lay: Layout, gpu: int, m: Move) -> float:
    """The middle of the cells a move reads or writes on one GPU."""
    return lay.y[gpu] + HEADER_H + CELL_H * ((m.first + m.last) / 2 + 0.5)


def _around(lay: Layout, m: Move, slot: int, both: bool) -> Route | None:
    """A wrap-around arrow (a ring closing its loop) as lines around the outside: out of the
    sender's outer side level with the cells it sends, around the row's end (below it going
    left, above going right) or along a ring's turn, and into the receiver's outer side level
    with the cells that receive; `slot` of the arrows around at once (0: nearest). None for
    any other arrow."""
    sides = lay.outer_sides(m.src, m.dst)
    if sides is None:
        return None
    a, b, w = m.src, m.dst, lay.width
    ya, yb = _rows_y(lay, a, m), _rows_y(lay, b, m)
    if sides[0] == sides[1]:  # a ring's turn: along the ends of both rows
        off = SIDE_OUT + TURN_GAP * slot
        edge = lay.x[a] + w if sides[0] == "right" else lay.x[a]
        run = edge + off if sides[0] == "right" else edge - off
        # The tag sits on the run between the rows, nearer the sender when both ways are drawn.
        lo, hi = sorted((lay.y[a], lay.y[b]))
        gap = (lo + lay.height + NODE_PAD, hi - NODE_PAD)
        near, far = gap if lay.y[a] < lay.y[b] else gap[::-1]
        return Route(((edge, ya), (run, ya), (run, yb), (edge, yb)), False,
                     ((run, near), (run, far)), 0.3 if both else 0.5)
    # Around one row: below it going left, above it going right, clear of a node's box.
    off = SIDE_OUT + LEG_GAP * slot
    xa = lay.x[a] + w if sides[0] == "right" else lay.x[a]
    xb = lay.x[b] + w if sides[1] == "right" else lay.x[b]
    down = sides[0] == "right"
    leg_a, leg_b = (xa + off, xb - off) if down else (xa - off, xb + off)
    boxed = a < len(lay.node_of) and lay.node_of[a] >= 0
    # Below a node's box (above it, past its label); LEVEL_GAP apart from one another.
    drop = (NODE_PAD + 12 + (0 if down else 8) if boxed else 26) + LEVEL_GAP * slot
    level = lay.y[a] + lay.height + drop if down else lay.y[a] - drop
    return Route(((xa, ya), (leg_a, ya), (leg_a, level), (leg_b, level), (leg_b, yb), (xb, yb)), False,
                 ((leg_a, level), (leg_b, level)))


def _down_aside(lay: Layout, m: Move, repeat: int) -> Route | None:
    """An arrow down one row to another column, as lines: out of the sender's bottom, across the
    gap between the rows, down the gap beside the receiver and into its side level with the cells
    that receive, so that it points at those cells rather than at the GPU's title, and passes
    no column on the way. None for any other arrow (and inside a node's box, whose edges the
    gaps would cross)."""
    a, b, w, h = m.src, m.dst, lay.width, lay.height
    ra, rb = lay.row_of(a)[0], lay.row_of(b)[0]
    if rb != ra + 1:
        return None
    # Only past a column of the receiver's row: a curve there would cross it and land on the
    # receiver's title; beside its receiver (a tree's child) the short curve reads well.
    lo, hi = sorted((lay.x[a], lay.x[b]))
    if not any(lo + 0.5 < lay.x[k] < hi - 0.5 for k in lay.rows[rb]):
        return None
    if max(lay.node_of[a] if a < len(lay.node_of) else -1, lay.node_of[b] if b < len(lay.node_of) else -1) >= 0:
        return None
    left = lay.x[a] > lay.x[b]  # the sender lies to the right: into the receiver's right side
    side = lay.x[b] + w if left else lay.x[b]
    leg = side + (GAP_X / 2 if left else -GAP_X / 2) + (-6 if left else 6) * repeat
    x0, y0 = lay.x[a] + w / 2 + 6 * repeat, lay.y[a] + h
    level = (y0 + lay.y[b]) / 2 + 6 * repeat
    yb = _rows_y(lay, b, m)
    return Route(((x0, y0), (x0, level), (leg, level), (leg, yb), (side, yb)), False,
                 ((x0, level), (leg, level)))


def route(lay: Layout, m: Move, repeat: int = 0, count: int = 1,
          fan: tuple[float | None, float | None] = (None, None), both: bool = False,
          slot: int = 0) -> Route:
    """Where a transfer's arrow runs: around the outside, beside the columns, down beside the
    receiver, or a curve."""
    around = _around(lay, m, slot, both)
    if around is not None:
        return around
    corners = beside(lay, m, repeat)
    if corners is not None:  # its tag on the run beside the columns, a third into the first gap
        (x, y), down = corners[2], corners[-1][1] > corners[0][1]
        spot = (x, y + (GAP_Y / 3 if down else -GAP_Y / 3))
        return Route(tuple(corners), False, (spot, spot))
    if fan == (None, None) and count == 1:
        aside = _down_aside(lay, m, repeat)
        if aside is not None:
            return aside
    return Route(_curve(lay, m, repeat, count, fan), True)


FAN_MIN = 3  # arrows into (or out of) one column from another row before their ends spread out


def spread_ends(moves, lay: Layout) -> dict[tuple[int, int], tuple[float | None, float | None]]:
    """Where each hop between rows leaves and reaches its columns, when three or more arrows
    share a column (a master, a tree's root, a switch): spread across its width in the order
    of the columns at their other ends, so that no two arrowheads sit on one another."""
    into: dict[int, set[int]] = {}
    out_of: dict[int, set[int]] = {}
    for m in moves:
        if lay.row_of(m.src)[0] != lay.row_of(m.dst)[0]:
            into.setdefault(m.dst, set()).add(m.src)
            out_of.setdefault(m.src, set()).add(m.dst)

    def places(ends: set[int]) -> dict[int, float]:
        if len(ends) < FAN_MIN:
            return {}
        order = sorted(ends, key=lambda k: lay.x[k])
        room = lay.width - 16
        return {k: -room / 2 + room * i / (len(order) - 1) for i, k in enumerate(order)}

    spread_in = {dst: places(srcs) for dst, srcs in into.items()}
    spread_out = {src: places(dsts) for src, dsts in out_of.items()}
    return {(m.src, m.dst): (spread_out.get(m.src, {}).get(m.dst), spread_in.get(m.dst, {}).get(m.src))
            for m in moves}
