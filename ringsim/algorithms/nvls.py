"""NVLS (NVLink SHARP): the NVSwitch adds what the GPUs push into it and multicasts the sum back.

On an NVSwitch system (H100, H200, B200) NCCL's NVLS all-reduce lets the switch do the
adding: each GPU's share goes into the switch, which reduces it in its own ALUs
(`multimem.ld_reduce`, a load that returns the sum of every GPU's copy), and the sum is
written to every GPU at once by one multicast store (`multimem.st`): NVIDIA/nccl
src/device/all_reduce.h, RunWorkColl<ncclFuncAllReduce, …, NCCL_ALGO_NVLS, …> (warps that
scatter to the switch, reduce and broadcast through NVLS, gather), src/device/reduce_kernel.h
(multimem.ld_reduce), src/transport/nvls.cc (the multicast buffers). Here the switch is a
participant of the plan (core/plan.py's `switches`): GPU G+1 in the columns, with a buffer
of its own that starts empty. The gradient is cut into C chunks (S = C); in step k every
GPU pushes chunk k into the switch while the switch multicasts chunk k−1 back, so a GPU's
link carries N out and N in, once each way, whatever G is: 2·G·N over all links, C + 1
steps. That is why NVLS's bus bandwidth (nccl-tests' algbw·2(G−1)/G) can exceed the link
rate: the ring makes every GPU send 2(G−1)/G·N and add on the way, NVLS sends N and lets
the switch add. The switch's sum is the one every GPU receives, so all GPUs end bitwise
identical. On a topology of several nodes the reducing switch is the network's
(InfiniBand SHARP): its links are then priced on the across level (cost/ports.py).
compare and sweep time it only where the topology says that switch adds
(`in_network_reduction` on that level); an ordinary switch only forwards.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.formula import ClosedForm
from ..core.plan import Plan, Step
from ..core.units import itemsize
from ..cost.nccl_tuner import nvls_adds
from ..cost.ports import ACROSS, INSIDE, port_seconds
from . import _trees
from ._counts import closed, formula
from ._step_times import Clock
from .spec import AlgorithmSpec, Shape

NAME = "nvls"
ROUTE = ("", "by multicast")


@dataclass(frozen=True)
class Options:
    """chunks: C pieces the gradient is cut into, so that pushing and multicasting overlap (S = C)."""

    chunks: int = 1


def check_options(gpus: int, chunks: int = 1) -> dict:
    """chunks is a whole number from 1 to 1,024."""
    return {"chunks": _trees.check_chunks(chunks)}


def _phase(k: int, chunks: int) -> tuple[str, int, int]:
    """(phase, iteration, iterations) of step k (0-based) of C + 1."""
    if k == 0:
        return "Reduce in the switch", 1, 1
    if k == chunks:
        return "Multicast", 1, 1
    return "Reduce and multicast", k, chunks - 1


def plan(gpus: int, chunks: int = 1) -> Plan:
    """Step k: every GPU pushes chunk k into the switch (reduce); the switch multicasts chunk k−1 (copy)."""
    switch = gpus  # the one switch: the participant after the GPUs
    steps = []
    everyone = np.arange(gpus, dtype=np.int64)
    for k in range(chunks + 1 if gpus > 1 else 0):
        src, dst, seg, ops = [], [], [], []
        if k < chunks:  # up: every GPU's chunk k into the switch
            src.append(everyone), dst.append(np.full(gpus, switch)), seg.append(np.full(gpus, k))
            ops.append(np.zeros(gpus, np.int8))
        if k > 0:       # down: the sum of chunk k−1 to every GPU
            src.append(np.full(gpus, switch)), dst.append(everyone), seg.append(np.full(gpus, k - 1))
            ops.append(np.ones(gpus, np.int8))
        phase, iteration, iterations = _phase(k, chunks)
        steps.append(Step.build(phase, iteration, iterations, np.concatenate(ops), np.concatenate(src),
                                np.concatenate(dst), np.concatenate(seg), route=ROUTE, handed_over=True))
    return Plan(NAME, gpus, tuple(steps), {"chunks": chunks}, segments=chunks, switches=1)


def transfers(gpus: int, chunks: int = 1) -> int:
    """Every GPU pushes each chunk once and receives it once: 2·G·C (none for one GPU)."""
    return 2 * gpus * chunks if gpus > 1 else 0


def closed_form(gpus: int, elements: int, chunks: int = 1) -> ClosedForm:
    """2·G·N over all links; every GPU sends N and receives N (the switch: G·N each way); C + 1 steps."""
    one = gpus == 1
    q, r = divmod(elements, chunks)
    nonempty = chunks if q else r
    moved = 0 if one else elements
    return closed(
        formula("0" if one else "2·G·N",
                0 if one else 2 * gpus * elements),
        formula("0" if one else "N", moved), formula("0" if one else "N", moved),
        formula("0" if one else "C + 1", 0 if one else chunks + 1),
        formula("0" if one else "2·G·min(N, C)", 0 if one else 2 * gpus * nonempty),
        0, 0)


def seconds(gpus: int, elements: int, model, chunks: int = 1):
    """α-β time of the C + 1 steps, no plan: step k costs the larger of a GPU's push of chunk k
    (its out port) and its receipt of chunk k−1 (its in port); the switch adds, so no γ.

    With C chunks of N/C: (C + 1)·(α + N/C·β), against the ring's 2(G−1)·(α + N/G·β) + (G−1)·N/G·γ.
    """
    chunks = _trees.check_chunks(chunks)
    clock = Clock()
    if gpus < 2:
        return clock.estimate()
    across = switch_level(model.topology, gpus) == "across"
    q, r = divmod(elements, chunks)
    size = q + (np.arange(chunks) < r)
    wire, _ = port_seconds(model, size, across, False)
    up = np.concatenate([wire, [0.0]])      # step k pushes chunk k …
    down = np.concatenate([[0.0], wire])    # … and multicasts chunk k−1
    busy = np.maximum(up, down)
    level = np.where(busy > 0, ACROSS if across else INSIDE, -1)
    clock.add(busy, level)
    return clock.estimate("every GPU's link to the switch")


def switch_level(topology, gpus: int) -> str:
    """The level the switch's links are on: inside a node when the G GPUs share one, else across."""
    per = topology.gpus_per_node
    return "inside" if per is None or gpus <= per else "across"


