"""The TUI's clock: each step's modelled time on a topology (α-β-γ, ringsim.cost), and the
bottleneck GPU of each step; `t` cycles the topology presets that fit G."""

from __future__ import annotations

from ..cost import CostModel, PlanCost, price
from ..errors import RingsimError
from ..plan import Plan
from ..topology import load, presets
from ..units import format_seconds

DTYPE = "float32"


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

    def price(self, plan: Plan, elements: int) -> PlanCost:
        """The plan's cost on the current topology (cached)."""
        key = (id(plan), elements, self.topology)
        if key != self._key:
            self.cost = price(plan, elements, CostModel.of(self.topology, DTYPE))
            self.times = self.cost.clock()
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
        cost = self.price(plan, elements)
        step = cost.steps[position - 1].seconds if position else 0.0
        so_far = self.times[position - 1] if position else 0.0
        end = self.times[-1] if self.times else 0.0
        return (f"time: step {format_seconds(step)} · so far {format_seconds(so_far)} · "
                f"end {format_seconds(end)} · {self.topology}")
