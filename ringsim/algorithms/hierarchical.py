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

from ..core.arguments import argument
from ..core.errors import RingsimError
from ..core.formula import ClosedForm
from ..core.plan import Plan, Step
from ..cost.ports import one_level
from ._counts import EMPTY_SKIPPED, Tally, from_counts
from ._sparse import Ring, around, busiest, flat_phase
from ._phases import ring_iterations
from .spec import AlgorithmSpec, Shape

NAME = "hierarchical"
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
        raise RingsimError(f"{argument('nodes')} must be a whole number from 1 to {gpus} (the GPUs), got {nodes!r}")
    if gpus % nodes:
        divisors = [d for d in range(1, min(gpus, 10_000) + 1) if gpus % d == 0][:8]
        raise RingsimError(f"{argument('nodes', nodes)} does not divide {gpus} GPUs: every node holds G/M GPUs; "
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


TEXTS = {"total": "2·(G−1)·N", "sent": "2·(L−1)·N/L + 2·(M−1)·N/G",
         "received": "2·(L−1)·N/L + 2·(M−1)·N/G", "steps": "2·(L−1) + 2·(M−1)",
         "messages": "2·G·(L+M−2)"}


def closed_form(gpus: int, elements: int, nodes=None) -> ClosedForm:
    """2·(G−1)·N in all; per GPU 2·(L−1)·N/L inside its node plus 2·(M−1)·N/G across, exactly counted.

    Counted at a few GPUs (`_counts_at`), so any G answers at once; `tally` counts every GPU.
    """
    m, per = _shape(gpus, nodes)
    q, r, moved, cands, sent, received = _counts_at(gpus, elements, m, per)
    inside = Ring(per, m, 0)
    # Every segment lies in one inside block and in one across ring: the across rings' long
    # segments are r in all, and with q = 0 exactly the r long segments travel across.
    total = q * gpus * moved + m * inside.long_sent_total(r) + (2 * (m - 1) * r if m >= 2 else 0)
    messages = m * inside.messages(q, r) + (2 * (m - 1) * (gpus if q else r) if m >= 2 else 0)
    n = elements
    textbook = Fraction(2 * (per - 1) * n, per) + Fraction(2 * (m - 1) * n, gpus)
    # Every transfer carries data once each of the G segments holds an element.
    texts = TEXTS if q else {**TEXTS, "messages": EMPTY_SKIPPED}
    return from_counts(total, busiest(q, moved, sent, cands), busiest(q, moved, received, cands),
                       messages, texts, 2 * (per - 1) + 2 * (m - 1), {"sent": textbook, "received": textbook})


def tally(gpus: int, elements: int, nodes=None) -> Tally:
    """Every GPU's exact counts, ring by ring (O(G)): what `_counts_at` samples."""
    counts = Tally(gpus, gpus, elements)
    for orders, bases, width in _rings(gpus, nodes):
        counts.add_rings(orders, bases, width)
    return counts


def _counts_at(gpus: int, elements: int, m: int, per: int):
    """(q, r, segments every GPU moves, candidate GPUs, their long segments sent, received).

    GPU k = i·L + j (node i, local rank j) sits at position j of its node's ring (blocks of
    M segments from 0) and at position i of across-ring j (single segments from
    ((j+1) mod L)·M). Its counts change with j only near blocks 0 and r div M, and with i
    only near 0 and r mod M: the lowest busiest GPU is among those rows and columns.
    """
    q, r = divmod(elements, gpus)
    rows, cols = around([0, r % m], m), around([0, r // m, r // m + 1], per)
    cands = (rows[:, None] * per + cols[None, :]).ravel()
    i, j = cands // per, cands % per
    inside = Ring(per, m, 0)
    across = Ring(m, 1, ((j + 1) % per) * m)
    s_in, v_in = inside.longs(r, j)
    s_x, v_x = across.longs(r, i)
    moved = inside.segments_moved() + across.segments_moved()
    return q, r, moved, cands, s_in + s_x, v_in + v_x


def _phases(gpus: int, nodes):
    """(orders, bases, width, gather) of the four ring phases, in plan order."""
    (inside, base_in, width_in), (across, base_x, width_x) = _rings(gpus, nodes)
    return ((inside, base_in, width_in, False), (across, base_x, width_x, False),
            (across, base_x, width_x, True), (inside, base_in, width_in, True))


def _one_ring(gpus: int, model, m: int, per: int) -> bool:
    """Whether the four phases are one ring of all G GPUs that the ring all-reduce prices
    alike: M = 1 or L = 1, on a topology that has a link across its nodes where G needs one."""
    return (m == 1 or per == 1) and (one_level(model, gpus) or "across" in model.topology.levels)


def seconds(gpus: int, elements: int, model, nodes=None):
    """α-β-γ time of the four ring phases, no plan: on one level, or with the topology's own
    nodes (L = P), every step of a phase costs the same (`_sparse.flat_phase`, O(1)); across
    other nodes `_step_times.ring_phase` prices one ring per kind (`_sampled_phases`), O(P·(L + M)).

    On one level with G dividing N: 2(L−1)·(α + N/L·β) + (L−1)·N/L·γ inside, then
    2(M−1)·(α + N/G·β) + (M−1)·N/G·γ across. Otherwise which of its transfers cross the
    topology's nodes depends on how its M groups of L fall on them, so each phase is priced
    port by port.
    """
    from ._step_times import Clock, ring_phase
    m, per = _shape(gpus, nodes)
    if _one_ring(gpus, model, m, per):
        # One level of rings: a single ring of all G GPUs, the same schedule as the ring
        # all-reduce, and priced as the ring prices it (O(P), not G: G may be prime).
        from .ring import seconds as ring_seconds
        return ring_seconds(gpus, elements, model)
    clock = Clock()
    flat = one_level(model, gpus)
    # Nodes of L GPUs that are the topology's nodes: inside rings never leave a node and every
    # hop of an across ring crosses one, so each phase lies on one level as on a flat topology.
    if flat or model.topology.gpus_per_node == per:  # every step of a phase costs the same: O(1)
        q, r = divmod(elements, gpus)
        inside = [Ring(per, m, 0)]
        across = [Ring(m, 1, u * m) for u in sorted({0, min(r // m, per - 1), per - 1})]
        for rings, gather, count, crossing in ((inside, False, per - 1, False),
                                               (across, False, m - 1, True),
                                               (across, True, m - 1, True),
                                               (inside, True, per - 1, False)):
            step = flat_phase(model, rings, q, r, not gather, False, crossing and not flat)
            if step is not None:
                clock.add(*step, count=count)
        return clock.estimate("every GPU's ports")
    for orders, bases, width, gather in _sampled_phases(gpus, nodes, elements,
                                                        model.topology.gpus_per_node):
        clock.add(*ring_phase(model, orders, bases, width, gpus, elements, gather))
    return clock.estimate("every GPU's ports")


def _sampled_phases(gpus: int, nodes, elements: int, per_node: int):
    """`_phases` with only the rings that price differently: O(P·(L + M)) transfers, not G.

    Each GPU sits in one ring per phase, so a port queues one transfer and a ring's price
    depends only on its block sizes and on which of its hops cross the topology's nodes of
    P GPUs. Those hops repeat when a ring is moved by a multiple of P GPUs: inside ring i
    (GPUs i·L …) prices as ring i mod P, across ring j (GPUs j, L+j, …) as the first ring
    with j's residue mod P and j's block sizes. `ring_phase` over these rings gives the very
    figures it gives over all of them (tests/test_fast_forms.py holds it to the last bit).
    """
    m, per = _shape(gpus, nodes)
    inside = np.arange(min(m, per_node), dtype=np.int64)[:, None] * per + np.arange(per)
    j = np.arange(per, dtype=np.int64)
    shard = (j + 1) % per * m
    full = np.clip(elements % gpus - shard, 0, m)           # long blocks of across ring j
    kind = np.where(full == m, 2, np.where(full == 0, 0, 1))
    key = np.where(kind == 1, 3 * per_node + j, kind * per_node + j % per_node)
    keep = np.sort(np.unique(key, return_index=True)[1])
    across = np.arange(m, dtype=np.int64)[None, :] * per + j[keep, None]
    base_x = shard[keep]
    return ((inside, 0, m, False), (across, base_x, 1, False),
            (across, base_x, 1, True), (inside, 0, m, True))


SECONDS_PER_POSITION = 3e-7  # a sampled ring's GPU priced by ring_phase: 150-300 ns on one core


def seconds_cost(gpus: int, model, nodes=None) -> float:
    """About how long `seconds` takes: nothing where each phase lies on one level, else the
    GPUs of the rings `_sampled_phases` keeps, min(M, P) inside rings of L and at most
    2P + 1 across rings of M."""
    m, per = _shape(gpus, nodes)
    per_node = model.topology.gpus_per_node
    if _one_ring(gpus, model, m, per) or one_level(model, gpus) or per_node == per:
        return 0.0
    return (min(m, per_node) * per + (2 * per_node + 1) * m) * SECONDS_PER_POSITION


def busiest_gpu(gpus: int, elements: int, nodes=None) -> int:
    """The lowest GPU sending plus receiving the most, from the counts at a few GPUs (`_counts_at`)."""
    m, per = _shape(gpus, nodes)
    q, r, moved, cands, sent, received = _counts_at(gpus, elements, m, per)
    return busiest(q, 2 * moved, sent + received, cands)[1]


SPEC = AlgorithmSpec(
    NAME, "Hierarchical (2-D) ring",
    "ring reduce-scatter inside nodes, ring all-reduce across nodes, all-gather inside",
    Options, plan, closed_form, transfers, seconds, busiest_gpu, shape=Shape.RING,
    check=check_options, seconds_cost=seconds_cost)
