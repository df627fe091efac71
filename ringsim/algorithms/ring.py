"""Ring all-reduce: reduce-scatter for G−1 iterations, then all-gather for G−1, in the seed's order."""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from ..formula import ClosedForm, Formula
from ..plan import Plan, Step

NAME = "ring"
TITLE = "Ring all-reduce"
SUMMARY = "reduce-scatter then all-gather around a ring: 2·(G−1)·N in all, 2·(G−1)·N/G per GPU"


def plan(gpus: int) -> Plan:
    """The seed's ring: in iteration s GPU k sends segment ((k−s) mod G)+1 to GPU (k mod G)+1."""
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


def closed_form(gpus: int, elements: int) -> ClosedForm:
    """2·(G−1)·N in all; 2·(G−1)·N/G sent and received by every GPU."""
    g, n = gpus, elements
    per_gpu = Fraction(2 * (g - 1) * n, g)
    return ClosedForm(
        total=Formula("2·(G−1)·N", Fraction(2 * (g - 1) * n)),
        busiest_sent=Formula("2·(G−1)·N/G", per_gpu),
        busiest_received=Formula("2·(G−1)·N/G", per_gpu),
        steps=Formula("2·(G−1)", Fraction(2 * (g - 1))),
        messages=Formula("2·(G−1)·min(N,G)", Fraction(2 * (g - 1) * min(n, g))),
    )
