"""Naive all-to-all: every GPU sends its whole gradient to every other GPU, which adds it."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.formula import ClosedForm, Formula
from ..core.plan import Plan, Step
from .spec import AlgorithmSpec, Implementation, Shape

NAME = "naive"


@dataclass(frozen=True)
class Options:
    """No options."""


def plan(gpus: int) -> Plan:
    """One step in which each of the G·(G−1) ordered pairs sends a whole gradient."""
    src, dst = np.nonzero(~np.eye(gpus, dtype=bool))
    steps = []
    if len(src):
        steps.append(Step.build("All-to-all", 1, 1, "reduce", src, dst, 0, gpus - 1, handed_over=True))
    return Plan(NAME, gpus, tuple(steps))


def transfers(gpus: int) -> int:
    """Transfers the plan holds: one per ordered pair of GPUs."""
    return gpus * (gpus - 1)


def closed_form(gpus: int, elements: int) -> ClosedForm:
    """G·(G−1)·N in all; each GPU sends and receives (G−1)·N (whole gradients: exact)."""
    g, n = gpus, elements
    return ClosedForm(
        total=Formula("G·(G−1)·N", g * (g - 1) * n),
        busiest_sent=Formula("(G−1)·N", (g - 1) * n),
        busiest_received=Formula("(G−1)·N", (g - 1) * n),
        steps=Formula("1", 1 if g > 1 else 0),
        messages=Formula("G·(G−1)", g * (g - 1) if n else 0),
    )


def seconds(gpus: int, elements: int, model):
    """α-β-γ time of the one all-to-all step: each in port queues its G−1 reduces of N.

    A GPU receives from its node-mates inside and from every other GPU across, so the
    slowest port is inside a full node or across from the smallest (last) node.
    """
    from ..cost.model import Estimate, dominant_level
    topo = model.topology
    nbytes = elements * model.itemsize
    largest = topo.node_size(0, gpus)
    smallest = topo.node_size(topo.nodes(gpus) - 1, gpus)
    count = {"inside": largest - 1, "across": gpus - smallest}
    level_time = {key: c * model.transfer(key, nbytes, True) for key, c in count.items() if c}
    level = dominant_level(level_time)
    return Estimate(level_time[level] if level else 0.0, level, "every GPU's in port")


def busiest_gpu(gpus: int, elements: int) -> int:
    """GPU1: every GPU sends and receives (G−1)·N, and ties go to the lowest."""
    return 0


# The same schedule in MPI libraries (pmodels/mpich, open-mpi/ompi on GitHub).
MPI = (
    Implementation("Open MPI", "ompi/mca/coll/base/coll_base_allreduce.c",
                   "ompi_coll_base_allreduce_intra_allgather_reduce"),
)

SPEC = AlgorithmSpec(
    NAME, "Naive all-to-all",
    "every GPU sends its whole gradient to every other: G·(G−1)·N",
    Options, plan, closed_form, transfers, seconds, busiest_gpu, shape=Shape.ALL_TO_ALL, mpi_implementations=MPI)
