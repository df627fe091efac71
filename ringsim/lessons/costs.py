"""The lessons' time figures, read from the engine's α-β-γ cost model (ringsim.cost.model).

Nothing is modelled here: each all-reduce is priced by `ringsim.cost.model` on a `CostModel`
(flat: the textbook machine of Thakur, Rabenseifner & Gropp, IJHPCA 2005; or a preset such
as dgx-h100 with its nodes), through the algorithm's closed-form time hook
(`algorithms.timing.estimate`), which equals its plan priced step by step. An algorithm NCCL
lays out otherwise on the machine is priced a second time as NCCL does (compare's extra row,
priced by ringsim.studies.compare): on several nodes the ring, one ring per NIC (the row
`ring_rails`, compare's row 'ring order rails:P').
Bandwidths are nccl-tests' (doc/PERFORMANCE.md): algbw = S/t, busbw = algbw·2(G−1)/G.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..algorithms import ALGORITHMS, algorithm, closed_form, given_title, option_names
from ..algorithms.timing import estimate, machine_options, nccl_layouts
from ..core.units import format_seconds
from ..core.units import itemsize as dtype_itemsize
from ..cost import model as cost

BYTES_PER_ELEMENT = dtype_itemsize("float32")  # the lessons' gradients are float32
TREE_CHUNK_BYTES = 64 * 1024   # the trees are pipelined in chunks of about this size…
TREE_MAX_CHUNKS = 64           # …but at most this many (NCCL too sizes chunks to the message)
GPUS_PER_NODE = 8              # hierarchical on a flat machine: nodes of 8, as a DGX

# Placeholder keys (latency.KEY, latencies.KEY) for every algorithm the engine registers.
ROW_KEYS = {name.replace("-", "_"): algorithm(name).title for name in ALGORITHMS}
# The ring's row laid out as NCCL's channels (ring order rails:P), where the machine has
# nodes, as the lessons' placeholders name it (layout_key) and the vocabulary describes it.
RAILS_KEY = "ring_rails"
RAILS_TITLE = "the ring laid out as NCCL's channels, one ring per NIC (ring order rails:P)"


def layout_key(name: str) -> str:
    """The row key of algorithm `name` laid out as NCCL does on the machine: 'ring_rails'."""
    return name.replace("-", "_") + "_rails"


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
    def label(self) -> str:
        """The name a learner gives: the algorithm's, with its ring order for the rails ring:
        'ring rails:8'."""
        order = self.options.get("ring_order")
        return f"{self.name} {order}" if order else self.name

    @property
    def short(self) -> str:
        """The label with its options: 'tree (C=64)', 'ring rails:8'."""
        extra = ", ".join(f"{'C' if k == 'chunks' else 'M'}={v}" for k, v in self.options.items()
                          if k != "ring_order")
        return f"{self.label} ({extra})" if extra else self.label

    @property
    def time(self) -> str:
        """The time as the lessons' tables print it, to a tenth of a µs or ms: '8.1 ms'."""
        return format_seconds(self.seconds, digits=1)

    @property
    def algbw(self) -> float | None:
        """nccl-tests' algorithm bandwidth S/t (bytes per second)."""
        return cost.algbw_of(self.nbytes, self.seconds)

    @property
    def busbw(self) -> float | None:
        """nccl-tests' all-reduce bus bandwidth algbw·2(G−1)/G."""
        return cost.busbw_of(self.algbw, self.gpus)


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


def _names(only: str | None) -> list[str]:
    return [name for name in ALGORITHMS if only is None or name.replace("-", "_") == only]


def _level(est, model: cost.CostModel) -> str | None:
    """The level that bounds an estimate, as the lessons' tables name it."""
    if est.level is None:
        return None
    return est.describe(model.topology).split(" (")[0] if model.topology.gpus_per_node else "links"


def cost_rows(gpus: int, elements: int, model: cost.CostModel | None = None,
              only: str | None = None) -> list[Cost]:
    """Every engine algorithm's time for G GPUs and N float32 elements per GPU, in registry
    order, then each algorithm NCCL lays out otherwise on the machine, laid out so (layout_key:
    the ring as NCCL's channels where the machine has nodes, RAILS_KEY).

    `only` (a row key such as 'halving_doubling') prices that row alone.
    """
    model = model or model_of()
    rows = []
    for name in _names(only):
        if only is None and algorithm(name).unavailable(model.topology, gpus):
            continue  # a switch that adds (nvls) where the machine's switch only forwards
        options = options_for(name, gpus, elements, model)
        if options is None:
            continue
        est = estimate(name, gpus, elements, model, **options)
        steps = int(closed_form(name, gpus, elements, **options).steps.value)
        rows.append(Cost(name.replace("-", "_"), name, algorithm(name).title, options, steps,
                         est.seconds, elements * BYTES_PER_ELEMENT, gpus, _level(est, model)))
    rows += [_layout_row(name, options, gpus, elements, model)
             for name, options in nccl_layouts(gpus, model) if only in (None, layout_key(name))]
    return rows


def _layout_row(name: str, options: dict, gpus: int, elements: int,
                model: cost.CostModel) -> Cost:
    """An algorithm as compare's row of NCCL's layout prices it (the ring, one ring per NIC)."""
    from ..studies.compare import nccl_layout_estimate
    est = nccl_layout_estimate(name, gpus, elements, model)
    used = {**machine_options(name, gpus, model), **options}
    steps = int(closed_form(name, gpus, elements, **used).steps.value)
    title = given_title(name, gpus, options)  # as compare labels its row
    return Cost(layout_key(name), name, title, options, steps, est.seconds,
                elements * BYTES_PER_ELEMENT, gpus, _level(est, model))


def seconds(name: str, gpus: int, elements: int, model: cost.CostModel) -> float:
    """One row's time: an algorithm's name or row key ('halving-doubling', 'ring_rails')."""
    laid = {layout_key(n): n for n in ALGORITHMS}.get(name.replace("-", "_"))
    if laid is not None:
        from ..studies.compare import nccl_layout_estimate
        est = nccl_layout_estimate(laid, gpus, elements, model)
        if est is not None:
            return est.seconds
    name = name.replace("_", "-")
    return estimate(name, gpus, elements, model, **options_for(name, gpus, elements, model)).seconds


def overtake(before: str, after: str, low: int, high: int, gpus: int,
             model: cost.CostModel) -> int:
    """The fewest elements in (low, high] at which `after` is faster than `before` (bisection).

    Either is an algorithm's name or a row key (RAILS_KEY for the ring as NCCL's channels).
    As ringsim.studies.sweep finds its crossovers and NCCL's tuner switches where modelled times cross
    (src/graph/tuning.cc); `after` must be faster at `high` and not at `low`.
    """
    def faster(n: int) -> bool:
        return seconds(after, gpus, n, model) < seconds(before, gpus, n, model)
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (low, middle) if faster(middle) else (middle, high)
    return high


def best(rows: list[Cost]) -> Cost:
    """The fastest row (registry order breaks ties, as ringsim.studies.sweep does)."""
    return min(rows, key=lambda r: r.seconds)
