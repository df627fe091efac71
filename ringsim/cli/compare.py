"""ringsim compare: one table, a row per algorithm, from closed forms; time with --time."""

from __future__ import annotations

import argparse
import json
from fractions import Fraction

from ..algorithms import ALGORITHMS, symbols
from ..algorithms.timing import unavailable
from ..core.naming import plural
from ..studies.compare import Row, compare, contrasts
from ..studies.whose import nccl_for, nccl_release, nccl_version
from ..cost.model import algbw_of, busbw_of
from ..cost.nccl import NcclChoice, socket_cap
from ..cost.nccl_notes import fallback_note, last_node_note, path_note
from ..core.errors import RingsimError
from ..core.formula import format_number
from ..core.units import format_bandwidth, format_bytes, format_seconds
from ..core.width import say, table, wrap
from ._cost_args import (BANDWIDTH_HELP, MODEL_HELP, add_cost_arguments, add_nccl_argument,
                         elements_from_args, gpus_from_args, model_from_args, uses_cost)
from ..algorithms.collectives import collective
from ._collective import add_collective_argument, compare_one
from ._numerics_view import add_numerics_arguments, run_numerics
from ._nccl_layout import given_options
from .common import add_option_arguments, elements_arg, gpus_arg

ORDER = 20
HELP = "compare the algorithms' traffic (and with --time their modelled time) in one table"
DESCRIPTION = (
    HELP + ". Every row comes from the algorithms' closed forms: no plan is built and no "
    "gradient allocated, so any G up to 1,000,000 answers in well under a second, with exact "
    "integers (no overflow) however large N is. The 1,000-GPU interview question: "
    "ringsim compare --gpus 1000 --elements 7000000000. Time: ringsim compare --time "
    "--topology dgx-h100 --nodes 4 --size 1GiB. " + MODEL_HELP + " " + BANDWIDTH_HELP)


def register(sub) -> None:
    """Add the `compare` subcommand to `sub`."""
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
    add_nccl_argument(parser, "NCCL's model's row (implies --time)")
    add_option_arguments(parser, nodes=False)  # --nodes is the topology's (add_cost_arguments)
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
    """Run `ringsim compare` on the parsed `args`; returns the exit status."""
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
    options = given_options(args)  # --nodes here is the topology's, not an algorithm option
    rows = compare(gpus, elements, model, options)
    pick = nccl_for(model, gpus, elements * model.itemsize, nccl=args.nccl) \
        if model is not None else None
    if args.json:  # the textbook rows first, as before; NCCL's model's pick last
        for r in rows:
            print(json.dumps(_record(r, gpus, elements, model)))
        if isinstance(pick, NcclChoice):
            print(json.dumps(_nccl_record(pick, gpus, elements, model, args.nccl)))
        return 0
    _print_counts(rows, gpus, elements)
    if model is not None:
        _print_times(rows, gpus, elements, model, pick, args.nccl)
    return 0


def _nccl_record(pick: NcclChoice, gpus: int, elements: int, model, nccl: str | None) -> dict:
    nbytes = elements * model.itemsize
    alg = algbw_of(nbytes, pick.seconds)
    version = nccl_version(nccl).removeprefix("NCCL ")
    # NCCL's names sit under "nccl", apart from the textbook rows' "algorithm" (ringsim's names)
    return {"model": "nccl", "nccl_version": version, "gpus": gpus,
            "elements": elements, "topology": model.topology.name, "bytes_per_gpu": nbytes,
            "nccl": {**pick.to_json(), "algbw": alg, "busbw": busbw_of(alg, gpus)}}


def _record(r: Row, gpus: int, elements: int, model) -> dict:
    spec = ALGORITHMS[r.algorithm]
    record = {
        "algorithm": r.algorithm, "options": dict(r.options), "gpus": gpus, "elements": elements,
        "total_elements": _exact(r.total), "formula_total": _exact(r.formulas.total.value),
        "busiest_gpu": r.busiest_gpu + 1,
        "busiest_sent": _exact(r.busiest_sent), "busiest_received": _exact(r.busiest_received),
        "steps": _exact(r.steps), "messages": _exact(r.messages),
        "nccl_name": spec.nccl_name,
        "mpi_implementations": [i._asdict() for i in spec.mpi_implementations],
    }
    if model is not None and r.timing is None:  # the hardware cannot run it (no switch that adds)
        record.update(model="textbook", topology=model.topology.name, dtype_bytes=model.itemsize,
                      bytes_per_gpu=elements * model.itemsize, seconds=None,
                      unavailable=unavailable(r.algorithm, model, gpus))
    elif model is not None:
        t = r.timing
        record.update(model="textbook", topology=model.topology.name, dtype_bytes=model.itemsize,
                      bytes_per_gpu=elements * model.itemsize,
                      seconds=t.estimate.seconds, algbw=t.algbw, busbw=t.busbw,
                      bottleneck=t.estimate.describe(model.topology), rank=t.rank)
    return record


