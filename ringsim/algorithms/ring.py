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


def transfers(gpus: int) -> int:
    """Transfers the plan holds: G in each of the 2·(G−1) steps."""
    return 2 * (gpus - 1) * gpus


def closed_form(gpus: int, elements: int) -> ClosedForm:
    """2·(G−1)·N in all; 2·(G−1)·N/G sent and received per GPU when G divides N, exactly.

    The bound is Patarasuk & Yuan's ("Bandwidth optimal all-reduce algorithms for clusters
    of workstations", JPDC 2009). With N = q·G + r the first r segments hold q+1 elements.
    From the plan's rule GPU k sends every segment but (k+1) mod G in reduce-scatter and
    every segment but (k+2) mod G in all-gather: 2N minus two neighbouring segments. The
    smallest neighbouring pair holds 2q elements, or 2q+1 when r = G−1 (only one small
    segment, whose neighbours are large); GPU k receives what GPU k−1 sends.
    """
    g, n = gpus, elements
    q, r = divmod(n, g)
    if g == 1:
        sent, exact, sender, receiver = 0, "0", 0, 0
    elif r == g - 1:
        sent, exact = 2 * (n - q) - 1, "2·(N − ⌊N/G⌋) − 1"
        sender, receiver = min((g - 3) % g, g - 2), g - 2
    else:
        sent, exact = 2 * (n - q), "2·(N − ⌊N/G⌋)"
        sender, receiver = (r - 1, r) if r else (0, 0)
    textbook = Fraction(2 * (g - 1) * n, g)
    return ClosedForm(
        total=Formula("2·(G−1)·N", 2 * (g - 1) * n),
        busiest_sent=Formula("2·(G−1)·N/G", sent, textbook, exact),
        busiest_received=Formula("2·(G−1)·N/G", sent, textbook, exact),
        steps=Formula("2·(G−1)", 2 * (g - 1)),
        messages=Formula("2·(G−1)·min(N,G)", 2 * (g - 1) * min(n, g)),
        busiest_sender=sender,
        busiest_receiver=receiver,
    )
