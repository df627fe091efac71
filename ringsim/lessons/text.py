"""Text helpers for the course: terminal-safe text, short echoes, plurals, Markdown as plain text."""

from __future__ import annotations

import re
import textwrap

from ..core.textout import printable
from ..core.width import display_width


def clean(text: str) -> str:
    """Text from a lesson file made safe to print: escape sequences and control characters removed.

    Newlines and tabs stay; '\\r\\n' line ends become '\\n'.
    """
    return printable(text, lines=True)


from ..core.naming import plural_word  # noqa: E402  (ringsim's one plural, re-exported)


def plural(count: int, word: str) -> str:
    """'1 GPU', '4 GPUs', '1 element', '2,000 elements': the count with its noun."""
    from ..core.formula import format_number
    return f"{format_number(count)} {plural_word(count, word)}"


_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
FENCE = re.compile(r"^\s*(```+|~~~+)")


_ITEM = re.compile(r"^(\s*)([-*+]|\d+[.)])\s+")


def one_of(words: list[str]) -> str:
    """Words as a choice: 'a', 'a or b', 'a, b or c'."""
    return " or ".join(filter(None, (", ".join(words[:-1]), words[-1]))) if words else ""


def wrap(text: str, width: int = 80, indent: str = "") -> str:
    """One paragraph or list item filled to `width` columns."""
    return textwrap.fill(" ".join(text.split()), width=width, subsequent_indent=indent,
                         break_long_words=False, break_on_hyphens=False)


def plain(markdown: str, width: int = 80) -> str:
    """Markdown as plain text for a pipe or a file: headings underlined, emphasis and fences
    gone, paragraphs and list items filled to `width` columns.

    Code blocks keep their lines as they are (indented by two), so tables and diagrams survive.
    """
    out: list[str] = []
    fence: str | None = None
    item: list[str] = []
    hang = ""

    def flush() -> None:
        if item:
            out.append(wrap(" ".join(item), width, hang))
            item.clear()

    for line in markdown.split("\n"):
        match = FENCE.match(line)
        if fence is not None:
            if match and line.strip().startswith(fence):
                fence = None
            else:
                out.append("  " + line if line.strip() else "")
            continue
        if match:
            flush()
            fence = match.group(1)
            continue
        heading = _HEADING.match(line)
        if heading:
            flush()
            # A title wider than the line wraps, its rule as long as its longest line.
            title = wrap(_inline(heading.group(2)), width)
            out.append(title)
            out.append(("=" if len(heading.group(1)) == 1 else "-")
                       * max(map(display_width, title.split("\n"))))
            continue
        if not line.strip():
            flush()
            out.append("")
            continue
        bullet = _ITEM.match(line)
        if bullet and item and not hang and bullet.group(2)[:-1] not in ("", "1"):
            # As in CommonMark, only "1." may start a list inside a paragraph: a line that
            # begins with another number ("6. It moved…", a placeholder's value) goes on with it.
            bullet = None
        if bullet:
            flush()
            hang = " " * len(bullet.group(0))
        elif not item:
            hang = ""
        item.append(_inline(line.strip()) if not bullet else bullet.group(0) + _inline(line[bullet.end():]))
    flush()
    return re.sub(r"\n{3,}", "\n\n", "\n".join(out)).strip("\n")


CELL = re.compile(r"\S+(?: \S+)*")  # words joined by single spaces: cells are 2+ spaces apart


def cell_spans(line: str) -> list[tuple[int, int, str]]:
    """Each cell of a table row: its first column, the column after it, its text. Columns are
    terminal columns, not characters, so a wide glyph or a combining mark cannot hide a
    misalignment."""
    return [(display_width(line[:m.start()]), display_width(line[:m.end()]), m.group())
            for m in CELL.finditer(line)]


def _cells(line: str) -> list[tuple[int, int]]:
    return [(start, end) for start, end, _ in cell_spans(line)]


def misaligned(block: str) -> list[str]:
    """The rows of a table in a code block whose cells sit a column off the header's: [] when aligned.

    The first line is the header, a table when it has three cells or more. Under each header
    cell, the row's first cell that starts there lines up when it starts where the header cell
    starts or ends where it ends (numbers align right). Missing both by a single column, it was
    meant to line up; a cell that starts before the header cell spans it and is not checked.
    """
    lines = [line for line in block.splitlines() if line.strip()]
    head = _cells(lines[0]) if lines else []
    if len(head) < 3:
        return []

    def off(row: list[tuple[int, int]]) -> bool:
        for start, end in head:
            under = next(((a, b) for a, b in row if start - 1 <= a < max(end, start + 2)), None)
            if under and under[0] != start and under[1] != end \
                    and (abs(under[0] - start) == 1 or abs(under[1] - end) == 1):
                return True
        return False
    return [line for line in lines[1:] if off(_cells(line))]


def fenced_blocks(markdown: str) -> list[str]:
    """The text of every fenced code block in a lesson's Markdown."""
    blocks, current, fence = [], [], None
    for line in markdown.split("\n"):
        match = FENCE.match(line)
        if fence is None and match:
            fence, current = match.group(1), []
        elif fence is not None and match and line.strip().startswith(fence):
            blocks.append("\n".join(current))
            fence = None
        elif fence is not None:
            current.append(line)
    return blocks


def _inline(line: str) -> str:
    """Inline Markdown removed: **bold**, *italic*, `code` (the words stay)."""
    line = re.sub(r"\*\*(.+?)\*\*", r"\1", line)
    line = re.sub(r"(?<![\w*])\*(?!\s)(.+?)(?<!\s)\*(?![\w*])", r"\1", line)
    return re.sub(r"`([^`]+)`", r"\1", line)
