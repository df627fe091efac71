"""--collective for walk, compare and timeline: all-reduce (default), reduce-scatter, all-gather."""

from __future__ import annotations

import argparse

from ..core.naming import plural
from ..core.width import say
from ..algorithms.collectives import ALL_REDUCE, COLLECTIVES, Collective


def add_collective_argument(parser: argparse.ArgumentParser) -> None:
    """--collective all-reduce|reduce-scatter|all-gather."""
    parser.add_argument("--collective", default=ALL_REDUCE.name, choices=list(COLLECTIVES),
                        help="what the GPUs compute: all-reduce (default), or the ring's "
                             "reduce-scatter (GPU k ends with segment k of the sum) or all-gather "
                             "(every GPU ends with every GPU's shard)")


def compare_one(args: argparse.Namespace, c: Collective) -> int:
    """`compare --collective reduce-scatter|all-gather`: the one algorithm's row (the ring's), from
    closed forms (and time)."""
    import json
    from fractions import Fraction
    from ..cost.model import algbw_of
    from ..core.formula import format_number
    from ..core.units import format_bandwidth, format_bytes, format_seconds
    from ._cost_args import elements_from_args, gpus_from_args, model_from_args, uses_cost
    from ..cost.nccl import NcclChoice
    from ..studies.whose import nccl_for, nccl_line
    timed = args.time or uses_cost(args)
    model = model_from_args(args) if timed else None
    gpus = gpus_from_args(args, model.topology, 4) if model else (args.gpus or 4)
    elements = elements_from_args(args, model.itemsize if model else 4, 8)
    from ._nccl_layout import given_options
    algorithm, = c.algorithms
    # the half's counts are the single ring's: an algorithm option is refused, not ignored
    given = given_options(args)
    form = c.closed_form(gpus, elements, algorithm, **given)
    factor = c.bus_factor(gpus)
    record = {"collective": c.name, "algorithm": algorithm, "gpus": gpus, "elements": elements,
              "total_elements": int(form.total.value), "busiest_sent": int(form.busiest_sent.value),
              "busiest_received": int(form.busiest_received.value), "steps": int(form.steps.value),
              "messages": int(form.messages.value)}
    if model is not None:
        est = c.seconds(gpus, elements, model, algorithm)
        alg = algbw_of(elements * model.itemsize, est.seconds)
        record.update(topology=model.topology.name, seconds=est.seconds, algbw=alg,
                      busbw=None if alg is None else alg * float(factor),
                      bottleneck=est.describe(model.topology))
        pick = nccl_for(model, gpus, elements * model.itemsize, c.name,
                        getattr(args, "nccl", None))  # compare's --nccl
        record["nccl"] = pick.to_json() if isinstance(pick, NcclChoice) else None
    if args.json:
        print(json.dumps(record))
        return 0
    say(f"{plural(gpus, 'GPU')} · {plural(elements, 'element')} per GPU · {c.title} ({algorithm}; the other "
        f"algorithms are all-reduces)\n")
    say(f"  elements moved       {format_number(form.total.value):>14}   {form.total.text}")
    say(f"  busiest GPU sent     {format_number(form.busiest_sent.value):>14}   {form.busiest_sent.text}")
    say(f"  busiest GPU received {format_number(form.busiest_received.value):>14}   "
        f"{form.busiest_received.text}")
    say(f"  steps                {format_number(form.steps.value):>14}   {form.steps.text}")
    say(f"  messages             {format_number(form.messages.value):>14}   {form.messages.text}")
    if model is not None:
        say(f"\nModelled time (textbook α-β-γ) on {model.topology.name} · {format_bytes(elements * model.itemsize)} "
            f"per GPU: {format_seconds(record['seconds'])}, algbw {format_bandwidth(record['algbw'])}, "
            f"busbw {format_bandwidth(record['busbw'])} (busbw = algbw·{c.factor_text} "
            f"= algbw·{format_number(Fraction(factor))}, nccl-tests' factor for {c.name}); "
            f"bottleneck: {record['bottleneck']}")
        say("\n" + nccl_line(pick, elements * model.itemsize, float(factor),
                             getattr(args, "nccl", None)) + ".")
    return 0
