"""The compact view for many GPUs: a GPU × segment grid coloured by how much of the sum each holds."""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from rich.segment import Segment
from rich.style import Style
from textual.geometry import Size
from textual.strip import Strip
from textual.widget import Widget

from ...sim.simulation import Simulation
from ..marks import cell_masks

HALF_BLOCK_FROM = 25  # from this G on, two GPUs share a text row (upper/lower half blocks)
KEPT = 4  # positions whose rows are kept for stepping back and forth

SENDING = "#ff9f1c"
RECEIVING = "#e056fd"
COMPLETE = "#2ecc71"
COMPLETE_MOVING = "#a8f0c6"  # a complete sum being sent or received: still green, paler
# Partial sums: from dim (own segment only) to bright (all but one GPU), in 8 shades.
SHADES = ["#3a3f4b", "#2b4c7e", "#2d5f9e", "#3274bd", "#3b89d6", "#4f9de8", "#6cb2f2", "#8fc6f7"]
PALETTE = [SENDING, RECEIVING, COMPLETE, COMPLETE_MOVING, *SHADES]
FIRST_SHADE = 4  # PALETTE index of SHADES[0]
BOLD, DIM, SELECTED = Style(bold=True), Style(dim=True), Style(bold=True, reverse=True)
ARROWS = {(True, False): "→ ", (False, True): "← ", (True, True): "⇄ "}  # (sent, received)
INK = "#000000"  # the arrows' colour, on any cell colour


class HeatMap(Widget):
    """Rows: GPUs; columns: segments. Orange sent, magenta received, green complete, blue partial.

    A complete sum stays green while it moves (pale green), so the end of reduce-scatter shows
    its finished sums; up to 24 GPUs a moved cell also carries an arrow (→ sent, ← received).

    Rows are built once per step as strips (runs of one colour merged), so repainting is cheap."""

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.strips: list[Strip] = []
        self.lines: list[str] = []  # the same rows as plain text, for tests and screen readers

    def show(self, sim: Simulation, selected: int | None = None) -> None:
        """Colour every cell from the Simulation's symbolic state and the last step's transfers;
        the selected GPU's name in reverse video."""
        key = (sim.position, selected)
        kept = self._kept.get(key)
        if kept is not None and kept[0] is sim:  # a position's state never changes
            rows = kept[1]
        else:
            rows = self._rows(sim, selected)
            # Stepping back and forth shows the same few positions again: keep the last ones.
            self._kept = {k: v for k, v in list(self._kept.items())[-(KEPT - 1):] if v[0] is sim}
            self._kept[key] = (sim, rows)
        resized = len(rows) != len(self.strips)
        self.strips = [Strip(row) for row in rows]
        self.lines = ["".join(s.text for s in row) for row in rows]
        self.refresh(layout=resized)  # same G, same size: repaint only

    _kept: dict = {}  # (position, selected) → (the simulation, its rows of segments)

    def _rows(self, sim: Simulation, selected: int | None) -> list[list[Segment]]:
        """The map's rows of segments: a header, the cells, the legend."""
        gpus, segments = sim.plan.gpus, sim.plan.segments
        colour, sending, receiving = self._colours(sim)
        rows: list[list[Segment]] = []
        if gpus < HALF_BLOCK_FROM:
            rows.append([Segment("seg   " + "".join(f"{j + 1:<8}" for j in range(0, segments, 4)), DIM)])
            for g in range(gpus):
                # Coloured spaces (or an arrow), not block glyphs: backgrounds stay exact in SVGs.
                cells = [(_half(None, c) + _ink(), ARROWS.get((s, r), "  "))
                         for c, s, r in zip(colour[g], sending[g], receiving[g])]
                rows.append([Segment(f"GPU{g + 1:<3}", SELECTED if g == selected else BOLD),
                             *_runs(cells)])
        else:
            rows.append([Segment("seg        " + "".join(f"{j + 1:<8}" for j in range(0, segments, 8)), DIM)])
            for g in range(0, gpus, 2):
                # Two GPUs per row: the upper half block is GPU g+1, the lower GPU g+2.
                label = f"GPU{g + 1:>2}/{g + 2:<2}" if g + 1 < gpus else f"GPU{g + 1:>2}"
                lower = colour[g + 1] if g + 1 < gpus else [None] * segments
                styles = [_half(a, b) for a, b in zip(colour[g], lower)]
                # One segment per cell: glyphs are placed cell by cell in exported SVGs.
                style = SELECTED if selected in (g, g + 1) else BOLD
                rows.append([Segment(label.ljust(11), style), *(Segment("▀", st) for st in styles)])
        rows.append([])
        rows.append(_legend([(SENDING, "sent"), (RECEIVING, "received"), (COMPLETE, "complete")]))
        rows.append(_legend([(COMPLETE_MOVING, "complete, moving")]))
        rows.append(_legend([(SHADES[0], "own only"), (SHADES[-1], "partial sum")]))
        return rows

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        """One row per strip."""
        return len(self.strips)

    def get_content_width(self, container: Size, viewport: Size) -> int:
        """As wide as the widest strip."""
        return max((strip.cell_length for strip in self.strips), default=0)

    def render_line(self, y: int) -> Strip:
        """Strip `y`, cut or padded to the widget's width."""
        width = self.content_region.width
        if y >= len(self.strips):
            return Strip.blank(width)
        return self.strips[y].crop_extend(0, width, None)

    @staticmethod
    def _colours(sim: Simulation) -> tuple[list, list, list]:
        """Index into PALETTE for every (GPU, segment), and the sent and received masks."""
        gpus, segments = sim.plan.gpus, sim.plan.segments
        state = sim.symbolic
        sending, receiving = cell_masks(sim.current, gpus, segments)
        held = np.array([[len(state.held[g][j]) for j in range(segments)] for g in range(gpus)])
        complete = np.array([[state.is_complete(g, j) for j in range(segments)] for g in range(gpus)])
        shade = np.minimum((held - 1) * len(SHADES) // max(gpus - 1, 1), len(SHADES) - 1)
        colour = FIRST_SHADE + shade
        colour[receiving] = 1
        colour[sending] = 0
        # Complete wins over moving: a finished sum is shown finished even while it is sent.
        colour[complete] = 2
        colour[complete & (sending | receiving)] = 3
        return colour.tolist(), sending.tolist(), receiving.tolist()


@lru_cache(maxsize=None)
def _half(upper: int | None, lower: int | None) -> Style:
    """The style of a cell: upper colour as foreground (▀), lower as background (palette indices)."""
    return Style(color=PALETTE[upper] if upper is not None else None,
                 bgcolor=PALETTE[lower] if lower is not None else None)


@lru_cache(maxsize=None)
def _ink() -> Style:
    return Style(color=INK, bold=True)


def _runs(cells: list[tuple[Style, str]]) -> list[Segment]:
    """One segment per run of equal styles (a handful per row instead of one per cell)."""
    segments: list[Segment] = []
    start = 0
    for i in range(1, len(cells) + 1):
        if i == len(cells) or cells[i][0] != cells[start][0]:
            segments.append(Segment("".join(text for _, text in cells[start:i]), cells[start][0]))
            start = i
    return segments


def _legend(items: list[tuple[str, str]]) -> list[Segment]:
    segments: list[Segment] = []
    for colour, name in items:
        segments += [Segment("  ", Style(bgcolor=colour)), Segment(f" {name}   ")]
    return segments
