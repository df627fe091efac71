"""Output that fits the terminal: its width, prose wrapped to it, wide tables cut into blocks.

The width is COLUMNS where it holds a whole number (kept within 20..1000), else the terminal's
where the output is one, else there is none: a pipe or a file gets every line whole, so what
scripts, tests and the docs read does not depend on the window it was made in.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import textwrap
import unicodedata
from collections.abc import Collection, Sequence

from .textout import ascii_form, can_encode, printable
from .terminal import is_terminal

MIN_COLUMNS, MAX_COLUMNS = 20, 1000
_DIGITS = re.compile(r"[0-9]+")
# A space between a number and its unit ("15.24 µs", "1.90 GB/s", "31.41 GB", "30 %") is glued
# while a line is wrapped, so that no value is cut from its unit.
_UNIT_SPACE = re.compile(r"(?<=\d) (?=(?:[nµμum]?s|[kKMGTP]?i?B(?:/s)?|[kMGT]?b/s|%)(?![\w/]))")
_GLUE = "\ue000"  # a private-use character: never in ringsim's text, and no space to textwrap
_BULLET = re.compile(r"(?:[-*•]|\d+[.)]) ")


def _bounded(columns: int) -> int:
    return min(max(columns, MIN_COLUMNS), MAX_COLUMNS)


def output_width(stream=None) -> int | None:
    """The columns output to `stream` (stdout by default) must fit, or None for no limit."""
    text = os.environ.get("COLUMNS", "").strip()
    if _DIGITS.fullmatch(text) and text.strip("0"):
        # More digits than any screen has are as wide as allowed (and never a huge int()).
        return MAX_COLUMNS if len(text) > 6 else _bounded(int(text))
    stream = sys.stdout if stream is None else stream
    return _bounded(shutil.get_terminal_size().columns) if is_terminal(stream) else None


def fill_width(most: int) -> int:
    """The width to fill text to: `most`, or the output's width where that is narrower."""
    limit = output_width()
    return most if limit is None else min(most, limit)


