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


def seconds(gpus: int, elements: int, model):
    """α-β-γ time: 2·(G−1) steps, each as long as its slowest transfer to the next GPU.

    On one level with G dividing N this is the textbook 2(G−1)α + 2(G−1)/G·Nβ + (G−1)/G·Nγ
    (Thakur, Rabenseifner & Gropp 2005, §4.1). Exactly, for any N: in each step every GPU
    sends one segment; a level's time is α + b·β (+ b·γ in reduce-scatter) for the largest
    segment b that some GPU sends on it, found for all steps at once in O(G).
    """
    from ..cost import Estimate, _dominant
    topo = model.topology
    if gpus < 2:
        return Estimate(0.0, None)
    q, r = divmod(elements, gpus)
    sizes = (q * model.itemsize, (q + 1) * model.itemsize)
    k = np.arange(gpus)
    per_node = topo.gpus_per_node
    crosses = np.zeros(gpus, bool) if per_node is None else (k // per_node) != ((k + 1) % gpus) // per_node
    spent = {"inside": 0.0, "across": 0.0}
    for reduce, first in ((True, 0), (False, gpus - 1)):
        # Step s sends segment (k − d) mod G from GPU k, d = s−1 in reduce-scatter and s−2 in
        # all-gather: the big segments 0..r−1 leave GPUs d..d+r−1 (mod G) in that step.
        d = (first + np.arange(gpus - 1)) % gpus
        times = {}
        for key, senders in (("inside", ~crosses), ("across", crosses)):
            if senders.any():
                big = _any_in_window(senders, d, r)
                times[key] = np.where(big, model.transfer(key, sizes[1], reduce),
                                      model.transfer(key, sizes[0], reduce))
        zero = np.zeros(len(d))
        inside, across = times.get("inside", zero), times.get("across", zero)
        across_wins = (across >= inside) & (across > 0)  # across holds the bottleneck on ties
        spent["across"] += float(across[across_wins].sum())
        spent["inside"] += float(inside[~across_wins & (inside > 0)].sum())
    return Estimate(spent["inside"] + spent["across"], _dominant(spent), "every GPU's ports")


def _any_in_window(mask: np.ndarray, starts: np.ndarray, width: int) -> np.ndarray:
    """For each start d: is mask true anywhere in d, d+1, …, d+width−1 (mod len(mask))?"""
    counts = np.concatenate([[0], np.cumsum(np.concatenate([mask, mask]), dtype=np.int64)])
    return counts[starts + width] - counts[starts] > 0
