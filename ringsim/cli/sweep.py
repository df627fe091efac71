"""ringsim sweep: modelled time and busbw of every algorithm over message sizes, and crossovers."""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from ..core.naming import plural
from ..cost.model import algbw_of
from ..core.checks import MAX_GPUS, count_arg
from ..core.errors import RingsimError
from ..core.terminal import is_terminal
from ..core.files import check_not_read, check_output, write_text
from ..core.textout import escaped, printable
from ..core.width import output_width, say, table, wrap
from ..cost.nccl import EMPTY_CALL
from ..cost.topology import topology_file
from ..studies.predict import rounded_sizes_note
from ..studies.sweep import Sweep, parse_sizes, sweep
from ..core.units import approx_bytes, format_bandwidth, format_bytes, format_seconds
from ..studies.whose import nccl_model, nccl_release, nccl_version
from ._cost_args import (BANDWIDTH_HELP, MODEL_HELP, add_cost_arguments, add_nccl_argument,
                         gpus_from_args, model_from_args)
from ._nccl_layout import flags
from ._plot import legend_entry, legend_rows, log_log_figure, round_yticks, series_style

ORDER = 25
HELP = "sweep message sizes: each algorithm's modelled time and busbw, the best, the crossovers"
DESCRIPTION = (
    HELP + ", as nccl-tests' all_reduce_perf -b 1K -e 8G -f 2 would measure them, but from "
    "the closed forms on a modelled topology. Prints a table, a log-log terminal plot (with "
    "plotext: pip install '.[plot]' from a clone) and the sizes where the fastest algorithm "
    "changes, found to the element by bisection. " + MODEL_HELP + " " + BANDWIDTH_HELP)


