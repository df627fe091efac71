"""One GPU as a panel: its G segment cells drawn top to bottom, titled with its name and its load."""

from __future__ import annotations

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from textual.content import Content
from textual.geometry import Region, Size
from textual.strip import Strip
from textual.widget import Widget

from ...core.naming import gpu_name
from ..cell import CellView


def one_row(cell: CellView, room: int) -> str:
    """A cell on one row: 'a₁+b₁  ← GPU1 +' where it fits, else the note's arrow and the label
    ('← a₁+b₁', a sum shortened to what is left): the cell's colour and the transfer list say the rest."""
    if not cell.note:
        return cell.label(room)
    full = f"{cell.text}  {cell.note}"
    return full if cell_len(full) <= room else f"{cell.note[0]} {cell.label(room - 2)}"


TITLE_FRAME = 6  # a border title's corners, edge marks and spaces: '┏━ GPU1 ━┓' on 10 columns
LOAD_FRAME = 3  # the load on a row of its own: the side borders and one column of margin


def title_wordings(gpu: int, *, selected: bool = False, slow: float | None = None,
                   master: bool = False, bottleneck: bool = False) -> tuple[str, ...]:
    """A panel's title from the fullest wording ('▸ GPU1 ×0.5 · master ●') to the shortest
    ('▸1●'): decoration goes first, then the name shortens, so the marks stay on a narrow panel
    (the heavy border still shows the master, the clock line the slow factor)."""
    number, mark = str(gpu + 1), "●" if bottleneck else ""
    pick, factor = "▸" if selected else "", f"×{slow:g}" if slow is not None else ""
    full = ((pick + " " if pick else "") + gpu_name(gpu) + (" " + factor if factor else "")
            + (" · master" if master else "") + (" " + mark if mark else ""))
    wordings = [full,
                pick + gpu_name(gpu) + (" " + factor if factor else "") + (" " + mark if mark else ""),
                pick + gpu_name(gpu) + factor + mark,
                pick + "G" + number + factor + mark,
                pick + "G" + number + mark,
                pick + number + mark]
    return tuple(dict.fromkeys(wordings))  # in order, without repeats


def load_wordings(sent: int, received: int) -> tuple[str, ...]:
    """The panel's load line, then the same without its space for a narrow panel."""
    return (f"↑{sent:,} ↓{received:,}", f"↑{sent:,}↓{received:,}")


