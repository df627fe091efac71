"""The α-β-γ cost model: how long a plan takes on a topology, step by step, and where it waits.

Each GPU has one full-duplex port per level (inside a node, across nodes): an out port and
an in port. A transfer of b bytes on a level costs α + b·β of that level on the sender's out
port and on the receiver's in port; a reduce also costs b·γ on the receiver's in port (the
receiver adds what arrives through that port). Transfers that share a port in one step
queue on it, each paying its own α; a transfer of 0 bytes is not sent and costs nothing.
A step lasts as long as its slowest port: that port is the step's bottleneck.

This is the model of Thakur, Rabenseifner & Gropp, "Optimization of Collective
Communication Operations in MPICH" (IJHPCA 19(1), 2005), §2 and Table 1, with NCCL's two
levels of links (NVIDIA/nccl src/graph/tuning.cc prices intra-node and network steps apart).
Bandwidths follow nccl-tests doc/PERFORMANCE.md: algbw = S/t, busbw = algbw·2(G−1)/G.

Closed forms: an algorithm module may define the hook
    seconds(gpus, elements, model, **options) -> Estimate
that gives the same time as `price(plan, elements, model)` without building the plan
(tests/test_cost.py holds every registered hook against the priced plan).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ..algorithms import ALGORITHMS, algorithm
from ..core.errors import RingsimError
from ..core.layout import Layout
from ..execute.ledger import transfer_elements
from ..core.naming import gpu_name
from ..core.plan import OPS, Plan, Step
from .topology import LEVEL_WORDS, LEVELS, Level, Topology, load
from ..core.units import itemsize as dtype_itemsize


@dataclass(frozen=True)
class CostModel:
    """A topology and the bytes per element: what turns a plan's elements into seconds."""

    topology: Topology = field(default_factory=load)
    itemsize: int = 4

    @classmethod
    def of(cls, topology: Topology | str = "flat", dtype: str = "float32") -> "CostModel":
        """A model from a topology (or its preset name / TOML path) and a dtype name."""
        topo = load(topology) if isinstance(topology, str) else topology
        return cls(topo, dtype_itemsize(dtype))

    @classmethod
    def flat(cls, alpha: float = 5e-6, bandwidth: float = 100e9,
             reduce_bandwidth: float = math.inf, itemsize: int = 4) -> "CostModel":
        """The textbook machine: one switch, one port per GPU (α in s, bandwidths in B/s)."""
        level = Level("inside", "one switch", alpha, bandwidth)
        return cls(Topology("flat", "Flat (textbook)", None, {"inside": level},
                            reduce_bandwidth), itemsize)

    def transfer(self, level: str, nbytes: float, reduce: bool = False) -> float:
        """Seconds one transfer of `nbytes` keeps a port of `level` busy (γ on a reduce's in port)."""
        if nbytes <= 0:
            return 0.0
        cost = self.topology.level(level).transfer(nbytes)
        return cost + nbytes * self.topology.gamma if reduce else cost

    def level_of(self, src: int, dst: int) -> str:
        """The level a transfer between two 0-based GPUs uses."""
        return "inside" if self.topology.node(src) == self.topology.node(dst) else "across"


@dataclass(frozen=True)
class Port:
    """One port: a 0-based GPU, a level (inside / across) and a direction (out / in)."""

    gpu: int
    level: str
    direction: str

    def __str__(self) -> str:
        verb = "sending" if self.direction == "out" else "receiving"
        return f"{gpu_name(self.gpu)} {verb} {LEVEL_WORDS[self.level]}"


@dataclass(frozen=True)
class StepCost:
    """A step's modelled time and its bottleneck port (None when nothing moved)."""

    seconds: float
    port: Port | None


@dataclass(frozen=True)
class PlanCost:
    """Every step's time and bottleneck; the total, the running clock, the dominant level."""

    steps: tuple[StepCost, ...]

    @property
    def seconds(self) -> float:
        """The whole plan's modelled time."""
        return math.fsum(s.seconds for s in self.steps)

    def clock(self) -> list[float]:
        """Time at the end of each step."""
        total, out = 0.0, []
        for s in self.steps:
            total += s.seconds
            out.append(total)
        return out

    def level_seconds(self) -> dict[str, float]:
        """Seconds during which each level held the bottleneck port."""
        return _level_seconds((s.port.level, s.seconds) for s in self.steps if s.port)

    def bottleneck_level(self) -> str | None:
        """The level that held the bottleneck for the most time (across wins ties)."""
        return _dominant(self.level_seconds())


@dataclass(frozen=True)
class Estimate:
    """A closed-form time: seconds, the bottleneck level, and which ports, in words."""

    seconds: float
    level: str | None
    ports: str = ""

    def describe(self, topology: Topology) -> str:
        """'InfiniBand NDR 400 Gb/s (across nodes): every GPU's port', or '—'."""
        if self.level is None:
            return "—"
        name = topology.level(self.level).name
        words = LEVEL_WORDS[self.level] if topology.gpus_per_node else "every link"
        return f"{name} ({words})" + (f": {self.ports}" if self.ports else "")


