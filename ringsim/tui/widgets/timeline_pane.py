"""The timeline pane (key T): a Gantt strip per GPU from ringsim.timeline, steps told apart.

Each GPU's sends are drawn step by step in two alternating marks (█ for odd steps, ▒ for
even ones) and a ruler above the strips puts ┊ where each step's last transfer arrives, so
one can read where a step ends and the next begins, also when they overlap.
"""

from __future__ import annotations

import numpy as np
from rich.text import Text

from ...core.naming import gpu_name
from ...timeline.model import Timeline
from .lines import TextLines

WIDTH = 60  # columns of the strips (ringsim timeline's default)
MAX_GPUS = 32  # one row per GPU: past this the pane would not fit a screen
MARKS = ("█", "▒")  # odd steps, even steps
STYLES = ("cyan", "blue")
IDLE = "·"
INDENT = 9  # '  GPU12 ' before each strip


def marker_column(timeline: Timeline, position: int, width: int = WIDTH) -> int | None:
    """The strip column where the transfers of the first `position` steps have all arrived."""
    total = timeline.seconds
    if position == 0 or total <= 0:
        return None
    done = timeline.end[timeline.step < position]
    # The same rounding as the ruler's step ends, so ▼ stands over the step's ┊.
    return min(width - 1, max(0, round(float(done.max()) / total * width) - 1)) if len(done) else 0


def step_ends(timeline: Timeline, width: int = WIDTH) -> list[int]:
    """The column where each step's last transfer arrives, step by step."""
    total = timeline.seconds
    if total <= 0 or not len(timeline.step):
        return []
    steps = int(timeline.step.max()) + 1
    ends = np.zeros(steps)
    np.maximum.at(ends, timeline.step, timeline.end)
    return [min(width - 1, max(0, round(e / total * width) - 1)) for e in ends.tolist()]


def strips(timeline: Timeline, width: int = WIDTH) -> list[list[int]]:
    """Per GPU, per column: 0 idle, else 1 + the step number sending there (the later step
    wins a shared column, so a short step still shows)."""
    total = timeline.seconds
    rows = []
    for g in range(timeline.plan.gpus):
        cells = [0] * width
        for i in np.flatnonzero(timeline.src == g).tolist():
            a = int(timeline.start[i] / total * width)
            b = max(a + 1, int(np.ceil(timeline.sent[i] / total * width)))
            for column in range(a, min(b, width)):
                cells[column] = max(cells[column], int(timeline.step[i]) + 1)
        rows.append(cells)
    return rows


def ruler(ends: list[int], width: int = WIDTH) -> str:
    """'┊' at the columns where steps end (every step that has a column of its own)."""
    cells = [" "] * width
    for column in ends:
        cells[column] = "┊"
    return "".join(cells).rstrip()


def body(timeline: Timeline) -> Text:
    """Everything under the marker line: the ruler, a strip per GPU and the footnote (the
    same at every step of one timeline)."""
    text = Text()
    text.append(" " * INDENT + ruler(step_ends(timeline)) + "\n", "dim")
    for g, cells in enumerate(strips(timeline)):
        text.append(f"  {gpu_name(g):>6} ")
        for cell in cells:
            if cell:
                odd = (cell - 1) % 2
                text.append(MARKS[odd], STYLES[odd])
            else:
                text.append(IDLE, "dim")
        text.append("\n")
    faults = ", ".join(str(f) for f in timeline.faults)
    text.append(" " * INDENT + (f"with {faults}" if faults else
                                "█ ▒ alternate steps, ┊ a step ends · s: slow GPU"), "dim")
    return text


class TimelinePane(TextLines):
    """'GPU1 ██▒▒██…' per GPU (its out port sending, step by step) under a ruler of step ends,
    '▼' over the end of the current step. Drawn line by line: a step redraws the marker line
    alone, the strips stay as they are."""

    _shown: tuple | None = None  # (timeline, position) on screen
    _body: tuple | None = None  # (timeline, its body text): a step only moves the marker

    def show(self, timeline: Timeline | None, position: int) -> None:
        """Draw the strips, or a line saying why there are none."""
        if timeline is None or timeline.seconds <= 0 or timeline.plan.gpus > MAX_GPUS:
            self._shown = None
            self.show_text(Text(f"No timeline: nothing is sent, or more than {MAX_GPUS} GPUs.", "dim"))
            return
        if self._shown is not None and self._shown[0] is timeline and self._shown[1] == position:
            return
        self._shown = (timeline, position)
        if self._body is None or self._body[0] is not timeline:
            self._body = (timeline, body(timeline))
        column = marker_column(timeline, position)
        head = " " * INDENT + (" " * column + "▼ step " + str(position) if column is not None else "")
        text = Text()
        text.append(head.rstrip() + "\n", "bold yellow")
        text.append_text(self._body[1])
        self.show_text(text)
