"""ringsim compare: one table, a row per algorithm, from closed forms; time with --time."""

from __future__ import annotations

import argparse
import json
import textwrap
from fractions import Fraction

from ..algorithms.timing import unavailable
from ..core.naming import plural
from ..studies.compare import Row, compare, rails_ring
from ..cost.model import algbw, busbw
from ..core.errors import RingsimError
from ..core.formula import format_number
from ..core.units import format_bandwidth, format_bytes, format_seconds
from ._cost_args import (BANDWIDTH_HELP, MODEL_HELP, add_cost_arguments, elements_from_args,
                         gpus_from_args, model_from_args, uses_cost)
from ..algorithms.collectives import collective
from ._collective import add_collective_argument, compare_one
from ._numerics_view import add_numerics_arguments, run_numerics
from .common import elements_arg, gpus_arg

ORDER = 20
HELP = "compare the algorithms' traffic (and with --time their modelled time) in one table"
DESCRIPTION = (
    HELP + ". Every row comes from the algorithms' closed forms: no plan is built and no "
    "gradient allocated, so any G up to 1,000,000 answers in well under a second, with exact "
    "integers (no overflow) however large N is. The 1,000-GPU interview question: "
    "ringsim compare --gpus 1000 --elements 7000000000. Time: ringsim compare --time "
    "--topology dgx-h100 --nodes 4 --size 1GiB. " + MODEL_HELP + " " + BANDWIDTH_HELP)


def register(sub) -> None:
    parser = sub.add_parser("compare", help=HELP, description=DESCRIPTION)
    parser.add_argument("-g", "--gpus", type=gpus_arg, default=None, metavar="G",
                        help="number of GPUs, up to 1,000,000 (default: 4, or --nodes × GPUs "
                             "per node)")
    parser.add_argument("-n", "--elements", type=elements_arg, default=None, metavar="N",
                        help="gradient elements per GPU (default: 8)")
    parser.add_argument("--time", action="store_true",
                        help="add each algorithm's modelled time, algbw, busbw, bottleneck and "
                             "rank (implied by any time-model option)")
    parser.add_argument("--json", action="store_true", help="print one JSON object per algorithm")
    add_collective_argument(parser)
    add_cost_arguments(parser)
    add_numerics_arguments(parser)
    parser.set_defaults(run=run)


def _exact(value):
    """An exact count for JSON: an int, or a Fraction written as 'p/q' (never a rounded float)."""
    value = Fraction(value)
    return value.numerator if value.denominator == 1 else f"{value.numerator}/{value.denominator}"


def _ratio(value: Fraction) -> str:
    """A ratio to one decimal, computed exactly; '≈' marks a rounded one."""
    tenths = round(value * 10)
    text = f"{tenths // 10:,}.{tenths % 10}" if tenths % 10 else f"{tenths // 10:,}"
    return text if Fraction(tenths, 10) == value else "≈" + text


def run(args: argparse.Namespace) -> int:
    c = collective(args.collective)
    if len(c.algorithms) == 1:  # nothing to compare it with: the one algorithm's row
        return compare_one(args, c)
    timed = args.time or uses_cost(args)
    if args.numerics:
        return run_numerics(args, timed)
    if args.seed is not None:
        raise RingsimError("--seed sets the gradients of --numerics; give it with --numerics")
    model = model_from_args(args) if timed else None
    gpus = gpus_from_args(args, model.topology, 4) if model else (args.gpus or 4)
    elements = elements_from_args(args, model.itemsize if model else 4, 8)
    rows = compare(gpus, elements, model)
    if args.json:
        for r in rows:
            print(json.dumps(_record(r, gpus, elements, model)))
        return 0
    _print_counts(rows, gpus, elements)
    if model is not None:
        _print_times(rows, gpus, elements, model)
    return 0