def register(sub) -> None:
    """Add the `sweep` subcommand to `sub`."""
    parser = sub.add_parser("sweep", help=HELP, description=DESCRIPTION)
    # One GPU has nothing to synchronise: every time would be 0 and every algorithm "fastest".
    parser.add_argument("-g", "--gpus", type=count_arg("the number of GPUs", minimum=2, maximum=MAX_GPUS),
                        default=None, metavar="G",
                        help="number of GPUs, 2 or more (default: 64, or --nodes × GPUs per node)")
    parser.add_argument("--sizes", default="1KiB..8GiB", metavar="A..B",
                        help="bytes per GPU: a range doubling each time (1KiB..8GiB, the default: "
                             "24 sizes), A..B:xF for a factor F, A..B:+S for a step of S bytes (A, "
                             "A+S, ... while at most B, as nccl-tests' -i), or a list 1KiB,1MiB,1GiB; "
                             "rounded down to whole elements as nccl-tests and predict do (the "
                             "output says which were); a size that rounds to 0 B is an empty "
                             "call, which takes every algorithm no time")
    parser.add_argument("--plot", choices=("time", "busbw"), default="time",
                        help="what the terminal plot and --svg show (default: time)")
    parser.add_argument("--no-plot", action="store_true", help="print the table only")
    parser.add_argument("--svg", default=None, metavar="FILE",
                        help="also write the plot as an SVG file (for slides); the name must "
                             "end in .svg")
    parser.add_argument("--json", action="store_true",
                        help="one JSON object per size (requested_bytes: the size asked for, "
                             "before it was rounded down to whole elements), then one per "
                             "crossover")
    add_cost_arguments(parser, size=False)
    add_nccl_argument(parser, "NCCL's model's column")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Run `ringsim sweep` on the parsed `args`; returns the exit status."""
    model = model_from_args(args)
    gpus = gpus_from_args(args, model.topology, 64)
    sizes = parse_sizes(args.sizes)
    svg_path = None if args.svg is None else _svg_name(args.svg)
    if svg_path is not None and topology_file(args.topology):
        check_not_read(svg_path, "--svg", "sweep", {"the --topology file": args.topology})
    result = sweep(gpus, sizes, model, nccl=args.nccl)
    if svg_path is not None:
        if not _plottable(result, args.plot):
            raise RingsimError(f"--svg: {_nothing_to_plot(result, args.plot)}")
        _write_svg(result, svg_path, args.plot)
    if args.json:
        _print_json(result)
        return 0
    _print_table(result)
    if not args.no_plot:
        print()
        print(_terminal_plot(result, args.plot, is_terminal(sys.stdout)))
    if svg_path is not None:
        say(f"\nSVG written to {escaped(svg_path)}")
    return 0


def _svg_name(name: str) -> str:
    """The --svg file name, checked: it is written as SVG text, so a name that says PNG or PDF
    would give a file that image viewers and slide tools fail to open."""
    text = check_output(name, "--svg")
    if not text.lower().endswith(".svg"):
        raise RingsimError(f"--svg writes SVG text: the file name must end in .svg, not "
                           f"{printable(os.path.basename(text))!r}")
    return text


def _series(result: Sweep, metric: str) -> dict[str, list[tuple[float, float]]]:
    out = {}
    if result.nccl:  # NCCL's own tuning model first, so the legend names it before the textbook
        out[nccl_model(result.nccl_release)] = [
            (float(p.nbytes), float(c.seconds if metric == "time" else result.nccl_busbw(i) or 0))
            for i, (p, c) in enumerate(zip(result.points, result.nccl)) if c is not None]
    for name in result.columns:  # the rails ring last, so the others keep their styles
        values = []
        for p in result.points:
            y = p.estimates[name].seconds if metric == "time" else p.busbw(name, result.gpus)
            values.append((float(p.nbytes), float(y or 0.0)))
        out[result.title(name)] = values
    return out


def _plottable(result: Sweep, metric: str, textbook_only: bool = False) -> bool:
    """True when some point has a positive size and a positive, finite value (log axes)."""
    return any(0 < x and 0 < y < math.inf for name, values in _series(result, metric).items()
               if not (textbook_only and name == nccl_model(result.nccl_release))
               for x, y in values)


def _nothing_to_plot(result: Sweep, metric: str) -> str:
    why = ("one GPU sends nothing" if result.gpus < 2 else
           "every swept size is 0 bytes" if all(p.nbytes == 0 for p in result.points) else
           "α is 0 and every bandwidth infinite")
    what = "time" if metric == "time" else "busbw"
    return f"nothing to draw on log axes: {why}, so every {what} is 0 or has no figure"


def _title(result: Sweep, metric: str, room: int = 70) -> str:
    what = "modelled time" if metric == "time" else "busbw"
    whose = f"textbook vs {nccl_model(result.nccl_release)}" if result.nccl else "textbook α-β-γ"
    title = f"All-reduce {what}, {result.gpus:,} GPUs, {result.model.topology.name}"
    # plotext drops a title wider than its canvas (about 72 columns at 80)
    return f"{title}: {whose}" if len(title) + len(whose) <= room else title


def _xticks(result: Sweep, count: int = 6) -> list[tuple[float, str]]:
    sizes = [p.nbytes for p in result.points]
    step = max(1, math.ceil(len(sizes) / count))
    return [(float(n), format_bytes(n)) for n in sizes[::step]]


def _terminal_plot(result: Sweep, metric: str, colour: bool) -> str:
    """The log-log plot drawn by plotext, its legend under it; or one line saying how to get it."""
    try:
        import plotext as plt
    except ImportError:
        return wrap("(no plot: install plotext, e.g. pip install '.[plot]' from a clone of ringsim)")
    if not _plottable(result, metric):
        return wrap(f"(no plot: {_nothing_to_plot(result, metric)})")
    limit = output_width()
    log_log_figure(plt, limit, 24, colour)
    legend, ys = [], []
    drawn = list(enumerate(_series(result, metric).items()))
    # Drawn last to first, so that where curves meet the first algorithms (the ring) stay on top.
    for number, (name, values) in reversed(drawn):
        shown = [(x, y) for x, y in values if x > 0 and 0 < y < math.inf]  # what log axes hold
        xs = [x for x, _ in shown]
        ys += [y for _, y in shown]
        if xs:
            marker, code = series_style(number)
            plt.plot(xs, [y for _, y in shown], marker=marker, color=code)
            legend.insert(0, legend_entry(number, name, colour))
    ticks = [(x, label) for x, label in _xticks(result) if x > 0]  # log axes start above 0
    plt.xticks([x for x, _ in ticks], [label for _, label in ticks])
    round_yticks(plt, ys, metric)
    plt.title(_title(result, metric, 70 if limit is None else min(100, limit) - 10))
    plt.xlabel("bytes per GPU")
    plt.ylabel("time" if metric == "time" else "busbw")
    text = plt.build()
    plt.clear_figure()
    text = text if colour else plt.uncolorize(text)
    rows = legend_rows(legend, limit)
    if not _plottable(result, metric, textbook_only=True):  # NCCL's own constants still cost time
        rows.append(wrap(f"(textbook rows not drawn: {_nothing_to_plot(result, metric)})"))
    return text.rstrip("\n") + "\n" + "\n".join(rows)


def _write_svg(result: Sweep, path: str, metric: str) -> None:
    from ..studies.svgplot import loglog_svg
    from ..studies.ticks import tick_label
    fmt = lambda value: tick_label(value, metric)  # noqa: E731  (round decades: 10 µs, 1 ms)
    text = loglog_svg(_title(result, metric), "bytes per GPU",
                      "time" if metric == "time" else "busbw", _series(result, metric),
                      [(x, label) for x, label in _xticks(result) if x > 0], fmt)
    write_text(path, "--svg", text)


def _table_columns(result: Sweep) -> tuple[str, ...]:
    """The table's columns: each NCCL layout ('ring rails:8') right after the algorithm it
    lays out otherwise."""
    columns = list(result.algorithms)
    for column, (name, _) in result.layout_columns.items():
        columns.insert(columns.index(name) + 1, column)
    return tuple(columns)


def _print_table(result: Sweep) -> None:
    from ..algorithms import ALGORITHMS
    topo = result.model.topology
    say(f"All-reduce over {plural(result.gpus, 'GPU')} on {topo.title} "
        f"({result.model.itemsize}-byte elements)\n")
    names = _table_columns(result)
    # A column named by its algorithm ('ring'), or by its ring order too ('ring rails:8').
    mark = {n: "" if ALGORITHMS[result.algorithm(n)].nccl_name else "*" for n in names}
    heads = {n: (ALGORITHMS[n].name if n in ALGORITHMS else n) + mark[n] for n in names}
    nccl = bool(result.nccl)
    say("Textbook α-β-γ model, one column per algorithm (* not in NCCL; compare --time says "
        "which MPI libraries run them, where any does)" + (
            f"; {nccl_model(result.nccl_release)}: what {_whose(result)} own tuning would "
            "run" + ("" if nccl_release(result.nccl_release) else f" ({nccl_version()})") + "."
            if nccl
            else f". NCCL's model: none here ({result.nccl_note})."), most=100)
    if result.rounded:
        say(rounded_sizes_note(result.rounded, result.model.dtype, result.model.itemsize) + ".",
            most=100)
    print()
    header = ("size", *(heads[n] for n in names), "fastest textbook",
              "its busbw") + ((nccl_model(result.nccl_release), "NCCL's pick") if nccl else ())
    # an empty call ties every algorithm at no time: none is the fastest there
    body = [(format_bytes(p.nbytes), *(format_seconds(p.estimates[n].seconds) for n in names),
             *((p.best + mark[p.best], format_bandwidth(p.busbw(p.best, result.gpus)))
               if p.elements else ("—", "—")))
            + (_nccl_cells(result.nccl[i]) if nccl else ())
            for i, p in enumerate(result.points)]
    print("\n".join(table([header, *body])))
    say("\nbusbw per algorithm (nccl-tests: algbw·2(G−1)/G):")
    header = ("size", *(heads[n] for n in names)) + ((nccl_model(result.nccl_release),)
                                                     if nccl else ())
    body = [(format_bytes(p.nbytes), *(format_bandwidth(p.busbw(n, result.gpus)) for n in names))
            + ((_bandwidth(result.nccl_busbw(i)),) if nccl else ())
            for i, p in enumerate(result.points)]
    print("\n".join(table([header, *body])))
    print()
    moving = [p for p in result.points if p.nbytes]
    if not result.crossovers and not moving:
        say("No crossover: every size swept is 0 B, an empty call, which takes every algorithm "
            "no time.")
    elif not result.crossovers:
        # An empty size ties every algorithm, so the fastest is the one at the sizes that move.
        say(f"No crossover: {moving[-1].best} is the fastest at every size swept"
            + (" (at 0 B every algorithm takes no time)." if len(moving) < len(result.points)
               else "."))
    for c in result.crossovers:
        say(f"Crossover: {result.title(c.after)} overtakes {result.title(c.before)} "
            f"at {c.nbytes:,} bytes per GPU ({approx_bytes(c.nbytes)}).")
    _print_rails(result)


def _whose(result: Sweep) -> str:
    """Whose tuning NCCL's column is: "NCCL's", or "NCCL 2.21.5's" where --nccl chose a release."""
    release = nccl_release(result.nccl_release)
    return "NCCL's" if release is None else f"NCCL {release}'s"