def fitting(wordings, room: int | None) -> str:
    """The first wording that fits `room` columns (None: the first; none fits: the shortest)."""
    wordings = (wordings,) if isinstance(wordings, str) else tuple(wordings)
    return next((w for w in wordings if room is None or cell_len(w) <= room),
                min(wordings, key=cell_len))


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
        self.cell_height = 2  # label and note; 3 in presentation mode where it fits (a spacer line); 1 on short terminals
        self._styles: dict[str, Style] = {}  # per cell state; resolving CSS per line is slow
        self.border_title = gpu_name(gpu)

    def show(self, title, sent: int, received: int, cells: list[CellView], *,
             master: bool, present: bool, selected: bool = False, rows: int = 2,
             load_row: bool = False) -> None:
        """Title ('GPU1 · master', or its wordings longest first: `title_wordings`, the one
        that fits is shown), elements sent/received so far, and every cell, in `rows` rows per
        cell (`present`: 3 or 2, the text centred). The load goes in the bottom edge, or with
        `load_row` on a row of its own under the cells (a narrow panel's edge has 4 columns:
        '↑0↓56' needs 5)."""
        # Redraw only what changed (a step changes a few cells and the load line): setting a
        # border title repaints the whole panel, so it is set only when it differs.
        self._titles = (title,) if isinstance(title, str) else tuple(title)
        self._loads = load_wordings(sent, received)
        room = self._room()
        title = fitting(self._titles, room)
        if title != self._title:
            self._title = title
            self.border_title = Content(title)  # plain text: no markup in a GPU's title
        self.set_class(master, "-master")
        self.set_class(selected, "-selected")
        height = rows
        resized = height != self.cell_height or load_row != self.load_row or present != self.present
        self.cell_height, self.load_row, self.present = height, load_row, present
        load = fitting(self._loads, self._load_room())
        old, self.cells = self.cells, cells
        if resized or len(old) != len(cells) or not self.size.height:
            self.border_subtitle = Content("" if load_row else load)
            self._load = load
            self.refresh(layout=resized)
            return
        # The rows of the cells that changed, and the bottom edge if the load did (regions
        # relative to the content area, as Widget.refresh takes them).
        rows_changed = [Region(0, j * height, self.size.width, height)
                        for j, (a, b) in enumerate(zip(old, cells)) if a != b]
        if load != self._load:
            self._load = load
            if load_row:
                rows_changed.append(Region(0, self.size.height - 1, self.size.width, 1))
            else:
                self._set_subtitle_quietly(Content(load))
                rows_changed.append(Region(-1, self.size.height, self.outer_size.width, 1))
        if rows_changed:
            self.refresh(*rows_changed)

    _title = ""
    _load = ""
    load_row = False  # the load on a row of its own under the cells, not in the bottom edge
    present = False  # presentation mode: the cells' text centred
    _label_width = 0  # the columns a cell's label has in this paint (_label_room)
    _titles: tuple[str, ...] = ()
    _loads: tuple[str, ...] = ()

    def _room(self) -> int | None:
        """Columns a border title has on this panel (None before the first layout)."""
        width = self.outer_size.width
        return width - TITLE_FRAME if width else None

    def _load_room(self) -> int | None:
        """Columns the load line has: in the bottom edge, or on its own row."""
        if not self.load_row:
            return self._room()
        width = self.outer_size.width
        return width - LOAD_FRAME if width else None

    def on_resize(self) -> None:
        """A new width may fit a longer or need a shorter title and load line."""
        room = self._room()
        if self._titles and fitting(self._titles, room) != self._title:
            self._title = fitting(self._titles, room)
            self.border_title = Content(self._title)
        if self._loads and fitting(self._loads, self._load_room()) != self._load:
            self._load = fitting(self._loads, self._load_room())
            if self.load_row:
                self.refresh()
            else:
                self.border_subtitle = Content(self._load)

    def _set_subtitle_quietly(self, content: Content) -> None:
        """The bottom edge's text without Textual's repaint of the whole panel (the caller
        repaints the edge's row)."""
        self._border_subtitle = self.render_str(content).expand_tabs(4).split()[0]

    def notify_style_update(self) -> None:
        """Forget the cached styles when the theme or classes change."""
        self._styles.clear()  # the theme or presentation mode changed the component classes
        super().notify_style_update()

    def _style(self, name: str) -> Style:
        if name not in self._styles:
            self._styles[name] = self.rich_style + self.get_component_rich_style(f"gpu-panel--{name}")
        return self._styles[name]

    def _label_room(self) -> int:
        """Columns a cell's label has: the narrowest panel's, so that a sum reads the same in
        every panel (panels sharing the width differ by a column, and a sum shortened in one
        but not its neighbour looked like two different sums)."""
        widths = [p.content_region.width for p in (self.parent.children if self.parent else ())
                  if isinstance(p, GpuPanel) and p.content_region.width]
        return min(widths, default=self.content_region.width) - 1  # one column of margin

    def render_lines(self, crop):
        """Measure the label width once per paint, then paint the lines."""
        # The label width looks at every sibling panel: once per paint, not once per line.
        self._label_width = self._label_room()
        return super().render_lines(crop)

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        """One row per cell line of every GPU, and the load row if shown."""
        return self.gpus * self.cell_height + self.load_row

    def render_line(self, y: int) -> Strip:
        """One row of the panel: a segment's cell line, or the load row."""
        width = self.content_region.width
        if self.load_row and y == self.gpus * self.cell_height:
            # The load row, centred in the border's colour as the bottom edge would show it.
            style = self.rich_style + Style(color=self.styles.border_bottom[1].rich_color)
            pad = max(width - cell_len(self._load), 0) // 2
            return Strip([Segment(" " * pad + self._load, style)]).adjust_cell_length(width, style)
        segment, row = divmod(y, self.cell_height)
        if segment >= len(self.cells):
            return Strip.blank(width)
        cell = self.cells[segment]
        name = cell.state if cell.state != "plain" or segment % 2 == 0 else "plain-alt"
        style = self._style(name)
        room = width - 1  # one column of margin inside each cell
        if self.cell_height == 1:
            line = one_row(cell, self._label_width)
        else:
            line = cell.label(self._label_width) if row == 0 else (cell.note, "")[row - 1]
        if cell_len(line) > room:  # numbers and notes; a sum's label is shortened to fit above
            line = line[:max(room - 1, 0)] + "…"
        if self.present:  # presentation mode centres the cells' text
            pad = max(room - cell_len(line), 0) // 2
            line = " " * pad + line
        return Strip([Segment(" " + line, style)]).adjust_cell_length(width, style)
