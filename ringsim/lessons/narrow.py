"""A lesson's code blocks fitted to a terminal narrower than they are wide.

A lesson's computed figures are code blocks: tables of aligned columns, lines of words, and a
few drawings. Where a block is wider than the terminal, its tables are laid out again by the
one table layout every command uses (core.width.table: blocks of whole columns, or a record per
row), its lines of words are wrapped, and a drawing, which cannot be cut without losing its
shape, stays as it is under a line that says how wide a terminal it needs.
"""

from __future__ import annotations

from ..core.width import display_width, table, wrap
from .text import CELL, FENCE, cell_spans

CODE_EDGE = 2  # columns a printed code block adds to each line (an indent, or a margin each side)


def fitted(markdown: str, width: int) -> str:
    """`markdown` with every code block wider than `width` columns fitted to it, where it can be."""
    out: list[str] = []
    block: list[str] | None = None
    for line in markdown.split("\n"):
        fence = FENCE.match(line)
        if block is None:
            out.append(line)
            if fence:
                block = []
            continue
        if fence:
            lines = fit_block(block, width - CODE_EDGE)
            if lines is None:  # a drawing: kept whole, with a word on the terminal it needs
                need = max(map(display_width, block)) + CODE_EDGE
                out[-1:-1] = [f"(The block below is {need} columns wide and cannot be laid out "
                              f"again in {width} without losing its shape: widen the terminal to "
                              f"{need} to see it as drawn.)", ""]
                lines = block
            out += lines + [line]
            block = None
        else:
            block.append(line)
    if block is not None:  # a block left open runs to the end, as Markdown reads it
        out += block
    return "\n".join(out)


def fit_block(lines: list[str], width: int) -> list[str] | None:
    """A code block's lines fitted to `width`: as they are where they fit, else its tables laid
    out again and its other lines wrapped; None where that still leaves a line too wide."""
    if all(display_width(line) <= width for line in lines):
        return lines
    out: list[str] = []
    run: list[str] = []

    def flush() -> bool:
        # Lines of two cells or more: a table (a header and a row at least), perhaps with a last
        # line of words running across its columns (a note under it); a lone line is words.
        for size in (len(run), len(run) - 1) if len(run) > 1 else ():
            laid = _table(run[:size], width) if size > 1 else None
            if laid is not None:
                out.extend(laid)
                for line in run[size:]:
                    out.extend(_wrapped(line, width))
                run.clear()
                return True
        if len(run) > 1:
            return False
        for line in run:
            out.extend(_wrapped(line, width))
        run.clear()
        return True
    for line in lines:
        if len(CELL.findall(line)) >= 2:
            run.append(line)
            continue
        if not flush():
            return None
        out.extend(_wrapped(line, width) if line.strip() else [line])
    if not flush():
        return None
    return out if all(display_width(line) <= width for line in out) else None


def _wrapped(line: str, width: int) -> list[str]:
    """A line of words wrapped to `width`; a command to type goes on after a backslash, so that
    its lines still paste into a shell as one command."""
    if not line.lstrip().startswith("ringsim "):
        return wrap(line, width).split("\n")
    parts = wrap(line, width - 2).split("\n")
    return [part + " \\" for part in parts[:-1]] + parts[-1:]


def _table(lines: list[str], width: int) -> list[str] | None:
    """Lines of aligned columns (the first their header) laid out again to fit `width`; None
    where the cells do not fall into columns (two of one line under one column)."""
    cells = [cell_spans(line) for line in lines]
    columns: list[list[int]] = []  # [first, after] of each column, left to right
    for start, end, _ in sorted(c for row in cells for c in row):
        if columns and start < columns[-1][1]:
            columns[-1][1] = max(columns[-1][1], end)
        else:
            columns.append([start, end])
    rows: list[list[str]] = []
    starts: list[set[int]] = [set() for _ in columns]
    for row in cells:
        out = [""] * len(columns)
        for start, end, text in row:
            k = next(i for i, (a, b) in enumerate(columns) if a <= start < b)
            if out[k]:
                return None
            out[k] = text
            starts[k].add(start)
        rows.append(out)
    indent = min(len(line) - len(line.lstrip(" ")) for line in lines)
    # A column whose cells all start in one place reads left to right; the others are numbers.
    left = {k for k, s in enumerate(starts) if len(s) == 1}
    laid = table(rows, head=1, left=left, rule="", width=width - indent)
    return [" " * indent + line if line else line for line in laid]
