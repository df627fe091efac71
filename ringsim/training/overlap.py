"""Overlap: DDP's gradient buckets all-reduced while the backward pass still runs.

PyTorch's DistributedDataParallel (find_unused_parameters=False, the default) runs its first
step with one bucket, records the order the gradients became ready, and rebuilds its buckets
from that order before the second step (torch/csrc/distributed/c10d/reducer.cpp,
`Reducer::rebuild_buckets`): `compute_bucket_assignment_by_size` walks the parameters in that
order and closes the first bucket at 1 MiB (`first_bucket_bytes`, kDefaultFirstBucketBytes =
1024·1024 in reducer.hpp, `dist._DEFAULT_FIRST_BUCKET_BYTES` in Python) and every later one
at bucket_cap_mb (25 MiB by default; a tensor larger than the cap gets a bucket of its own).
The buckets are not reversed after, so the small bucket holds the gradients ready first and
its all-reduce starts early in the backward pass (DDP_SET_LAST_BUCKET_CAP=1 would move it
last instead). Each bucket's all-reduce is launched, in order, once all its gradients are
ready; the all-reduces run one after another on one communication stream. ringsim models
every step after the rebuild.

The model here: the backward pass runs layer by layer, last layer first, each taking
2 × its forward FLOPs (ringsim/training/models.py) at `flops` FLOP/s. Inside a layer, autograd
produces its tensors' gradients in reverse order of definition (a block's last sub-layer
first); ringsim splits the layer's backward time among its tensors in proportion to their
elements, so tensor t of a layer is ready once the layer's backward has covered the tensors
after it and t itself, and the layer's first tensor exactly when the layer ends (a
single-tensor layer is ready at its end). The gradients are therefore ready in reverse order
of definition, and buckets are filled tensor by tensor in that order, so a bucket may end
inside a layer; as in DDP's Reducer (`mark_variable_ready` counts a bucket's pending
gradients, `mark_bucket_ready` launches buckets in order once that count reaches zero) a
bucket is ready when all its gradients are. An all-reduce of b elements takes the cost
model's closed-form time for the algorithm with its options (ringsim/algorithms/timing.py
`estimate`; the plain ring unless ring_order= lays it out otherwise, as NCCL's rails:P). The events run on the
timeline's engine. A step is the forward pass, the backward pass, and whatever
communication is still running after it (exposed); the optimizer step is left out.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..algorithms import DEFAULT_ALGORITHM
from ..algorithms.timing import estimate, machine_options
from ..core.checks import check_count, check_gpus, echo
from ..core.errors import RingsimError
from ..core.units import format_seconds
from ..cost.model import CostModel
from ..cost.ports import one_level
from .models import Model
from ..timeline.engine import Engine

MIB = 1024 * 1024
FIRST_BUCKET_BYTES = 1 * MIB   # kDefaultFirstBucketBytes (reducer.hpp)
DEFAULT_BUCKET_MB = 25         # DistributedDataParallel(bucket_cap_mb=25)
# Achieved FLOP/s per GPU: an H100 SXM at about 40% of its 989 TFLOP/s dense BF16 peak
# (NVIDIA H100 datasheet), a model-FLOPs utilisation large training runs report.
DEFAULT_FLOPS = 400e12
# Bucket caps in MiB; math.inf is no cap (two buckets still: the first closes at 1 MiB).
SWEEP_MB = (1, 2, 5, 10, 25, 50, 100, 250, 1000, math.inf)
# A ring laid out GPU by GPU (a ring_order, as rails:P) across nodes is priced port by port:
# O(K·G) once for its orders, then O(G) for each distinct bucket size (about 0.14 µs per GPU,
# measured at 1,000,000 GPUs on 16 rings). Past this many GPU × bucket sizes a step and its
# sweep would take more than about 7 s, so they are refused before any pricing.
MAX_GPU_BUCKETS = 50_000_000
SECONDS_PER_GPU_BUCKET = 1.4e-7


@dataclass(frozen=True)
class Bucket:
    """A bucket: its layers (forward indices lo..hi), elements, ready time, all-reduce start and end."""

    lo: int
    hi: int
    elements: int
    ready: float
    start: float
    end: float
    seconds: float  # its all-reduce alone: end − start loses it when the step is huge


@dataclass(frozen=True)
class Overlap:
    """One training step with overlapped gradient all-reduces."""

    forward_seconds: float
    backward_seconds: float
    buckets: tuple[Bucket, ...]
    bucket_mb: float
    layer_ends: tuple[float, ...]  # when each layer's backward ends (after the forward pass)

    @property
    def communication_seconds(self) -> float:
        """All the buckets' all-reduce time together."""
        return math.fsum(b.seconds for b in self.buckets)

    @property
    def computed(self) -> float:
        """When the backward pass ends (the first layer's gradients are ready)."""
        return self.layer_ends[0] if self.layer_ends else 0.0

    @property
    def step_seconds(self) -> float:
        """Forward, backward, and the communication still running after the backward pass."""
        return self.computed + self.exposed_seconds

    @property
    def exposed_seconds(self) -> float:
        """Communication not hidden under the backward pass."""
        return max(0.0, max((b.end for b in self.buckets), default=0.0) - self.computed)


