"""The training-step pane (key o): ringsim.training.overlap's step as a compute track (forward, then
backward layer by layer) and a communication track (the DDP buckets' all-reduces on one
stream), over the step's time; the part of the communication left after backward in red."""

from __future__ import annotations

import numpy as np
from rich.console import Group
from rich.text import Text
from textual import events
from textual.widgets import Static

from ...training.overlap import DEFAULT_FLOPS, FIRST_BUCKET_BYTES, MIB
from ...core.units import format_seconds
from ..training import TrainingStep

LABEL = 9  # "compute  " / "comm     "
FORWARD, BACKWARD, COMM, EXPOSED = "#5dade2", "#2e86c1", "#ff9f1c", "#e74c3c"


def coverage(intervals: np.ndarray, total: float, width: int) -> np.ndarray:
    """The share of each of `width` equal columns of [0, total] that the intervals (n × 2) cover."""
    edges = np.linspace(0.0, total, width + 1)
    if len(intervals) == 0:
        return np.zeros(width)
    lo = np.maximum(intervals[:, :1], edges[None, :-1])
    hi = np.minimum(intervals[:, 1:], edges[None, 1:])
    return np.clip(hi - lo, 0.0, None).sum(axis=0) / (total / width)


def _glyph(share: float, full: str) -> str:
    return full if share >= 0.5 else "▌" if share > 0 else "·"


def tracks(step: TrainingStep, width: int) -> tuple[str, str, int]:
    """The compute track ('▒' forward, '█' backward), the communication track ('█' an
    all-reduce runs), and the column where the backward pass ends."""
    o = step.step
    total = o.step_seconds
    forward = coverage(np.array([[0.0, o.forward_seconds]]), total, width)
    backward = coverage(np.array([[o.forward_seconds, o.computed]]), total, width)
    comm = coverage(np.array([[b.start, b.end] for b in o.buckets]).reshape(-1, 2), total, width)
    compute = "".join(_glyph(f, "▒") if f >= b else _glyph(b, "█") for f, b in zip(forward, backward))
    communication = "".join(_glyph(c, "█") for c in comm)
    end = min(width, int(round(o.computed / total * width))) if total > 0 else width
    return compute, communication, end


def axis(end: int, width: int, when: str) -> str:
    """'▲ backward ends 405.95 ms' under column `end` (or ending there when it would not fit)."""
    label = f"▲ backward ends {when}"
    if end + len(label) <= width:
        return " " * end + label
    label = f"backward ends {when} ▲"
    return " " * max(0, end + 1 - len(label)) + label


class OverlapPane(Static):
    """'compute ▒▒▒████…' over 'comm ··█·██…', then the step time and the exposed communication."""

    _shown: TrainingStep | None = None

    def show(self, step: TrainingStep) -> None:
        """Draw the step (as wide as the pane); stepping through the plan leaves it as it is."""
        if step is not self._shown:
            self._shown = step
            self._draw()

    def on_resize(self, event: events.Resize) -> None:
        """Draw again for the new size."""
        self._draw()

    def _draw(self) -> None:
        step = self._shown
        if step is None:
            return
        o = step.step
        text = Text(no_wrap=True, overflow="ellipsis")
        width = max(10, (self.content_region.width or 60) - LABEL)
        if o.step_seconds <= 0:
            text.append("No time to show: the step takes 0 s.", "dim")
            self.update(text)
            return
        compute, comm, end = tracks(step, width)
        text.append("compute".ljust(LABEL), "bold")
        for glyph in compute:
            text.append(glyph, FORWARD if glyph == "▒" else BACKWARD if glyph != "·" else "dim")
        text.append("\n" + "comm".ljust(LABEL), "bold")
        text.append(comm[:end], COMM)
        text.append(comm[end:], EXPOSED)
        text.append("\n" + " " * LABEL + axis(end, width, format_seconds(o.computed)), "dim")
        # The tracks keep one row each; the sentences under them wrap where the pane is narrow.
        serial = o.forward_seconds + o.backward_seconds + o.communication_seconds
        cap = "no cap" if o.bucket_mb == float("inf") else f"up to {o.bucket_mb:g} MiB"
        words = Text()
        words.append(f"step {format_seconds(o.step_seconds)}", "bold")
        words.append(f" · exposed {format_seconds(o.exposed_seconds)}", f"bold {EXPOSED}")
        words.append(f" of {format_seconds(o.communication_seconds)} communication\n")
        words.append(f"forward ▒ {format_seconds(o.forward_seconds)} · backward █ "
                     f"{format_seconds(o.backward_seconds)} at {DEFAULT_FLOPS / 1e12:g} TFLOP/s\n"
                     f"{len(o.buckets)} buckets of {cap} (the first {FIRST_BUCKET_BYTES // MIB} "
                     f"MiB, as DDP), {step.algorithm} all-reduce · without overlap "
                     f"{format_seconds(serial)}\n"
                     f"{step.model.title}, {step.model.params:,} parameters · O: next model",
                     "dim")
        self.update(Group(text, words))
