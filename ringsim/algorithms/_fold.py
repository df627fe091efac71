"""MPICH's way with G that is not a power of two: fold the extra GPUs in first, hand the sum back last.

With p2 the largest power of two ≤ G and rem = G − p2, the first 2·rem ranks pair up:
each even rank sends its whole vector to the odd rank after it, which adds it, and sits
out; the odd ones (new ranks 0…rem−1) and the ranks from 2·rem on (new ranks rem…p2−1)
run the power-of-two algorithm; at the end each odd rank sends the result back.
(MPICH src/mpi/coll/allreduce/allreduce_intra_recursive_doubling.c and
allreduce_intra_reduce_scatter_allgather.c; Thakur, Rabenseifner & Gropp, IJHPCA 2005.)
"""

from __future__ import annotations

import re

import numpy as np

from ..core.formula import format_number, letter_pattern
from ..core.plan import Step
from ..cost.ports import crosses, node_period, port_seconds, slower_level

FOLD = "Fold in the extra GPUs"
UNFOLD = "Hand the sum back to the extra GPUs"
_NODE_LETTERS = letter_pattern("[LM]")  # M (nodes) or L (GPUs per node) in a formula


def split(gpus: int) -> tuple[int, int]:
    """(p2, rem): the largest power of two ≤ G, and how many GPUs are left over."""
    p2 = 1 << (gpus.bit_length() - 1)
    return p2, gpus - p2


def symbols(gpus: int, forms, options: dict | None = None) -> str | None:
    """What the closed forms `forms` (their texts) write beyond G and N, at G = `gpus`: p2 and
    rem, and M and L where `options` give the nodes; None where they write none of these."""
    forms = [str(form) for form in forms]
    said = []
    if any(re.search(r"\b(p2|rem)\b", form) for form in forms):
        p2, rem = split(gpus)
        said.append(f"p2 = {format_number(p2)}, the largest power of two ≤ G; rem = G − p2 = "
                    f"{format_number(rem)}, the GPUs folded into partners first")
    nodes = (options or {}).get("nodes")
    if isinstance(nodes, int) and nodes > 0 and any(_NODE_LETTERS.search(form) for form in forms):
        said.append(f"M = {format_number(nodes)} nodes; L = G/M = {format_number(gpus // nodes)} "
                    f"GPUs in each")
    return "; ".join(said) or None


def real_ranks(gpus: int) -> np.ndarray:
    """The GPU (0-based) playing each new rank 0…p2−1."""
    p2, rem = split(gpus)
    new = np.arange(p2, dtype=np.int64)
    return np.where(new < rem, 2 * new + 1, new + rem)


def fold_step(gpus: int, segments: int) -> list[Step]:
    """The fold: even ranks below 2·rem add their whole vector into the next rank."""
    _, rem = split(gpus)
    if not rem:
        return []
    even = np.arange(0, 2 * rem, 2)
    return [Step.build(FOLD, 1, 1, "reduce", even, even + 1, 0, segments - 1)]


def unfold_step(gpus: int, segments: int) -> list[Step]:
    """The hand-back: odd ranks below 2·rem copy the finished sum to the rank before them."""
    _, rem = split(gpus)
    if not rem:
        return []
    odd = np.arange(1, 2 * rem, 2)
    return [Step.build(UNFOLD, 1, 1, "copy", odd, odd - 1, 0, segments - 1, route=("", "back"))]


def fold_timing(model, gpus: int, elements: int, clock, reduce: bool) -> None:
    """Price the fold (reduce) or the hand-back (copy): rem pairs 2i ↔ 2i+1, whole vectors.

    Whether pair i crosses nodes repeats with period P in i, so P pairs show every case.
    """
    _, rem = split(gpus)
    if not rem:
        return
    per = node_period(model, gpus)  # None: one node, every pair alike
    i = np.arange(min(rem, per or 1), dtype=np.int64)
    across = crosses(model, 2 * i, 2 * i + 1)
    wire, arrive = port_seconds(model, np.full(len(i), elements), across, reduce)
    top = np.maximum(wire, arrive)
    inside = top[~across].max() if (~across).any() else -np.inf
    over = top[across].max() if across.any() else -np.inf
    seconds, level = slower_level(inside, over)
    clock.add(seconds, level)