def _tensors(model: Model) -> list[tuple[int, int]]:
    """(layer, elements) of every parameter tensor, in the order they are defined."""
    return [(i, tensor) for i, layer in enumerate(model.layers) for tensor in layer.tensors]


def _assign(model: Model, bucket_bytes: float, itemsize: int,
            first_bytes: float) -> list[tuple[int, int, int]]:
    """(first tensor, last tensor, elements) per bucket in launch order, tensors numbered in
    definition order; buckets fill from the last tensor, whose gradient is ready first."""
    out, size, elements = [], 0, 0
    limit = first_bytes
    tensors = _tensors(model)
    last = len(tensors) - 1
    for t in range(last, -1, -1):
        tensor = tensors[t][1]
        size += tensor * itemsize
        elements += tensor
        if size >= limit or t == 0:
            out.append((t, last, elements))
            last, size, elements, limit = t - 1, 0, 0, bucket_bytes
    return out


def assign_buckets(model: Model, bucket_bytes: float, itemsize: int,
                   first_bytes: float = FIRST_BUCKET_BYTES) -> list[tuple[int, int, int]]:
    """DDP's rebuilt buckets in launch order: (first layer, last layer, elements) per bucket.

    Filled in the order the gradients are ready (the last tensor first); a bucket closes once
    it holds at least its limit (1 MiB for the first, the cap after), tensor by tensor, so a
    layer's tensors may fall into two buckets (then the layer is the first of one and the
    last of the next).
    """
    tensors = _tensors(model)
    return [(tensors[a][0], tensors[b][0], elements)
            for a, b, elements in _assign(model, bucket_bytes, itemsize, first_bytes)]


def tensor_ready(model: Model, layer_ends: list[float], forward: list[float]) -> list[float]:
    """When each tensor's gradient is ready: its layer's backward split by elements, last tensor first."""
    ready = []
    for i, layer in enumerate(model.layers):
        total = sum(layer.tensors)
        begin = layer_ends[i] - 2 * forward[i]
        after = total  # elements of this tensor and the ones defined after it
        for k, tensor in enumerate(layer.tensors):
            # The first tensor is ready exactly when the layer ends (no rounding on the way).
            ready.append(layer_ends[i] if k == 0 or total == 0 else
                         begin + 2 * forward[i] * (after / total))
            after -= tensor
    return ready


def simulate(model: Model, gpus: int, cost: CostModel, *, bucket_mb: float = DEFAULT_BUCKET_MB,
             flops: float = DEFAULT_FLOPS, batch: int | None = None, algorithm: str = DEFAULT_ALGORITHM,
             options: dict | None = None) -> Overlap:
    """One step of `model` with DDP buckets of `bucket_mb` MiB on G GPUs (a batch of samples per GPU).

    `options` are the algorithm's own, as users give them (ring_order="rails:8", channels=4);
    on a topology with nodes the hierarchical ring's nodes are the machine's.
    """
    gpus, batch = check_step(gpus, [bucket_mb], flops, batch)
    check_work(model, gpus, cost, [bucket_mb], options)
    return _simulate(model, _Prices(gpus, cost, algorithm, options), bucket_mb, flops, batch)


MAX_BATCH = 1_000_000_000


