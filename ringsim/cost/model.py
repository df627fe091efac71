"""The α-β-γ cost model: how long a plan takes on a topology, step by step, and where it waits.

Ports, their prices and a step's queue are ports.py's: a step lasts as long as its busiest
port (Thakur, Rabenseifner & Gropp, "Optimization of Collective Communication Operations
in MPICH", IJHPCA 19(1), 2005, §2 and Table 1, with NCCL's two levels of links). Here a
plan is priced step by step, and a closed-form time is an `Estimate` with the level that
held the bottleneck longest. Bandwidths follow nccl-tests doc/PERFORMANCE.md:
algbw = S/t, busbw = algbw·2(G−1)/G.

Closed forms: every algorithm module defines the hook
    seconds(gpus, elements, model, **options) -> Estimate
that gives the same time as `price(plan, elements, model)` without building the plan
(ringsim.algorithms.timing.estimate looks it up by name; tests/test_cost.py holds every
hook against the priced plan).
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field

from ..core.checks import check_count, check_gpus, check_timed_elements, echo
from ..core.errors import RingsimError
from ..core.layout import Layout
from ..core.plan import Plan, Step
from ..core.naming import plural
from ..core.units import check_bandwidth, check_seconds, format_seconds
from ..core.units import itemsize as dtype_itemsize
from .ports import Port, step_seconds
from .topology import load
from .topology_model import LEVEL_WORDS, LEVELS, Level, Topology

# Bytes per element: a kilobyte is far past any dtype (complex128 has 16), and keeps N·itemsize
# for the largest N priced (2**62) a finite float.
MAX_ITEMSIZE = 1024


@dataclass(frozen=True)
class CostModel:
    """A topology and the bytes per element: what turns a plan's elements into seconds."""

    topology: Topology = field(default_factory=load)
    itemsize: int = 4
    # The element type's name where it is known (ringsim's names, core/units.py): NCCL's model
    # reads it, since NVLink SHARP adds no 8-bit type and NCCL has no 16-bit integer.
    dtype: str | None = None

    def __post_init__(self) -> None:
        """Refuse anything but a Topology and a whole number of bytes per element, in one line."""
        if not isinstance(self.topology, Topology):
            raise RingsimError(f"a CostModel's topology must be a Topology (or use CostModel.of "
                               f"with a preset name), got {echo(self.topology)}")
        object.__setattr__(self, "itemsize", check_count(
            self.itemsize, "itemsize (bytes per element)", minimum=1, maximum=MAX_ITEMSIZE))

    @classmethod
    def of(cls, topology: Topology | str = "flat", dtype: str = "float32") -> "CostModel":
        """A model from a topology (or its preset name / TOML path) and a dtype name."""
        topo = load(topology) if isinstance(topology, str) else topology
        if not isinstance(topo, Topology):
            raise RingsimError(f"a topology is a preset name, a .toml path or a Topology, got "
                               f"{echo(topology)}")
        return cls(topo, dtype_itemsize(dtype), dtype)

    @classmethod
    def flat(cls, alpha: float = 5e-6, bandwidth: float = 100e9,
             reduce_bandwidth: float = math.inf, itemsize: int = 4) -> "CostModel":
        """The textbook machine: one switch, one port per GPU (α in s, bandwidths in B/s)."""
        # Checked here too so that the error names the argument as the caller wrote it.
        alpha = check_seconds(alpha, "alpha")
        bandwidth = check_bandwidth(bandwidth, "bandwidth")
        reduce_bandwidth = check_bandwidth(reduce_bandwidth, "reduce_bandwidth")
        level = Level("inside", "one switch", alpha, bandwidth)
        return cls(Topology("flat", "Flat (textbook)", None, {"inside": level},
                            reduce_bandwidth), itemsize)

    def __repr__(self) -> str:
        """One line: '<CostModel flat · one level · inside α 5.00 µs, … · 4-byte elements>'."""
        return f"<CostModel {self.topology.summary()} · {self.itemsize}-byte elements>"

    def transfer(self, level: str, nbytes: float, reduce: bool = False) -> float:
        """Seconds one transfer of `nbytes` keeps a port of `level` busy (γ on a reduce's in port)."""
        # The scalar form of ports.port_seconds (the same α + b/bandwidth, bit for bit), for
        # the few sizes at a time that closed forms and the timeline price.
        if nbytes <= 0:
            return 0.0
        cost = self.topology.level(level).transfer(nbytes)
        return cost + nbytes * self.topology.gamma if reduce else cost


@dataclass(frozen=True)
class StepCost:
    """A step's modelled time and its bottleneck port (None when nothing moved)."""

    seconds: float
    port: Port | None

    def __repr__(self) -> str:
        """One line: '<StepCost 5.00 µs · bottleneck GPU2 receiving inside a node>'."""
        where = f"bottleneck {self.port}" if self.port is not None else "nothing moved"
        return f"<StepCost {format_seconds(self.seconds)} · {where}>"