def unavailable(topology, gpus: int, dtype: str | None = None) -> str:
    """'' when the topology says its switch adds (a level's `in_network_reduction`) and adds
    elements of `dtype` (None: any), else why not.

    An ordinary switch only forwards: NVLS needs NVLink SHARP in the NVSwitch (H100 and
    later) or SHARP in the network's switches, which a topology states per level. NVLink
    SHARP adds no 8-bit type (NCCL's ncclNvlsSupported), so NCCL runs no NVLS for them."""
    key = switch_level(topology, gpus)
    level = topology.levels.get(key)
    if level is not None and getattr(level, "in_network_reduction", False):
        if not nvls_adds(dtype):
            if itemsize(dtype) == 1:
                return f"the switch adds no 8-bit type, and these elements are {dtype}"
            return f"the switch does not add {dtype} elements"
        return ""
    name = level.name if level is not None else key
    return (f"its links ({name}) end in a switch that forwards but does not add (the "
            f"topology sets no in_network_reduction on them)")


def busiest_gpu(gpus: int, elements: int, chunks: int = 1) -> int:
    """Every GPU sends N and receives N: GPU1, the lowest."""
    return 0


SPEC = AlgorithmSpec(
    NAME, "NVLS (NVLink SHARP)",
    "the NVSwitch adds what every GPU pushes and multicasts the sum back: N out and N in per GPU, C + 1 steps",
    Options, plan, closed_form, transfers, seconds, busiest_gpu, shape=Shape.SWITCH,
    check=check_options, nccl_name="NVLS", unavailable=unavailable)