def check_step(gpus, sizes, flops, batch) -> tuple[int, int | None]:
    """G and the micro-batch checked, and the bucket caps and FLOP/s refused in one line
    where a step cannot use them (the command line's own checks, for Python callers)."""
    gpus = check_gpus(gpus)
    for mb in sizes:
        if isinstance(mb, bool) or not isinstance(mb, (int, float)) or not mb > 0:
            raise RingsimError(f"bucket_mb must be above 0 MiB (math.inf for no cap), got {echo(mb)}")
    if isinstance(flops, bool) or not isinstance(flops, (int, float)) or not 0 < flops < math.inf:
        raise RingsimError(f"flops must be a finite number above 0 FLOP/s per GPU, got {echo(flops)}")
    if batch is not None:
        batch = check_count(batch, "the micro-batch", minimum=1, maximum=MAX_BATCH)
    return gpus, batch


def bucket_sizes(model: Model, cost: CostModel, sizes) -> set[int]:
    """The distinct bucket sizes (elements) the steps at these bucket caps all-reduce."""
    return {elements for mb in sizes
            for _, _, elements in _assign(model, mb * MIB, cost.itemsize, FIRST_BUCKET_BYTES)}


def laid_out_work(model: Model, gpus: int, cost: CostModel, sizes, options: dict | None) -> int:
    """G × the distinct bucket sizes where the options lay the ring out GPU by GPU (a
    ring_order) on several nodes, each size then priced port by port; 0 elsewhere, where a
    price does not grow with G."""
    if (options or {}).get("ring_order") is None or one_level(cost, gpus):
        return 0
    return gpus * len(bucket_sizes(model, cost, sizes))


def check_work(model: Model, gpus: int, cost: CostModel, sizes, options: dict | None) -> None:
    """Refuse, in one line, steps whose laid-out ring takes too long to price (MAX_GPU_BUCKETS)."""
    work = laid_out_work(model, gpus, cost, sizes, options)
    if work <= MAX_GPU_BUCKETS:
        return
    count = work // gpus
    raise RingsimError(
        f"the ring laid out GPU by GPU (its ring order) would be priced at {count:,} distinct "
        f"bucket sizes × {gpus:,} GPUs ({work:,}, about "
        f"{format_seconds(work * SECONDS_PER_GPU_BUCKET)}); the limit is {MAX_GPU_BUCKETS:,}: "
        f"at most {MAX_GPU_BUCKETS // gpus:,} distinct bucket sizes at {gpus:,} GPUs, or at most "
        f"{MAX_GPU_BUCKETS // count:,} GPUs for {count:,}")


class _Prices:
    """One all-reduce's time per bucket size, priced once: the buckets of a model mostly hold
    the same elements, and a sweep's bucket caps share most of them (the first 1 MiB bucket,
    the largest tensors), so a sweep of 10 caps prices about 20 sizes, not 60."""

    def __init__(self, gpus: int, cost: CostModel, algorithm: str, options: dict | None) -> None:
        self.gpus, self.cost, self.algorithm = gpus, cost, algorithm
        self.itemsize = cost.itemsize
        # The hierarchical ring on the machine's nodes, then the options given.
        self.options = {**machine_options(algorithm, gpus, cost),
                        **{k: v for k, v in (options or {}).items() if v is not None}}
        self.seconds: dict[int, float] = {}

    def __call__(self, elements: int) -> float:
        if elements not in self.seconds:
            self.seconds[elements] = estimate(self.algorithm, self.gpus, elements, self.cost,
                                              **self.options).seconds
        return self.seconds[elements]


