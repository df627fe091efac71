"""A latency–bandwidth (α–β) model of all-reduce time, for lesson 9's 'beyond the ring'.

Time ≈ α · (messages the busiest GPU handles one after another) + β · (elements on its
link), with α the start-up latency of a message and β the time per element on a link.
The elements of ring, master and naive come from the engine's closed forms; the tree and
recursive halving-doubling are textbook formulas (the simulator does not run them).
The model is a sketch for comparing shapes, not a benchmark.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..algorithms import closed_form

BYTES_PER_ELEMENT = 4  # float32 gradients


@dataclass(frozen=True)
class Cost:
    """Latencies paid in a row, elements on the busiest link, and the modelled time."""

    name: str
    latencies: int
    elements: int
    seconds: float
    simulated: bool


def costs(gpus: int, elements: int, alpha_us: float = 5.0, gbps: float = 100.0) -> list[Cost]:
    """Model time of each all-reduce for G GPUs and N elements per GPU (α in µs, links in GB/s)."""
    alpha = alpha_us * 1e-6
    beta = BYTES_PER_ELEMENT / (gbps * 1e9)
    g, n = gpus, elements
    log = math.ceil(math.log2(g)) if g > 1 else 0
    ring = closed_form("ring", g, n)
    master = closed_form("master", g, n)
    naive = closed_form("naive", g, n)
    rows = [
        # naive: every GPU sends G−1 messages of N and receives as many (links are full duplex).
        ("Naive all-to-all", g - 1, int(naive.busiest_received.value), True),
        # master: G−1 messages in, then G−1 out, all through the master's link.
        ("Single-GPU master", 2 * (g - 1),
         int(master.busiest_received.value + master.busiest_sent.value), True),
        # ring: 2·(G−1) steps of N/G elements each.
        ("Ring all-reduce", int(ring.steps.value), math.ceil(ring.busiest_received.value), True),
        # binary tree: reduce up, broadcast down; each level moves whole gradients.
        ("Binary tree", 2 * log, 2 * log * n, False),
        # recursive halving-doubling: log₂G steps each way, ring's bandwidth.
        ("Halving-doubling", 2 * log, math.ceil(ring.busiest_received.value), False),
    ]
    return [Cost(name, latencies, moved, latencies * alpha + moved * beta, sim)
            for name, latencies, moved, sim in rows]


def format_seconds(seconds: float) -> str:
    """A duration in the unit that reads best: µs, ms or s."""
    if seconds < 1e-3:
        return f"{seconds * 1e6:,.1f} µs"
    if seconds < 1:
        return f"{seconds * 1e3:,.1f} ms"
    return f"{seconds:,.2f} s"
