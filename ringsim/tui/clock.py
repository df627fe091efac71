"""The TUI's clock: each step's modelled time on a topology (α-β-γ, ringsim.cost), and the
bottleneck GPU of each step; `t` cycles the topology presets that fit G. With a slow GPU
(key s) the clock follows ringsim.timeline: a step ends when its last transfer arrives."""

from __future__ import annotations

import numpy as np

from ..cost import CostModel, PlanCost, price
from ..errors import RingsimError
from ..plan import Plan
from ..topology import load, presets
from ..timeline import Fault, Timeline, simulate
from ..units import format_seconds

DTYPE = "float32"
SLOW = 0.5  # key s: the first GPU at half speed


def fitting(gpus: int) -> tuple[list[str], list[str]]:
    """The presets whose nodes G fits, and those it does not."""
    fit, skip = [], []
    for name in presets():
        try:
            load(name).check_gpus(gpus)
            fit.append(name)
        except RingsimError:
            skip.append(name)
    return fit, skip


class Clock:
    """Prices a plan once per (plan, N, topology) and answers for any position."""

    def __init__(self, topology: str = "flat") -> None:
        self.topology = topology
        self._key: tuple | None = None
        self.cost: PlanCost | None = None
        self.times: list[float] = []
        self.faults: tuple[Fault, ...] = ()
        self._timeline_key: tuple | None = None
        self._timeline: Timeline | None = None

    def timeline(self, plan: Plan, elements: int) -> Timeline:
        """The plan on the event timeline with the current faults (cached)."""
        key = (id(plan), elements, self.topology, self.faults)
        if key != self._timeline_key:
            self._timeline = simulate(plan, elements, CostModel.of(self.topology, DTYPE), self.faults)
            self._timeline_key = key
        return self._timeline

    def price(self, plan: Plan, elements: int) -> PlanCost:
        """The plan's cost on the current topology (cached)."""
        key = (id(plan), elements, self.topology, self.faults)
        if key != self._key:
            self.cost = price(plan, elements, CostModel.of(self.topology, DTYPE))
            self.times = self.cost.clock()
            if self.faults:  # the step ends when its last transfer has arrived
                line = self.timeline(plan, elements)
                ends = np.zeros(len(plan.steps))
                np.maximum.at(ends, line.step, line.end)
                self.times = np.maximum.accumulate(ends).tolist()
            self._key = key
        return self.cost

    def bottleneck(self, plan: Plan, elements: int, position: int) -> int | None:
        """The 0-based GPU whose port held step `position` up (None at the start or for an empty step)."""
        if position == 0:
            return None
        port = self.price(plan, elements).steps[position - 1].port
        return None if port is None else port.gpu

    def text(self, plan: Plan, elements: int, position: int) -> str:
        """'time: step 1.20 µs · so far 3.40 µs · end 8.00 µs · flat'."""
        self.price(plan, elements)
        so_far_before = self.times[position - 2] if position > 1 else 0.0
        step = self.times[position - 1] - so_far_before if position else 0.0
        so_far = self.times[position - 1] if position else 0.0
        end = self.times[-1] if self.times else 0.0
        return (f"time: step {format_seconds(step)} · so far {format_seconds(so_far)} · "
                f"end {format_seconds(end)} · {self.topology}"
                + "".join(f" · {f}" for f in self.faults))
