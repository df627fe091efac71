"""Ring all-reduce: reduce-scatter for G−1 iterations, then all-gather for G−1, in the walkthrough's order."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ..core.formula import ClosedForm, Formula
from ..core.plan import Plan, Step
from . import _multiring, _ring_orders, _sparse
from .spec import AlgorithmSpec, Implementation, Shape

NAME = "ring"


@dataclass(frozen=True)
class Options:
    """channels: K rings side by side, each on 1/K of the data (S = K·G), as NCCL's channels;
    ring_order: each ring's GPU order, 1-based ('1,3,2,4;1,2,3,4'), one for all or one per ring."""

    channels: int = 1
    ring_order: tuple[tuple[int, ...], ...] | None = None


def check_options(gpus: int, channels: int = 1, ring_order=None) -> dict:
    """The options made canonical (ring orders as tuples), or a RingsimError in one line."""
    orders = _ring_orders.parse_orders(ring_order, gpus)
    if orders is not None and channels == 1 and len(orders) > 1:
        channels = len(orders)  # one order per ring: as many rings as orders
    return {"channels": _ring_orders.check_channels(channels, gpus, orders), "ring_order": orders}


def lanes(channels: int = 1, ring_order=None) -> int:
    """One ring per channel, side by side on its own block of segments."""
    return channels


def nccl_layout(gpus: int, topology, channels=None, ring_order=None) -> dict | None:
    """One ring per NIC (ring order rails:P), as NCCL lays out its channels on nodes of P
    GPUs: where G fills two or more such nodes, P > 1, and neither channels nor a ring order
    was given; None elsewhere (one node, or one GPU per node: the default ring is NCCL's)."""
    per_node = topology.gpus_per_node
    if channels is not None or ring_order is not None:
        return None
    if not per_node or per_node == 1 or gpus % per_node or gpus // per_node < 2:
        return None
    return {"ring_order": f"rails:{per_node}"}


def _several(gpus: int, channels: int, ring_order) -> bool:
    return channels != 1 or ring_order is not None


def _rings(gpus: int, channels: int, ring_order):
    """K rings in GPU order as directions (counted at any G), or the given orders as an array."""
    if ring_order is None:
        return (1,) * channels
    return _ring_orders.order_array(ring_order, channels, gpus)


def plan(gpus: int, channels: int = 1, ring_order=None) -> Plan:
    """The walkthrough's ring: in iteration s GPU k sends segment ((k−s) mod G)+1 to GPU (k mod G)+1.

    With channels=K (or ring orders) K such rings run side by side, ring c on segments
    c·G+1 … c·G+G, each visiting the GPUs in its own order.
    """
    if _several(gpus, channels, ring_order):
        orders = _ring_orders.order_array(ring_order, channels, gpus)
        return _multiring.build(NAME, gpus, orders, {"channels": channels, "ring_order": ring_order})
    k = np.arange(gpus, dtype=np.int64)
    nxt = (k + 1) % gpus
    rounds = gpus - 1
    steps = []
    # 0-based form of the walkthrough's rule: in step s GPU k sends segment ((k+1) − s) mod G in
    # reduce-scatter, and forwards the complete segment it received last, (k+2) − s, in
    # all-gather. All steps' segments in one array; every step shares the read-only src and
    # dst columns (handed over, not copied).
    s = np.arange(1, gpus, dtype=np.int64)[:, None]
    for phase, op, shift in (("Reduce-scatter", "reduce", 1), ("All-gather", "copy", 2)):
        first = (k + shift - s) % gpus
        for i in range(rounds):
            steps.append(Step.build(phase, i + 1, rounds, op, k, nxt, first[i], handed_over=True))
    return Plan(NAME, gpus, tuple(steps))


def transfers(gpus: int, channels: int = 1, ring_order=None) -> int:
    """Transfers the plan holds: K·G in each of the 2·(G−1) steps."""
    return _multiring.transfers(gpus, channels)


