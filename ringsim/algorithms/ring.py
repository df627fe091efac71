"""Ring all-reduce: reduce-scatter for G−1 iterations, then all-gather for G−1, in the seed's order."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ..formula import ClosedForm, Formula
from ..plan import Plan, Step
from . import _multiring

NAME = "ring"
TITLE = "Ring all-reduce"
SUMMARY = "reduce-scatter then all-gather around a ring: 2·(G−1)·N in all, 2·(G−1)·N/G per GPU"


@dataclass(frozen=True)
class Options:
    """channels: K rings side by side, each on 1/K of the data (S = K·G), as NCCL's channels;
    ring_order: each ring's GPU order, 1-based ('1,3,2,4;1,2,3,4'), one for all or one per ring."""

    channels: int = 1
    ring_order: tuple[tuple[int, ...], ...] | None = None


def check_options(gpus: int, channels: int = 1, ring_order=None) -> dict:
    """The options made canonical (ring orders as tuples), or a RingsimError in one line."""
    orders = _multiring.parse_orders(ring_order, gpus)
    if orders is not None and channels == 1 and len(orders) > 1:
        channels = len(orders)  # one order per ring: as many rings as orders
    return {"channels": _multiring.check_channels(channels, gpus, orders), "ring_order": orders}


def _several(gpus: int, channels: int, ring_order) -> bool:
    return channels != 1 or ring_order is not None


def plan(gpus: int, channels: int = 1, ring_order=None) -> Plan:
    """The seed's ring: in iteration s GPU k sends segment ((k−s) mod G)+1 to GPU (k mod G)+1.

    With channels=K (or ring orders) K such rings run side by side, ring c on segments
    c·G+1 … c·G+G, each visiting the GPUs in its own order.
    """
    if _several(gpus, channels, ring_order):
        orders = _multiring.order_array(ring_order, channels, gpus)
        return _multiring.build(NAME, gpus, orders, {"channels": channels, "ring_order": ring_order})
    k = np.arange(gpus)
    nxt = (k + 1) % gpus
    rounds = gpus - 1
    steps = []
    for s in range(1, gpus):
        # 0-based form of the seed's rule: segment ((k+1) − s) mod G, k counted from 0.
        steps.append(Step.build("Reduce-scatter", s, rounds, "reduce", k, nxt, (k + 1 - s) % gpus))
    for s in range(1, gpus):
        # Each GPU forwards the complete segment it received last (or holds, at s = 1).
        steps.append(Step.build("All-gather", s, rounds, "copy", k, nxt, (k + 2 - s) % gpus))
    return Plan(NAME, gpus, tuple(steps))


def transfers(gpus: int, channels: int = 1, ring_order=None) -> int:
    """Transfers the plan holds: K·G in each of the 2·(G−1) steps."""
    return _multiring.transfers(gpus, channels)


def closed_form(gpus: int, elements: int, channels: int = 1, ring_order=None) -> ClosedForm:
    """2·(G−1)·N in all; 2·(G−1)·N/G sent and received by every GPU."""
    if _several(gpus, channels, ring_order):
        return _multiring.closed_form(gpus, elements, _multiring.order_array(ring_order, channels, gpus))
    g, n = gpus, elements
    per_gpu = Fraction(2 * (g - 1) * n, g)
    return ClosedForm(
        total=Formula("2·(G−1)·N", Fraction(2 * (g - 1) * n)),
        busiest_sent=Formula("2·(G−1)·N/G", per_gpu),
        busiest_received=Formula("2·(G−1)·N/G", per_gpu),
        steps=Formula("2·(G−1)", Fraction(2 * (g - 1))),
        messages=Formula("2·(G−1)·min(N,G)", Fraction(2 * (g - 1) * min(n, g))),
    )
