"""Bidirectional ring: two rings in opposite directions, each on half the data.

Ring 1 runs GPU1 → GPU2 → … → GPUG on segments 1…G, ring 2 runs GPUG → … → GPU1 on
segments G+1…2G, so both directions of every link carry data in every step (NCCL builds
its rings in both directions for this reason). Each ring is the walkthrough's ring on its half:
the total stays 2·(G−1)·N and each GPU still sends 2·(G−1)·N/G (Patarasuk & Yuan,
"Bandwidth optimal all-reduce algorithms for clusters of workstations", JPDC 2009).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.formula import ClosedForm
from ..core.plan import Plan
from ..cost.ports import one_level
from . import _multiring
from .spec import AlgorithmSpec, Shape, two_lanes

NAME = "bidirectional-ring"


@dataclass(frozen=True)
class Options:
    """No options: always two rings, one each way."""


DIRECTIONS = (1, -1)  # ring 1 in GPU order, ring 2 against it (`_multiring` counts these at any G)


def _orders(gpus: int) -> np.ndarray:
    return _multiring.as_array(gpus, DIRECTIONS)


def plan(gpus: int) -> Plan:
    """Reduce-scatter then all-gather on both rings at once: S = 2·G segments."""
    return _multiring.build(NAME, gpus, _orders(gpus), {})


def transfers(gpus: int) -> int:
    """2·G transfers in each of the 2·(G−1) steps."""
    return _multiring.transfers(gpus, 2)


def closed_form(gpus: int, elements: int) -> ClosedForm:
    """2·(G−1)·N in all; 2·(G−1)·N/G per GPU when 2·G divides N, exactly counted otherwise."""
    return _multiring.closed_form(gpus, elements, DIRECTIONS)


def seconds(gpus: int, elements: int, model):
    """α-β-γ time of both rings at once: each GPU's out port queues one segment of each ring
    when both neighbours share its level (`_multiring.seconds`; on one level with 2·G
    dividing N: 2(G−1)·(2α + N/G·β) + (G−1)·N/G·γ)."""
    return _multiring.seconds(gpus, elements, model, DIRECTIONS)


SECONDS_PER_GPU = 4e-8  # one `seconds` call across nodes, per GPU: about 40 ns on one core


def seconds_cost(gpus: int, model, **options) -> float:
    """About how long `seconds` takes: it lays out both rings GPU by GPU across nodes."""
    return 0.0 if one_level(model, gpus) else gpus * SECONDS_PER_GPU


def busiest_gpu(gpus: int, elements: int) -> int:
    """The lowest GPU sending plus receiving the most, from the exact per-GPU counts."""
    return _multiring.busiest_gpu(gpus, elements, DIRECTIONS)


SPEC = AlgorithmSpec(
    NAME, "Bidirectional ring",
    "two rings in opposite directions, each on half the data: 2·(G−1)·N, every link busy both ways",
    Options, plan, closed_form, transfers, seconds, busiest_gpu, shape=Shape.RING,
    lanes=two_lanes, seconds_cost=seconds_cost)