@dataclass(frozen=True)
class PlanCost:
    """Every step's time and bottleneck; the total, the running clock, the dominant level."""

    steps: tuple[StepCost, ...]

    def __repr__(self) -> str:
        """One line, not every step: '<PlanCost of 14 steps · 70.07 µs · bottleneck mostly …>'."""
        level = self.bottleneck_level()
        where = f"bottleneck mostly {LEVEL_WORDS[level]}" if level is not None else "nothing moved"
        return (f"<PlanCost of {plural(len(self.steps), 'step')} · {format_seconds(self.seconds)} · "
                f"{where}>")

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
        return sum_by_level((s.port.level, s.seconds) for s in self.steps if s.port)

    def bottleneck_level(self) -> str | None:
        """The level that held the bottleneck for the most time (across wins ties)."""
        return dominant_level(self.level_seconds())


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


def sum_by_level(pairs) -> dict[str, float]:
    """{level: fsum of its seconds} from (level, seconds) pairs, levels in order of first use."""
    sums: dict[str, list[float]] = {}
    for level, seconds in pairs:
        sums.setdefault(level, []).append(seconds)
    return {level: math.fsum(v) for level, v in sums.items()}


def dominant_level(seconds: dict[str, float]) -> str | None:
    """The level with the most seconds (across wins ties); None when no level has any."""
    best = None
    for level in reversed(LEVELS):  # across first, so that it wins ties
        if seconds.get(level, 0.0) > 0 and (best is None or seconds[level] > seconds[best]):
            best = level
    return best


def price_step(step: Step, layout: Layout, model: CostModel, gpus: int | None = None) -> StepCost:
    """One step's time: the busiest port's queue of α + b·β (+ b·γ on reduces' in ports).

    `gpus`: the plan's G when it has switches (participants from G on; ports.step_seconds)."""
    elements = layout.spans(step.first, step.last)
    return StepCost(*step_seconds(model, step.src, step.dst, elements, step.reduces, gpus))


def given_model(model: object) -> CostModel:
    """`model`, or the textbook machine when it is None; anything else is refused (a falsy
    stand-in such as 0 or "" would otherwise price the default machine without a word)."""
    if model is None:
        return CostModel()
    if not isinstance(model, CostModel):
        raise RingsimError(f"expected a CostModel (CostModel.of('dgx-h100')), got {echo(model)}")
    return model


def price(plan: Plan, elements: int, model: CostModel | None = None) -> PlanCost:
    """The modelled time of every step of a plan for N elements per GPU."""
    if not isinstance(plan, Plan):
        raise RingsimError(f"price needs a Plan (make_plan('ring', 8)), got {echo(plan)}")
    elements = check_timed_elements(elements)
    model = given_model(model)
    model.topology.check_gpus(plan.gpus)
    layout = Layout(plan.segments, elements)
    gpus = plan.gpus if plan.switches else None
    return PlanCost(tuple(price_step(step, layout, model, gpus) for step in plan.steps))


def algbw(nbytes: int, seconds: float) -> float | None:
    """nccl-tests' algorithm bandwidth S/t in bytes/s (S: bytes per GPU); None when t = 0."""
    return algbw_of(check_count(nbytes, "nbytes", minimum=0), _at_least_zero(seconds, "seconds", "seconds"))


def busbw(algbw_value: float | None, gpus: int) -> float | None:
    """nccl-tests' all-reduce bus bandwidth: algbw·2(G−1)/G, what each GPU's link must carry."""
    if algbw_value is not None:
        _at_least_zero(algbw_value, "algbw_value", "bytes per second (or None)")
    return busbw_of(algbw_value, check_gpus(gpus))


def _at_least_zero(value: object, what: str, unit: str) -> float:
    """A measured figure: a number of `unit`, at least 0 (inf passes), or a RingsimError."""
    # A measured time or rate can be any size, so the cost model's ranges do not apply; NaN
    # fails the comparison, as a negative does.
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not value >= 0:
        raise RingsimError(f"{what} must be a number of {unit}, at least 0, got {echo(value)}")
    return value


# The two above without their checks, for the figures ringsim computes itself: a sweep calls
# them for every size and algorithm, and its inputs were checked once when it started.
def algbw_of(nbytes: int, seconds: float) -> float | None:
    """algbw for inputs already checked."""
    return nbytes / seconds if seconds > 0 else None


def busbw_of(algbw_value: float | None, gpus: int) -> float | None:
    """busbw for inputs already checked."""
    return None if algbw_value is None else algbw_value * 2 * (gpus - 1) / gpus