def _table(header: tuple, body: list[tuple], left: tuple[int, ...] = (0,)) -> None:
    """Print a table: the `left` columns left-aligned, the last one free, the rest right-aligned."""
    print("\n".join(table([header, *body], left=left, free=True)))


def _print_counts(rows: list[Row], gpus: int, elements: int) -> None:
    say(f"{plural(gpus, 'GPU')} · {plural(elements, 'element')} per GPU\n")
    _table(("algorithm", "elements moved", "busiest GPU sent / received", "steps", "messages",
            "closed form"),
           [(r.label, format_number(r.total),
             f"GPU{r.busiest_gpu + 1}" +
             f": {format_number(r.busiest_sent)} / {format_number(r.busiest_received)}",
             format_number(r.steps), format_number(r.messages), str(r.formulas.total))
            for r in rows])
    note = symbols(gpus, (r.formulas.total for r in rows))
    if note:
        say(f"\n{note}.")
    for c in contrasts(rows):
        # The closed form as walk prints it: where G does not divide N its textbook value
        # (10.67) and the exact one (11) are each set beside their own expression.
        sent, other = c.other.formulas.busiest_sent, c.other.algorithm
        say(f"\nThe {c.row.algorithm} sends {_ratio(c.ratio)}× what the {other}'s busiest GPU "
            "sends" + (f": {sent}." if sent.uneven else f"; the {other}'s load per GPU is {sent}."))


def _print_times(rows: list[Row], gpus: int, elements: int, model, pick,
                 nccl: str | None) -> None:
    topo = model.topology
    nbytes = elements * model.itemsize
    where = f"{topo.name} · {plural(gpus, 'GPU')}"
    if topo.gpus_per_node:
        nodes = topo.nodes(gpus)
        where += f" in {plural(nodes, 'node')}"
    say(f"\nModelled time on {where} · {format_bytes(nbytes)} per GPU "
        f"({model.itemsize}-byte elements)")
    far, cap = None, None
    if isinstance(pick, NcclChoice) and topo.nodes(gpus) > 1:
        far, cap = path_note(topo, gpus, nccl), socket_cap(topo, gpus, nccl)
    # The textbook rows price the NIC's rate; NCCL's model caps a node whose NICs sit across
    # its CPU sockets below it, so the line says both.
    besides = {"across": f"(the NIC's rate; NCCL's model: every channel of a node shares the "
                         f"{format_bandwidth(cap)} link between its CPU sockets, nic_path sys)"
               } if cap else None
    say(topo.describe(besides) + "\n")
    _print_nccl(pick, gpus, nbytes, nccl)
    slow = fallback_note(topo, gpus, nccl) if isinstance(pick, NcclChoice) else None
    last = last_node_note(topo, gpus) if isinstance(pick, NcclChoice) else None
    for note in (far, slow, last):
        if note:
            say(f"Note: {note}.", most=100)
    # A row's times are the textbook model's even where NCCL has the schedule: the column
    # names NCCL's algorithm, so that its time is not read as NCCL's (that is the line above).
    say("\nTextbook α-β-γ model (what the lessons teach), every schedule ringsim builds; "
        "NCCL's name: what NCCL calls the schedule, timed here by the textbook model (NCCL's "
        "own time is above):\n", most=100)
    timed = sorted((r for r in rows if r.timing), key=lambda r: r.timing.rank)
    body = [(r.label, format_seconds(r.timing.estimate.seconds), format_bandwidth(r.timing.algbw),
             format_bandwidth(r.timing.busbw), str(r.timing.rank),
             ALGORITHMS[r.algorithm].nccl_name or "none", r.timing.estimate.describe(topo))
            for r in timed]
    _table(("algorithm", "time", "algbw", "busbw", "rank", "NCCL's name", "bottleneck"), body,
           left=(0, 5))
    for r in rows:
        if r.timing is None:
            say(f"\nNot timed: {r.title}: {unavailable(r.algorithm, model, gpus)}.")
    say("\nalgbw = S/t with S the bytes per GPU; busbw = algbw·2(G−1)/G, the rate each GPU's "
        "link must carry (nccl-tests' definitions).")
    _print_relation(timed, pick)


