"""Collectives as goals: all-reduce, reduce-scatter, all-gather, each with its ring plan.

A collective is what every GPU holds before and after, per segment (as msccl-tools states
a collective by its pre- and postcondition per rank and chunk). With G GPUs and S = G
segments, GPU g's shard is segment g (NCCL's rank r receives chunk r):
- all-reduce: every GPU ends with every segment summed over all GPUs;
- reduce-scatter: GPU g ends with segment g summed over all GPUs (the rest is scratch);
- all-gather: GPU g starts with only its shard, segment g, and every GPU ends with every
  GPU's shard.
Bus bandwidth (nccl-tests doc/PERFORMANCE.md): busbw = algbw · factor, with factor
2(G−1)/G for all-reduce and (G−1)/G for reduce-scatter and all-gather.

The reduce-scatter and all-gather plans are the two halves of the ring (the
algorithms/_phases.py builder `ring_iterations`), on the ring 1 → 2 → … → G → 1 counted
from GPU2 so that GPU g ends owning segment g: in step s GPU g sends segment (g − s) mod G
(reduce-scatter) or (g + 1 − s) mod G (all-gather). Joined, they are an all-reduce.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ..core.checks import check_elements, check_gpus
from ..core.errors import RingsimError
from ..core.formula import ClosedForm, Formula
from ..core.naming import gpu_name, sum_label
from ..core.plan import Plan, Step
from ..execute.symbolic import SymbolicState

ALL_REDUCE, REDUCE_SCATTER, ALL_GATHER = "all-reduce", "reduce-scatter", "all-gather"


@dataclass(frozen=True)
class Collective:
    """A collective's name, title, and the factor nccl-tests turns algbw into busbw with."""

    name: str
    title: str
    factor_text: str

    def bus_factor(self, gpus: int) -> Fraction:
        """busbw / algbw: 2(G−1)/G for all-reduce, (G−1)/G for reduce-scatter and all-gather."""
        base = Fraction(gpus - 1, gpus)
        return 2 * base if self.name == ALL_REDUCE else base

    def owns_at_start(self, gpu: int, segment: int) -> bool:
        """Whether the GPU's own copy of the segment is an input (all-gather: only its shard)."""
        return self.name != ALL_GATHER or segment == gpu

    def expected(self, gpu: int, segment: int, gpus: int) -> frozenset[int] | None:
        """The GPUs whose copy of the segment the buffer must have summed at the end; None: any."""
        if self.name == ALL_REDUCE:
            return frozenset(range(gpus))
        if self.name == REDUCE_SCATTER:
            return frozenset(range(gpus)) if segment == gpu else None
        return frozenset({segment})


COLLECTIVES = {c.name: c for c in (
    Collective(ALL_REDUCE, "All-reduce", "2(G−1)/G"),
    Collective(REDUCE_SCATTER, "Reduce-scatter", "(G−1)/G"),
    Collective(ALL_GATHER, "All-gather", "(G−1)/G"))}


def collective(name: str) -> Collective:
    """The named collective, or a RingsimError listing them."""
    try:
        return COLLECTIVES[name]
    except (KeyError, TypeError):
        raise RingsimError(f"unknown collective {name!r}; choose one of: "
                           f"{', '.join(COLLECTIVES)}") from None


def _check_algorithm(name: str, algorithm: str) -> None:
    if name != ALL_REDUCE and algorithm != "ring":
        raise RingsimError(f"{name} is built for the ring only, not {algorithm!r} "
                           f"(use --algorithm ring)")


def plan(name: str, gpus: int, algorithm: str = "ring", **options) -> Plan:
    """The plan of a collective: make_plan's all-reduce, or the ring's reduce-scatter / all-gather."""
    from . import make_plan
    collective(name)
    if name == ALL_REDUCE:
        return make_plan(algorithm, gpus, **options)
    _check_algorithm(name, algorithm)
    if options:
        raise RingsimError(f"the ring's {name} takes no options, got --"
                           f"{next(iter(options)).replace('_', '-')}")
    from ._phases import ring_iterations
    gpus = check_gpus(gpus)
    gather = name == ALL_GATHER
    order = np.roll(np.arange(gpus), -1)  # position p holds GPU p+1, so GPU g ends owning segment g
    iterations = ring_iterations(order[None, :], 0, 1, gather)
    phase, op = ("All-gather", "copy") if gather else ("Reduce-scatter", "reduce")
    steps = tuple(Step.build(phase, s, len(iterations), op, src, dst, first, last)
                  for s, (src, dst, first, last) in enumerate(iterations, 1))
    return Plan(f"ring-{name}", gpus, steps, {"collective": name})


