"""The lessons' time figures, read from the engine's α-β-γ cost model (ringsim.cost.model).

Nothing is modelled here: each all-reduce is priced by `ringsim.cost.model` on a `CostModel`
(flat: the textbook machine of Thakur, Rabenseifner & Gropp, IJHPCA 2005; or a preset such
as dgx-h100 with its nodes). `seconds` is the one place that chooses how: the algorithm's
closed-form time hook (`cost.estimate`) when its module has one, else its real plan priced
step by step (`cost.price(make_plan(...))`), which works for every algorithm at lesson
sizes. Bandwidths are nccl-tests' (doc/PERFORMANCE.md): algbw = S/t, busbw = algbw·2(G−1)/G.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from ..cost import model as cost
from ..algorithms import ALGORITHMS, algorithm, closed_form, make_plan, option_names, transfers
from ..core import units
from ..core.units import itemsize as dtype_itemsize

BYTES_PER_ELEMENT = dtype_itemsize("float32")  # the lessons' gradients are float32
TREE_CHUNK_BYTES = 64 * 1024   # the trees are pipelined in chunks of about this size…
TREE_MAX_CHUNKS = 64           # …but at most this many (NCCL too sizes chunks to the message)
GPUS_PER_NODE = 8              # hierarchical on a flat machine: nodes of 8, as a DGX

# Placeholder keys (latency.KEY, latencies.KEY) for every algorithm the engine registers.
ROW_KEYS = {name.replace("-", "_"): algorithm(name).title for name in ALGORITHMS}


@dataclass(frozen=True)
class Cost:
    """One algorithm's modelled all-reduce: steps (latencies in a row), time, bandwidths."""

    key: str
    name: str
    title: str
    options: dict
    steps: int
    seconds: float
    nbytes: int
    gpus: int
    bottleneck: str | None

    @property
    def short(self) -> str:
        """The algorithm's name with its options: 'tree (C=64)'."""
        extra = ", ".join(f"{'C' if k == 'chunks' else 'M'}={v}" for k, v in self.options.items())
        return f"{self.name} ({extra})" if extra else self.name

    @property
    def algbw(self) -> float | None:
        """nccl-tests' algorithm bandwidth S/t (bytes per second)."""
        return cost.algbw(self.nbytes, self.seconds)

    @property
    def busbw(self) -> float | None:
        """nccl-tests' all-reduce bus bandwidth algbw·2(G−1)/G."""
        return cost.busbw(self.algbw, self.gpus)


def model_of(topology: str = "flat", alpha_us: float = 5.0, gbps: float = 100.0) -> cost.CostModel:
    """The lessons' machine: flat with α in µs and links in GB/s, or a preset topology's own numbers."""
    if topology == "flat":
        return cost.CostModel.flat(alpha=alpha_us * 1e-6, bandwidth=gbps * 1e9,
                                   itemsize=BYTES_PER_ELEMENT)
    return cost.CostModel.of(topology, "float32")


def options_for(name: str, gpus: int, elements: int, model: cost.CostModel) -> dict | None:
    """The options a lesson prices `name` with (None: it does not apply to this G)."""
    takes = option_names(name)
    if "chunks" in takes:
        chunk_bytes = -(-elements * BYTES_PER_ELEMENT // TREE_CHUNK_BYTES)
        return {"chunks": max(1, min(TREE_MAX_CHUNKS, chunk_bytes, max(elements, 1)))}
    if "nodes" in takes:
        per_node = model.topology.gpus_per_node or GPUS_PER_NODE
        if gpus % per_node or gpus // per_node < 2:
            return None
        return {"nodes": gpus // per_node}
    return {}


def plan_work(name: str, gpus: int, **options) -> int:
    """Transfers a priced plan holds (0 when the closed-form hook answers): the work to budget."""
    return 0 if cost.time_form(name) is not None else transfers(name, gpus, **options)


@lru_cache(maxsize=64)
def _plan(name: str, gpus: int, options: tuple):
    # A plan does not depend on N: the sweep prices one plan at many sizes.
    return make_plan(name, gpus, **dict(options))


def seconds(name: str, gpus: int, elements: int, model: cost.CostModel, **options) -> cost.Estimate:
    """Modelled time of one all-reduce: the closed-form hook when there is one, else the priced plan."""
    if cost.time_form(name) is not None:
        return cost.estimate(name, gpus, elements, model, **options)
    priced = cost.price(_plan(name, gpus, tuple(sorted(options.items()))), elements, model)
    return cost.Estimate(priced.seconds, priced.bottleneck_level())


def _names(only: str | None) -> list[str]:
    return [name for name in ALGORITHMS if only is None or name.replace("-", "_") == only]


def cost_rows(gpus: int, elements: int, model: cost.CostModel | None = None,
              only: str | None = None) -> list[Cost]:
    """Every engine algorithm's time for G GPUs and N float32 elements per GPU, in registry order.

    `only` (a row key such as 'halving_doubling') prices that algorithm alone.
    """
    model = model or model_of()
    rows = []
    for name in _names(only):
        options = options_for(name, gpus, elements, model)
        if options is None:
            continue
        est = seconds(name, gpus, elements, model, **options)
        steps = int(closed_form(name, gpus, elements, **options).steps.value)
        level = None if est.level is None else (est.describe(model.topology).split(" (")[0]
                                                if model.topology.gpus_per_node else "links")
        rows.append(Cost(name.replace("-", "_"), name, algorithm(name).title, options, steps,
                         est.seconds, elements * BYTES_PER_ELEMENT, gpus, level))
    return rows


def rows_work(gpus: int, elements: int, model: cost.CostModel, only: str | None = None) -> int:
    """Transfers `cost_rows` will price from plans (for the lesson check's budget)."""
    total = 0
    for name in _names(only):
        options = options_for(name, gpus, elements, model)
        if options is not None:
            total += plan_work(name, gpus, **options)
    return total


def overtake(before: str, after: str, low: int, high: int, gpus: int,
             model: cost.CostModel) -> int:
    """The fewest elements in (low, high] at which `after` is faster than `before` (bisection).

    As ringsim.studies.sweep finds its crossovers and NCCL's tuner switches where modelled times cross
    (src/graph/tuning.cc); `after` must be faster at `high` and not at `low`.
    """
    def faster(n: int) -> bool:
        times = [seconds(name, gpus, n, model, **options_for(name, gpus, n, model)).seconds
                 for name in (before, after)]
        return times[1] < times[0]
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (low, middle) if faster(middle) else (middle, high)
    return high


def best(rows: list[Cost]) -> Cost:
    """The fastest row (registry order breaks ties, as ringsim.studies.sweep does)."""
    return min(rows, key=lambda r: r.seconds)


def format_seconds(value: float) -> str:
    """A duration in the unit that reads best: µs, ms or s."""
    if value < 1e-3:
        return f"{value * 1e6:,.1f} µs"
    if value < 1:
        return f"{value * 1e3:,.1f} ms"
    return f"{value:,.2f} s"


def format_bandwidth(value: float | None) -> str:
    """Bytes per second as nccl-tests prints them (GB/s), '—' when nothing moved."""
    return units.format_bandwidth(value)
