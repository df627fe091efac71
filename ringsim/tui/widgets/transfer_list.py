"""The transfers of the iteration just carried out, one sentence each."""

from __future__ import annotations

from rich.cells import cell_len
from rich.text import Text
from textual.widgets import Static

from ..sized import update_sized

from ...sim.simulation import Simulation

MAX_LINES = 200  # the naive flood at G=64 has 4,032 sentences; the rest is summarised in one line


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
        end, hidden = 0, 0
        for line in shown:
            end += max(1, len(Text(line).wrap(self.app.console, width)))
            hidden += end > top + rows
        return hidden + (len(self.lines) - len(shown))

    def show(self, sim: Simulation) -> None:
        """List the Simulation's sentences for the step carried out last."""
        lines = sim.sentences()
        self.lines = lines
        if not lines:
            hint = "Press → or n to carry out the first iteration." if not sim.done else \
                "Nothing moves." if not len(sim.plan) else ""
            # Through update_sized too: the hint's one row must count as a height, or the next
            # list of the same length would keep it (and show one sentence).
            update_sized(self, Text(hint, style="dim"), ("hint", hint))
            return
        text = Text()
        for line in lines[:MAX_LINES]:
            text.append(line + "\n")
        if len(lines) > MAX_LINES:
            text.append(f"… and {len(lines) - MAX_LINES:,} more transfers in this iteration\n", style="dim")
        text.rstrip()  # no blank last line: on 80×24 every row counts
        shown = lines[:MAX_LINES]
        width = self.content_size.width
        # Lines that all fit on one row each set the height by their count alone; a line
        # that wraps (word by word) makes every length count.
        if width > 0 and all(cell_len(line) <= width for line in shown):
            key = ("rows", len(shown), len(lines) > MAX_LINES)
        else:
            key = ("wrapped", tuple(cell_len(line) for line in shown), len(lines) > MAX_LINES)
        update_sized(self, text, key)
