"""A lesson's Markdown as the lesson panel shows it: a code block keeps its columns.

Rich wraps a code block's long lines, which splits each row of a lesson's table in two inside
the narrow panel. Here a block wider than the panel is cut at its edge instead (each cut line
ends in …), so the table's rows and columns stay as the lesson computed them, and a line under
it says where the whole of it shows: the full-width page (key f), or a wider terminal."""

from __future__ import annotations

from typing import ClassVar

from rich.cells import cell_len, set_cell_size
from rich.console import Console, ConsoleOptions, RenderResult
from rich.markdown import CodeBlock, Markdown, MarkdownElement
from rich.syntax import Syntax
from rich.text import Text

PADDING = 1  # Rich pads a code block by one column on each side
PAGE_FRAME = 4  # the full-width page's border and padding, both sides (ringsim.tcss)
TAB = 4  # Rich's Syntax expands a tab to this many columns


def cut_lines(code: str, width: int) -> tuple[str, int]:
    """The code, tabs expanded, each line past `width` cells cut to end in …; its widest line."""
    width = max(1, width)
    lines = [line.rstrip() for line in code.rstrip().expandtabs(TAB).splitlines()]
    widest = max(map(cell_len, lines), default=0)
    return "\n".join(set_cell_size(line, width - 1) + "…" if cell_len(line) > width else line
                     for line in lines), widest


def wide_hint(widest: int, terminal: int) -> str:
    """The line under a cut block: where all of it shows."""
    need = widest + 2 * PADDING + PAGE_FRAME
    if need <= terminal:
        return "↔ cut at the panel's edge: f shows it whole"
    return f"↔ cut at the edge: a terminal of {need} columns shows it whole"


class KeptColumns(CodeBlock):
    """A code block cut at the panel's edge instead of wrapped."""

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        room = options.max_width - 2 * PADDING
        code, widest = cut_lines(str(self.text), room)
        yield Syntax(code, self.lexer_name, theme=self.theme, word_wrap=False, padding=PADDING)
        if widest > room:
            yield Text(wide_hint(widest, options.size.width), style="dim italic")


class LessonMarkdown(Markdown):
    """Rich's Markdown with code blocks that keep their columns (KeptColumns)."""

    elements: ClassVar[dict[str, type[MarkdownElement]]] = {
        **Markdown.elements, "fence": KeptColumns, "code_block": KeptColumns}
