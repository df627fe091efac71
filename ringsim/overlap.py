"""Overlap: DDP's gradient buckets all-reduced while the backward pass still runs.

PyTorch's DistributedDataParallel packs the parameters into buckets in the order they are
defined (torch/nn/parallel/distributed.py, `_compute_bucket_assignment_by_size(parameters,
[dist._DEFAULT_FIRST_BUCKET_BYTES, self.bucket_bytes_cap])`): the first bucket closes at
1 MiB (kDefaultFirstBucketBytes = 1024·1024, torch/csrc/distributed/c10d/reducer.hpp) so
that the gradients computed last do not wait in a large bucket, and every later bucket at
bucket_cap_mb (25 MiB by default; a tensor larger than the cap gets a bucket of its own).
The buckets are then reversed, because backward produces gradients last layer first, and
each bucket's all-reduce is launched, in order, once all its gradients are ready; the
all-reduces run one after another on one communication stream.

The model here: the backward pass runs layer by layer, last layer first, each taking
2 × its forward FLOPs (ringsim/models.py) at `flops` FLOP/s; a layer's gradients are ready
when its backward ends; an all-reduce of b elements takes the cost model's closed-form time
for the algorithm (ringsim/cost.py). The events run on the timeline's engine. A step is the
forward pass, the backward pass, and whatever communication is still running after it
(exposed); the optimizer step is left out.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .cost import CostModel, estimate
from .models import Model
from .timeline.engine import Engine

MIB = 1024 * 1024
FIRST_BUCKET_BYTES = 1 * MIB   # kDefaultFirstBucketBytes (reducer.hpp)
DEFAULT_BUCKET_MB = 25         # DistributedDataParallel(bucket_cap_mb=25)
# Achieved FLOP/s per GPU: an H100 SXM at about 40% of its 989 TFLOP/s dense BF16 peak
# (NVIDIA H100 datasheet), a model-FLOPs utilisation large training runs report.
DEFAULT_FLOPS = 400e12
SWEEP_MB = (1, 2, 5, 10, 25, 50, 100, 250, 1000, math.inf)


@dataclass(frozen=True)
class Bucket:
    """A bucket: its layers (forward indices lo..hi), elements, ready time, all-reduce start and end."""

    lo: int
    hi: int
    elements: int
    ready: float
    start: float
    end: float


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
        return math.fsum(b.end - b.start for b in self.buckets)

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


def assign_buckets(model: Model, bucket_bytes: float, itemsize: int,
                   first_bytes: float = FIRST_BUCKET_BYTES) -> list[tuple[int, int, int]]:
    """DDP's assignment in forward order: (first layer, last layer, elements) per bucket.

    A bucket closes once it holds at least its limit (1 MiB for the first, the cap after);
    whole layers only, since a layer's tensors are ready together.
    """
    out, lo, size, elements = [], 0, 0, 0
    limit = first_bytes
    for i, layer in enumerate(model.layers):
        for tensor in layer.tensors:
            size += tensor * itemsize
            elements += tensor
        if size >= limit or i == len(model.layers) - 1:
            out.append((lo, i, elements))
            lo, size, elements, limit = i + 1, 0, 0, bucket_bytes
    return out


def simulate(model: Model, gpus: int, cost: CostModel, *, bucket_mb: float = DEFAULT_BUCKET_MB,
             flops: float = DEFAULT_FLOPS, batch: int | None = None, algorithm: str = "ring") -> Overlap:
    """One step of `model` with DDP buckets of `bucket_mb` MiB on G GPUs (a batch of samples per GPU)."""
    batch = model.batch if batch is None else batch
    forward = [layer.flops * batch / flops for layer in model.layers]
    forward_total = math.fsum(forward)
    buckets = assign_buckets(model, bucket_mb * MIB, cost.itemsize)
    seconds = [estimate(algorithm, gpus, elements, cost).seconds for _, _, elements in buckets]
    engine = Engine()
    layer_end = [0.0] * len(model.layers)
    # Buckets in the order DDP launches them: last layers first.
    order = list(range(len(buckets)))[::-1]
    waiting = {lo: k for k, (lo, _, _) in enumerate(buckets)}  # ready when its first layer is done
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

    def backward(i: int) -> None:
        layer_end[i] = engine.now
        if i in waiting:
            ready[waiting[i]] = engine.now
            launch()
        if i > 0:
            engine.after(2 * forward[i - 1], lambda: backward(i - 1))

    if model.layers:
        engine.at(forward_total + 2 * forward[-1], lambda: backward(len(model.layers) - 1))
    engine.run()
    result = tuple(Bucket(lo, hi, el, ready[k], *started[k])
                   for k, (lo, hi, el) in enumerate(buckets))
    return Overlap(forward_total, 2 * forward_total, tuple(sorted(result, key=lambda b: b.start)),
                   bucket_mb, tuple(layer_end))


def sweep(model: Model, gpus: int, cost: CostModel, sizes=SWEEP_MB, **options) -> list[Overlap]:
    """The step at every bucket size of the sweep (math.inf: one bucket for the whole model)."""
    return [simulate(model, gpus, cost, bucket_mb=mb, **options) for mb in sizes]


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
