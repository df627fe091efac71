"""Rabenseifner's all-reduce: recursive-halving reduce-scatter, then recursive-doubling all-gather.

The vector is cut into p2 segments (p2 the largest power of two ≤ G). In halving step s
(distance 2^s) GPU k and GPU k XOR 2^s swap halves of the range they still work on: the
lower GPU keeps the lower half and sends the upper, adding what it gets. After lg p2
steps each GPU holds one complete segment; the doubling steps retrace the pairs in
reverse, copying. Each GPU sends and receives about 2·N·(p2−1)/p2 — the ring's volume in
2·lg p2 steps (Thakur, Rabenseifner & Gropp, "Optimization of Collective Communication
Operations in MPICH", IJHPCA 2005; MPICH allreduce_intra_reduce_scatter_allgather.c,
whose counts split N as Layout does: the first N mod p2 segments one longer). G not a
power of two: the extra GPUs are folded in first and handed the sum last (`_fold`).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ..core.formula import ClosedForm
from ..core.layout import Layout
from ..core.plan import Plan, Step
from ._counts import EMPTY_SKIPPED, closed, formula
from ._fold import fold_step, real_ranks, split, unfold_step
from .spec import AlgorithmSpec, Implementation, Shape

NAME = "halving-doubling"


@dataclass(frozen=True)
class Options:
    """No options."""


def _halving(p2: int) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Per halving step (distance 1, 2, …): each new rank's partner and the (first, last) it sends.

    MPICH's indices: a new rank below its partner sends [send_idx, last_idx) — the upper
    half of its range — and keeps the lower; the other sends the lower half.
    """
    new = np.arange(p2)
    lo, size = np.zeros(p2, dtype=np.int64), p2
    out = []
    mask = 1
    while mask < p2:
        half = size // 2
        partner = new ^ mask
        lower = new < partner
        send_first = np.where(lower, lo + half, lo)
        out.append((partner, send_first, send_first + half - 1))
        lo = np.where(lower, lo, lo + half)
        size, mask = half, mask * 2
    return out


def plan(gpus: int) -> Plan:
    """Fold, recursive halving (reduce), recursive doubling (copy), hand back; S = p2 segments."""
    p2, _ = split(gpus)
    real = real_ranks(gpus)
    halving = _halving(p2)
    lg = len(halving)
    steps = fold_step(gpus, p2)
    for s, (partner, first, last) in enumerate(halving, 1):
        steps.append(Step.build("Recursive halving", s, lg, "reduce", real, real[partner], first, last,
                                swap="halves"))
    # Doubling retraces the halving pairs in reverse: each GPU sends the whole range it
    # has finished, which is exactly the part its partner gave away at that distance.
    for s, (partner, first, last) in enumerate(reversed(halving), 1):
        steps.append(Step.build("Recursive doubling", s, lg, "copy", real[partner], real,
                                first, last, swap="halves"))
    steps += unfold_step(gpus, p2)
    return Plan(NAME, gpus, tuple(steps), {}, segments=p2)


def transfers(gpus: int) -> int:
    """2·rem for the fold and hand-back, p2 in each of 2·lg p2 steps."""
    p2, rem = split(gpus)
    return 2 * rem + 2 * p2 * (p2.bit_length() - 1)