def _pick(choice) -> str:
    """NCCL's pick in a cell: 'Ring/Simple ×16' (algorithm/protocol ×channels)."""
    return f"{choice.algorithm}/{choice.protocol} ×{choice.channels}"


def _print_rails(result: Sweep) -> None:
    """On several nodes: what each NCCL layout's column is (the ring as NCCL's channels), and
    its time at the largest size beside the fastest other column there."""
    if result.rails_note:
        say(f"{result.rails_note}.", most=100)
    if not result.points:
        return
    per_node = result.model.topology.gpus_per_node
    top = result.points[-1]
    for column, (name, options) in result.layout_columns.items():
        laid = top.estimates[column]
        other = min(result.algorithms, key=lambda n: top.estimates[n].seconds)
        say(f"{column} is the {name} as NCCL lays out its channels: {per_node} rings at once, "
            f"each crossing between nodes through a different GPU's NIC (compare --time's row "
            f"'{result.title(column)}'); the {name} column is one ring, which crosses each node "
            f"boundary through one NIC while the node's other NICs idle. As NCCL's channels "
            f"({flags(options)}), the {name} takes {format_seconds(laid.seconds)} at "
            f"{format_bytes(top.nbytes)} (busbw {format_bandwidth(top.busbw(column, result.gpus))}), "
            f"against {format_seconds(top.estimates[other].seconds)} for {other}, the fastest "
            f"other column there.", most=100)


