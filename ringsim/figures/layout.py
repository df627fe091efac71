"""Where each GPU's column goes, read from the plan and the algorithm's shape (never its name).

A ring is drawn as a loop of two rows (the first half of the ring order left to right, the
rest back right to left, so that every hop is to a neighbour and the last hop closes the loop),
a tree with parents above children, pairs as two rows whose partners face each other or sit
side by side, a star with its centre above the others, and nodes as boxes around their GPUs.
Trees' parents are the receivers of their reduces and a ring's order is its `ring_order`
option, as learners draw them on paper (Sanders, Speck & Träff, "Two-tree algorithms for full
bandwidth broadcast, reduction and scan", Parallel Computing 35(12), 2009; Thakur,
Rabenseifner & Gropp, "Optimization of collective communication operations in MPICH", 2005).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..algorithms.geometry import ring_order, tree_parents
from ..algorithms.spec import Shape
from ..core.plan import Plan

MAX_ROW = 8        # columns in one row before it wraps
CELL_H = 20        # one segment's cell
HEADER_H = 24      # the GPU's name above its cells
GAP_X = 58         # between columns of a row: room for an arrow
GAP_Y = 96         # between rows: room for arrows and arcs
MARGIN = 28
ARC_ROOM = 64      # above the first row and below the last: arcs between distant columns
NODE_PAD = 14      # a node's box above and below its columns
NODE_SIDE = 22     # and beside them: room for an arrow around the node's ends
SIDE_ROOM = 12     # beside rows that snake back: room for an arrow around their ends
# Arrows around the outside (a ring closing its loop): from the cells to the first one, and
# between one and the next beside a column, below a row, and beside a ring's turn (where
# their tags sit, so these are a tag's width apart).
SIDE_OUT = 12
LEG_GAP = 5
LEVEL_GAP = 6
TURN_GAP = 20


@dataclass(frozen=True)
class Layout:
    """Column positions (top-left corner per GPU), sizes, rows and node boxes."""

    x: tuple[float, ...]
    y: tuple[float, ...]
    width: float       # of one column
    height: float      # of one column
    rows: tuple[tuple[int, ...], ...]
    boxes: tuple[tuple[int, float, float, float, float], ...]  # node, x, y, w, h
    right: float       # the drawing's extent
    bottom: float
    aligns: tuple[str, ...] = ()   # each row's alignment: 'left', 'right' or 'centre'
    node_of: tuple[int, ...] = ()  # each GPU's node (-1: none)
    # Which arrows go around the outside: 'rows' (a ring: between the two ends of a row, and
    # at the turns where rows snake back), 'turns' (a chain: only at its turns), '' (none).
    loops: str = ""

    def row_of(self, gpu: int) -> tuple[int, int]:
        """(row, place in the row) of a GPU."""
        for r, row in enumerate(self.rows):
            if gpu in row:
                return r, row.index(gpu)
        raise ValueError(gpu)

    def neighbours(self, a: int, b: int) -> bool:
        """True when the two GPUs sit side by side in one row."""
        (ra, ia), (rb, ib) = self.row_of(a), self.row_of(b)
        return ra == rb and abs(ia - ib) == 1

    def outer_sides(self, a: int, b: int) -> tuple[str, str] | None:
        """The sides ('left', 'right') by which an arrow from a to b goes around the outside, or None."""
        if not self.loops:
            return None
        (ra, ia), (rb, ib) = self.row_of(a), self.row_of(b)
        # The two ends of a ring's row, or of one node's part of it.
        if ra == rb and abs(ia - ib) > 1 and self.loops == "rows":
            row, lo, hi = self.rows[ra], min(ia, ib), max(ia, ib)
            node = self.node_of[a] if len(self.node_of) > max(a, b) else -1
            same = node >= 0 and self.node_of[b] == node

            def outside(i: int) -> bool:
                return i < 0 or i >= len(row) or (same and self.node_of[row[i]] != node)
            if not (outside(lo - 1) and outside(hi + 1)):
                return None
            return ("left", "right") if ia < ib else ("right", "left")
        # A turn: the ends of two rows that snake back, one above the other.
        if abs(ra - rb) != 1 or abs(self.x[a] - self.x[b]) > 0.5 or len(self.aligns) != len(self.rows):
            return None
        if {self.aligns[ra], self.aligns[rb]} != {"left", "right"}:
            return None
        shared = self._ends(a) & self._ends(b)
        return (next(iter(shared)),) * 2 if len(shared) == 1 else None

    def _ends(self, gpu: int) -> set[str]:
        r, i = self.row_of(gpu)
        return ({"left"} if i == 0 else set()) | ({"right"} if i == len(self.rows[r]) - 1 else set())


def around_slots(lay: Layout, hops: list[tuple[int, int]]) -> list[int | None]:
    """Each hop's place among one step's arrows around the outside (0: nearest; None: not around)."""
    found = []
    for n, (a, b) in enumerate(hops):
        sides = lay.outer_sides(a, b)
        if sides is None:
            continue
        if sides[0] != sides[1]:  # around a row: below it going left, above going right
            key = ("row", lay.row_of(a)[0], sides[0])
            lo, hi = sorted((lay.x[a], lay.x[b]))
            hi += lay.width
        else:  # along a ring's turn
            key = ("turn", sides[0], lay.x[a])
            lo, hi = sorted((lay.y[a], lay.y[b]))
            hi += lay.height
        found.append(((hi - lo, a > b, a, b, n), key, lo, hi))
    slots: list[int | None] = [None] * len(hops)
    taken: list[tuple[tuple, float, float, int]] = []
    for order, key, lo, hi in sorted(found):  # the shortest nearest, so that none crosses another
        used = {s for k, l, h, s in taken if k == key and l < hi and lo < h}
        slot = next(s for s in range(len(used) + 1) if s not in used)
        taken.append((key, lo, hi, slot))
        slots[order[-1]] = slot
    return slots


def tree_levels(parents: list[int]) -> list[list[int]]:
    """GPUs by depth, children in their parent's order."""
    children: dict[int, list[int]] = {g: [] for g in range(-1, len(parents))}
    for g, p in enumerate(parents):
        children[p].append(g)
    levels, frontier = [], children[-1]
    while frontier:
        levels.append(frontier)
        frontier = [c for g in frontier for c in children[g]]
    return levels


