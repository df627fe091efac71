"""The algorithm's shape beside the GPU panels (G ≤ 8): a ring as a ring, a tree as a tree,
recursive exchanges as pairs, the channels of a multi-ring in their own colours.

Everything is read off the plan: the tree's parents are the destinations of its reduce
transfers, a ring's order is its `ring_order` option (1-based, as users give it), a channel
(or the second tree of a double tree) is the block of segments a transfer moves. This is how
learners draw the algorithms on paper (NCCL's rings and trees: Sanders, Speck & Träff, "Two-tree
algorithms for full bandwidth broadcast, reduction and scan", Parallel Computing 35(12), 2009;
recursive doubling and halving: Thakur, Rabenseifner & Gropp 2005, §4).
"""

from __future__ import annotations

import math

from rich.text import Text

from ...algorithms.geometry import lane_count, lane_of, ring_order, spec_of, tree_parents
from ...algorithms.spec import Shape
from ...core.plan import Plan, Step
from .lines import TextLines

WIDTH, HEIGHT = 27, 11  # the drawing's canvas in characters (the widget adds two caption lines)
LANE_COLOURS = ("#ffaf00", "#00d7ff", "#ff5fd7", "#87ff5f", "#d7d7ff", "#ff8787")
SHAPE_NAMES = {Shape.PAIRS: "pairs exchange", Shape.STAR: "star",
               Shape.ALL_TO_ALL: "everyone to everyone", Shape.SWITCH: "GPUs around the switch (S)"}
ARROWS = {(1, 0): "→", (-1, 0): "←", (0, 1): "↓", (0, -1): "↑",
          (1, 1): "↘", (-1, -1): "↖", (1, -1): "↗", (-1, 1): "↙"}


def circle(gpus: int, order: list[int]) -> dict[int, tuple[int, int]]:
    """GPUs on an ellipse, clockwise from the top, in `order`."""
    cx, cy, rx, ry = WIDTH // 2, HEIGHT // 2, WIDTH // 2 - 1, HEIGHT // 2
    spots = {}
    for i, g in enumerate(order):
        angle = 2 * math.pi * i / max(gpus, 1)
        spots[g] = (round(cx + rx * math.sin(angle)), round(cy - ry * math.cos(angle)))
    return spots


