"""A latency–bandwidth (α–β) model of all-reduce time, for lesson 9's 'beyond the ring'.

Time ≈ α · (messages the busiest GPU handles one after another) + β · (elements that reach
it one step after another), α the start-up latency of a message, β the time per element
(4 bytes ÷ link bandwidth). Links are full duplex, so a GPU's sends and receives of one step
overlap; its steps do not (the model of Thakur, Rabenseifner & Gropp, "Optimization of
Collective Communication Operations in MPICH", IJHPCA 19(1), 2005).

`cost_rows` is the one function the lessons read. Algorithms in the engine's registry are
priced from their closed forms; the rest are the textbook formulas cited below and are marked
not simulated. When an algorithm module or an engine cost model lands, only this function
changes (its row is then taken from the registry), and lesson 9's placeholders follow.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from ..algorithms import ALGORITHMS, closed_form

BYTES_PER_ELEMENT = 4  # float32 gradients

# Every row the model can price: key (placeholder name) → display name.
ROW_KEYS = {
    "naive": "Naive all-to-all",
    "master": "Single-GPU master",
    "ring": "Ring all-reduce",
    "tree": "Binomial tree, unpipelined",
    "halving_doubling": "Halving-doubling (Rabenseifner)",
}
_SHORT = {"naive": "naive", "master": "master", "ring": "ring", "tree": "binomial tree",
          "halving_doubling": "halving-doubling"}


@dataclass(frozen=True)
class Cost:
    """Latencies paid in a row, elements on the busiest link in a row, and the modelled time."""

    key: str
    name: str
    latencies: int
    elements: int
    seconds: float
    simulated: bool
    source: str = ""

    @property
    def short(self) -> str:
        return _SHORT.get(self.key, self.key)


def _ring(g: int, n: int) -> tuple[int, int, str]:
    # Every step moves every segment once, so each step takes as long as the largest, ⌈N/G⌉.
    steps = int(closed_form("ring", g, n).steps.value)
    return steps, steps * -(-n // g), "engine: 2·(G−1) steps of ⌈N/G⌉ elements"


def _master(g: int, n: int) -> tuple[int, int, str]:
    cf = closed_form("master", g, n)
    # G−1 messages in, then G−1 out, all through the master's one link.
    return 2 * (g - 1), int(cf.busiest_received.value + cf.busiest_sent.value), \
        "engine: (G−1)·N in, then (G−1)·N out, through one GPU"


def _naive(g: int, n: int) -> tuple[int, int, str]:
    cf = closed_form("naive", g, n)
    # Each GPU receives G−1 whole gradients, one message after another, in one step.
    return g - 1, int(cf.busiest_received.value), "engine: G−1 gradients of N into every GPU"


def _tree(g: int, n: int) -> tuple[int, int, str]:
    # Binomial reduce then binomial broadcast, whole gradients at each of ⌈log₂G⌉ levels
    # (the textbook tree of Thakur et al. 2005); NCCL's pipelined double binary trees are not this.
    levels = math.ceil(math.log2(g)) if g > 1 else 0
    return 2 * levels, 2 * levels * n, "textbook: binomial reduce + broadcast, 2·⌈log₂G⌉·(α + N·β)"


def _halving_doubling(g: int, n: int) -> tuple[int, int, str]:
    # Rabenseifner: recursive-halving reduce-scatter, recursive-doubling all-gather among
    # p' = 2^⌊log₂G⌋ GPUs. When G is not a power of two, MPICH first folds the G − p' extra
    # GPUs in (they send their whole vector, N) and sends them the result at the end (N again):
    # two more latencies and 2·N more elements (Thakur et al. 2005, all-reduce section).
    if g == 1:
        return 0, 0, "textbook"
    p = 1 << (g.bit_length() - 1)
    rounds = p.bit_length() - 1
    moved = math.ceil(Fraction(2 * (p - 1) * n, p))
    if p == g:
        return 2 * rounds, moved, "textbook (MPICH): 2·log₂G·α + 2·(G−1)/G·N·β"
    return 2 * rounds + 2, moved + 2 * n, \
        ("textbook (MPICH), G not a power of two: 2·(⌊log₂G⌋+1)·α + (2·(p′−1)/p′ + 2)·N·β, "
         "p′ = 2^⌊log₂G⌋")


_PRICES = {"naive": _naive, "master": _master, "ring": _ring, "tree": _tree,
           "halving_doubling": _halving_doubling}


def cost_rows(gpus: int, elements: int, alpha_us: float = 5.0, gbps: float = 100.0) -> list[Cost]:
    """Model time of each all-reduce for G GPUs and N elements per GPU (α in µs, links in GB/s)."""
    alpha = alpha_us * 1e-6
    beta = BYTES_PER_ELEMENT / (gbps * 1e9)
    rows = []
    for key, name in ROW_KEYS.items():
        if key in ALGORITHMS and key not in ("naive", "master", "ring"):
            # A newly registered algorithm: priced from its own closed form.
            cf = closed_form(key, gpus, elements)
            latencies, moved = int(cf.steps.value), math.ceil(cf.busiest_received.value)
            source, simulated = "engine: closed form", True
        else:
            latencies, moved, source = _PRICES[key](gpus, elements)
            simulated = key in ALGORITHMS
        rows.append(Cost(key, name, latencies, moved, latencies * alpha + moved * beta,
                         simulated, source))
    return rows


costs = cost_rows  # the name lesson code used before


def format_seconds(seconds: float) -> str:
    """A duration in the unit that reads best: µs, ms or s."""
    if seconds < 1e-3:
        return f"{seconds * 1e6:,.1f} µs"
    if seconds < 1:
        return f"{seconds * 1e3:,.1f} ms"
    return f"{seconds:,.2f} s"
