"""The symbolic executor: which original segments each buffer holds, and a checker."""

from __future__ import annotations

import numbers
from itertools import chain

from ..core.checks import check_count
from ..core.errors import RingsimError
from ..core.naming import gpu_name, plural, sum_label, term
from ..core.order import reductions
from ..core.plan import Plan, Step, check_plan

Contributors = tuple[int, ...]

# A complete buffer lists all G contributors, so G GPUs of S segments hold up to G·S·G
# entries (about 100 bytes each with their tuples): 2**24 is G = S = 256, a second or so.
MAX_ENTRIES = 1 << 24


class SymbolicState:
    """For every GPU and each of its S segments, the GPUs whose original segment it has summed, in order.

    A plan's switches (participants G … G+W−1) follow the GPUs, their buffers empty at first.
    """

    def __init__(self, gpus: int, segments: int | None = None, switches: int = 0) -> None:
        self.gpus = check_count(gpus, "the number of GPUs", minimum=1)
        self.switches = switches
        self.segments = check_count(self.gpus if segments is None else segments,
                                    "the number of segments", minimum=1)
        self.held: list[list[Contributors]] = [[(g,)] * self.segments for g in range(gpus)] + \
            [[()] * self.segments for _ in range(switches)]

    def _where(self, gpu: object, segment: object) -> tuple[int, int]:
        """Validate a 0-based (GPU, segment) pair, naming the allowed ranges when it is out of them."""
        for value, what, count in ((gpu, "GPU", self.gpus + self.switches),
                                   (segment, "segment", self.segments)):
            if isinstance(value, bool) or not isinstance(value, numbers.Integral) or not 0 <= value < count:
                raise RingsimError(f"{what} must be a whole number from 0 to {count - 1} (0-based), "
                                   f"got {value!r}")
        return int(gpu), int(segment)  # type: ignore[arg-type]

    def contributors(self, gpu: int, segment: int) -> Contributors:
        """GPUs whose original copy of this segment the buffer has summed, in the order added."""
        gpu, segment = self._where(gpu, segment)
        return self.held[gpu][segment]

    def _shown(self, gpu: int, segment: int) -> tuple[tuple[int, ...], int]:
        """The contributors as labels list them (complete sums in GPU order), and the segment."""
        gpu, segment = self._where(gpu, segment)
        held = self.held[gpu][segment]
        return (tuple(range(self.gpus)) if self.is_complete(gpu, segment) else held), segment

    def label(self, gpu: int, segment: int, *, max_terms: int = 0) -> str:
        """What the buffer holds: 'd₄+a₄' in the order added; complete sums in GPU order."""
        held, segment = self._shown(gpu, segment)
        return sum_label(held, segment, max_terms=max_terms)

    def terms(self, gpu: int, segment: int) -> tuple[str, ...]:
        """The label's terms, ('d₄', 'a₄'); none for an empty buffer (labelled '0')."""
        held, segment = self._shown(gpu, segment)
        return tuple(term(g, segment) for g in held)

    def is_complete(self, gpu: int, segment: int) -> bool:
        """True when the buffer holds the sum of every GPU's copy of the segment, each once."""
        held = self.held[gpu][segment]
        return len(held) == self.gpus and len(set(held)) == self.gpus

    def __repr__(self) -> str:
        """One line, not the labels: '<SymbolicState of 4 GPUs · … · 16 of 16 buffers hold the sum>'."""
        switches = f" and {plural(self.switches, 'switch')}" if self.switches else ""
        buffers, complete = self.gpus * self.segments, self._complete_buffers()
        return (f"<SymbolicState of {plural(self.gpus, 'GPU')}{switches} · "
                f"{plural(self.segments, 'segment')} each · {complete:,} of "
                f"{plural(buffers, 'buffer')} {'holds' if complete == 1 else 'hold'} the sum>")

    def _complete_buffers(self) -> int:
        """How many of the GPUs' buffers hold their segment's full sum."""
        # Copies share one tuple of contributors, so each distinct tuple is checked once: a
        # finished all-reduce of G GPUs has S distinct tuples, not G·S.
        checked: dict[int, bool] = {}
        count = 0
        for row in self.held[:self.gpus]:
            for held in row:
                complete = checked.get(id(held))
                if complete is None:
                    complete = len(held) == self.gpus and len(set(held)) == self.gpus
                    checked[id(held)] = complete
                count += complete
        return count

    def apply(self, step: Step) -> None:
        """Carry out one step; every send reads the state before the step."""
        orders, copies = reductions(step)
        before = self.held
        after = [row[:] for row in before]
        for (dst, first, last), src in copies.items():
            after[dst][first:last + 1] = before[src][first:last + 1]
        for (dst, first, last), order in orders.items():
            for segment in range(first, last + 1):
                after[dst][segment] = tuple(chain.from_iterable(before[g][segment] for g in order))
        self.held = after

    def problems(self) -> list[str]:
        """Every buffer that does not hold its segment's full sum, in words; empty when all do."""
        found = []
        for gpu in range(self.gpus):
            for segment in range(self.segments):
                if not self.is_complete(gpu, segment):
                    found.append(
                        f"{gpu_name(gpu)} segment {segment + 1} holds {self.label(gpu, segment)}, "
                        f"should hold {sum_label(tuple(range(self.gpus)), segment)}"
                    )
        return found


def run_symbolic(plan: Plan) -> SymbolicState:
    """The symbolic state after every step of the plan."""
    check_plan(plan)
    entries = plan.participants * plan.segments * plan.gpus
    if entries > MAX_ENTRIES:
        raise RingsimError(f"symbolic labels for {plan.gpus:,} GPUs of {plan.segments:,} segments "
                           f"would list up to {entries:,} contributors; at most {MAX_ENTRIES:,} "
                           "(G = S = 256)")
    state = SymbolicState(plan.gpus, plan.segments, plan.switches)
    for step in plan.steps:
        state.apply(step)
    return state


def check(plan: Plan) -> list[str]:
    """Run the plan symbolically; return what is wrong where (empty list: it is an all-reduce)."""
    return run_symbolic(plan).problems()
