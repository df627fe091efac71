"""The ledger: elements moved per transfer, per GPU, per link; messages and steps."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Sequence

import numpy as np

from ..core.checks import check_count
from ..core.errors import RingsimError
from ..core.layout import Layout
from ..core.naming import gpu_name, plural
from ..core.plan import Plan, Step, check_plan


@dataclass(frozen=True, eq=False)
class Ledger:
    """What a run moved so far: totals, per GPU, per link, messages and steps.

    With switches (participants G … G+W−1, see core/plan.py) `sent` and `received` stay per
    GPU, what goes through each GPU's own link; `switch_sent` and `switch_received` say what
    each switch carried, and `total` counts every link, the GPUs' links to a switch included.
    """

    gpus: int
    steps: int
    src: np.ndarray
    dst: np.ndarray
    elements: np.ndarray
    switches: int = 0

    @cached_property
    def total(self) -> int:
        """Elements moved over all links."""
        return int(self.elements.sum())

    @cached_property
    def messages(self) -> int:
        """Transfers that moved at least one element."""
        return int(np.count_nonzero(self.elements))

    @cached_property
    def _sent_all(self) -> np.ndarray:
        return _per_gpu(self.src, self.elements, self.gpus + self.switches)

    @cached_property
    def _received_all(self) -> np.ndarray:
        return _per_gpu(self.dst, self.elements, self.gpus + self.switches)

    @property
    def sent(self) -> np.ndarray:
        """Elements each GPU sent (index 0 is GPU1)."""
        return self._sent_all[:self.gpus]

    @property
    def received(self) -> np.ndarray:
        """Elements each GPU received."""
        return self._received_all[:self.gpus]

    @property
    def switch_sent(self) -> np.ndarray:
        """Elements each switch sent (empty when the plan has none)."""
        return self._sent_all[self.gpus:]

    @property
    def switch_received(self) -> np.ndarray:
        """Elements each switch received."""
        return self._received_all[self.gpus:]

    def busiest(self) -> int:
        """The 0-based GPU that sent plus received the most (the lowest such GPU on ties)."""
        return int(np.argmax(self.sent + self.received)) if self.gpus else 0

    def __repr__(self) -> str:
        """One line, not the columns: '<Ledger of 4 GPUs · 6 steps · 48 elements in 24 messages · …>'."""
        switches = f" and {plural(self.switches, 'switch')}" if self.switches else ""
        busiest = self.busiest()
        figures = (f" · busiest {gpu_name(busiest)} sent {int(self.sent[busiest]):,}, "
                   f"received {int(self.received[busiest]):,}") if self.gpus else ""
        return (f"<Ledger of {plural(self.gpus, 'GPU')}{switches} · {plural(self.steps, 'step')} · "
                f"{plural(self.total, 'element')} in {plural(self.messages, 'message')}{figures}>")

    def links(self) -> dict[tuple[int, int], int]:
        """Elements moved on each directed link (src, dst), 0-based, links that were used."""
        width = self.gpus + self.switches
        key = self.src * width + self.dst
        used, inverse = np.unique(key, return_inverse=True)
        totals = np.zeros(len(used), dtype=np.int64)
        np.add.at(totals, inverse, self.elements)
        return {(int(k) // width, int(k) % width): int(v) for k, v in zip(used, totals)}


def _per_gpu(gpu: np.ndarray, elements: np.ndarray, gpus: int) -> np.ndarray:
    out = np.zeros(gpus, dtype=np.int64)
    np.add.at(out, gpu, elements)
    return out


def check_plan_layout(plan: object, layout: object) -> None:
    """Refuse a plan and a layout that do not belong together (the layout must cut N into the
    plan's S segments: any other split counts wrong figures without an error)."""
    check_plan(plan)
    if not isinstance(layout, Layout):
        raise RingsimError(f"expected a Layout, got {type(layout).__name__}")
    if layout.segments != plan.segments:
        raise RingsimError(f"the layout splits N into {layout.segments:,} segments but the plan "
                           f"has {plan.segments:,}: use Layout({plan.segments}, N)")


def measure(plan: Plan, layout: Layout, steps: int | None = None) -> Ledger:
    """The ledger of the first `steps` steps of the plan (all of them by default)."""
    check_plan_layout(plan, layout)
    if steps is not None:
        steps = check_count(steps, "the number of steps to measure", minimum=0,
                            maximum=len(plan.steps))
    taken: Sequence[Step] = plan.steps if steps is None else plan.steps[:steps]
    cat = lambda cols: np.concatenate(cols) if cols else np.zeros(0, np.int64)  # noqa: E731
    return Ledger(
        gpus=plan.gpus,
        steps=len(taken),
        src=cat([s.src for s in taken]),
        dst=cat([s.dst for s in taken]),
        elements=cat([layout.spans(s.first, s.last) for s in taken]),
        switches=plan.switches,
    )