# What the reader types as it is written: never cut at the end of a line.
COMMANDS = ("compare --json",)


def _wrap(text: str) -> str:
    return wrap(text, most=100, keep=COMMANDS)


def _print_nccl(pick, gpus: int, nbytes: int, nccl: str | None) -> None:
    version = nccl_version(nccl)
    if pick is None:
        say(f"NCCL's model ({version}'s own tuning): one GPU, NCCL sends nothing.")
        return
    if not isinstance(pick, NcclChoice):
        print(_wrap(f"NCCL's model ({version}'s own tuning): no answer here: {pick}"))
        return
    alg = algbw_of(nbytes, pick.seconds)
    print(_wrap(
        f"NCCL's model ({version}'s own tuning, docs/cost.md): NCCL would run "
        f"{pick.algorithm}, protocol {pick.protocol}, on {plural(pick.channels, 'channel')}: "
        f"{format_seconds(pick.seconds)} (algbw {format_bandwidth(alg)}, busbw "
        f"{format_bandwidth(busbw_of(alg, gpus))}), {format_seconds(pick.latency)} fixed per call "
        f"plus the bytes at {format_bandwidth(pick.bandwidth)}"
        + (f", plus {format_seconds(pick.fill)} for its first step to cross the pipeline"
           if pick.fill > 0 else "")
        + ". ringsim predict" + (f" --nccl {nccl}" if nccl_release(nccl) else "")
        + " shows it over sizes."))


def _print_relation(timed: list[Row], pick) -> None:
    """How the textbook rows relate to what NCCL would do: its schedule's row, the fastest."""
    lines = []
    best = timed[0]
    best_spec = ALGORITHMS[best.algorithm]
    if not best_spec.nccl_name:
        others = " and ".join(dict.fromkeys(i.library for i in best_spec.mpi_implementations))
        lines.append(f"The fastest textbook row, {best.label}, is a schedule NCCL does not have"
                     + (f" ({others} run it)." if others else "."))
    if isinstance(pick, NcclChoice):
        same = [r for r in timed if ALGORITHMS[r.algorithm].nccl_name == pick.algorithm]
        if same:
            # NCCL's own layout (the rails ring) where there is one, else the fastest such row
            r = next((r for r in same if r.as_nccl), same[0])
            lines.append(f"NCCL's {pick.algorithm} in the textbook model is {r.label}: "
                         f"{format_seconds(r.timing.estimate.seconds)} (rank {r.timing.rank}), "
                         f"against NCCL's model's {format_seconds(pick.seconds)}, which adds "
                         f"NCCL's fixed cost per call ({format_seconds(pick.latency)})"
                         + (f", its pipeline's fill ({format_seconds(pick.fill)})"
                            if pick.fill > 0 else "")
                         + " and prices its protocol; the textbook model does neither.")
        else:
            ours = [r for r in timed if ALGORITHMS[r.algorithm].nccl_name]
            lines.append(f"NCCL's {pick.algorithm} has no textbook row here"
                         + (f"; of the textbook rows NCCL has, the fastest is {ours[0].label}: "
                            f"{format_seconds(ours[0].timing.estimate.seconds)} (rank "
                            f"{ours[0].timing.rank})." if ours else "."))
    lines.append(_mpi_sentence(timed))
    print("\n" + "\n".join(_wrap(line) for line in lines))


def _mpi_sentence(timed: list[Row]) -> str:
    """Which MPI libraries run the schedules NCCL lacks, from each spec (--json names the files)."""
    groups: dict[str, list[str]] = {}
    for r in timed:
        spec = ALGORITHMS[r.algorithm]
        if spec.nccl_name:
            continue
        libraries = " and ".join(dict.fromkeys(i.library for i in spec.mpi_implementations))
        titles = groups.setdefault(libraries, [])
        if spec.title not in titles:
            titles.append(spec.title)
    parts = [f"{who} run{'s' * (' and ' not in who)} "
             f"{', '.join(titles)}" for who, titles in groups.items() if who]
    none = groups.get("", [])
    text = "Not in NCCL: " + "; ".join(parts) if parts else "Not in NCCL"
    if none:
        text += ("; " if parts else ": ") + f"neither MPICH nor Open MPI has {', '.join(none)}"
    return text + " (their source files: compare --json)."
