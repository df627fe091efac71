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

from ..core.formula import ClosedForm
from ..core.plan import Plan, Step
from ._counts import closed, formula
from ._fold import fold_step, real_ranks, split, unfold_step
from .spec import AlgorithmSpec, Implementation, Shape

NAME = "recursive-doubling"
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


def swap_levels(model, gpus: int, mask: int) -> tuple[bool, bool]:
    """(some swap stays inside a node, some swap crosses nodes) at distance `mask`, in O(P²)."""
    from ..cost.ports import crosses, node_period
    from ._step_times import pair_candidates
    p2, rem = split(gpus)
    per = node_period(model, gpus)  # None: one node, nothing crosses
    if per is None:
        return True, False
    if mask >= per:  # GPUs mask new ranks apart are at least mask real GPUs apart
        return False, True
    n = pair_candidates(p2, mask, rem, per)
    real = lambda k: np.where(k < rem, 2 * k + 1, k + rem)  # noqa: E731 (`_fold.real_ranks`)
    across = crosses(model, real(n), real(n ^ mask))
    return bool((~across).any()), bool(across.any())


def seconds(gpus: int, elements: int, model):
    """α-β-γ time: fold, lg p2 swaps of the whole vector (α + Nβ + Nγ each), hand back.

    On one level with G a power of two: lg G·(α + nβ + nγ) (Thakur, Rabenseifner & Gropp
    2005, §4.1, Table 1). Each port carries one transfer per step, all of N elements, so a
    step costs its slowest level's α + Nβ + Nγ; which levels a step uses repeats with period
    lcm(2^(s+1), P) along the ranks, so O(P²) ranks per step decide it (O(log G) steps).
    """
    from ..cost.ports import port_seconds
    from ._fold import fold_timing
    from ._step_times import Clock
    clock = Clock()
    if gpus < 2:
        return clock.estimate()
    fold_timing(model, gpus, elements, clock, True)
    p2, _ = split(gpus)
    _, arrive = port_seconds(model, [elements, elements], [False, True], True)
    mask = 1
    times = []  # (inside, across) per swap, −1 where no swap uses the level: one Clock entry
    while mask < p2:
        inside, across = swap_levels(model, gpus, mask)
        times.append((arrive[0] if inside else -1.0, arrive[1] if across else -1.0))
        mask *= 2
    clock.add_moving(*np.array(times).T)
    fold_timing(model, gpus, elements, clock, False)
    return clock.estimate("every GPU's ports")


def busiest_gpu(gpus: int, elements: int) -> int:
    """Every GPU sends and receives as much as it gets: new rank 0 (GPU2 with folded GPUs), else GPU1."""
    return closed_form(gpus, elements).busiest_sender


# The same schedule in MPI libraries (pmodels/mpich, open-mpi/ompi on GitHub).
MPI = (
    Implementation("MPICH", "src/mpi/coll/allreduce/allreduce_intra_recursive_doubling.c",
                   "MPIR_Allreduce_intra_recursive_doubling"),
    Implementation("Open MPI", "ompi/mca/coll/base/coll_base_allreduce.c",
                   "ompi_coll_base_allreduce_intra_recursivedoubling"),
)

SPEC = AlgorithmSpec(
    NAME, "Recursive doubling",
    "lg G swaps of whole gradients with GPU k XOR 2^s: few steps, N·lg G per GPU",
    Options, plan, closed_form, transfers, seconds, busiest_gpu, shape=Shape.PAIRS, mpi_implementations=MPI)