def _simulate(model: Model, price: _Prices, bucket_mb: float, flops: float,
              batch: int | None) -> Overlap:
    """`simulate` with the all-reduces priced by `price` (shared by a sweep's sizes)."""
    batch = model.batch if batch is None else batch
    forward = [layer.flops * batch / flops for layer in model.layers]
    forward_total = math.fsum(forward)
    tensors = _tensors(model)
    buckets = _assign(model, bucket_mb * MIB, price.itemsize, FIRST_BUCKET_BYTES)
    # Priced smallest first (an error names the smallest size refused), once per distinct size.
    for n in sorted({elements for _, _, elements in buckets}):
        price(n)
    seconds = [price(elements) for _, _, elements in buckets]
    # The backward pass, last layer first, each layer 2 × its forward.
    layer_end = [0.0] * len(model.layers)
    now = forward_total
    for i in range(len(model.layers) - 1, -1, -1):
        now += 2 * forward[i]
        layer_end[i] = now
    ready_at = tensor_ready(model, layer_end, forward)
    engine = Engine()
    # Buckets in the order DDP launches them, the order they were filled: last layers first.
    order = list(range(len(buckets)))
    ready: dict[int, float] = {}
    started: dict[int, tuple[float, float]] = {}
    stream = {"busy_until": 0.0, "next": 0}

    def launch() -> None:
        """Start the next bucket in launch order if it is ready and the stream is free."""
        while stream["next"] < len(order):
            k = order[stream["next"]]
            if k not in ready or engine.now < stream["busy_until"]:
                return
            start = engine.now
            stream["busy_until"] = start + seconds[k]
            started[k] = (start, start + seconds[k])
            stream["next"] += 1
            engine.at(start + seconds[k], launch)

    def becomes_ready(k: int) -> None:
        ready[k] = engine.now
        launch()

    for k in order:  # a bucket is ready when the last of its gradients is
        a, b, _ = buckets[k]
        engine.at(max(ready_at[a:b + 1]), lambda k=k: becomes_ready(k))
    engine.run()
    result = tuple(Bucket(tensors[a][0], tensors[b][0], el, ready[k], *started[k], seconds[k])
                   for k, (a, b, el) in enumerate(buckets))
    return Overlap(forward_total, 2 * forward_total, tuple(sorted(result, key=lambda b: b.start)),
                   bucket_mb, tuple(layer_end))


def sweep(model: Model, gpus: int, cost: CostModel, sizes=SWEEP_MB, *,
          flops: float = DEFAULT_FLOPS, batch: int | None = None, algorithm: str = DEFAULT_ALGORITHM,
          options: dict | None = None) -> list[Overlap]:
    """The step at every bucket size of the sweep (math.inf: no cap, which DDP still splits
    into its first 1 MiB bucket and one bucket for the rest), each as `simulate` gives it; a
    bucket size the sizes share is priced once."""
    gpus, batch = check_step(gpus, sizes, flops, batch)
    check_work(model, gpus, cost, sizes, options)
    price = _Prices(gpus, cost, algorithm, options)
    return [_simulate(model, price, mb, flops, batch) for mb in sizes]


def trace_events(step: Overlap, model: Model):
    """Trace events (Trace Event Format) of one step: the compute track and the communication
    stream of a GPU (every GPU runs the same), one event per layer and per bucket."""
    yield {"ph": "M", "name": "process_name", "pid": 1, "tid": 0, "args": {"name": "every GPU"}}
    for tid, name in ((1, "compute"), (2, "communication")):
        yield {"ph": "M", "name": "thread_name", "pid": 1, "tid": tid, "args": {"name": name}}
    yield {"ph": "X", "cat": "compute", "name": "forward", "pid": 1, "tid": 1, "ts": 0.0,
           "dur": step.forward_seconds * 1e6, "args": {"layers": len(model.layers)}}
    begin = step.forward_seconds
    for i in range(len(model.layers) - 1, -1, -1):
        end = step.layer_ends[i]
        yield {"ph": "X", "cat": "compute", "name": f"backward {model.layers[i].name}", "pid": 1,
               "tid": 1, "ts": begin * 1e6, "dur": (end - begin) * 1e6,
               "args": {"params": model.layers[i].params}}
        begin = end
    for number, b in enumerate(step.buckets, 1):
        yield {"ph": "X", "cat": "communication", "name": f"all-reduce bucket {number}", "pid": 1,
               "tid": 2, "ts": b.start * 1e6, "dur": (b.end - b.start) * 1e6,
               "args": {"elements": b.elements, "layers": f"{b.lo + 1}-{b.hi + 1}",
                        "ready": b.ready * 1e6}}


def best(runs: list[Overlap]) -> Overlap:
    """The sweep's best step: the shortest, the larger bucket on a tie (fewer all-reduces to launch)."""
    return min(runs, key=lambda o: (o.step_seconds, -o.bucket_mb))