def tree_spots(parents: list[int]) -> dict[int, tuple[int, int]]:
    """Parent above children: one row of the canvas per depth, children in their parent's order."""
    gpus = len(parents)
    children: dict[int, list[int]] = {g: [] for g in range(-1, gpus)}
    for g, p in enumerate(parents):
        children[p].append(g)
    levels: list[list[int]] = []
    frontier = children[-1]
    while frontier:
        levels.append(frontier)
        frontier = [c for g in frontier for c in children[g]]
    gap = max(1, (HEIGHT - 1) // max(len(levels) - 1, 1))
    spots = {}
    for depth, row in enumerate(levels):
        for i, g in enumerate(row):
            spots[g] = ((i + 1) * WIDTH // (len(row) + 1), min(depth * gap, HEIGHT - 1))
    return spots


def _line(a: tuple[int, int], b: tuple[int, int]) -> list[tuple[int, int]]:
    """The cells strictly between a and b (Bresenham)."""
    (x0, y0), (x1, y1) = a, b
    dx, dy = abs(x1 - x0), -abs(y1 - y0)
    sx, sy = (1 if x0 < x1 else -1), (1 if y0 < y1 else -1)
    err, cells = dx + dy, []
    while (x0, y0) != (x1, y1):
        e2 = 2 * err
        if e2 >= dy:
            err += dy
            x0 += sx
        if e2 <= dx:
            err += dx
            y0 += sy
        cells.append((x0, y0))
    return cells[:-1]


def _glyph(a: tuple[int, int], b: tuple[int, int]) -> str:
    dx, dy = b[0] - a[0], b[1] - a[1]
    if abs(dx) > 3 * abs(dy):
        return "─"
    if abs(dy) > 3 * abs(dx):
        return "│"
    return "╲" if (dx > 0) == (dy > 0) else "╱"


class Canvas:
    """A WIDTH×HEIGHT grid of styled characters."""

    def __init__(self) -> None:
        self.cells = [[(" ", "")] * WIDTH for _ in range(HEIGHT)]

    def put(self, x: int, y: int, char: str, style: str = "") -> None:
        """One character (off-canvas positions are ignored)."""
        if 0 <= x < WIDTH and 0 <= y < HEIGHT:
            self.cells[y][x] = (char, style)

    def edge(self, a, b, style: str) -> tuple[int, int, str] | None:
        """A line from a to b; returns where its head goes (next to b) and the arrow, or None."""
        cells = _line(a, b)
        glyph = _glyph(a, b)
        for x, y in cells:
            self.put(x, y, glyph, style)
        if not cells:
            return None
        x, y = cells[-1]
        return x, y, ARROWS.get(((b[0] > x) - (b[0] < x), (b[1] > y) - (b[1] < y)), "•")

    def text(self) -> Text:
        """The grid as Rich text, one line per row (runs of one style appended at once: a
        canvas is mostly blank, and one append per character would cost most of a frame)."""
        out = Text()
        for row in self.cells:
            run, style = [], row[0][1]
            for char, char_style in row:
                if char_style != style:
                    out.append("".join(run), style)
                    run, style = [], char_style
                run.append(char)
            out.append("".join(run), style)
            out.append("\n")
        return out


def shape_name(plan: Plan) -> str:
    """What the drawing shows, in a few words."""
    shape, count = spec_of(plan).shape, lane_count(plan)
    if shape is Shape.TREE:
        if count == 1:
            return "tree: parent above children"
        return f"{'two' if count == 2 else count} trees (first drawn)"
    if shape in SHAPE_NAMES:
        return SHAPE_NAMES[shape]
    return "ring" if count == 1 else f"{count} rings"


def draw(plan: Plan, step: Step | None, bottlenecks: tuple[int, ...] = ()) -> Text:
    """The drawing for `step` (None: the start), with the bottleneck GPUs marked."""
    gpus, shape, count = plan.gpus, spec_of(plan).shape, lane_count(plan)
    tree = shape is Shape.TREE
    parents = tree_parents(plan, count) if tree else []
    spots = tree_spots(parents) if tree else circle(gpus, ring_order(plan))
    for w in range(plan.switches):  # a plan's switches sit in the middle, GPUs around them
        spots[gpus + w] = (WIDTH // 2 + 2 * w, HEIGHT // 2)
    canvas = Canvas()
    # The shape itself, dim: the ring's links, the tree's parent links.
    if tree:
        for g, p in enumerate(parents):
            if p >= 0:
                canvas.edge(spots[g], spots[p], "grey42")
    elif plan.switches:
        for g in range(gpus):
            canvas.edge(spots[g], spots[gpus], "grey42")
    elif shape is Shape.RING and gpus > 2:
        order = ring_order(plan)
        for i, g in enumerate(order):
            canvas.edge(spots[g], spots[order[(i + 1) % gpus]], "grey42")
    # This step's links, lit in their lane's colour, arrows at the receivers.
    moves: dict[tuple[int, int], int] = {}
    if step is not None:
        for t in step.transfers():
            moves.setdefault((t.src, t.dst), lane_of(plan.segments, count, t.first))
    heads = []  # drawn after every line, so that no line crosses out another's head
    for (src, dst), lane in moves.items():
        colour = LANE_COLOURS[lane % len(LANE_COLOURS)]
        heads.append((canvas.edge(spots[src], spots[dst], colour), colour))
    for head, colour in heads:
        if head is not None:
            canvas.put(*head, colour + " bold")
    for g, (x, y) in spots.items():
        style = "bold white on red" if g in bottlenecks else "bold"
        canvas.put(x, y, "S" if g >= gpus else str(g + 1) if g < 9 else "•", style)
    out = canvas.text()
    out.append(shape_name(plan), "dim")
    out.append("\n")
    if count > 1:
        for lane in range(count):
            out.append(f"■{lane + 1} ", LANE_COLOURS[lane % len(LANE_COLOURS)])
    elif shape is Shape.PAIRS and moves:
        pairs = sorted({tuple(sorted(p)) for p in moves})
        out.append(" ".join(f"{a + 1}⇄{b + 1}" for a, b in pairs), "bold")
    elif bottlenecks:
        names = ", ".join(f"GPU{g + 1}" for g in bottlenecks)
        many = f"bottleneck: {len(bottlenecks)} GPUs"
        out.append(f"bottleneck {names}" if len(names) + 11 <= WIDTH else many, "bold red")
    elif moves:
        out.append("ports evenly loaded", "dim")
    return out


class ShapeView(TextLines):
    """The algorithm's shape, this step's links lit (kept out of the 80×24 layout by the CSS)."""

    def show(self, plan: Plan, step: Step | None, bottlenecks: tuple[int, ...] = ()) -> None:
        """Draw `plan`'s shape for `step`."""
        self.show_text(draw(plan, step, bottlenecks))  # only the changed rows are drawn again
