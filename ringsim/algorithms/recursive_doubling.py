"""Recursive doubling: lg G steps, each GPU swapping its whole vector with GPU k XOR 2^s and adding.

After step s every GPU holds the sum over its aligned group of 2^(s+1) GPUs; after lg G
steps, the sum over all. Latency-optimal (lg G messages per GPU) but every GPU moves
N·lg G each way (Thakur, Rabenseifner & Gropp, "Optimization of Collective Communication
Operations in MPICH", IJHPCA 2005; MPICH allreduce_intra_recursive_doubling.c). When G is
not a power of two the extra GPUs are folded in first and handed the sum last (`_fold`).
The gradient is one segment (S = 1).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..formula import ClosedForm
from ..plan import Plan, Step
from ._counts import closed, formula
from ._fold import fold_step, real_ranks, split, unfold_step

NAME = "recursive-doubling"
TITLE = "Recursive doubling"
SUMMARY = "lg G swaps of whole gradients with GPU k XOR 2^s: few steps, N·lg G per GPU"
PHASE = "Recursive doubling"


@dataclass(frozen=True)
class Options:
    """No options."""


def plan(gpus: int) -> Plan:
    """Fold, then lg p2 swaps of the whole vector (distance 1, 2, 4, …), then hand back."""
    p2, _ = split(gpus)
    lg = p2.bit_length() - 1
    real = real_ranks(gpus)
    new = np.arange(p2)
    steps = fold_step(gpus, 1)
    for s in range(lg):
        partner = new ^ (1 << s)
        steps.append(Step.build(PHASE, s + 1, lg, "reduce", real, real[partner], 0,
                                swap="whole gradients"))
    steps += unfold_step(gpus, 1)
    return Plan(NAME, gpus, tuple(steps), {}, segments=1)


def transfers(gpus: int) -> int:
    """2·rem for the fold and hand-back, p2 in each of lg p2 swaps."""
    p2, rem = split(gpus)
    return 2 * rem + p2 * (p2.bit_length() - 1)


def closed_form(gpus: int, elements: int) -> ClosedForm:
    """(2·rem + p2·lg p2)·N in all; the busiest GPU sends and receives (lg p2 + [rem>0])·N."""
    p2, rem = split(gpus)
    lg, n, extra = p2.bit_length() - 1, elements, int(rem > 0)
    busiest = (lg + extra) * n
    # New rank 0 is GPU2 when GPUs were folded in (it also takes the fold and gives the sum back).
    who = 1 if rem and n else 0
    per_gpu = "(lg p2 + 1)·N" if rem else "lg G·N"
    return closed(
        formula("(2·rem + p2·lg p2)·N" if rem else "G·lg G·N", (2 * rem + p2 * lg) * n),
        formula(per_gpu, busiest),
        formula(per_gpu, busiest),
        formula("lg p2 + 2" if rem else "lg G", lg + 2 * extra),
        formula("2·rem + p2·lg p2" if rem else "G·lg G", (2 * rem + p2 * lg) if n else 0),
        who, who,
    )