def _record(r: Row, gpus: int, elements: int, model) -> dict:
    record = {
        "algorithm": r.algorithm, "gpus": gpus, "elements": elements,
        "total_elements": _exact(r.total), "formula_total": _exact(r.formulas.total.value),
        "busiest_gpu": r.busiest_gpu + 1,
        "busiest_sent": _exact(r.busiest_sent), "busiest_received": _exact(r.busiest_received),
        "steps": _exact(r.steps), "messages": _exact(r.messages),
    }
    if model is not None and r.timing is None:  # the hardware cannot run it (no switch that adds)
        record.update(topology=model.topology.name, dtype_bytes=model.itemsize,
                      bytes_per_gpu=elements * model.itemsize, seconds=None,
                      unavailable=unavailable(r.algorithm, model, gpus))
    elif model is not None:
        t = r.timing
        record.update(topology=model.topology.name, dtype_bytes=model.itemsize,
                      bytes_per_gpu=elements * model.itemsize,
                      seconds=t.estimate.seconds, algbw=t.algbw, busbw=t.busbw,
                      bottleneck=t.estimate.describe(model.topology), rank=t.rank)
    return record


def _table(header: tuple, body: list[tuple]) -> None:
    """Print a table: first column left-aligned, the last one free, the rest right-aligned."""
    table = [header] + body
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    for number, row in enumerate(table):
        cells = [row[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(row[1:-1], widths[1:-1])]
        print("  ".join(cells + [row[-1]]).rstrip())
        if number == 0:
            print("  ".join("─" * w for w in widths))


def _print_counts(rows: list[Row], gpus: int, elements: int) -> None:
    print(f"{plural(gpus, 'GPU')} · {plural(elements, 'element')} per GPU\n")
    _table(("algorithm", "elements moved", "busiest GPU sent / received", "steps", "messages",
            "closed form"),
           [(r.title, format_number(r.total),
             f"GPU{r.busiest_gpu + 1}" +
             f": {format_number(r.busiest_sent)} / {format_number(r.busiest_received)}",
             format_number(r.steps), format_number(r.messages), str(r.formulas.total))
            for r in rows])
    named = {r.algorithm: r for r in rows}
    ring, master = named.get("ring"), named.get("master")
    if ring and master and ring.busiest_sent:
        ratio = Fraction(master.busiest_sent) / Fraction(ring.busiest_sent)
        print(f"\nThe master sends {_ratio(ratio)}× what the ring's busiest GPU sends; the ring's "
              f"load per GPU is 2·(G−1)·N/G = {format_number(ring.formulas.busiest_sent.value)}.")


def _print_times(rows: list[Row], gpus: int, elements: int, model) -> None:
    topo = model.topology
    nbytes = elements * model.itemsize
    where = f"{topo.name} · {plural(gpus, 'GPU')}"
    if topo.gpus_per_node:
        nodes = topo.nodes(gpus)
        where += f" in {plural(nodes, 'node')}"
    print(f"\nModelled time on {where} · {format_bytes(nbytes)} per GPU "
          f"({model.itemsize}-byte elements)")
    print(topo.describe() + "\n")
    timed = sorted((r for r in rows if r.timing), key=lambda r: r.timing.rank)
    body = [(r.title, format_seconds(r.timing.estimate.seconds), format_bandwidth(r.timing.algbw),
             format_bandwidth(r.timing.busbw), str(r.timing.rank),
             r.timing.estimate.describe(topo)) for r in timed]
    _table(("algorithm", "time", "algbw", "busbw", "rank", "bottleneck"), body)
    for r in rows:
        if r.timing is None:
            print(f"\nNot timed: {r.title}: {unavailable(r.algorithm, model, gpus)}.")
    print("\nalgbw = S/t with S the bytes per GPU; busbw = algbw·2(G−1)/G, the rate each GPU's "
          "link must carry (nccl-tests' definitions).")
    rails = rails_ring(gpus, elements, model)
    if rails is not None:
        per_node, est = rails
        alg = algbw(nbytes, est.seconds)
        print("\n" + textwrap.fill(
            f"The ring above is one ring: it crosses each node boundary through one GPU's NIC "
            f"while the other NICs idle. NCCL runs one ring per NIC (its channels); that "
            f"layout, --ring-order rails:{per_node}, takes {format_seconds(est.seconds)} "
            f"(busbw {format_bandwidth(busbw(alg, gpus))}, bottleneck "
            f"{est.describe(topo)}): ringsim timeline --ring-order rails:{per_node} shows it.",
            width=100, break_on_hyphens=False, break_long_words=False))
