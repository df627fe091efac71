"""The timeline pane (key T): a Gantt strip per GPU from ringsim.timeline, the current step marked."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from ...timeline.model import Timeline
from ...timeline.report import strip

WIDTH = 60  # columns of the strips (ringsim timeline's default)


def marker_column(timeline: Timeline, position: int, width: int = WIDTH) -> int | None:
    """The strip column where the transfers of the first `position` steps have all arrived."""
    total = timeline.seconds
    if position == 0 or total <= 0:
        return None
    done = timeline.end[timeline.step < position]
    return min(width - 1, int(float(done.max()) / total * width)) if len(done) else 0


class TimelinePane(Static):
    """'GPU1 ██··█…' per GPU (█: its out port sends) with '▼' over the end of the current step."""

    def show(self, timeline: Timeline | None, position: int) -> None:
        """Draw the strips, or a line saying why there are none."""
        lines = strip(timeline, WIDTH) if timeline is not None else []
        text = Text()
        if not lines:
            text.append("No timeline: nothing is sent, or more than 32 GPUs.", "dim")
            self.update(text)
            return
        column = marker_column(timeline, position)
        head = " " * 9 + (" " * column + "▼ step " + str(position) if column is not None else "")
        text.append(head.rstrip() + "\n", "bold yellow")
        for line in lines:
            text.append(line + "\n")
        faults = ", ".join(str(f) for f in timeline.faults)
        text.append(" " * 9 + (f"with {faults}" if faults else "no faults · s: slow GPU"), "dim")
        self.update(text)
