"""The transfers of the iteration just carried out, one sentence each."""

from __future__ import annotations

import re

from rich.cells import cell_len
from rich.text import Text
from textual.content import Content
from textual.widgets import Static

from ..sized import update_sized

from ...sim.simulation import Simulation

MAX_LINES = 200  # the naive flood at G=64 has 4,032 sentences; the rest is summarised in one line
SUM = re.compile(r"\(([^()\s]+(?:\+[^()\s]+)+)\)")  # a sum in brackets: '(a₁+b₁+c₁)'


def shorten(line: str, width: int) -> str:
    """A sentence with its long sums cut to their first and last terms, as the GPU cells show
    them ('(d₄+e₄+f₄+g₄+h₄+a₄)' → '(d₄+…+a₄)'): sums of four terms or more first, then of three
    where the line is still wider than `width`."""
    for fewest in (4, 3):
        def cut(match: re.Match) -> str:
            terms = match.group(1).split("+")
            return match.group(0) if len(terms) < fewest else f"({terms[0]}+…+{terms[-1]})"
        line = SUM.sub(cut, line)
        if cell_len(line) <= width:
            break
    return line


class TransferList(Static):
    """'GPU1 sends a₁ to GPU2, where it is added to b₁', one line per transfer."""

    lines: list[str] = []

    def below(self, top: int, rows: int) -> int:
        """How many of the listed lines do not show whole in `rows` rows from row `top` (word
        wrapped at the widget's width), counting the summary line of a long list."""
        width = self.content_size.width
        if width <= 0 or not self.lines:
            return 0
        shown = self.lines[:MAX_LINES]
        if self._ends[0] is not self.lines or self._ends[1] != width:  # rows each line ends at, once
            end, ends = 0, []
            for line in shown:
                end += 1 if cell_len(line) <= width else len(Text(line).wrap(self.app.console, width))
                ends.append(end)
            self._ends = (self.lines, width, ends)
        hidden = sum(end > top + rows for end in self._ends[2])
        return hidden + (len(self.lines) - len(shown))

    _ends: tuple = (None, 0, [])

    _fitted: tuple = (None, 0, None)

    def _fit(self, lines: list[str], width: int) -> list[str]:
        # On a slide, which cannot scroll, a sentence that would wrap shows its long sums cut
        # short instead, so that 8 GPUs keep one row per sentence. On a terminal every sum
        # stays whole: the list scrolls. The same list comes back for the same input, as the
        # caches below key on it.
        if width <= 0 or not self.screen.has_class("-slide") \
                or all(cell_len(line) <= width for line in lines[:MAX_LINES]):
            return lines
        if self._fitted[0] is not lines or self._fitted[1] != width:
            self._fitted = (lines, width, [line if cell_len(line) <= width else shorten(line, width)
                                           for line in lines[:MAX_LINES]] + lines[MAX_LINES:])
        return self._fitted[2]

    def show(self, sim: Simulation) -> None:
        """List the Simulation's sentences for the step carried out last."""
        lines = self._fit(sim.sentences(), self.content_size.width)
        self.lines = lines
        if not lines:
            hint = "Press → or n to carry out the first iteration." if not sim.done else \
                "Nothing moves." if not len(sim.plan) else ""
            # Through update_sized too: the hint's one row must count as a height, or the next
            # list of the same length would keep it (and show one sentence).
            update_sized(self, Text(hint, style="dim"), ("hint", hint))
            return
        width = self.content_size.width
        made = self._made.get(id(lines))
        if made is None or made[0] is not lines or made[1] != width:
            made = (lines, width, *self._content(lines, width))
            # A step's sentences are one list for good (the Simulation keeps them), so its
            # content is made once: Textual keeps a content's wrapped height, and stepping
            # back and forth then lays out no text again.
            self._made = {k: v for k, v in list(self._made.items())[-(self.KEPT - 1):]}
            self._made[id(lines)] = made
        update_sized(self, made[2], made[3])

    _made: dict[int, tuple] = {}
    KEPT = 4

    def _content(self, lines: list[str], width: int) -> tuple[Content, tuple]:
        """The list as Textual content, and what sets its height at this width."""
        text = Text()
        for line in lines[:MAX_LINES]:
            text.append(line + "\n")
        if len(lines) > MAX_LINES:
            text.append(f"… and {len(lines) - MAX_LINES:,} more transfers in this iteration\n", style="dim")
        text.rstrip()  # no blank last line: on 80×24 every row counts
        shown = lines[:MAX_LINES]
        # Lines that all fit on one row each set the height by their count alone; a line
        # that wraps (word by word) makes every length count.
        if width > 0 and all(cell_len(line) <= width for line in shown):
            key = ("rows", len(shown), len(lines) > MAX_LINES)
        else:
            key = ("wrapped", tuple(cell_len(line) for line in shown), len(lines) > MAX_LINES)
        return Content.from_rich_text(text, console=self.app.console), key
