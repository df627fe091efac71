"""Single-GPU master (parameter server): everyone sends to the master, which sums and sends back."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.checks import check_count
from ..core.arguments import argument
from ..core.formula import ClosedForm, Formula
from ..core.naming import gpu_name
from ..core.plan import Plan, Step
from .spec import AlgorithmSpec, Implementation, Shape

NAME = "master"


@dataclass(frozen=True)
class Options:
    """master: the GPU that sums and broadcasts, 0-based here (users write it 1-based: --master K)."""

    master: int = 0


def check_options(gpus: int, master: int = 1) -> dict:
    """The 1-based master GPU users give (1 to G, GPU1 by default), made 0-based."""
    # named by its flag, as every algorithm's option is: '--master must be from 1 to 4, got 9'
    return {"master": check_count(master, argument("master"), minimum=1, maximum=gpus) - 1}


def written(master: int = 0) -> dict:
    """The 0-based master as users write it, 1-based."""
    return {"master": master + 1}


def label(master: int = 0) -> str:
    """The master GPU, as a title names it: 'GPU3'."""
    return gpu_name(master)


def hub(master: int = 0) -> int:
    """The master: every transfer goes into it or out of it."""
    return master


def plan(gpus: int, master: int = 0) -> Plan:
    """Every other GPU sends its whole gradient to `master` (0-based), which then sends the sum back."""
    others = np.array([g for g in range(gpus) if g != master], dtype=np.int64)
    last = gpus - 1
    steps = []
    if len(others):
        name = gpu_name(master)
        steps.append(Step.build(f"Reduce to {name}", 1, 1, "reduce", others, master, 0, last))
        steps.append(Step.build(f"Broadcast from {name}", 1, 1, "copy", master, others, 0, last))
    return Plan(NAME, gpus, tuple(steps), {"master": master})


def transfers(gpus: int, master: int = 0) -> int:
    """Transfers the plan holds: G−1 into the master, then G−1 out of it."""
    return 2 * (gpus - 1)


def closed_form(gpus: int, elements: int, master: int = 0) -> ClosedForm:
    """2·(G−1)·N in all; the master (0-based `master`) receives (G−1)·N and sends (G−1)·N.

    Every transfer carries a whole gradient, so these are exact for every G and N.
    """
    g, n = gpus, elements
    return ClosedForm(
        total=Formula("2·(G−1)·N", 2 * (g - 1) * n),
        busiest_sent=Formula("(G−1)·N", (g - 1) * n),
        busiest_received=Formula("(G−1)·N", (g - 1) * n),
        steps=Formula("2", 2 if g > 1 else 0),
        messages=Formula("2·(G−1)", 2 * (g - 1) if n else 0),
        busiest_sender=master if g > 2 and n else 0,
        busiest_receiver=master if g > 2 and n else 0,
    )


def seconds(gpus: int, elements: int, model, master: int = 0):
    """α-β-γ time: the master's in port queues G−1 reduces of N, its out port G−1 copies.

    Per level l with c_l senders (the master's node-mates inside, the rest across):
    max_l c_l·(α_l + Nβ_l + Nγ) to gather, then max_l c_l·(α_l + Nβ_l) to broadcast.
    """
    from math import fsum

    from ..cost.model import Estimate, dominant_level, sum_by_level
    topo = model.topology
    if gpus < 2:
        return Estimate(0.0, None)
    nbytes = elements * model.itemsize
    mates = topo.node_size(topo.node(master), gpus) - 1
    count = {"inside": mates, "across": gpus - 1 - mates}
    spent = []
    for reduce in (True, False):
        level_time = {key: c * model.transfer(key, nbytes, reduce) for key, c in count.items() if c}
        level = dominant_level(level_time)
        if level is not None:
            spent.append((level, level_time[level]))
    by_level = sum_by_level(spent)
    return Estimate(fsum(by_level.values()), dominant_level(by_level),
                    f"{gpu_name(master)}'s ports (the master)")


def busiest_gpu(gpus: int, elements: int, master: int = 0) -> int:
    """The master: it receives and sends (G−1)·N, every other GPU only N each way.

    With nothing to move, or G = 2 (both GPUs move N each way), the ledger's tie goes to GPU1.
    """
    return master if elements and gpus > 2 else 0


# The same schedule in MPI libraries (pmodels/mpich, open-mpi/ompi on GitHub).
MPI = (
    Implementation("Open MPI", "ompi/mca/coll/base/coll_base_allreduce.c",
                   "ompi_coll_base_allreduce_intra_basic_linear"),
)

SPEC = AlgorithmSpec(
    NAME, "Single-GPU master",
    "reduce onto one GPU, broadcast back: 2·(G−1)·N, all of it through the master",
    Options, plan, closed_form, transfers, seconds, busiest_gpu, shape=Shape.STAR,
    check=check_options, written=written, label=label, mpi_implementations=MPI,
    gpu_options=("master",), hub=hub,
    # Why a parameter server does not scale: its one GPU sends (G−1)·N, the ring's 2·(G−1)·N/G.
    contrast="ring")