def centre_gpu(plan: Plan) -> int:
    """The GPU that takes part in the most transfers: a star's centre."""
    count = np.zeros(plan.gpus, dtype=np.int64)
    for step in plan.steps:
        np.add.at(count, step.src, 1)
        np.add.at(count, step.dst, 1)
    return int(np.argmax(count))


def _wrap(row: list[int]) -> list[list[int]]:
    rows = max(1, math.ceil(len(row) / MAX_ROW))
    per = math.ceil(len(row) / rows)
    return [row[i:i + per] for i in range(0, len(row), per)]


def _far_hops(plan: Plan, rows: list[list[int]]) -> int:
    """How many of the plan's pairs of sender and receiver are neither side by side in a row
    nor one straight above the other (rows start at the left): each is a long or slanting arrow."""
    where = {k: (r, i) for r, row in enumerate(rows) for i, k in enumerate(row)}
    far = 0
    for a, b in {p for step in plan.steps for p in zip(step.src.tolist(), step.dst.tolist())}:
        (ra, ia), (rb, ib) = where[a], where[b]
        far += not ((ra == rb and abs(ia - ib) == 1) or (abs(ra - rb) == 1 and ia == ib))
    return far


def _node_rows(plan: Plan, nodes) -> list[list[int]]:
    """One node per row, so that the picture reads as so many nodes and stays as wide as a
    ring's rows; or every node side by side in one row, as racks stand in a hall, where all the
    GPUs fit in one (MAX_ROW) and that leaves fewer long arrows (a ring through the nodes in
    turn hops from one node's last GPU to the next one's first, a neighbour in one row)."""
    per_node = [r for node in nodes for r in _wrap(list(node))]
    one = [g for node in nodes for g in node]
    if len(one) <= MAX_ROW and _far_hops(plan, [one]) < _far_hops(plan, per_node):
        return [one]
    return per_node


def _chain_rows(chain: list[int]) -> tuple[list[list[int]], list[str]]:
    """A tree with one GPU on each level (a chain, as inside a node) as a row, root first, so
    that every hop is between neighbours; a long one snakes back along a second row, like a
    ring, instead of standing as a column of one GPU per level."""
    rows = _wrap(chain)
    return ([row if r % 2 == 0 else row[::-1] for r, row in enumerate(rows)],
            ["left" if r % 2 == 0 else "right" for r in range(len(rows))])


def rows_for(plan: Plan, shape: Shape, lanes: int, nodes=()) -> tuple[list[list[int]], list[str]]:
    """The rows of GPUs and how each row aligns ('left', 'right', 'centre')."""
    g = plan.gpus
    if plan.switches and not nodes:  # a plan's switches (nvls) in a row of their own, above the GPUs
        rest = _wrap(list(range(g)))
        return [list(range(g, plan.participants)), *rest], ["centre"] * (1 + len(rest))
    if nodes:  # a node's GPUs side by side; the nodes in one row or one below another
        rows = _node_rows(plan, nodes)
        return rows, ["left"] * len(rows)
    if shape is Shape.TREE:
        levels = tree_levels(tree_parents(plan, lanes))
        placed = {k for level in levels for k in level}
        if len(levels) > 2 and len(placed) == g and all(len(level) == 1 for level in levels):
            return _chain_rows([level[0] for level in levels])
        levels.append([k for k in range(g) if k not in placed])  # none, unless a plan loops
        rows = [r for level in levels if level for r in _wrap(level)]
        return rows, ["centre"] * len(rows)
    if shape is Shape.STAR and g > 1:
        centre = centre_gpu(plan)
        rest = _wrap([k for k in range(g) if k != centre])
        return [[centre], *rest], ["centre"] * (1 + len(rest))
    half = math.ceil(g / 2)
    if shape is Shape.PAIRS:
        return [list(range(half)), list(range(half, g))], ["left", "left"]
    order = ring_order(plan)
    if g <= 2:
        return [order], ["left"]
    return [order[:half], order[half:][::-1]], ["left", "right"]


