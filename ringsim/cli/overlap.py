"""ringsim overlap: DDP gradient buckets all-reduced under the backward pass; the best bucket size."""

from __future__ import annotations

import argparse
import json
import math

from ..core.checks import count_arg
from ..core.naming import plural
from ..core.errors import RingsimError
from ..core.files import atomic_output, check_not_read, check_output
from ..core.textout import escaped
from ..core.width import say
from ..cost.topology import topology_file
from ._cost_args import MODEL_HELP, add_cost_arguments, gpus_from_args, model_from_args
from ..algorithms import given_text, with_options
from ..algorithms.timing import nccl_layout
from ._nccl_layout import flags, given_options
from .common import add_option_arguments, gpus_arg

ORDER = 38
HELP = "overlap gradient all-reduces with the backward pass, as DDP's buckets do; sweep bucket sizes"
DESCRIPTION = (
    HELP + ". The backward pass runs layer by layer, last layer first (2 × the forward FLOPs at "
    "--tflops); DDP packs gradients into buckets in reverse layer order (a 1 MiB first bucket, "
    "launched first, then --bucket-mb, 25 MiB by default) and all-reduces each bucket, in order "
    "on one stream, once its gradients are ready. Reports the step time, the communication left exposed after "
    "the backward pass, and the best bucket size of a sweep. The ring is the textbook's, GPUs in "
    "order 1, 2, …, G, unless --ring-order or --channels lay it out otherwise; on several nodes "
    "it also prints what NCCL's layout, one ring per NIC (--ring-order rails:P), would take. "
    + MODEL_HELP)


def _ranged(low: float, high: float, what: str):
    """An argparse type for a number from `low` to `high` (stated in the error)."""
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what}, got {text[:40]!r}") from None
        if not low <= value <= high:  # NaN fails too
            raise argparse.ArgumentTypeError(f"{what} must be from {low:g} to {high:,g}, "
                                             f"got {text[:40]!r}")
        return value
    return parse


_positive = _ranged(0.001, 1e6, "a bucket size in MiB")  # 1 KiB to about 1 TiB
_tflops = _ranged(0.001, 1e6, "a TFLOP/s figure")       # 1 GFLOP/s to 1 EFLOP/s per GPU


def register(sub) -> None:
    """Add the `overlap` subcommand to `sub`."""
    from ..algorithms import DEFAULT_ALGORITHM
    from ..algorithms.timing import timed_algorithms
    from ..training.models import MODELS
    parser = sub.add_parser("overlap", help=HELP, description=DESCRIPTION)
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--model", default=None, choices=list(MODELS),
                       help="a preset (default: llama-7b; sources in ringsim/training/models.py)")
    which.add_argument("--layers", default=None, metavar="SPEC",
                       help="layer sizes in forward order, e.g. 131M,32x202M,131M (each layer's "
                            "forward: 2 FLOPs per parameter per sample)")
    parser.add_argument("--bucket-mb", type=_positive, default=25.0, metavar="MB",
                        help="bucket cap in MiB, as DDP's bucket_cap_mb (default: 25)")
    parser.add_argument("-g", "--gpus", type=gpus_arg, default=None, metavar="G",
                        help="data-parallel GPUs (default: 8, or --nodes × GPUs per node)")
    parser.add_argument("-a", "--algorithm", default=DEFAULT_ALGORITHM, choices=timed_algorithms(),
                        help=f"all-reduce algorithm for the buckets (default: {DEFAULT_ALGORITHM})")
    # train's --batch is the global batch; this one is per GPU, so it has its own name
    # (DeepSpeed's train_micro_batch_size_per_gpu).
    parser.add_argument("--micro-batch", dest="batch", default=None, metavar="B",
                        type=count_arg("the micro-batch", minimum=1, maximum=1_000_000_000),
                        help="samples per GPU (default: the preset's: one 4,096-token sequence "
                             "for llama-7b, 64 images for resnet-50, 1 for --layers)")
    parser.add_argument("--tflops", type=_tflops, default=400.0, metavar="F",
                        help="achieved TFLOP/s per GPU (default: 400, ~40%% of an H100's dense "
                             "BF16 peak)")
    parser.add_argument("--json", action="store_true",
                        help="one JSON object with step_seconds, exposed_seconds, the buckets, the sweep")
    parser.add_argument("--trace", default=None, metavar="FILE",
                        help="write the step as Chrome/Perfetto trace JSON (compute and "
                             "communication tracks)")
    add_cost_arguments(parser, size=False)
    add_option_arguments(parser, nodes=False)  # --nodes is the topology's (add_cost_arguments)
    parser.set_defaults(run=run)