def _level_seconds(pairs) -> dict[str, float]:
    sums: dict[str, list[float]] = {}
    for level, seconds in pairs:
        sums.setdefault(level, []).append(seconds)
    return {level: math.fsum(v) for level, v in sums.items()}


def _dominant(seconds: dict[str, float]) -> str | None:
    best = None
    for level in reversed(LEVELS):  # across first, so that it wins ties
        if seconds.get(level, 0.0) > 0 and (best is None or seconds[level] > seconds[best]):
            best = level
    return best


def _reduces(step: Step) -> np.ndarray:
    """Which transfers of the step reduce (the one place that reads ops).

    Reads the per-transfer op column `ops` (codes into plan.OPS) where steps have one, else
    the step's single op: a step that mixes ops has no single `op` to read.
    """
    ops = getattr(step, "ops", None)
    if ops is not None:
        return np.asarray(ops) == OPS.index("reduce")
    return np.full(len(step), step.op == "reduce")


def price_step(step: Step, layout: Layout, model: CostModel) -> StepCost:
    """One step's time: the busiest port's queue of α + b·β (+ b·γ on reduces' in ports)."""
    if len(step) == 0:
        return StepCost(0.0, None)
    topo = model.topology
    nbytes = transfer_elements(step, layout).astype(np.float64) * model.itemsize
    if topo.gpus_per_node is None:
        across = np.zeros(len(step), dtype=bool)
    else:
        across = (step.src // topo.gpus_per_node) != (step.dst // topo.gpus_per_node)
    alpha = np.zeros(len(step))
    beta = np.zeros(len(step))
    for flag, key in ((False, "inside"), (True, "across")):
        chosen = across == flag
        if chosen.any():
            lv = topo.level(key)
            alpha[chosen], beta[chosen] = lv.alpha, lv.beta
    moved = nbytes > 0
    wire = np.where(moved, alpha + nbytes * beta, 0.0)
    arrive = wire + np.where(moved & _reduces(step), nbytes * topo.gamma, 0.0)
    level = across.astype(np.int64)
    # Ports as (gpu, level, direction) keys; queue each port's transfers by summing them.
    keys = np.concatenate([(step.src * 2 + level) * 2, (step.dst * 2 + level) * 2 + 1])
    used, inverse = np.unique(keys, return_inverse=True)
    busy = np.bincount(inverse, weights=np.concatenate([wire, arrive]), minlength=len(used))
    top = busy.max()
    if top <= 0:
        return StepCost(0.0, None)
    ties = used[busy == top]
    # Ties: across before inside, in before out, then the lowest GPU.
    gpu, lvl, into = ties // 4, (ties // 2) % 2, ties % 2
    pick = ties[np.lexsort((gpu, -into, -lvl))[0]]
    port = Port(int(pick // 4), LEVELS[int((pick // 2) % 2)], "in" if pick % 2 else "out")
    return StepCost(float(top), port)


def price(plan: Plan, elements: int, model: CostModel | None = None) -> PlanCost:
    """The modelled time of every step of a plan for N elements per GPU."""
    model = model or CostModel()
    model.topology.check_gpus(plan.gpus)
    layout = Layout(getattr(plan, "segments", plan.gpus), elements)
    return PlanCost(tuple(price_step(step, layout, model) for step in plan.steps))


def time_form(name: str) -> Callable | None:
    """The algorithm's closed-form time hook `seconds`, or None when it has none yet."""
    return getattr(algorithm(name), "seconds", None)


def timed_algorithms() -> list[str]:
    """Names of the registered algorithms that provide a closed-form time."""
    return [name for name, module in ALGORITHMS.items() if hasattr(module, "seconds")]


def estimate(name: str, gpus: int, elements: int, model: CostModel | None = None,
             **options) -> Estimate:
    """Algorithm `name`'s closed-form time for G GPUs of N elements (no plan is built)."""
    model = model or CostModel()
    hook = time_form(name)
    if hook is None:
        raise RingsimError(f"algorithm {name!r} has no closed-form time yet")
    model.topology.check_gpus(gpus)
    return hook(gpus, elements, model, **options)


def algbw(nbytes: int, seconds: float) -> float | None:
    """nccl-tests' algorithm bandwidth S/t in bytes/s (S: bytes per GPU); None when t = 0."""
    return nbytes / seconds if seconds > 0 else None


def busbw(algbw_value: float | None, gpus: int) -> float | None:
    """nccl-tests' all-reduce bus bandwidth: algbw·2(G−1)/G, what each GPU's link must carry."""
    return None if algbw_value is None else algbw_value * 2 * (gpus - 1) / gpus