def closed_form(gpus: int, elements: int) -> ClosedForm:
    """2·(p2−1+rem)·N in all; the busiest GPU (new rank 0) sends and receives N + Σ its kept ranges.

    New rank r sends, while halving, everything but its final segment b (N − |b|) and,
    while doubling, the nested ranges it kept (|b| + the ranges of 2, 4, … p2/2 segments
    around b): N + Σ_{j=1}^{lg p2 − 1} |aligned range of 2^j segments around b|, which is
    2·(p2−1)·N/p2 when p2 divides N. Longer segments come first, so new rank 0 (ranges
    [0, 2^j)) moves the most. With extra GPUs (G not a power of two) new rank 0 also
    receives its partner's whole vector in the fold (N) and sends the sum back (N): one N
    each way, so it sends and receives 2·(p2−1)·N/p2 + N (MPICH's non-power-of-two
    all-reduce; Thakur, Rabenseifner & Gropp, IJHPCA 2005, §4).
    """
    p2, rem = split(gpus)
    lg, n = p2.bit_length() - 1, elements
    layout = Layout(p2, n)
    if gpus == 1:
        busiest = 0
    else:
        busiest = n + sum(layout.span(0, (1 << j) - 1) for j in range(1, lg)) + (n if rem else 0)
    q = n // p2
    messages = 2 * rem * (n > 0)
    mask = 1
    while mask < p2:
        h = p2 // (2 * mask)
        blocks = 2 * mask if q else min(2 * mask, -(-n // h))
        messages += 2 * h * blocks  # halving and doubling move the same ranges
        mask *= 2
    who = (1 if rem else 0) if n else 0
    textbook = Fraction(2 * (p2 - 1) * n, p2) + (n if rem else 0) if gpus > 1 else None
    text = "2·(p2−1)·N/p2 + N" if rem else "2·(G−1)·N/G"
    exact = "N + Σ of its kept ranges" + (" + N" if rem else "")
    return closed(
        formula("2·(p2−1+rem)·N" if rem else "2·(G−1)·N", 2 * (p2 - 1 + rem) * n),
        formula(text, busiest, textbook, exact),
        formula(text, busiest, textbook, exact),
        formula("2·lg p2 + 2" if rem else "2·lg G", 2 * lg + (2 if rem else 0)),
        formula(_messages_text(rem) if n >= p2 else EMPTY_SKIPPED, messages),
        who, who,
    )


def _messages_text(rem: int) -> str:
    """Every pair swaps one range each way per step once each of the p2 segments holds data."""
    return "2·rem + 2·p2·lg p2" if rem else "2·G·lg G"


def _block(n: np.ndarray, mask: int) -> np.ndarray:
    """The block (of p2/(2·mask) segments) new rank n sends in the halving step at `mask`.

    Before that step rank n's range starts at Σ p2/(2b) over the bits b < mask set in n,
    i.e. at block Σ mask/b; a lower rank (bit `mask` clear) sends the upper half.
    """
    block = np.where(n & mask, 0, 1).astype(np.int64)
    b = 1
    while b < mask:
        block += np.where(n & b, mask // b, 0)
        b *= 2
    return block


def _step_elements(model, gpus: int, elements: int, mask: int) -> tuple[int, int]:
    """The most elements a swap at `mask` carries inside a node and across (−1: no such swap)."""
    from ..cost.ports import crosses, node_period
    from ._step_times import pair_candidates
    p2, rem = split(gpus)
    q, r = divmod(elements, p2)
    h = p2 // (2 * mask)
    size = lambda j: q * h + int(np.clip(r - j * h, 0, h))  # noqa: E731 (block j's elements)
    per = node_period(model, gpus)  # None: one node, nothing crosses
    if per is None:
        return size(0), -1  # block 0, the largest, is always sent (by new rank `mask`)
    if mask >= per:
        return -1, size(0)
    n = pair_candidates(p2, mask, rem, per)
    real = lambda k: np.where(k < rem, 2 * k + 1, k + rem)  # noqa: E731 (`_fold.real_ranks`)
    across = crosses(model, real(n), real(n ^ mask))
    block = _block(n, mask)
    inside = size(int(block[~across].min())) if (~across).any() else -1
    over = size(int(block[across].min())) if across.any() else -1
    return inside, over


def seconds(gpus: int, elements: int, model):
    """α-β-γ time: fold, lg p2 halving steps (reduce), lg p2 doubling steps (copy), hand back.

    On one level with G a power of two dividing N: 2·lg G·α + 2(G−1)/G·nβ + (G−1)/G·nγ
    (Thakur, Rabenseifner & Gropp 2005, §4.1, Table 1). The step at distance 2^s swaps
    blocks of p2/2^(s+1) segments; block j is sent by ranks n ≡ f(j) mod 2^(s+1), so each
    level's largest block shows among O(P²) ranks (one period of lcm(2^(s+1), P)).
    The doubling step at a distance carries the same blocks back, as copies.
    """
    from ..cost.ports import ACROSS, INSIDE, port_seconds
    from ._fold import fold_timing
    from ._step_times import Clock
    clock = Clock()
    if gpus < 2:
        return clock.estimate()
    fold_timing(model, gpus, elements, clock, True)
    p2, _ = split(gpus)
    masks = []
    mask = 1
    while mask < p2:
        masks.append((mask, _step_elements(model, gpus, elements, mask)))
        mask *= 2
    if masks:
        sizes = np.array([pair for _, pair in masks], dtype=np.float64)   # (steps, level)
        used = sizes >= 0
        for reduce, rows in ((True, slice(None)), (False, slice(None, None, -1))):
            # All steps of the phase priced at once (one port_seconds() call, not one per step).
            _, arrive = port_seconds(model, np.maximum(sizes[rows], 0), np.array([[False, True]]), reduce)
            times = np.where(used[rows], arrive, -1.0)
            clock.add_moving(times[:, INSIDE], times[:, ACROSS])
    fold_timing(model, gpus, elements, clock, False)
    return clock.estimate("every GPU's ports")


def busiest_gpu(gpus: int, elements: int) -> int:
    """Each GPU sends and receives the same ranges overall: the busiest sender (new rank 0)."""
    return closed_form(gpus, elements).busiest_sender


# The same schedule in MPI libraries (pmodels/mpich, open-mpi/ompi on GitHub).
MPI = (
    Implementation("MPICH", "src/mpi/coll/allreduce/allreduce_intra_reduce_scatter_allgather.c",
                   "MPIR_Allreduce_intra_reduce_scatter_allgather"),
    Implementation("Open MPI", "ompi/mca/coll/base/coll_base_allreduce.c",
                   "ompi_coll_base_allreduce_intra_redscat_allgather"),
)

SPEC = AlgorithmSpec(
    NAME, "Halving-doubling (Rabenseifner)",
    "recursive-halving reduce-scatter, recursive-doubling all-gather: ring volume in 2·lg G steps",
    Options, plan, closed_form, transfers, seconds, busiest_gpu, shape=Shape.PAIRS, mpi_implementations=MPI)
