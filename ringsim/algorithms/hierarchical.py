"""Hierarchical (2-D) all-reduce: rings inside each node, rings across nodes, rings inside again.

G = M·L GPUs in M nodes of L. (1) Reduce-scatter inside each node on L shards: local
GPU p ends with shard (p+1) mod L summed over its node. (2) The M GPUs holding the same
shard (one per node) all-reduce it with a ring across the nodes, on the shard's M
segments. (3) All-gather inside each node. S = L·M = G segments. Slow links between
nodes then carry only 2·(M−1)·N/G per GPU, as in NCCL's and Horovod's hierarchical
all-reduce (the ring on each level is Patarasuk & Yuan's, JPDC 2009).
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ..errors import RingsimError
from ..formula import ClosedForm
from ..plan import Plan, Step
from ._counts import Tally, from_tally
from ._phases import ring_iterations

NAME = "hierarchical"
TITLE = "Hierarchical (2-D) ring"
SUMMARY = "ring reduce-scatter inside nodes, ring all-reduce across nodes, all-gather inside"
ACROSS = ("across the nodes", "across the nodes")


@dataclass(frozen=True)
class Options:
    """nodes: M, the number of nodes (M divides G); by default the divisor of G nearest √G from below."""

    nodes: int | None = None


def default_nodes(gpus: int) -> int:
    """The largest divisor of G that is at most √G (1 for a prime G)."""
    for m in range(math.isqrt(gpus), 0, -1):
        if gpus % m == 0:
            return m
    return 1


def check_options(gpus: int, nodes=None) -> dict:
    """nodes is a whole number that divides G."""
    if nodes is None:
        return {"nodes": default_nodes(gpus)}
    if isinstance(nodes, bool) or not isinstance(nodes, numbers.Integral) or not 1 <= nodes <= gpus:
        raise RingsimError(f"--nodes must be a whole number from 1 to {gpus} (the GPUs), got {nodes!r}")
    if gpus % nodes:
        divisors = [d for d in range(1, min(gpus, 10_000) + 1) if gpus % d == 0][:8]
        raise RingsimError(f"--nodes {nodes} does not divide {gpus} GPUs: every node holds G/M GPUs; "
                           f"try {', '.join(map(str, divisors))}")
    return {"nodes": int(nodes)}


def _shape(gpus: int, nodes):
    m = default_nodes(gpus) if nodes is None else nodes
    return m, gpus // m


def _rings(gpus: int, nodes):
    """(orders, bases) of the rings inside nodes (blocks of M segments) and across them (single segments)."""
    m, per = _shape(gpus, nodes)
    inside = np.arange(gpus, dtype=np.int64).reshape(m, per)
    across = inside.T.copy()
    shard = (np.arange(per) + 1) % per      # local GPU p holds shard (p+1) mod L after (1)
    return (inside, 0, m), (across, shard * m, 1)


def plan(gpus: int, nodes=None) -> Plan:
    """Reduce-scatter inside nodes, ring all-reduce across nodes, all-gather inside nodes."""
    m, per = _shape(gpus, nodes)
    (inside, base_in, width_in), (across, base_x, width_x) = _rings(gpus, nodes)
    steps = []
    phases = (("Reduce-scatter inside each node", inside, base_in, width_in, False, ("", "")),
              ("Reduce-scatter across nodes", across, base_x, width_x, False, ACROSS),
              ("All-gather across nodes", across, base_x, width_x, True, ACROSS),
              ("All-gather inside each node", inside, base_in, width_in, True, ("", "")))
    for phase, orders, bases, width, gather, route in phases:
        iterations = ring_iterations(orders, bases, width, gather)
        for s, (src, dst, first, last) in enumerate(iterations, 1):
            steps.append(Step.build(phase, s, len(iterations), "copy" if gather else "reduce",
                                    src, dst, first, last, route=route, handed_over=True))
    return Plan(NAME, gpus, tuple(steps), {"nodes": m}, segments=gpus)


def transfers(gpus: int, nodes=None) -> int:
    """G transfers in each of 2·(L−1) steps inside nodes and 2·(M−1) across."""
    m, per = _shape(gpus, nodes)
    return gpus * (2 * (per - 1) + 2 * (m - 1))


def closed_form(gpus: int, elements: int, nodes=None) -> ClosedForm:
    """2·(G−1)·N in all; per GPU 2·(L−1)·N/L inside its node plus 2·(M−1)·N/G across, exactly counted."""
    m, per = _shape(gpus, nodes)
    tally = Tally(gpus, gpus, elements)
    for orders, bases, width in _rings(gpus, nodes):
        tally.add_rings(orders, bases, width)
    n = elements
    textbook = Fraction(2 * (per - 1) * n, per) + Fraction(2 * (m - 1) * n, gpus)
    return from_tally(tally, {
        "total": "2·(G−1)·N", "sent": "2·(L−1)·N/L + 2·(M−1)·N/G",
        "received": "2·(L−1)·N/L + 2·(M−1)·N/G", "steps": "2·(L−1) + 2·(M−1)",
        "messages": "transfers that carry at least one element",
    }, 2 * (per - 1) + 2 * (m - 1), {"sent": textbook, "received": textbook})


def _phases(gpus: int, nodes):
    """(orders, bases, width, gather) of the four ring phases, in plan order."""
    (inside, base_in, width_in), (across, base_x, width_x) = _rings(gpus, nodes)
    return ((inside, base_in, width_in, False), (across, base_x, width_x, False),
            (across, base_x, width_x, True), (inside, base_in, width_in, True))


def seconds(gpus: int, elements: int, model, nodes=None):
    """α-β-γ time of the four ring phases (`_timing.ring_phase`, O(G), no plan).

    On one level with G dividing N: 2(L−1)·(α + N/L·β) + (L−1)·N/L·γ inside, then
    2(M−1)·(α + N/G·β) + (M−1)·N/G·γ across. Which of its transfers cross the topology's
    nodes depends on how its M groups of L fall on them, so each phase is priced port by port.
    """
    from ._timing import Clock, ring_phase
    m, per = _shape(gpus, nodes)
    clock = Clock()
    for orders, bases, width, gather in _phases(gpus, nodes):
        clock.add(*ring_phase(model, orders, bases, width, gpus, elements, gather))
    return clock.estimate("every GPU's ports")


def busiest_gpu(gpus: int, elements: int, nodes=None) -> int:
    """The lowest GPU sending plus receiving the most, from the exact per-GPU counts."""
    from ._multiring import moved_most
    tally = Tally(gpus, gpus, elements)
    for orders, bases, width in _rings(gpus, nodes):
        tally.add_rings(orders, bases, width)
    return moved_most(tally)
