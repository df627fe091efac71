"""A Simulation of reduce-scatter or all-gather: the walk's steps, checked against the collective's goal."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..algorithms import collectives
from ..core.formula import ClosedForm
from ..core.layout import Layout
from ..core.reference import reference_sum, tolerance
from .simulation import Simulation, demo_gradients

GOALS = {
    collectives.REDUCE_SCATTER: "Every GPU holds its shard of the sum (GPU k: segment k)",
    collectives.ALL_GATHER: "Every GPU holds every GPU's shard",
    collectives.ALL_REDUCE: "Every GPU holds the sum",
}


class CollectiveSimulation(Simulation):
    """The ring's reduce-scatter or all-gather, stepped like an all-reduce."""

    def __init__(self, name: str, gpus: int, elements: int, gradients=None, *, xp: Any = np) -> None:
        self.collective = collectives.collective(name)
        plan = collectives.plan(name, gpus)
        if gradients is None:
            gradients = demo_gradients(plan.gpus, elements, xp)
        if name == collectives.ALL_GATHER:  # each GPU starts with its shard only
            layout = Layout(plan.gpus, elements)
            gradients = gradients.copy()
            for g in range(plan.gpus):
                gradients[g, :layout.offset(g)] = 0
                gradients[g, layout.offset(g + 1):] = 0
        self.goal = GOALS[name]
        super().__init__(plan, elements, gradients, xp=xp)

    def reset(self) -> None:
        """Back to the start; all-gather's GPUs hold only their shard."""
        super().reset()
        if self.symbolic is not None:
            self.symbolic = collectives.initial_state(self.collective.name, self.plan.gpus)

    @property
    def title(self) -> str:
        """'Ring reduce-scatter · 4 GPUs · 8 elements per GPU'."""
        return (f"Ring {self.collective.name} · {self.plan.gpus} GPUs · "
                f"{self.layout.elements:,} elements per GPU")

    @property
    def banner(self) -> str:
        """Where the run is; at the end, whether the goal is met."""
        if self.done and self.position:
            return f"Done: {self.goal[0].lower() + self.goal[1:]}" if self.correct() else \
                f"Done: NOT every GPU meets the goal ({self.goal.lower()})"
        return super().banner

    def closed_form(self) -> ClosedForm:
        """The collective's closed forms at this G and N."""
        return collectives.closed_form(self.collective.name, self.plan.gpus, self.layout.elements)

    def problems(self) -> list[str]:
        """Buffers that miss the goal, symbolically and numerically."""
        if self.position in self._problems:
            return self._problems[self.position]
        name, g, layout = self.collective.name, self.plan.gpus, self.layout
        found = collectives.problems(name, self.symbolic) if self.symbolic is not None else []
        values = self.xp.asarray(self.values())
        inputs = self.inputs
        want = reference_sum(inputs, self.xp) if name != collectives.ALL_GATHER else None
        exact = not np.issubdtype(inputs.dtype, np.inexact)
        for gpu in range(g):
            for s in range(layout.segments):
                if self.collective.expected(gpu, s, g) is None:
                    continue
                lo, hi = layout.offset(s), layout.offset(s + 1)
                got = values[gpu, lo:hi]
                ref = inputs[s, lo:hi] if want is None else want[lo:hi]
                ok = bool((got == ref).all()) if exact or want is None else bool(
                    (abs(got - ref) <= tolerance(inputs, self.xp)[lo:hi]).all())
                if not ok:
                    found.append(f"GPU{gpu + 1}'s numbers in segment {s + 1} differ from the goal")
        self._problems[self.position] = found
        return found