def closed_form(gpus: int, elements: int, channels: int = 1, ring_order=None) -> ClosedForm:
    """2·(G−1)·N in all; 2·(G−1)·N/G sent and received per GPU when G divides N, exactly.

    The bound is Patarasuk & Yuan's ("Bandwidth optimal all-reduce algorithms for clusters
    of workstations", JPDC 2009). With N = q·G + r the first r segments hold q+1 elements.
    From the plan's rule GPU k sends every segment but (k+1) mod G in reduce-scatter and
    every segment but (k+2) mod G in all-gather: 2N minus two neighbouring segments. The
    smallest neighbouring pair holds 2q elements, or 2q+1 when r = G−1 (only one small
    segment, whose neighbours are large); GPU k receives what GPU k−1 sends.
    """
    if _several(gpus, channels, ring_order):
        return _multiring.closed_form(gpus, elements, _rings(gpus, channels, ring_order))
    g, n = gpus, elements
    q, r = divmod(n, g)
    if g == 1:
        sent, exact, sender, receiver = 0, "0", 0, 0
    elif r == g - 1:
        sent, exact = 2 * (n - q) - 1, "2·(N − ⌊N/G⌋) − 1"
        sender, receiver = min((g - 3) % g, g - 2), g - 2
    else:
        sent, exact = 2 * (n - q), "2·(N − ⌊N/G⌋)"
        sender, receiver = (r - 1, r) if r else (0, 0)
    textbook = Fraction(2 * (g - 1) * n, g)
    return ClosedForm(
        total=Formula("2·(G−1)·N", 2 * (g - 1) * n),
        busiest_sent=Formula("2·(G−1)·N/G", sent, textbook, exact),
        busiest_received=Formula("2·(G−1)·N/G", sent, textbook, exact),
        steps=Formula("2·(G−1)", 2 * (g - 1)),
        messages=Formula("2·(G−1)·min(N,G)", 2 * (g - 1) * min(n, g)),
        busiest_sender=sender,
        busiest_receiver=receiver,
    )


def phase_seconds(gpus: int, elements: int, model, gather: bool, channels: int = 1,
                  ring_order=None):
    """One phase of the all-reduce on K rings side by side (the all-gather with `gather`, else
    the reduce-scatter): with both phases, `seconds`; None for the single ring in GPU order,
    which ringsim.algorithms.collectives prices on its own."""
    if not _several(gpus, channels, ring_order):
        return None
    opts = check_options(gpus, channels, ring_order)
    return _multiring.seconds(gpus, elements, model, _rings(gpus, **opts), gathers=(gather,))


def seconds(gpus: int, elements: int, model, channels: int = 1, ring_order=None):
    """α-β-γ time: 2·(G−1) steps, each as long as its slowest transfer to the next GPU.

    On one level with G dividing N this is the textbook 2(G−1)α + 2(G−1)/G·Nβ + (G−1)/G·Nγ
    (Thakur, Rabenseifner & Gropp 2005, §4.1). Exactly, for any N: in each step every GPU
    sends one segment; a level's time is α + b·β (+ b·γ in reduce-scatter) for the largest
    segment b that some GPU sends on it, counted over all steps at once from O(P) of them
    (`_cases`; O(1) on one level, where every step sends the largest segment). With channels or ring orders the K
    rings queue on shared ports: `_multiring.seconds`.
    """
    from ..cost.model import Estimate, dominant_level
    if _several(gpus, channels, ring_order):
        opts = check_options(gpus, channels, ring_order)
        return _multiring.seconds(gpus, elements, model, _rings(gpus, **opts))
    topo = model.topology
    if gpus < 2:
        return Estimate(0.0, None)
    q, r = divmod(elements, gpus)
    sizes = (q * model.itemsize, (q + 1) * model.itemsize)
    per_node = topo.gpus_per_node
    spent = {"inside": 0.0, "across": 0.0}
    if per_node is None or gpus <= per_node:  # one level: every step sends the largest segment
        for reduce in (True, False):
            inside = model.transfer("inside", sizes[r > 0], reduce)
            if inside > 0:
                spent["inside"] += (gpus - 1) * inside
        return Estimate(spent["inside"] + spent["across"], dominant_level(spent), "every GPU's ports")
    for reduce, first in ((True, 0), (False, gpus - 1)):
        for (big_in, big_across, has_in, has_across), steps in _cases(gpus, per_node, r, first).items():
            if not steps:
                continue
            inside = model.transfer("inside", sizes[big_in], reduce) if has_in else 0.0
            across = model.transfer("across", sizes[big_across], reduce) if has_across else 0.0
            if across >= inside and across > 0:  # across holds the bottleneck on ties
                spent["across"] += steps * across
            elif inside > 0:
                spent["inside"] += steps * inside
    return Estimate(spent["inside"] + spent["across"], dominant_level(spent), "every GPU's ports")