def _nccl_cells(choice) -> tuple[str, str]:
    """NCCL's model's time and pick in the table ('—' at an empty call)."""
    return ("—", "—") if choice is None else (format_seconds(choice.seconds), _pick(choice))


def _bandwidth(value: float | None) -> str:
    return "—" if value is None else format_bandwidth(value)


def _nccl_json(result: Sweep, index: int) -> dict:
    """NCCL's model's pick at one size, as `ringsim predict --json` names its fields."""
    if not result.nccl:
        return {"nccl": None, "nccl_note": result.nccl_note}
    choice = result.nccl[index]
    if choice is None:
        return {"nccl": None, "nccl_note": EMPTY_CALL}
    alg = algbw_of(result.points[index].nbytes, choice.seconds)
    # the release whose tables priced it, as compare --json names it
    return {"nccl": {**choice.to_json(), "algbw": alg, "busbw": result.nccl_busbw(index)},
            "nccl_version": nccl_version(result.nccl_release).removeprefix("NCCL ")}


def _layout_json(result: Sweep, column: str) -> dict:
    """For an NCCL layout's column: its algorithm and options, as compare --json names them."""
    if column not in result.layout_columns:
        return {}
    name, options = result.layout_columns[column]
    return {"algorithm": name, "options": dict(options)}


def _print_json(result: Sweep) -> None:
    from ..algorithms import ALGORITHMS
    for index, p in enumerate(result.points):
        print(json.dumps({
            "type": "size", "gpus": result.gpus, "topology": result.model.topology.name,
            "bytes": p.nbytes, "requested_bytes": p.nbytes if p.requested is None else p.requested,
            "elements": p.elements, "best": p.best if p.elements else None,
            "algorithms": {n: {"seconds": p.estimates[n].seconds, "algbw": p.algbw(n),
                               "busbw": p.busbw(n, result.gpus),
                               "bottleneck": p.estimates[n].describe(result.model.topology),
                               "nccl_name": ALGORITHMS[result.algorithm(n)].nccl_name,
                               **_layout_json(result, n)}
                           for n in result.columns},
            **_nccl_json(result, index)}))
    for c in result.crossovers:
        print(json.dumps({"type": "crossover", "before": c.before, "after": c.after,
                          "bytes": c.nbytes}))
