"""A lesson's Markdown as the lesson panel shows it: a code block keeps its columns.

Rich wraps a code block's long lines, which splits each row of a lesson's table in two inside
the narrow panel. Here a block wider than the panel is cut at its edge instead (each cut line
ends in …), so the table's rows and columns stay as the lesson computed them, and a line under
it names the key that shows the section at the terminal's full width."""

from __future__ import annotations

from typing import ClassVar

from rich.cells import cell_len, set_cell_size
from rich.console import Console, ConsoleOptions, RenderResult
from rich.markdown import CodeBlock, Markdown, MarkdownElement
from rich.syntax import Syntax
from rich.text import Text

PADDING = 1  # Rich pads a code block by one column on each side
WIDE_HINT = "↔ cut at the panel's edge: f shows it whole"


def cut_lines(code: str, width: int) -> tuple[str, bool]:
    """The code with every line longer than `width` cells cut to `width` (its last cell …),
    and whether any was cut."""
    lines, cut = [], False
    for line in code.splitlines():
        if cell_len(line) > width:
            line, cut = set_cell_size(line, max(0, width - 1)) + "…", True
        lines.append(line)
    return "\n".join(lines), cut


class KeptColumns(CodeBlock):
    """A code block cut at the panel's edge instead of wrapped."""

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        code, cut = cut_lines(str(self.text).rstrip(), options.max_width - 2 * PADDING)
        yield Syntax(code, self.lexer_name, theme=self.theme, word_wrap=False, padding=PADDING)
        if cut:
            yield Text(WIDE_HINT, style="dim italic")


class LessonMarkdown(Markdown):
    """Rich's Markdown with code blocks that keep their columns (KeptColumns)."""

    elements: ClassVar[dict[str, type[MarkdownElement]]] = {
        **Markdown.elements, "fence": KeptColumns, "code_block": KeptColumns}
