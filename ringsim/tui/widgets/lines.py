"""A block of Rich text drawn line by line (Textual's line API): only the lines that changed
since the last frame are drawn again.

A Static turns its whole text into Textual content and every line into a strip on each
update; for the counters (bars of coloured spaces) and the shape (a canvas of single styled
characters) that costs most of a key press's frame at G = 8. Here each line is rendered alone,
cached, and repainted only when it differs from the line it replaces."""

from __future__ import annotations

from rich.cells import cell_len
from rich.text import Text
from textual.geometry import Region, Size
from textual.strip import Strip
from textual.widget import Widget


class TextLines(Widget):
    """Shows one Rich Text, a line per row, cut with an ellipsis where wider than the widget."""

    DEFAULT_CSS = "TextLines { height: auto; }"

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self._text = Text()
        self._lines: list[Text] = []
        self._strips: dict[tuple[int, int], Strip] = {}

    @property
    def content(self) -> Text:
        """The text shown (as Static's `content`)."""
        return self._text

    def show_text(self, text: Text) -> None:
        """Show `text`; repaint only its changed lines (all of them, with a layout pass, when
        the number of lines changed)."""
        lines = text.split("\n", allow_blank=True) if text.plain else []
        old, self._text, self._lines = self._lines, text, list(lines)
        if len(old) != len(lines) or not self.size.width:
            if len(old) != len(lines) and hasattr(self, "_layout_updates"):
                # Textual (8.x) keys a widget's cached height on this private count and bumps
                # it only when no layout is pending: a height cached meanwhile (the old count
                # of lines) would stay. tests/tui/test_tui_slides.py notices if it stops working.
                self._layout_updates += 1
            self._strips.clear()
            self.refresh(layout=len(old) != len(lines))
            return
        changed = [y for y, (a, b) in enumerate(zip(old, lines)) if a != b]
        if changed:
            for key in [k for k in self._strips if k[0] in changed]:
                del self._strips[key]
            self.refresh(*(Region(0, y, self.size.width, 1) for y in changed))

    def notify_style_update(self) -> None:
        """Forget the cached strips when the theme or classes change."""
        self._strips.clear()  # another theme or class: the base style changed
        super().notify_style_update()

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        """One row per line."""
        return len(self._lines)

    def get_content_width(self, container: Size, viewport: Size) -> int:
        """As wide as the widest line."""
        return max((cell_len(line.plain) for line in self._lines), default=0)

    def render_line(self, y: int) -> Strip:
        """Line `y`, cut with an ellipsis where it is wider than the widget."""
        width = self.size.width
        style = self.rich_style
        if y >= len(self._lines):
            return Strip.blank(width, style)
        key = (y, width)
        strip = self._strips.get(key)
        if strip is None:
            line = self._lines[y].copy()
            line.end = ""
            if line.cell_len > width:
                line.truncate(width, overflow="ellipsis")
            strip = Strip(list(line.render(self.app.console))).apply_style(style)
            strip = strip.adjust_cell_length(width, style)
            self._strips[key] = strip
        return strip