def _arc_rows(plan: Plan, where: dict[int, tuple[int, int]]) -> set[int]:
    """The rows that hold a transfer between GPUs of the row that are not side by side."""
    found = set()
    for step in plan.steps:
        for a, b in set(zip(step.src.tolist(), step.dst.tolist())):
            (ra, ia), (rb, ib) = where[a], where[b]
            if ra == rb and abs(ia - ib) > 1:
                found.add(ra)
    return found


def layout(plan: Plan, shape: Shape, lanes: int, nodes, cell_width: float) -> Layout:
    """Positions of every GPU's column for this plan, its columns `cell_width` wide."""
    lay = _placed(plan, shape, lanes, nodes, cell_width, NODE_SIDE, SIDE_ROOM)
    # Room beside the columns for every arrow around the outside at once (many rings' lanes).
    rows_most = turns_most = 0
    for step in plan.steps:
        hops = list(zip(step.src.tolist(), step.dst.tolist()))
        for (a, b), slot in zip(hops, around_slots(lay, hops)):
            if slot is not None:
                sides = lay.outer_sides(a, b)
                if sides[0] != sides[1]:
                    rows_most = max(rows_most, slot)
                else:
                    turns_most = max(turns_most, slot)
    if rows_most or turns_most:
        lay = _placed(plan, shape, lanes, nodes, cell_width, NODE_SIDE + LEG_GAP * rows_most,
                      SIDE_ROOM + max(TURN_GAP * turns_most, LEG_GAP * rows_most))
    return lay


def _placed(plan: Plan, shape: Shape, lanes: int, nodes, cell_width: float, node_side: float,
            side_room: float) -> Layout:
    """The layout with `node_side` px in a node's box beside its columns, and `side_room` px
    more beside rows that snake back."""
    rows, aligns = rows_for(plan, shape, lanes, nodes)
    rows = [r for r in rows if r]
    aligns = aligns[:len(rows)]
    height = HEADER_H + CELL_H * plan.segments
    node_of = [-1] * plan.participants
    for m, members in enumerate(nodes):
        for k in members:
            node_of[k] = m
    node_pad = NODE_PAD if nodes else 0
    node_side = node_side if nodes else 0
    # Two nodes' boxes in one row stay as far apart as with NODE_PAD beside their columns.
    apart = 2 * (node_side - NODE_PAD) if nodes else 0

    def places(row: list[int]) -> list[float]:
        out = [0.0]
        for i in range(1, len(row)):
            step = cell_width + GAP_X + (apart if node_of[row[i]] != node_of[row[i - 1]] else 0)
            out.append(out[-1] + step)
        return out
    offsets = [places(row) for row in rows]
    span = max(o[-1] + cell_width for o in offsets)
    chain = shape is Shape.TREE and "centre" not in aligns  # a chain laid out as rows
    loops = "rows" if shape is Shape.RING else "turns" if chain else ""
    # A ring's second row runs back under its first: arrows turn around the rows' ends.
    snake = bool(loops) and any({aligns[r], aligns[r + 1]} == {"left", "right"}
                                for r in range(len(rows) - 1))
    side = node_side + (side_room if snake else 0)
    where = {k: (r, i) for r, row in enumerate(rows) for i, k in enumerate(row)}
    arcs = _arc_rows(plan, where)
    above = ARC_ROOM if 0 in arcs else 0
    below = ARC_ROOM if len(rows) - 1 in arcs else 0
    x = [0.0] * plan.participants  # GPUs, then the plan's switches
    y = [0.0] * plan.participants
    top = MARGIN + above + node_pad
    row_top = top
    for r, (row, align, offset) in enumerate(zip(rows, aligns, offsets)):
        if r:  # arcs below the row above and above this one share the gap: widen it
            row_top += height + GAP_Y + 2 * node_pad + (ARC_ROOM // 2 if {r - 1, r} <= arcs else 0)
        used = offset[-1] + cell_width
        start = MARGIN + side + {"left": 0.0, "right": span - used, "centre": (span - used) / 2}[align]
        for gpu, dx in zip(row, offset):
            x[gpu] = start + dx
            y[gpu] = row_top
    boxes = []
    for m, members in enumerate(nodes):
        for row in rows:
            inside = [k for k in row if k in members]
            if inside:
                x0 = min(x[k] for k in inside) - node_side
                x1 = max(x[k] for k in inside) + cell_width + node_side
                y0 = y[inside[0]] - node_pad
                boxes.append((m, x0, y0, x1 - x0, height + 2 * node_pad))
    right = MARGIN + 2 * side + span + MARGIN
    bottom = row_top + height + node_pad + below + MARGIN
    return Layout(tuple(x), tuple(y), cell_width, height, tuple(tuple(r) for r in rows),
                  tuple(boxes), right, bottom, tuple(aligns), tuple(node_of), loops)
