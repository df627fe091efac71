"""Ports: each GPU's full-duplex port per level, what a transfer costs on it, and the step's queue.

Each GPU has one port per level (inside a node, across nodes), and each port has two sides:
out (sending) and in (receiving). A transfer of b bytes on a level costs α + b·β of that
level on the sender's out port and on the receiver's in port; a reduce also costs b·γ on
the receiver's in port (the receiver adds what arrives through that port). Transfers that
share a port in one step queue on it one after another, each paying its own α; a transfer
of 0 bytes is not sent and costs nothing. A step lasts as long as its busiest port: that
port is the step's bottleneck (ties: across before inside, in before out, then the lowest
GPU). The lockstep price (model.py), the algorithms' closed-form times and the timeline's
events all use these columns and keys.

The model of Thakur, Rabenseifner & Gropp, "Optimization of Collective Communication
Operations in MPICH" (IJHPCA 19(1), 2005), §2, with NCCL's two levels of links
(NVIDIA/nccl src/graph/tuning.cc prices intra-node and network steps apart).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.naming import gpu_name
from .topology_model import LEVEL_WORDS, LEVELS

INSIDE, ACROSS = 0, 1  # level codes: indices into LEVELS
OUT, IN = 0, 1         # the two sides of a port
PORTS_PER_GPU = 4      # (inside, across) × (out, in)


@dataclass(frozen=True)
class Port:
    """One port: a 0-based GPU, a level (inside / across) and a direction (out / in)."""

    gpu: int
    level: str
    direction: str

    @classmethod
    def of_key(cls, key: int) -> "Port":
        """The port a `port_keys` number names."""
        return cls(int(key // 4), LEVELS[int((key // 2) % 2)], "in" if key % 2 == IN else "out")

    def __str__(self) -> str:
        verb = "sending" if self.direction == "out" else "receiving"
        return f"{gpu_name(self.gpu)} {verb} {LEVEL_WORDS[self.level]}"


def port_keys(gpu, level, direction) -> np.ndarray:
    """Each port's number, 0 … 4·G−1: (GPU·2 + level code)·2 + OUT or IN."""
    return (gpu * 2 + level) * 2 + direction


def node_period(model, gpus: int) -> int | None:
    """The topology's GPUs per node as G GPUs' ports see them: None where all G share one node.

    Then no transfer crosses nodes, exactly as on one flat level, and a closed form that
    samples GPUs over one period of the node size samples a few, not all G (a node of
    1,000,000 GPUs would make every size price every GPU).
    """
    per = model.topology.gpus_per_node
    return None if per is None or gpus <= per else per


def one_level(model, gpus: int) -> bool:
    """True when no transfer among G GPUs crosses nodes (flat topology, or one node)."""
    # Read from the topology, not through node_period: tests replace node_period to make the
    # closed forms sample every GPU, and that must not change which path prices a step.
    per = model.topology.gpus_per_node
    return per is None or gpus <= per