def _mb(value: float) -> str:
    """A bucket cap as the sweep names it: '25 MiB', or 'no cap' (bucket_cap_mb unbounded)."""
    # Not "one bucket": DDP closes its first bucket at 1 MiB whatever the cap, so with no cap
    # there are two (the note under the sweep says so).
    return "no cap" if math.isinf(value) else f"{value:g} MiB"


def _uncapped(step) -> str:
    """What DDP does with no cap: its first 1 MiB bucket, then one bucket for the rest."""
    from ..training.overlap import FIRST_BUCKET_BYTES, MIB
    if len(step.buckets) == 1:  # a model of at most 1 MiB fits the first bucket
        return "the whole model in one bucket"
    return f"DDP's first bucket of {FIRST_BUCKET_BYTES // MIB} MiB, then one for the rest"


def priced(algorithm: str, gpus: int, options: dict) -> str:
    """What was priced, in words: 'ring all-reduce (ring order rails:8)'."""
    return with_options(f"{algorithm} all-reduce", given_text(algorithm, gpus, options))


def run(args: argparse.Namespace) -> int:
    """Run `ringsim overlap` on the parsed `args`; returns the exit status."""
    from ..training.models import model as preset, parse_layers
    from ..training.overlap import (FIRST_BUCKET_BYTES, MAX_GPU_BUCKETS, MIB,
                                    SECONDS_PER_GPU_BUCKET, SWEEP_MB, best, laid_out_work, sweep)
    from ..core.units import format_seconds
    from ..algorithms import check_options
    from ..algorithms.timing import check_timed, machine_options
    trace_path = None if args.trace is None else check_output(args.trace, "--trace")
    if trace_path is not None and topology_file(args.topology):
        check_not_read(trace_path, "--trace", "overlap", {"the --topology file": args.topology})
    cost = model_from_args(args)
    gpus = gpus_from_args(args, cost.topology, 8)
    check_timed(args.algorithm, cost, gpus)
    given = given_options(args)
    # An option the algorithm does not take is refused here, in the one line walk and timeline give.
    check_options(args.algorithm, gpus, {**machine_options(args.algorithm, gpus, cost), **given})
    net = parse_layers(args.layers) if args.layers is not None else preset(args.model or "llama-7b")
    if args.batch is not None and not 1 <= args.batch <= 10**9:
        raise RingsimError(f"--micro-batch must be from 1 to 1,000,000,000 samples, got {args.batch}")
    options = {"flops": args.tflops * 1e12, "batch": args.batch, "algorithm": args.algorithm,
               "options": given}
    sizes = sorted(set(SWEEP_MB) | {args.bucket_mb})
    # The step at --bucket-mb is the sweep's own run at that size: one sweep prices every
    # bucket size once (at 1,000,000 GPUs on laid-out rings each price takes a while).
    runs = sweep(net, gpus, cost, sizes, **options)
    step = runs[sizes.index(args.bucket_mb)]
    winner = best(runs)
    layout = nccl_layout(args.algorithm, gpus, cost, given)
    # The same buckets with NCCL's layout: the same simulation, the algorithm laid out as NCCL
    # does (the ring one per NIC), and its own best bucket: the advice differs with the layout.
    laid_out = {**options, "options": layout}
    rails_note = ""
    work = 0 if layout is None else laid_out_work(net, gpus, cost, sizes, layout)
    if work > MAX_GPU_BUCKETS:  # an extra the command was not asked for: left out, not refused
        rails_note = (f"NCCL's layout, one ring per NIC ({flags(layout)}), is left out: "
                      f"pricing it at {work // gpus:,} bucket sizes × {gpus:,} GPUs would take "
                      f"about {format_seconds(work * SECONDS_PER_GPU_BUCKET)}.")
        layout = None
    nccl_runs = None if layout is None else sweep(net, gpus, cost, sizes, **laid_out)
    nccl = None if layout is None else nccl_runs[sizes.index(args.bucket_mb)]
    nccl_best = None if layout is None else best(nccl_runs)
    if trace_path is not None:
        from ..training.overlap import trace_events
        from ..timeline.trace import write_events
        with atomic_output(trace_path, "--trace") as out:
            write_events(trace_events(step, net), out)
    if args.json:
        print(json.dumps({
            "model": net.name, "params": net.params, "layers": len(net.layers), "gpus": gpus,
            "topology": cost.topology.name, "algorithm": args.algorithm, "options": given,
            "bucket_mb": args.bucket_mb,
            "step_seconds": step.step_seconds, "exposed_seconds": step.exposed_seconds,
            "communication_seconds": step.communication_seconds,
            "forward_seconds": step.forward_seconds, "backward_seconds": step.backward_seconds,
            "buckets": [{"layers": [b.lo + 1, b.hi + 1], "elements": b.elements, "ready": b.ready,
                         "start": b.start, "end": b.end} for b in step.buckets],
            "sweep": [{"bucket_mb": None if math.isinf(o.bucket_mb) else o.bucket_mb,
                       "buckets": len(o.buckets), "step_seconds": o.step_seconds,
                       "exposed_seconds": o.exposed_seconds} for o in runs],
            "best_bucket_mb": None if math.isinf(winner.bucket_mb) else winner.bucket_mb,
            # NCCL's layout of the same buckets, where the plain ring on several nodes was priced
            "rails": None if nccl is None else {
                **layout, "step_seconds": nccl.step_seconds,
                "exposed_seconds": nccl.exposed_seconds,
                "communication_seconds": nccl.communication_seconds,
                "best_bucket_mb": None if math.isinf(nccl_best.bucket_mb) else nccl_best.bucket_mb,
                "best_step_seconds": nccl_best.step_seconds}}))
        return 0
    batch = net.batch if args.batch is None else args.batch
    say(f"Overlap · {net.title}: {net.params:,} parameters in {plural(len(net.layers), 'layer')} · "
        f"{batch:,} × {net.sample} per GPU · {plural(gpus, 'GPU')} · {cost.topology.name}")
    say(f"Gradients of {cost.itemsize} bytes; buckets of {_mb(args.bucket_mb)} (the first "
        f"{FIRST_BUCKET_BYTES // MIB} MiB, as DDP): {plural(len(step.buckets), 'bucket')}"
        f", {priced(args.algorithm, gpus, given)} each, one stream")
    say(f"Forward {format_seconds(step.forward_seconds)}, backward "
        f"{format_seconds(step.backward_seconds)} at {args.tflops:g} TFLOP/s")
    hidden = step.communication_seconds - step.exposed_seconds
    say(f"Communication {format_seconds(step.communication_seconds)}: "
        f"{format_seconds(hidden)} hidden under the backward pass, "
        f"{format_seconds(step.exposed_seconds)} exposed")
    serial = step.forward_seconds + step.backward_seconds + step.communication_seconds
    say(f"Step time {format_seconds(step.step_seconds)} (without overlap: "
        f"{format_seconds(serial)})")
    if rails_note:
        say(rails_note)
    if nccl is not None:
        say(f"The plain ring leaves each node through one NIC; NCCL lays its rings out one per "
            f"NIC: {flags(layout)} gives {format_seconds(nccl.communication_seconds)} of "
            f"communication, {format_seconds(nccl.exposed_seconds)} exposed, step "
            f"{format_seconds(nccl.step_seconds)}; laid out so, the best is "
            + (f"no bucket cap ({_uncapped(nccl_best)}; step " if math.isinf(nccl_best.bucket_mb)
               else f"buckets of {_mb(nccl_best.bucket_mb)} (step ")
            + f"{format_seconds(nccl_best.step_seconds)}).")
    say()
    say("Bucket size sweep:")
    say(f"  {'bucket cap':>10}  {'buckets':>7}  {'step':>10}  {'exposed':>10}")
    for o in runs:
        mark = "  ← best" if o is winner else ""
        say(f"  {_mb(o.bucket_mb):>10}  {len(o.buckets):>7}  {format_seconds(o.step_seconds):>10}  "
            f"{format_seconds(o.exposed_seconds):>10}{mark}")
    # Sizes whose step is the winner's to within a part in a thousand (what the table shows)
    # are named with it, so that a tie is not read as one best size.
    def same(o) -> bool:
        return abs(o.step_seconds - winner.step_seconds) <= 1e-3 * winner.step_seconds
    at = runs.index(winner)
    lo, hi = at, at
    while lo > 0 and same(runs[lo - 1]):
        lo -= 1
    while hi + 1 < len(runs) and same(runs[hi + 1]):
        hi += 1
    tied = runs[lo:hi + 1]
    fewest = min(tied, key=lambda o: (len(o.buckets), -o.bucket_mb))
    best = (_mb(winner.bucket_mb) if len(tied) == 1 else
            f"{_mb(winner.bucket_mb)} (from {_mb(tied[0].bucket_mb)} to {_mb(tied[-1].bucket_mb)} "
            f"the step is the same to a part in a thousand; {_mb(fewest.bucket_mb)} launches the "
            f"fewest all-reduces, {len(fewest.buckets):,})")
    uncapped = next((o for o in runs if math.isinf(o.bucket_mb)), None)
    if uncapped is not None:
        count = len(uncapped.buckets)
        say(f"  no cap: bucket_cap_mb without a limit; {_uncapped(uncapped)}"
            + (f" ({plural(count, 'bucket')})" if count > 1 else ""))
    say(f"\nBest bucket size: {best}. Small buckets pay α per all-reduce; large ones start late "
        f"and leave the last all-reduce exposed.")
    if trace_path is not None:
        say(f"Trace written to {escaped(trace_path)} (open it in ui.perfetto.dev or chrome://tracing).")
    return 0