def display_width(text: str, stream=None) -> int:
    """The columns `text` takes on a terminal: escape sequences none, combining marks none,
    East Asian wide characters two, every other character one; on a `stream` (stdout by
    default) that cannot encode it, its ASCII form's ('→' is '->')."""
    if "\x1b" in text or "\x9b" in text:  # a colour code takes no room
        text = printable(text)
    if text.isascii():
        return len(text)
    if not can_encode(sys.stdout if stream is None else stream, text):
        return len(ascii_form(text))
    return sum(0 if unicodedata.combining(c) else
               2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def wrap(text: str, width: int | None = None, hang: str | None = None, *,
         most: int | None = None, stream=None, keep: Collection[str] = ()) -> str:
    """`text` with every line wider than `width` (by default the width of `stream`, stdout
    unless given; at most `most`) wrapped at its spaces. Wrapped lines continue under the
    line's indent (two further in where it is indented: an item of a list), past a leading
    '- ' or '• ' bullet, or under `hang` where given. Lines that fit stay as they are, and
    where there is no limit (nor `most`) all do; a word wider than the line (a path) is kept
    whole, and so is each phrase of `keep` (a command to type: 'compare --json')."""
    limit = output_width(stream) if width is None else width
    if limit is None and most is None:
        return text
    # Without a limit (a file or a pipe) text is filled at `most`, breaking at any space; at a
    # terminal a value also keeps its unit on its line.
    glue = limit is not None
    text = _shown(text, stream)
    limit = most if limit is None else min(limit, most or limit)
    for phrase in keep:
        text = text.replace(phrase, phrase.replace(" ", _GLUE))
    return "\n".join(_fill(line, limit, hang, glue) for line in text.split("\n")).replace(_GLUE, " ")


def _shown(text: str, stream=None) -> str:
    """`text` as `stream` (stdout by default) will show it."""
    # A stream that cannot encode a character writes its ASCII form ('→' as '->', textout.py),
    # longer than the character: wrap what it will show, or the lines run past the width.
    return text if can_encode(sys.stdout if stream is None else stream, text) else ascii_form(text)


def _fill(line: str, width: int, hang: str | None, glue: bool) -> str:
    if display_width(line) <= width:
        return line
    body = line.lstrip(" ")
    indent = line[:len(line) - len(body)]
    if hang is None:
        # An indented line is an item of a list: its continuation goes under its text past a
        # bullet, else two further in, so that the next item still stands out.
        bullet = _BULLET.match(body)
        hang = indent + " " * (len(bullet.group()) if bullet else 2 if indent else 0)
    hang = hang[:width // 2]  # a deep indent still leaves half the line for words
    return "\n".join(_lines(body, width, indent, hang, glue)) if body else line


def _lines(text: str, width: int, indent: str = "", hang: str = "", glue: bool = True) -> list[str]:
    """textwrap's lines of `text`, breaking only at spaces, a value's kept with its unit."""
    lines = textwrap.wrap(_UNIT_SPACE.sub(_GLUE, text) if glue else text, max(width, 1),
                          initial_indent=indent, subsequent_indent=hang,
                          break_long_words=False, break_on_hyphens=False)
    return [line.replace(_GLUE, " ") for line in lines] or [""]


def say(text: str = "", file=None, hang: str | None = None, most: int | None = None) -> None:
    """print() for words: `text` wrapped to the width of the stream it goes to (wrap())."""
    file = sys.stdout if file is None else file
    print(wrap(text, hang=hang, most=most, stream=file), file=file)


def table(rows: Sequence[Sequence[str]], *, head: int = 1, keys: int = 1,
          left: Collection[int] = (), free: bool = False, gap: int = 2,
          minimum: Sequence[int] = (), rule: str = "─", comment: str = "", strip: bool = True,
          width: int | None = None) -> list[str]:
    """Rows of cells as aligned columns, the first `head` rows a header with a `rule` under it
    ('' for none), each header line starting with `comment` in place of its padding, trailing
    spaces cut unless `strip` is False (nccl-tests' own layout keeps them).

    Columns are right-aligned but those in `left`, at least `minimum[i]` wide, `gap` spaces
    apart; a `free` last column is text: left-aligned and unpadded. A table wider than
    `width` (the output's, by default) is cut into blocks of whole columns, as pandas prints
    a wide frame: the first `keys` columns in every block, blocks parted by a blank line,
    a column with no header beside the one before it. The free column's text is wrapped
    within what its block leaves it, or under each row where the keys leave too little.
    Where the keys, or the keys and one further column, are wider than `width`, each row is
    a record instead: its keys on a line, then 'header: value' lines indented under them."""
    limit = output_width() if width is None else width
    count = max((len(row) for row in rows), default=0)
    rows = [tuple(row) + ("",) * (count - len(row)) for row in rows]
    widths = [max([minimum[i] if i < len(minimum) else 0]
                  + [display_width(row[i]) for row in rows]) for i in range(count)]
    layout = _Layout(rows, widths, head, min(keys, count), gap, limit, strip)
    if layout.too_narrow(free):
        return layout.records(left)
    out: list[str] = []
    for cols, room in layout.blocks(free):
        if out:
            out.append("")
        out += layout.block(cols, room, free=free and cols[-1] == count - 1, left=left,
                            rule=rule, comment=comment)
    if free and layout.under is not None:
        out += [""] if out else []
        out += layout.block(list(range(layout.keys)), None, free=False, left=left, rule=rule,
                            comment=comment, under=layout.under)
    return out


class _Layout:
    """How one table's columns fall into blocks of a given width, and each block's lines."""

    def __init__(self, rows, widths: list[int], head: int, keys: int, gap: int,
                 limit: int | None, strip: bool) -> None:
        self.rows, self.widths, self.head, self.keys, self.gap = rows, widths, head, keys, gap
        self.limit, self.strip = limit, strip
        self.under: int | None = None  # the indent of a free column's text put under its rows

    def span(self, cols) -> int:
        """The columns the cells of `cols` take with the gaps between them."""
        return sum(self.widths[i] for i in cols) + self.gap * (len(cols) - 1)

    def units(self) -> list[list[int]]:
        """The columns past the keys in the groups that are never parted: a column with no
        header (a mark such as ◀) stays with the column it marks."""
        units: list[list[int]] = []
        for i in range(self.keys, len(self.widths)):
            if units and not any(row[i] for row in self.rows[:self.head]):
                units[-1].append(i)
            else:
                units.append([i])
        return units

    def fits_whole(self) -> bool:
        """Whether the whole table fits on the line as one block (or there is no limit)."""
        return self.limit is None or self.span(range(len(self.widths))) <= self.limit

    def too_narrow(self, free: bool) -> bool:
        """Whether no block fits: the keys, or the keys and one further column (but a free
        one, which wraps), are wider than the line."""
        count, limit = len(self.widths), self.limit
        if self.fits_whole() or not 0 < self.keys < count:
            return False
        lead = list(range(self.keys))
        fixed = [u for u in self.units() if not (free and u == [count - 1])]
        return self.span(lead) > limit or any(self.span(lead + u) > limit for u in fixed)

    def blocks(self, free: bool) -> list[tuple[list[int], int | None]]:
        """The columns of each block, and the room a free last column has beside them."""
        count, limit = len(self.widths), self.limit
        if self.fits_whole() or count <= self.keys:
            return [(list(range(count)), None)]
        lead = list(range(self.keys))
        blocks: list[tuple[list[int], int | None]] = []
        current = list(lead)
        for unit in self.units():
            if free and unit == [count - 1]:
                return blocks + self._text_block(current, lead, count - 1)
            if len(current) > self.keys and self.span(current + unit) > limit:
                blocks.append((current, None))
                current = list(lead)
            current += unit
        return blocks + [(current, None)]

    def _text_block(self, current: list[int], lead: list[int], i: int):
        """The last blocks where the free column `i` comes after `current`: beside it, or in a
        block of its own beside the keys, or (keys too wide) under each row of the keys."""
        def room(cols):
            return self.limit - self.span(cols) - self.gap * bool(cols)
        # Text squeezed into less than a third of the line reads badly.
        enough = min(self.widths[i], self.limit // 3)
        if room(current) >= enough:
            return [(current + [i], room(current))]
        done = [(current, None)] if len(current) > len(lead) else []
        if room(lead) >= enough:
            return done + [(lead + [i], room(lead))]
        # Under the second column (past a number), or a short step in from the first.
        self.under = min(self.widths[0] + self.gap, 8)
        return done

    def block(self, cols: list[int], room: int | None, *, free: bool, left: Collection[int],
              rule: str, comment: str, under: int | None = None) -> list[str]:
        """One block's lines: its header, the rule, its rows; a free last cell unpadded and
        wrapped within `room` columns where given, or the free column's text under the rows
        `under` columns in."""
        sizes = [self.widths[i] for i in cols]
        if free and room is not None:
            sizes[-1] = min(sizes[-1], room)
        lines: list[str] = []
        for number, row in enumerate(self.rows):
            cells = [row[i] for i in cols]
            tail = [cells[-1]]
            if free and display_width(cells[-1]) > sizes[-1]:
                tail = _lines(cells[-1], sizes[-1])
            for part, text in enumerate(tail):
                shown = cells[:-1] if part == 0 else [""] * (len(cells) - 1)
                padded = [_pad(c, w, i in left) for c, w, i in zip(shown, sizes, cols)]
                last = text if free else _pad(text, sizes[-1], cols[-1] in left)
                line = (" " * self.gap).join(padded + [last])
                line = line.rstrip() if self.strip else line
                lines.append(comment + line[len(comment):]
                             if number < self.head and comment else line)
            if under is not None and row[-1]:
                lines += [" " * under + text for text in _lines(row[-1], self.limit - under)]
            if number == self.head - 1 and rule:
                lines.append((" " * self.gap).join(rule * w for w in sizes).rstrip())
        return lines

    def records(self, left: Collection[int]) -> list[str]:
        """Every row as a record: its keys on a line, wrapped at their spaces, then each further
        column on a line of its own, 'header: value', two columns in from the last key; a
        blank line between records, so that a key's second line reads as part of it."""
        # Where not even one column fits beside the keys, wrapping the keys alone would leave
        # them a sliver (compare's 'busiest GPU sent / received' takes 27 of 40 columns), and
        # a block per column would print the keys once for every value. A record gives every
        # value the whole line and names it, as a form does; the keys still start each record.
        # Every row is a record then, even where other columns would fit as blocks: one table,
        # one form to read.
        last, limit = self.keys - 1, self.limit
        # Continuation lines of the keys go under the last key (past a number), within reason.
        start = min(self.span(range(last)) + self.gap if last else 0, limit // 2)
        indent = " " * (start + 2)
        heads, units = self.rows[:self.head], self.units()
        lines: list[str] = []
        for row in self.rows[self.head:]:
            lines += [""] if lines else []
            keys = [_pad(row[i], self.widths[i], i in left) for i in range(last)] + [row[last]]
            lines += _lines(_shown((" " * self.gap).join(keys).rstrip()), limit, hang=" " * start)
            for unit in units:
                value = _shown(" ".join(row[i].strip() for i in unit if row[i].strip()))
                label = _shown(" ".join(h[unit[0]].strip() for h in heads if h[unit[0]].strip()))
                if not value:
                    continue
                hang = indent + "  " * bool(label)
                if display_width(hang + value) <= limit:  # a value that fits its line is kept whole
                    value = value.replace(" ", _GLUE)
                lines += _lines(f"{label}: {value}" if label else value, limit, indent, hang)
        return lines


def _pad(cell: str, width: int, left: bool) -> str:
    space = " " * max(width - display_width(cell), 0)
    return cell + space if left else space + cell
