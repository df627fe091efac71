"""One GPU as a panel: its G segment cells drawn top to bottom, titled with its name and its load."""

from __future__ import annotations

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from textual.content import Content
from textual.geometry import Size
from textual.strip import Strip
from textual.widget import Widget

from ...core.naming import gpu_name
from ..cell import CellView


def one_row(cell: CellView, room: int) -> str:
    """A cell on one row: 'a₁+b₁  ← GPU1 +' where it fits, else the note's arrow and the label
    ('← a₁+b₁'): the cell's colour and the transfer list say the rest."""
    if not cell.note:
        return cell.text
    full = f"{cell.text}  {cell.note}"
    return full if cell_len(full) <= room else f"{cell.note[0]} {cell.text}"


class GpuPanel(Widget):
    """GPU k's panel. One widget draws all its cells line by line (Textual's line API, cheap to
    repaint); colours come from component classes in ringsim.tcss, so presentation mode restyles them."""

    COMPONENT_CLASSES = {
        "gpu-panel--plain", "gpu-panel--plain-alt", "gpu-panel--complete", "gpu-panel--sending",
        "gpu-panel--receiving", "gpu-panel--exchanging",
    }

    def __init__(self, gpu: int, gpus: int) -> None:
        super().__init__(id=f"gpu-{gpu + 1}", classes="gpu-panel")
        self.gpu = gpu
        self.gpus = gpus
        self.cells: list[CellView] = []
        self.cell_height = 2  # label and note; 3 in presentation mode (a spacer line); 1 on short terminals
        self._styles: dict[str, Style] = {}  # per cell state; resolving CSS per line is slow
        self.border_title = gpu_name(gpu)

    def show(self, title: str, sent: int, received: int, cells: list[CellView], *,
             master: bool, present: bool, selected: bool = False, rows: int = 2) -> None:
        """Title ('GPU1 · master'), elements sent/received so far, and every cell, in `rows`
        rows per cell (presentation mode: 3)."""
        self.border_title = Content(title)  # plain text: no markup in a GPU's title
        self.border_subtitle = Content(f"↑{sent:,} ↓{received:,}")
        self.set_class(master, "-master")
        self.set_class(selected, "-selected")
        height = 3 if present else rows
        resized = height != self.cell_height
        self.cell_height = height
        if cells != self.cells or resized:
            self.cells = cells
            self.refresh(layout=resized)

    def notify_style_update(self) -> None:
        self._styles.clear()  # the theme or presentation mode changed the component classes
        super().notify_style_update()

    def _style(self, name: str) -> Style:
        if name not in self._styles:
            self._styles[name] = self.rich_style + self.get_component_rich_style(f"gpu-panel--{name}")
        return self._styles[name]

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return self.gpus * self.cell_height

    def render_line(self, y: int) -> Strip:
        width = self.content_region.width
        segment, row = divmod(y, self.cell_height)
        if segment >= len(self.cells):
            return Strip.blank(width)
        cell = self.cells[segment]
        name = cell.state if cell.state != "plain" or segment % 2 == 0 else "plain-alt"
        style = self._style(name)
        room = width - 1  # one column of margin inside each cell
        line = one_row(cell, room) if self.cell_height == 1 else (cell.text, cell.note, "")[row]
        if cell_len(line) > room:
            line = line[:max(room - 1, 0)] + "…"
        if self.cell_height == 3:
            pad = max(room - cell_len(line), 0) // 2
            line = " " * pad + line
        return Strip([Segment(" " + line, style)]).adjust_cell_length(width, style)
