"""The lessons' overlap figures: DDP's gradient buckets under the backward pass (ringsim.training.overlap).

Every figure is `ringsim.training.overlap.simulate` (or its `sweep`) on a preset model (ringsim.training.models,
ResNet-50 unless model= names another) at the figure's G on the lessons' machine
(ringsim.lessons.costs.model_of), with bucket_mb= MiB buckets (DDP's default unless named;
bucket_mb=inf: no cap, which DDP still splits after its first 1 MiB bucket).
"""

from __future__ import annotations

import math

from ..core.errors import RingsimError
from .cache import Cache
from ..core.formula import format_number
from ..core.units import format_seconds
from .words import Entry, model_key, model_line

DEFAULT_MODEL = "resnet-50"
OPTIONS = ("gpus", "model", "bucket_mb", "alpha_us", "gbps", "topology")

_STEPS = Cache(64)
_SWEEPS = Cache(64)


def _setup(a):
    from ..training import overlap
    from ..training.models import model as preset
    from .costs import model_of
    name = a.options.get("model", DEFAULT_MODEL)
    mb = a.options.get("bucket_mb", overlap.DEFAULT_BUCKET_MB)
    return preset(name), model_of(*model_key(a)), mb, (name, a.scenario.gpus, model_key(a))


def _spend(a, model, runs: int) -> None:
    # An overlap run is one closed-form time per bucket and an event per layer: cheap.
    a.ctx.budget.spend(runs * (len(model.layers) // 50 + 1), f"{a.expr.head!r} (an overlap run)")


def step(a, bucket_mb: float | None = None):
    """One training step with the figure's bucket size (or `bucket_mb`)."""
    from ..training import overlap
    net, cost, mb, key = _setup(a)
    mb = mb if bucket_mb is None else bucket_mb
    if key + (mb,) not in _STEPS:
        _spend(a, net, 1)
        _STEPS[key + (mb,)] = overlap.simulate(net, a.scenario.gpus, cost, bucket_mb=mb)
    return _STEPS[key + (mb,)]


def sweep(a) -> list:
    """The step at every bucket size of ringsim.training.overlap's sweep."""
    from ..training import overlap
    net, cost, _, key = _setup(a)
    if key not in _SWEEPS:
        _spend(a, net, len(overlap.SWEEP_MB))
        _SWEEPS[key] = overlap.sweep(net, a.scenario.gpus, cost)
    return _SWEEPS[key]


def mib(value: float) -> str:
    """A bucket size as the sweep names it: '25' (MiB) or 'no cap' (two buckets still: DDP's
    first closes at 1 MiB)."""
    return "no cap" if math.isinf(value) else f"{value:g}"


def _best(a) -> str:
    from ..training.overlap import best
    size = best(sweep(a)).bucket_mb
    return mib(size) if math.isinf(size) else f"{size:g} MiB"


def _serial(a) -> float:
    s = step(a)
    return s.forward_seconds + s.backward_seconds + s.communication_seconds


def _percent(part: float, whole: float) -> str:
    return format_number(round(100 * part / whole)) if whole > 0 else "0"


def _sweep_block(a) -> str:
    from ..training.overlap import best
    runs = sweep(a)
    top = best(runs)
    lines = [f"  {'bucket MiB':>10}  {'buckets':>7}  {'step':>10}  {'exposed':>10}"]
    for o in runs:
        lines.append(f"  {mib(o.bucket_mb):>10}  {len(o.buckets):>7}  {format_seconds(o.step_seconds):>10}  "
                     f"{format_seconds(o.exposed_seconds):>10}" + ("  < best" if o is top else ""))
    return "\n".join(lines)


def _setting(a, buckets: bool = True) -> str:
    net, _, mb, _ = _setup(a)
    size = ", no bucket cap" if math.isinf(mb) else f", buckets of {mb:g} MiB"
    return f"{net.title} on {a.scenario.gpus:,} GPUs{size if buckets else ''}; " \
           f"{model_line(a).split(', ', 2)[-1]}"


def _best_why(a, value: str) -> str:
    rows = ", ".join(f"{mib(o.bucket_mb)}: {format_seconds(o.step_seconds)}" for o in sweep(a))
    return (f"ringsim.training.overlap ran one step at every bucket size ({_setting(a, False)}); step times: "
            f"{rows}. The shortest wins (the larger size on a tie).")


def _step_why(a, value: str) -> str:
    s = step(a)
    return (f"ringsim.training.overlap ran the step ({_setting(a)}): the backward pass ends at "
            f"{format_seconds(s.computed)}, the last all-reduce at "
            f"{format_seconds(max((b.end for b in s.buckets), default=0.0))}; "
            f"{format_seconds(s.exposed_seconds)} of {format_seconds(s.communication_seconds)} "
            f"of communication is exposed.")


def _buckets_why(a, value: str) -> str:
    from ..training import overlap
    net, _, mb, _ = _setup(a)
    tensors = sum(len(layer.tensors) for layer in net.layers)
    return (f"DDP fills buckets tensor by tensor in the order the gradients are ready (last "
            f"defined first), the first up to "
            f"{overlap.FIRST_BUCKET_BYTES // overlap.MIB} MiB, the others up to the cap "
            f"({'none' if math.isinf(mb) else f'{mb:g} MiB'}), each closing once it holds at least "
            f"its limit: {net.title}'s {tensors} tensors make {value} buckets.")


def entries() -> dict:
    """The overlap words, as vocabulary Entries."""
    from ..training import overlap
    s = step
    return {
        "overlap.model": Entry(lambda a: _setup(a)[0].title, OPTIONS, "the preset's name: 'ResNet-50'"),
        "overlap.params": Entry(lambda a: format_number(_setup(a)[0].params), OPTIONS,
                                "the preset's parameters"),
        "overlap.layers": Entry(lambda a: format_number(len(_setup(a)[0].layers)), OPTIONS,
                                "the preset's layers"),
        "overlap.first_mib": Entry(lambda a: format_number(overlap.FIRST_BUCKET_BYTES // overlap.MIB), (),
                                   "DDP's first bucket, in MiB (kDefaultFirstBucketBytes)"),
        "overlap.cap_mib": Entry(lambda a: format_number(overlap.DEFAULT_BUCKET_MB), (),
                                 "DDP's default bucket_cap_mb"),
        "overlap.tflops": Entry(lambda a: format_number(round(overlap.DEFAULT_FLOPS / 1e12)), (),
                                "the compute rate ringsim assumes, TFLOP/s"),
        "overlap.buckets": Entry(lambda a: format_number(len(s(a).buckets)), OPTIONS,
                                 "how many buckets DDP makes", _buckets_why),
        "overlap.forward": Entry(lambda a: format_seconds(s(a).forward_seconds), OPTIONS, "the forward pass"),
        "overlap.backward": Entry(lambda a: format_seconds(s(a).backward_seconds), OPTIONS,
                                  "the backward pass (twice the forward)"),
        "overlap.comm": Entry(lambda a: format_seconds(s(a).communication_seconds), OPTIONS,
                              "all the buckets' all-reduces, end to end"),
        "overlap.hidden": Entry(lambda a: format_seconds(s(a).communication_seconds - s(a).exposed_seconds),
                                OPTIONS, "communication hidden under the backward pass"),
        "overlap.exposed": Entry(lambda a: format_seconds(s(a).exposed_seconds), OPTIONS,
                                 "communication still running after the backward pass", _step_why),
        "overlap.exposed.percent": Entry(lambda a: _percent(s(a).exposed_seconds, s(a).communication_seconds),
                                         OPTIONS, "exposed ÷ all communication, in whole percent",
                                         _step_why),
        "overlap.step": Entry(lambda a: format_seconds(s(a).step_seconds), OPTIONS,
                              "forward + backward + exposed communication", _step_why),
        "overlap.serial": Entry(lambda a: format_seconds(_serial(a)), OPTIONS,
                                "the step without overlap: forward + backward + all communication"),
        "overlap.best": Entry(_best, OPTIONS, "the sweep's best bucket size: '25 MiB' or 'no cap'",
                              _best_why),
        "overlap.sweep": Entry(_sweep_block, OPTIONS, "the step at every bucket size (a block)"),
    }


def check_bucket(value: str) -> float:
    """A bucket_mb= option: a positive number of MiB, or inf for no cap."""
    try:
        number = float(value)
    except ValueError:
        raise RingsimError(f"bucket_mb must be a number of MiB or inf, got {value!r}") from None
    if not number > 0:
        raise RingsimError(f"bucket_mb must be above 0, got {value!r}")
    return number