def _cases(gpus: int, per_node: int, r: int, first: int) -> dict:
    """How many steps of a phase send a big segment on each level, G > P GPUs in nodes of P:
    {(big inside, big across, inside used, across used): steps}, in a fixed order.

    GPU k sends across nodes when k is the last of its node or k = G−1. Step d (d = s−1 in
    reduce-scatter, `first` = 0; s−2 mod G in all-gather, `first` = G−1) sends the big
    segments 0..r−1 from GPUs d..d+r−1 (mod G). Away from the seam a step's case depends on
    d mod P alone, so a few steps are looked at and counted, not all G: O(P).
    """
    inside = per_node > 1  # with one GPU per node every GPU sends across
    if r == 0 or not inside:
        big = {(False, r > 0): gpus - 1}
    elif r >= max(per_node, 3):
        # Runs of GPUs sending inside are at most P−1 long, of GPUs sending across at most 2.
        big = {(True, True): gpus - 1}
    else:
        seam = gpus - r  # steps from here on reach GPU G−1 or wrap round
        residues = np.arange(min(per_node, seam), dtype=np.int64)
        ends = np.arange(seam, gpus, dtype=np.int64)
        # The step left out: G−1 in reduce-scatter, G−2 in all-gather (d runs G−1, 0, …, G−3).
        skipped = np.array([gpus - 1 if first == 0 else gpus - 2], np.int64)
        big = {}
        for steps, weights in ((residues, (seam - 1 - residues) // per_node + 1),
                               (ends, np.ones(len(ends), np.int64)),
                               (skipped, -np.ones(1, np.int64))):
            k = (steps[:, None] + np.arange(r)) % gpus
            across = (k % per_node == per_node - 1) | (k == gpus - 1)
            for key, weight in zip(zip((~across).any(axis=1).tolist(), across.any(axis=1).tolist()),
                                   weights.tolist()):
                big[key] = big.get(key, 0) + weight
    cases = {}
    for big_in in (False, True):
        for big_across in (False, True):
            if big_in and not inside:
                continue
            cases[big_in, big_across, inside, True] = big.get((big_in, big_across), 0)
    return cases


def busiest_gpu(gpus: int, elements: int, channels: int = 1, ring_order=None) -> int:
    """The lowest 0-based GPU sending plus receiving the most, as the ledger picks it.

    GPU k sends every segment but k+1 (reduce-scatter) and k+2 (all-gather), and receives
    every segment but k and k+1: it moves 4N − |k| − 2|k+1| − |k+2| (indices mod G), so the
    busiest GPU is the first k whose segments k, k+1, k+1, k+2 hold the fewest big ones.
    K rings: counted per GPU (`_multiring.busiest_gpu`).
    """
    if _several(gpus, channels, ring_order):
        opts = check_options(gpus, channels, ring_order)
        return _multiring.busiest_gpu(gpus, elements, _rings(gpus, **opts))
    if gpus < 3:
        return 0
    r = elements % gpus
    # The count changes only where segment k, k+1 or k+2 crosses r or wraps round: the first
    # fewest lies within a few GPUs of 0 or r, so those few GPUs decide (O(1), not O(G)).
    k = _sparse.around([0, r], gpus)
    big = lambda shift: ((k + shift) % gpus < r).astype(np.int64)  # noqa: E731
    return int(k[np.argmin(big(0) + 2 * big(1) + big(2))])


# The same schedule in MPI libraries (pmodels/mpich, open-mpi/ompi on GitHub).
MPI = (
    Implementation("MPICH", "src/mpi/coll/allreduce/allreduce_intra_ring.c",
                   "MPIR_Allreduce_intra_ring"),
    Implementation("Open MPI", "ompi/mca/coll/base/coll_base_allreduce.c",
                   "ompi_coll_base_allreduce_intra_ring"),
)

SPEC = AlgorithmSpec(
    NAME, "Ring all-reduce",
    "reduce-scatter then all-gather around a ring: 2·(G−1)·N in all, 2·(G−1)·N/G per GPU",
    Options, plan, closed_form, transfers, seconds, busiest_gpu, shape=Shape.RING,
    check=check_options, lanes=lanes, nccl_name="Ring", mpi_implementations=MPI,
    nccl_layout=nccl_layout)
