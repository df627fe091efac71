"""Collectives as objects: all-reduce, reduce-scatter and all-gather, one class each.

A collective is what every GPU holds before and after, per segment, as msccl-tools states one
by its input buffers and its check (msccl/language/collectives.py: init_buffers and check,
github.com/microsoft/msccl-tools). With G GPUs and S = G segments, GPU g's shard is segment g
(NCCL's rank r receives chunk r):
- all-reduce: every GPU ends with every segment summed over all GPUs;
- reduce-scatter: GPU g ends with segment g summed over all GPUs (the rest is scratch);
- all-gather: GPU g starts with only its shard, segment g, and every GPU ends with every
  GPU's shard.
Bus bandwidth (nccl-tests doc/PERFORMANCE.md, github.com/NVIDIA/nccl-tests): busbw = algbw ·
factor, with factor 2(G−1)/G for all-reduce and (G−1)/G for reduce-scatter and all-gather.

Every algorithm builds the all-reduce. The reduce-scatter and all-gather plans are the two
halves of the ring (the algorithms/_phases.py builder `ring_iterations`), on the ring
1 → 2 → … → G → 1 counted from GPU2 so that GPU g ends owning segment g: in step s GPU g sends
segment (g − s) mod G (reduce-scatter) or (g + 1 − s) mod G (all-gather). Joined, they are an
all-reduce. Another collective (a broadcast, a reduce) is one more subclass of Collective.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from fractions import Fraction
from functools import lru_cache

import numpy as np

from . import (ALGORITHMS, MAX_PLAN_TRANSFERS, closed_form as algorithm_form, make_plan,
               named_with_options, plan_closed_form, plan_options)
from ..core.checks import check_elements, check_gpus, check_timed_elements, echo
from ..core.arguments import argument
from ..core.errors import RingsimError
from ..core.textout import printable
from ..core.formula import ClosedForm, Formula
from ..core.layout import Layout
from ..core.naming import gpu_name, sum_label
from ..core.plan import Plan, Step
from ..core.reference import bitwise_strays, gpus_off_the_sum, reference_sum, tolerance
from ..cost.model import Estimate, dominant_level
from ..cost.ports import ACROSS, INSIDE, crosses, slower_level
from ..execute.symbolic import SymbolicState
from ._phases import ring_iterations
from .timing import estimate


@lru_cache(maxsize=64)
def _everyone(gpus: int) -> frozenset[int]:
    return frozenset(range(gpus))


class Collective(ABC):
    """A collective: its start and goal per GPU and segment, its bus factor, its plans and closed forms."""

    name: str         # as the command line writes it: 'all-reduce'
    title: str        # 'All-reduce'
    goal_text: str    # the goal in one sentence: 'Every GPU holds the sum'
    missed_text: str  # the goal missed: 'Some GPUs do NOT hold the sum'
    start_text = "every GPU holds only its own gradient"  # what the GPUs hold before step 1
    # How its schedule differs from the same phase inside the all-reduce ('' where it does not)
    schedule_text = ""
    factor_text: str  # the bus factor as nccl-tests writes it: '2(G−1)/G'
    algorithms: tuple[str, ...]  # the algorithms that build its plan

    def __repr__(self) -> str:
        return f"<collective {self.name}>"

    # --- what it is: stated by each collective ----------------------------------------
    @abstractmethod
    def holdings(self, gpus: int, segments: int) -> np.ndarray:
        """(G, S) booleans: which segments each GPU holds its own copy of before the collective
        (msccl-tools' init_buffers)."""

    @abstractmethod
    def goal(self, gpu: int, segment: int, gpus: int) -> frozenset[int] | None:
        """The GPUs whose copies of the segment the GPU's buffer must hold summed at the end
        (msccl-tools' check); None: any, the buffer is scratch."""

    @abstractmethod
    def bus_factor(self, gpus: int) -> Fraction:
        """busbw / algbw, nccl-tests' correction factor (doc/PERFORMANCE.md)."""

    @abstractmethod
    def plan(self, gpus: int, algorithm: str = "ring", **options) -> Plan:
        """The plan of `algorithm` that carries out this collective on G GPUs."""

    @abstractmethod
    def closed_form(self, gpus: int, elements: int, algorithm: str = "ring",
                    **options) -> ClosedForm:
        """Exact figures of `algorithm`'s plan at G GPUs and N elements each, without a plan."""

    @abstractmethod
    def seconds(self, gpus: int, elements: int, model, algorithm: str = "ring", **options) -> Estimate:
        """`algorithm`'s α-β(-γ) time on the CostModel, without a plan."""

    @abstractmethod
    def plan_title(self, plan: Plan) -> str:
        """What the plan is, in words: 'Ring all-reduce', 'Ring reduce-scatter'."""

    def run_title(self, plan: Plan) -> str:
        """What every run's title calls the plan: 'Single-GPU master (GPU2)', 'Binary tree (2 chunks)'."""
        return named_with_options(self.plan_title(plan), plan)

    @abstractmethod
    def plan_closed_form(self, plan: Plan, elements: int) -> ClosedForm:
        """The closed forms of the algorithm and options the plan was made with, at N elements."""

    def parts(self) -> tuple[Collective, ...]:
        """The collectives it runs as, in order (the all-reduce: a reduce-scatter, then an all-gather)."""
        return (self,)

    # --- checking a run against the goal -------------------------------------------------
    def initial_state(self, gpus: int, segments: int | None = None, switches: int = 0) -> SymbolicState:
        """The symbolic state before the collective: each GPU's own copy where `holdings` says,
        nothing elsewhere (and nothing in a switch)."""
        state = SymbolicState(gpus, segments, switches)
        held = self.holdings(gpus, state.segments)
        state.held = [[(g,) if held[g, s] else () for s in range(state.segments)] for g in range(gpus)] \
            + state.held[gpus:]
        return state

    def start_values(self, gradients, layout: Layout):
        """The (G, N) gradients as the collective starts: zero where a GPU holds nothing yet."""
        held = self.holdings(len(gradients), layout.segments)
        if held.all():
            return gradients
        values = gradients.copy()
        for g, s in zip(*np.nonzero(~held)):
            values[g, layout.offset(s):layout.offset(s + 1)] = 0
        return values

    def state_problems(self, state: SymbolicState) -> list[str]:
        """Every buffer of a symbolic state that misses the goal, in words."""
        found = []
        for g in range(state.gpus):
            for s in range(state.segments):
                want = self.goal(g, s, state.gpus)
                held = state.held[g][s]
                if want is not None and (len(held) != len(want) or set(held) != want):
                    found.append(f"{gpu_name(g)} segment {s + 1} holds "
                                 f"{sum_label(held, s) if held else 'nothing'}, should hold "
                                 f"{sum_label(tuple(sorted(want)), s)}")
        return found

    def value_problems(self, values, inputs, layout: Layout, xp=np) -> list[str]:
        """Every GPU's segment whose numbers miss the goal: a copy bit for bit, a sum within
        `tolerance` (core/reference.py)."""
        gpus = len(inputs)
        bound = None if not np.issubdtype(inputs.dtype, np.inexact) else tolerance(inputs, xp)
        references = {}
        found = []
        for gpu in range(gpus):
            for s in range(layout.segments):
                want = self.goal(gpu, s, gpus)
                if want is None:
                    continue
                if want not in references:
                    references[want] = reference_sum(inputs[sorted(want)], xp)
                lo, hi = layout.offset(s), layout.offset(s + 1)
                got, ref = values[gpu, lo:hi], references[want][lo:hi]
                ok = bool((got == ref).all()) if bound is None or len(want) == 1 else bool(
                    (abs(got - ref) <= bound[lo:hi]).all())
                if not ok:
                    found.append(f"GPU{gpu + 1}'s numbers in segment {s + 1} differ from the goal")
        return found

    def check(self, plan: Plan) -> list[str]:
        """Run the plan symbolically from the collective's start; what misses its goal, in words."""
        state = self.initial_state(plan.gpus, plan.segments, plan.switches)
        for step in plan.steps:
            state.apply(step)
        return self.state_problems(state)

    def every_gpu_sums(self, gpus: int, segments: int) -> bool:
        """True when the goal is the all-reduce's: every GPU holds every segment summed over all GPUs."""
        return all(self.goal(g, s, gpus) == _everyone(gpus) for g in range(gpus) for s in range(segments))


class AllReduce(Collective):
    """Every GPU starts with its gradient and ends with the sum of all of them; any algorithm builds it."""

    name, title = "all-reduce", "All-reduce"
    goal_text = "Every GPU holds the sum"
    missed_text = "Some GPUs do NOT hold the sum"
    factor_text = "2(G−1)/G"

    @property
    def algorithms(self) -> tuple[str, ...]:
        """Every algorithm of the registry: each builds an all-reduce."""
        return tuple(ALGORITHMS)

    def holdings(self, gpus: int, segments: int) -> np.ndarray:
        """Every GPU holds every segment."""
        return np.ones((gpus, segments), bool)

    def goal(self, gpu: int, segment: int, gpus: int) -> frozenset[int]:
        """Every buffer: the sum over all GPUs."""
        return _everyone(gpus)

    def bus_factor(self, gpus: int) -> Fraction:
        """2(G−1)/G (nccl-tests doc/PERFORMANCE.md, AllReduce)."""
        return 2 * Fraction(gpus - 1, gpus)

    def plan(self, gpus: int, algorithm: str = "ring", **options) -> Plan:
        """make_plan's plan of the algorithm."""
        return make_plan(algorithm, gpus, **options)

    def closed_form(self, gpus: int, elements: int, algorithm: str = "ring",
                    **options) -> ClosedForm:
        """The algorithm's own closed forms (ringsim.algorithms.closed_form)."""
        return algorithm_form(algorithm, gpus, elements, **options)

    def seconds(self, gpus: int, elements: int, model, algorithm: str = "ring", **options) -> Estimate:
        """The algorithm's closed-form time (ringsim.algorithms.timing.estimate)."""
        return estimate(algorithm, gpus, elements, model, **options)

    def plan_title(self, plan: Plan) -> str:
        """The algorithm's title (for a plan built by hand, its own name: it has no registered title)."""
        spec = ALGORITHMS.get(plan.algorithm)
        if spec is None:
            return f"{printable(plan.algorithm)[:60]} plan"
        return spec.title_for(**plan_options(plan))

    def plan_closed_form(self, plan: Plan, elements: int) -> ClosedForm:
        """ringsim.algorithms.plan_closed_form."""
        return plan_closed_form(plan, elements)

    def parts(self) -> tuple[Collective, ...]:
        """A reduce-scatter, then an all-gather (ZeRO §7 counts it so; the ring runs it so)."""
        return REDUCE_SCATTER, ALL_GATHER

    def value_problems(self, values, inputs, layout: Layout, xp=np) -> list[str]:
        """GPUs off the element-wise sum, and GPUs whose bits differ from GPU1's."""
        off = gpus_off_the_sum(values, inputs, xp)
        return ([f"GPU{gpu + 1}'s numbers differ from the element-wise sum" for gpu in off]
                + [f"GPU{gpu + 1}'s bits differ from GPU1's (the same sum added in another order)"
                   for gpu in bitwise_strays(values) if gpu not in off])


# The ring's options a half takes for its time (not its plan): its rings, laid out as given.
RING_TIME_OPTIONS = ("channels", "ring_order")


class _RingHalf(Collective):
    """A collective the ring builds as one of its halves: G−1 steps, every GPU sending one
    segment to the next in each; the ring's figures in closed form."""

    algorithms = ("ring",)
    factor_text = "(G−1)/G"
    op: str   # what a receiver does with a segment: 'reduce' (add it in) or 'copy'
    lag: int  # in step s GPU g sends segment (g + lag − s) mod G

    def bus_factor(self, gpus: int) -> Fraction:
        """(G−1)/G (nccl-tests doc/PERFORMANCE.md, ReduceScatter and AllGather)."""
        return Fraction(gpus - 1, gpus)

    def _check(self, algorithm: str, options: dict) -> None:
        if algorithm not in self.algorithms:
            raise RingsimError(f"{self.name} is built for the ring only, not {echo(algorithm)} "
                               f"(use {argument('algorithm', 'ring')})")
        given = [name for name, value in options.items() if value is not None]
        if given:
            raise RingsimError(f"the ring's {self.name} takes no options, got "
                               f"{argument(given[0])}")

    def plan(self, gpus: int, algorithm: str = "ring", **options) -> Plan:
        """The ring's half: step s as the module docstring says."""
        self._check(algorithm, options)
        gpus = check_gpus(gpus)
        count = gpus * (gpus - 1)  # G−1 steps of G transfers, counted before any is built
        if count > MAX_PLAN_TRANSFERS:
            raise RingsimError(
                f"a ring {self.name} plan for {gpus:,} GPUs holds {count:,} transfers, more than "
                f"the {MAX_PLAN_TRANSFERS:,} a plan may hold (MAX_PLAN_TRANSFERS); for the "
                "counts at any G use its closed_form")
        order = np.roll(np.arange(gpus), -1)  # position p holds GPU p+1, so GPU g ends owning segment g
        # The all-gather forwards the segment it got a step before: one position behind.
        iterations = ring_iterations(order[None, :], 0, 1, gather=self.lag == 1)
        # Listed from GPU1 up, as the all-reduce lists its steps (the ring starts at GPU2).
        listed = [tuple(np.asarray(a)[np.argsort(src, kind="stable")] for a in (src, dst, first, last))
                  for src, dst, first, last in iterations]
        steps = tuple(Step.build(self.title, s, len(listed), self.op, src, dst, first, last)
                      for s, (src, dst, first, last) in enumerate(listed, 1))
        return Plan(f"ring-{self.name}", gpus, steps, {"collective": self.name})

    def closed_form(self, gpus: int, elements: int, algorithm: str = "ring",
                    **options) -> ClosedForm:
        """(G−1)·N in all, N − ⌊N/G⌋ sent and received by the busiest GPU, G−1 steps."""
        self._check(algorithm, options)
        g, n = check_gpus(gpus), check_elements(elements)
        busiest = Fraction(n - n // g)  # every GPU sends (and receives) all segments but one
        return ClosedForm(
            total=Formula("(G−1)·N", Fraction((g - 1) * n)),
            busiest_sent=Formula("N − ⌊N/G⌋", busiest),
            busiest_received=Formula("N − ⌊N/G⌋", busiest),
            steps=Formula("G−1", Fraction(g - 1)),
            messages=Formula("(G−1)·min(N,G)", Fraction((g - 1) * min(n, g))),
        )

    def seconds(self, gpus: int, elements: int, model, algorithm: str = "ring", **options) -> Estimate:
        """The α-β(-γ) time in O(G), equal to pricing the plan.

        Every step sends every segment once, one per GPU to the next; a step lasts as long as
        the largest segment on the slower level (+ b·γ at the receiver when it reduces). With
        the ring's options (channels, ring_order: as NCCL lays its rings out) this half of the
        ring all-reduce on those rings, so that the two halves add up to the all-reduce's time;
        plans and counts stay the single ring's.
        """
        ring_options = {k: v for k, v in options.items() if k in RING_TIME_OPTIONS}
        self._check(algorithm, {k: v for k, v in options.items() if k not in ring_options})
        g = check_gpus(gpus)
        model.topology.check_gpus(g)
        if g < 2:
            return Estimate(0.0, None)
        if any(v is not None for v in ring_options.values()):
            from . import ring
            on_rings = ring.phase_seconds(g, check_timed_elements(elements), model,
                                          self.lag == 1, **ring_options)
            if on_rings is not None:
                return on_rings
        q, r = divmod(check_timed_elements(elements), g)
        sizes = (q * model.itemsize, (q + 1) * model.itemsize)
        gpu = np.arange(g)
        across_nodes = crosses(model, gpu, (gpu + 1) % g)  # GPU g sends to GPU g+1 every step
        reduces = self.op == "reduce"
        # Step s sends segment (g − d) mod G from GPU g, with d = s − lag.
        d = np.arange(1, g) - self.lag
        spent = {"inside": 0.0, "across": 0.0}
        for key, senders in (("inside", ~across_nodes), ("across", across_nodes)):
            if not senders.any():
                continue
            window = np.concatenate([[0], np.cumsum(np.concatenate([senders, senders]))])
            big = (window[d + r] > window[d]) if r else np.zeros(len(d), bool)  # GPUs d..d+r−1 send big
            spent_big = model.transfer(key, sizes[1], reduces)
            spent_small = model.transfer(key, sizes[0], reduces)
            spent[key] = np.where(big, spent_big, spent_small)
        inside = spent["inside"] if isinstance(spent["inside"], np.ndarray) else np.zeros(len(d))
        across = spent["across"] if isinstance(spent["across"], np.ndarray) else np.zeros(len(d))
        step, level = slower_level(inside, across)
        levels = {"inside": float(step[level == INSIDE].sum()), "across": float(step[level == ACROSS].sum())}
        return Estimate(float(step.sum()), dominant_level(levels), "every GPU's ports")

    def plan_title(self, plan: Plan) -> str:
        """'Ring reduce-scatter'."""
        return f"Ring {self.name}"

    def plan_closed_form(self, plan: Plan, elements: int) -> ClosedForm:
        """The ring half's closed forms at the plan's G."""
        return self.closed_form(plan.gpus, elements)

    def per_gpu(self, gpus: int, elements: int) -> tuple[list[int], list[int]]:
        """Elements each GPU sends and receives: every segment but (g + lag) mod G out, every
        segment but the one its sender keeps, (g − 1 + lag) mod G, in."""
        if elements >= 1 << 62:  # past int64: Python's own integers, GPU by GPU
            sizes = Layout(gpus, elements).sizes()
            return ([elements - sizes[(g + self.lag) % gpus] for g in range(gpus)],
                    [elements - sizes[(g - 1 + self.lag) % gpus] for g in range(gpus)])
        sent, received = self.per_gpu_arrays(gpus, elements)
        return sent.tolist(), received.tolist()

    def per_gpu_arrays(self, gpus: int, elements: int) -> tuple[np.ndarray, np.ndarray]:
        """per_gpu as int64 arrays, for a million GPUs at once (elements below 2^62)."""
        if gpus == 1:
            return np.zeros(1, np.int64), np.zeros(1, np.int64)
        q, r = divmod(elements, gpus)  # segment j holds q + (j < r) elements (Layout.size)
        g = np.arange(gpus, dtype=np.int64)
        return (elements - q - ((g + self.lag) % gpus < r),
                elements - q - ((g - 1 + self.lag) % gpus < r))


class ReduceScatter(_RingHalf):
    """Every GPU starts with its gradient; GPU g ends with segment g of the sum."""

    name, title = "reduce-scatter", "Reduce-scatter"
    goal_text = "Every GPU holds its shard of the sum (GPU k: segment k)"
    missed_text = "Some GPUs do NOT hold their shard of the sum"
    schedule_text = ("On its own the ring runs one segment earlier than the all-reduce's first "
                     "phase, so that GPU k ends with segment k, as MPI_Reduce_scatter_block and "
                     "ncclReduceScatter give rank k block k (inside the all-reduce GPU k ends "
                     "that phase with segment k+1).")
    op, lag = "reduce", 0

    def holdings(self, gpus: int, segments: int) -> np.ndarray:
        """Every GPU holds every segment."""
        return np.ones((gpus, segments), bool)

    def goal(self, gpu: int, segment: int, gpus: int) -> frozenset[int] | None:
        """GPU g's segment g: the sum over all GPUs; its other segments are scratch."""
        return _everyone(gpus) if segment == gpu else None


class AllGather(_RingHalf):
    """GPU g starts with its shard, segment g; every GPU ends with every GPU's shard."""

    name, title = "all-gather", "All-gather"
    goal_text = "Every GPU holds every GPU's shard"
    start_text = "every GPU holds only its own shard (GPU k: segment k)"
    missed_text = "Some GPUs do NOT hold every GPU's shard"
    op, lag = "copy", 1

    def holdings(self, gpus: int, segments: int) -> np.ndarray:
        """GPU g holds segment g only."""
        return np.eye(gpus, segments, dtype=bool)

    def goal(self, gpu: int, segment: int, gpus: int) -> frozenset[int]:
        """Every GPU's segment j: GPU j's shard, copied."""
        return frozenset({segment})

ALL_REDUCE, REDUCE_SCATTER, ALL_GATHER = AllReduce(), ReduceScatter(), AllGather()
COLLECTIVES: dict[str, Collective] = {c.name: c for c in (ALL_REDUCE, REDUCE_SCATTER, ALL_GATHER)}


def collective(name: str) -> Collective:
    """The named collective, or a RingsimError listing them."""
    try:
        return COLLECTIVES[name]
    except (KeyError, TypeError):
        raise RingsimError(f"unknown collective {name!r}; choose one of: "
                           f"{', '.join(COLLECTIVES)}") from None
