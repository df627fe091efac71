"""The one rule every executor follows for what a reduce step adds, and in which order.

Floating-point addition commutes bit for bit except for NaN payloads: x86 returns the
first NaN operand, so "a+b" and "b+a" of two different NaNs differ in their bits. A GPU
that computes a sum must therefore add the same values in the same order as every other
GPU computing that sum, or the GPUs end with different bits. The rule:

1. One arrival, the receiver not sending the same segments back in this step (the ring,
   the trees, the fold): received value first, own value second — the walkthrough's "d₄+a₄".
   Such a sum is computed on one GPU only, and others receive copies of it.
2. One arrival in a swap (the receiver sends the same segments to the sender in the same
   step: recursive doubling, the naive flood of two GPUs): both GPUs add in GPU order,
   lower-numbered GPU's value first, so both compute the same bits.
3. Several arrivals (the master, the naive flood, a tree node hearing two children):
   GPU order, the receiver's own value in its place.

`arrival_order` states the rule; `reductions` applies it to a whole step, for the
symbolic and numeric executors alike.
"""

from __future__ import annotations

from collections import defaultdict

from .plan import COPY, Step

Buffer = tuple[int, int, int]  # (dst GPU, first segment, last segment)


def arrival_order(dst: int, sources: list[int], swap: bool = False) -> list[int]:
    """GPUs whose pre-step values make a reduced buffer, in the order they are added."""
    if len(sources) == 1 and not swap:
        return [sources[0], dst]
    return sorted([*sources, dst])


def reductions(step: Step) -> tuple[dict[Buffer, list[int]], dict[Buffer, int]]:
    """The step's reduced buffers with their addition order, and its copied buffers with their source."""
    sums: dict[Buffer, list[int]] = defaultdict(list)
    copies: dict[Buffer, int] = {}
    for s, d, f, l, o in zip(step.src.tolist(), step.dst.tolist(), step.first.tolist(),
                             step.last.tolist(), step.ops.tolist()):
        if o == COPY:
            copies[(d, f, l)] = s
        else:
            sums[(d, f, l)].append(s)
    orders = {}
    for (dst, first, last), sources in sums.items():
        swap = len(sources) == 1 and sums.get((sources[0], first, last)) == [dst]
        orders[(dst, first, last)] = arrival_order(dst, sources, swap)
    return orders, copies