def crosses(model, src, dst) -> np.ndarray:
    """Whether each transfer src → dst (0-based GPUs) goes across nodes on the model's topology."""
    per = model.topology.gpus_per_node
    src, dst = np.asarray(src, np.int64), np.asarray(dst, np.int64)
    if per is None:
        return np.zeros(np.broadcast(src, dst).shape, bool)
    return (src // per) != (dst // per)


def port_seconds(model, elements, across, reduce) -> tuple[np.ndarray, np.ndarray]:
    """(out, in): seconds each transfer of `elements` keeps its sender's out port busy (α + b·β,
    computed as α + b/bandwidth like Level.transfer) and its receiver's in port (+ b·γ when it
    reduces); 0 for a transfer of nothing.

    Arrays broadcast; a level the topology lacks prices at 0 (no transfer uses it then).
    """
    topo = model.topology
    # A level the topology lacks is given an infinite bandwidth: no transfer uses it.
    (ai, wi), (ax, wx) = ((lv.alpha, lv.bandwidth) if lv is not None else (0.0, np.inf)
                          for lv in (topo.levels.get(key) for key in LEVELS))
    nbytes = np.asarray(elements, dtype=np.float64) * model.itemsize
    across = np.asarray(across, bool)
    alpha, bandwidth = np.where(across, ax, ai), np.where(across, wx, wi)
    moved = nbytes > 0
    out = np.where(moved, alpha + nbytes / bandwidth, 0.0)
    into = out + np.where(moved & np.asarray(reduce, bool), nbytes * topo.gamma, 0.0)
    return out, into


def busiest_port(src, dst, level, out, into) -> tuple[float, Port | None]:
    """A step's time and bottleneck: every port queues its transfers' seconds, the busiest wins.

    Columns per transfer: sender, receiver, level code, seconds on the out port and on the
    in port. None when nothing moved.
    """
    if len(src) == 0:
        return 0.0, None
    keys = np.concatenate([port_keys(src, level, OUT), port_keys(dst, level, IN)])
    used, inverse = np.unique(keys, return_inverse=True)
    busy = np.bincount(inverse, weights=np.concatenate([out, into]), minlength=len(used))
    top = busy.max()
    if top <= 0:
        return 0.0, None
    ties = used[busy == top]
    gpu, lvl, side = ties // 4, (ties // 2) % 2, ties % 2
    return float(top), Port.of_key(ties[np.lexsort((gpu, -side, -lvl))[0]])


def step_seconds(model, src, dst, elements, reduce, gpus: int | None = None) -> tuple[float, Port | None]:
    """One step from its transfers' columns (0-based GPUs, elements, reduce?): its time and
    bottleneck port on the model, as `busiest_port` finds them.

    `gpus` (G) marks participants G and above as switches (core/plan.py). A switch has a
    port for every GPU and reduces at line rate, so only the GPU's side of a switch link is
    charged (its own α + b·β; no γ: the switch adds). The link is the inside level when all
    G GPUs share a node (an NVSwitch: NVLink SHARP), else the across level (a network
    switch that reduces: InfiniBand SHARP).
    """
    src, dst, level, out, into = _charged(model, src, dst, elements, reduce, gpus)
    return busiest_port(src, dst, level, out, into)


def _charged(model, src, dst, elements, reduce, gpus):
    """The step's columns as its ports are charged: (src, dst, level code, out, in seconds),
    a switch's own side free (see `step_seconds`)."""
    src, dst = np.asarray(src, np.int64), np.asarray(dst, np.int64)
    across = crosses(model, src, dst)
    reduce = np.broadcast_to(reduce, src.shape)
    switch_in = switch_out = None
    if gpus is not None:
        switch_out, switch_in = src >= gpus, dst >= gpus
        per = model.topology.gpus_per_node
        across = np.where(switch_out | switch_in, per is not None and gpus > per, across)
        reduce = reduce & ~switch_in
    out, into = port_seconds(model, elements, across, reduce)
    if gpus is not None:
        out, into = np.where(switch_out, 0.0, out), np.where(switch_in, 0.0, into)
    return src, dst, across.astype(np.int64), out, into


def busiest_gpus(model, src, dst, elements, reduce, gpus: int | None = None) -> np.ndarray:
    """The 0-based GPUs (sorted) with a port as busy as the step's busiest: one GPU where the
    step waits on it alone, several (every GPU of a ring step) where ports are loaded alike,
    none where nothing moved. `busiest_port` names one of them by its tie rule; `gpus` marks
    switches as `step_seconds` does (a switch's side costs nothing, so it is never named)."""
    if len(src) == 0:
        return np.zeros(0, np.int64)
    src, dst, level, out, into = _charged(model, src, dst, elements, reduce, gpus)
    keys = np.concatenate([port_keys(src, level, OUT), port_keys(dst, level, IN)])
    used, inverse = np.unique(keys, return_inverse=True)
    busy = np.bincount(inverse, weights=np.concatenate([out, into]), minlength=len(used))
    top = busy.max()
    if top <= 0:
        return np.zeros(0, np.int64)
    # Equal up to rounding: the same queue summed in another order may differ in the last bit.
    return np.unique(used[np.isclose(busy, top, rtol=1e-9, atol=0.0)] // PORTS_PER_GPU)


def bottleneck_gpus(model, src, dst, elements, reduce, gpus: int | None = None) -> tuple[int, ...]:
    """The 0-based GPUs that hold a step up: those of `busiest_gpus`, or none where every GPU
    that moves data is as busy as the busiest (a ring step on a symmetric topology: no GPU is
    the bottleneck, whichever one the tie rule of `busiest_port` names). `gpus`: G when the
    plan has switches, which are not GPUs and so never counted."""
    elements = np.asarray(elements)
    tied = busiest_gpus(model, src, dst, elements, reduce, gpus)
    moved = np.broadcast_to(elements > 0, np.shape(src))
    moving = np.union1d(np.asarray(src)[moved], np.asarray(dst)[moved])
    if gpus is not None:
        moving = moving[moving < gpus]
    return () if len(tied) == len(moving) else tuple(int(g) for g in tied)


def slower_level(inside, across) -> tuple[np.ndarray, np.ndarray]:
    """Per step: (seconds, level code) from each level's busiest port (−inf: no port on that
    level), across on ties; (0, −1) where nothing moved."""
    inside, across = np.asarray(inside, np.float64), np.asarray(across, np.float64)
    top = np.maximum(inside, across)
    moved = top > 0
    return np.where(moved, top, 0.0), np.where(moved, np.where(across >= inside, ACROSS, INSIDE), -1)
