"""The symbolic executor: which original segments each buffer holds, and a checker."""

from __future__ import annotations

from collections import defaultdict
from itertools import chain

from .naming import gpu_name, sum_label
from .order import arrival_order
from .plan import Plan, Step

Contributors = tuple[int, ...]


class SymbolicState:
    """For every GPU and segment, the GPUs whose original segment it has summed, in order."""

    def __init__(self, gpus: int) -> None:
        self.gpus = gpus
        self.held: list[list[Contributors]] = [[(g,)] * gpus for g in range(gpus)]

    def contributors(self, gpu: int, segment: int) -> Contributors:
        """GPUs whose original copy of this segment the buffer has summed, in the order added."""
        return self.held[gpu][segment]

    def label(self, gpu: int, segment: int, *, max_terms: int = 0) -> str:
        """What the buffer holds: 'd₄+a₄' in the order added; complete sums in GPU order."""
        held = self.held[gpu][segment]
        if self.is_complete(gpu, segment):
            held = tuple(range(self.gpus))
        return sum_label(held, segment, max_terms=max_terms)

    def is_complete(self, gpu: int, segment: int) -> bool:
        """True when the buffer holds the sum of every GPU's copy of the segment, each once."""
        held = self.held[gpu][segment]
        return len(held) == self.gpus and len(set(held)) == self.gpus

    def apply(self, step: Step) -> None:
        """Carry out one step; every send reads the state before the step."""
        arrivals: dict[tuple[int, int, int], list[int]] = defaultdict(list)
        for t in step.transfers():
            arrivals[(t.dst, t.first, t.last)].append(t.src)
        before = self.held
        after = [row[:] for row in before]
        for (dst, first, last), sources in arrivals.items():
            if step.op == "copy":
                after[dst][first:last + 1] = before[sources[0]][first:last + 1]
                continue
            order = arrival_order(dst, sources)
            for segment in range(first, last + 1):
                after[dst][segment] = tuple(chain.from_iterable(before[g][segment] for g in order))
        self.held = after

    def problems(self) -> list[str]:
        """Every buffer that does not hold its segment's full sum, in words; empty when all do."""
        found = []
        for gpu in range(self.gpus):
            for segment in range(self.gpus):
                if not self.is_complete(gpu, segment):
                    found.append(
                        f"{gpu_name(gpu)} segment {segment + 1} holds {self.label(gpu, segment)}, "
                        f"should hold {sum_label(tuple(range(self.gpus)), segment)}"
                    )
        return found


def run_symbolic(plan: Plan) -> SymbolicState:
    """The symbolic state after every step of the plan."""
    state = SymbolicState(plan.gpus)
    for step in plan.steps:
        state.apply(step)
    return state


def check(plan: Plan) -> list[str]:
    """Run the plan symbolically; return what is wrong where (empty list: it is an all-reduce)."""
    return run_symbolic(plan).problems()