def closed_form(name: str, gpus: int, elements: int, algorithm: str = "ring", **options) -> ClosedForm:
    """Exact figures without a plan; reduce-scatter and all-gather on the ring:
    (G−1)·N in all, N − ⌊N/G⌋ sent and received by the busiest GPU, G−1 steps."""
    from . import closed_form as allreduce_form
    collective(name)
    if name == ALL_REDUCE:
        return allreduce_form(algorithm, gpus, elements, **options)
    _check_algorithm(name, algorithm)
    g, n = check_gpus(gpus), check_elements(elements)
    busiest = Fraction(n - n // g)  # every GPU sends (and receives) all segments but one
    return ClosedForm(
        total=Formula("(G−1)·N", Fraction((g - 1) * n)),
        busiest_sent=Formula("N − ⌊N/G⌋", busiest),
        busiest_received=Formula("N − ⌊N/G⌋", busiest),
        steps=Formula("G−1", Fraction(g - 1)),
        messages=Formula("(G−1)·min(N,G)", Fraction((g - 1) * min(n, g))),
    )


def seconds(name: str, gpus: int, elements: int, model):
    """The ring reduce-scatter's or all-gather's α-β(-γ) time in O(G), equal to pricing its plan.

    Every step sends every segment once, one per GPU to the next; a step lasts as long as
    the largest segment on the slower level (+ b·γ at the receiver in reduce-scatter).
    """
    from ..cost.model import Estimate, dominant_level as _dominant
    collective(name)
    g = check_gpus(gpus)
    if name == ALL_REDUCE:
        raise RingsimError("for all-reduce use ringsim.cost.model.estimate")
    model.topology.check_gpus(g)
    if g < 2:
        return Estimate(0.0, None)
    q, r = divmod(check_elements(elements), g)
    sizes = (q * model.itemsize, (q + 1) * model.itemsize)
    per = model.topology.gpus_per_node
    gpu = np.arange(g)
    crosses = np.zeros(g, bool) if per is None else (gpu // per != ((gpu + 1) % g) // per)
    reduce = name == REDUCE_SCATTER
    # Step s sends segment (g − d) mod G from GPU g: d = s (reduce-scatter), s − 1 (all-gather).
    d = np.arange(1, g) - (0 if reduce else 1)
    spent = {"inside": 0.0, "across": 0.0}
    for key, senders in (("inside", ~crosses), ("across", crosses)):
        if not senders.any():
            continue
        window = np.concatenate([[0], np.cumsum(np.concatenate([senders, senders]))])
        big = (window[d + r] > window[d]) if r else np.zeros(len(d), bool)  # GPUs d..d+r−1 send big
        spent_big = model.transfer(key, sizes[1], reduce)
        spent_small = model.transfer(key, sizes[0], reduce)
        spent[key] = np.where(big, spent_big, spent_small)
    inside = spent["inside"] if isinstance(spent["inside"], np.ndarray) else np.zeros(len(d))
    across = spent["across"] if isinstance(spent["across"], np.ndarray) else np.zeros(len(d))
    across_wins = (across >= inside) & (across > 0)
    levels = {"inside": float(inside[~across_wins].sum()), "across": float(across[across_wins].sum())}
    return Estimate(float(np.where(across_wins, across, inside).sum()), _dominant(levels),
                    "every GPU's ports")


def initial_state(name: str, gpus: int, segments: int | None = None) -> SymbolicState:
    """The symbolic state before the collective: all-gather's GPUs hold only their shard."""
    state = SymbolicState(gpus, segments)
    c = collective(name)
    state.held = [[(g,) if c.owns_at_start(g, s) else () for s in range(state.segments)]
                  for g in range(gpus)]
    return state


def problems(name: str, state: SymbolicState) -> list[str]:
    """Every buffer of a symbolic state that misses the collective's goal, in words."""
    c = collective(name)
    found = []
    for g in range(state.gpus):
        for s in range(state.segments):
            want = c.expected(g, s, state.gpus)
            held = state.held[g][s]
            if want is not None and (len(held) != len(want) or set(held) != want):
                found.append(f"{gpu_name(g)} segment {s + 1} holds "
                             f"{sum_label(held, s) if held else 'nothing'}, should hold "
                             f"{sum_label(tuple(sorted(want)), s)}")
    return found


def check(name: str, plan: Plan) -> list[str]:
    """Run the plan symbolically from the collective's start; what misses its goal, in words."""
    state = initial_state(name, plan.gpus, plan.segments)
    for step in plan.steps:
        state.apply(step)
    return problems(name, state)
