"""ringsim diagnose: your nccl-tests output beside NCCL's model, size by size, and a verdict."""

from __future__ import annotations

import argparse
import functools
import json
import math
import sys
from pathlib import Path

from ..core.checks import MAX_GPUS, count_arg
from ..core.errors import RingsimError
from ..core.terminal import is_terminal
from ..core.files import check_not_read, check_output, write_text
from ..core.textout import escaped, json_ensure_ascii, printable
from ..core.units import format_bandwidth, format_bytes, format_seconds
from ..core.width import fill_width, output_width, say, table, wrap
from ..cost.nccl import MAX_CHANNELS
from ..cost.topology import topology_file
from ._cost_args import (CHANNEL_BOUNDS, add_channel_arguments, add_ctas_arguments,
                         add_thread_arguments, channel_arguments, ctas_arguments, load_topology,
                         nccl_release, thread_arguments)
from ._plot import legend_entry, legend_rows, log_log_figure, round_yticks, series_style

ORDER = 45
HELP = "read nccl-tests output (all_reduce_perf …): measured vs NCCL's model per size, and why"
DESCRIPTION = (
    HELP + ". Paste the output as printed, with mpirun/srun prefixes, NCCL_DEBUG=INFO lines and "
    "all; FILE '-' reads standard input. From its header diagnose takes the ranks, hosts and GPU "
    "model and picks the matching preset (H100 → dgx-h100, …) unless --topology names one. Each "
    "size shows measured busbw beside the model's (the algorithm and protocol NCCL would pick), "
    "and a flag where measured falls short by more than --tolerance; the verdict fits a per-call "
    "latency and a bus bandwidth to the measured curve and sets them beside the model's. An "
    "all-reduce is also set beside the published runs on machines like it (the same number of GPUs and nodes, "
    "GPUs per process, GPU architecture, links inside a node, network rate per GPU, latency and "
    "GPU-to-NIC path, "
    "healthy by their sources' word): their fastest, median and slowest time per size, and yours over "
    "their median.")
# the ones NCCL's model prices
COLLECTIVES = ("all-reduce", "all-gather", "reduce-scatter", "broadcast", "reduce")


def register(sub) -> None:
    """Add the `diagnose` subcommand to `sub`."""
    parser = sub.add_parser("diagnose", help=HELP, description=DESCRIPTION)
    parser.add_argument("file", metavar="FILE", help="nccl-tests output, or - for standard input")
    parser.add_argument("--topology", default=None, metavar="T",
                        help="the topology: a preset or a .toml file (default: the preset "
                             "that matches the header's GPU)")
    parser.add_argument("-g", "--gpus", type=count_arg("the number of GPUs", minimum=2, maximum=MAX_GPUS),
                        default=None, metavar="G",
                        help="GPUs in the run, when the paste lacks the '# Rank' lines")
    parser.add_argument("--nodes", type=count_arg("the number of nodes", minimum=1, maximum=MAX_GPUS), default=None,
                        metavar="M", help="M nodes in the run, when the paste lacks host names")
    parser.add_argument("--collective", choices=COLLECTIVES, default=None,
                        help="the test that ran, when the paste does not name it (default: what "
                             "the rows' count, redop and root columns show, else all-reduce)")
    parser.add_argument("--algo", default=None, metavar="NAME",
                        help="hold the model to the algorithms of NCCL_ALGO (Ring, Tree, NVLS, …; "
                             "default: what the paste shows where the model can run it, else "
                             "NCCL's own choice)")
    parser.add_argument("--proto", default=None, metavar="NAME",
                        help="hold the model to the protocols of NCCL_PROTO (LL, LL128, Simple; "
                             "default: what the paste shows where the model can run it, else "
                             "NCCL's own choice)")
    add_channel_arguments(parser, {
        bound: f"hold the model to NCCL_{bound.upper()}_NCHANNELS (1 to {MAX_CHANNELS}; default: "
               f"what the paste shows, else none; ringsim predict --help says what "
               f"--{bound}-channels does)" for bound in CHANNEL_BOUNDS})
    add_ctas_arguments(parser, "default: what the paste shows, else none")
    add_thread_arguments(parser, "; default: what the paste shows, else NCCL's own")
    parser.add_argument("--nccl", default=None, metavar="VERSION", type=nccl_release,
                        help="the NCCL release whose tuning tables price the model (the ones "
                             "ringsim has: ringsim predict --help; default: the release the "
                             "run used, from the paste's or --nccl-log's 'NCCL version' line, "
                             "where ringsim has its tables, else the release the model follows; "
                             "the notes say which)")
    parser.add_argument("--tolerance", default="30%", metavar="PCT",
                        help="flag a size whose busbw is short of the model's by more than PCT "
                             "percent, with or without %%: 30 and 30%% are the same, 0.5 is half "
                             "a percent (default: 30%%)")
    parser.add_argument("--json", action="store_true",
                        help="one JSON object per size, then one summary object")
    parser.add_argument("--svg", default=None, metavar="FILE",
                        help="also write measured vs modelled busbw over size as an SVG file; the "
                             "name must end in .svg and be neither FILE nor --nccl-log's")
    parser.add_argument("--no-plot", action="store_true", help="leave out the terminal plot")
    parser.add_argument("--nccl-log", default=None, metavar="FILE",
                        help="the run's NCCL_DEBUG=INFO log, to say which link every ring hop used "
                             "(lines of it pasted into FILE are read without this); a log of "
                             "other ranks or nodes than the run's is refused")
    parser.set_defaults(run=run)


def tolerance_from(text: str) -> float:
    """A percentage, with or without '%', as a fraction: '30%' and '30' are 0.3, '0.5' is 0.005.

    A bare number is always a percentage, so that 0.9 and 1 are a tenth of a percent apart
    rather than 0.9 meaning 90%."""
    raw = str(text).strip()
    given = printable(raw)[:40]
    try:
        value = float(raw[:-1] if raw.endswith("%") else raw)
    except ValueError:
        raise RingsimError(f"--tolerance must be a percentage such as 30%, got {given!r}") from None
    # to 15 significant digits: 0.9 / 100 is 0.009, not 0.009000000000000001 (and 1e-30 stays)
    fraction = float(f"{value / 100:.15g}") if math.isfinite(value) else value
    # checked as a fraction: 99.99999999999999 rounds to 100%, 5e-324 to 0%
    if not math.isfinite(fraction) or not 0 < fraction < 1:
        raise RingsimError(f"--tolerance must be above 0% and below 100%, got {given!r}")
    return fraction


def svg_target(text: str, reads: dict[str, str | None]) -> Path:
    """Where the SVG goes, checked before any work (core.files.check_output): a name ending in
    .svg that is none of the files diagnose reads (`reads`: what each is → its path)."""
    path = Path(check_output(text, "--svg"))
    if path.suffix.lower() != ".svg":
        raise RingsimError(f"--svg writes SVG text: the file name must end in .svg, not "
                           f"{printable(path.name)!r}")
    check_not_read(path, "--svg", "diagnose", reads)
    return path


def run(args: argparse.Namespace) -> int:
    """Run `ringsim diagnose` on the parsed `args`; returns the exit status."""
    from ..cost.topology import load, presets
    from ..studies import diagnose as study
    from ..studies.diagnose_inputs import (assumed_network, check_inputs, check_one_test,
                                           preset_for, scenario)
    from ..studies.diagnose_verdicts import gdr_level, log_verdict, network_used
    from ..studies.ncclrun import run_release
    from ..studies.nccltests import nvls_off, parse
    from ..studies.nccltuning_log import parse_all
    from ..studies.textfile import read_text
    if args.file == "-" and args.nccl_log == "-":
        raise RingsimError("FILE and --nccl-log are both '-': standard input holds one of "
                           "them; save the other to a file")
    tolerance = tolerance_from(args.tolerance)
    reads = {"FILE": args.file, "the --nccl-log file": args.nccl_log,
             "the --topology file": args.topology if topology_file(args.topology) else None}
    svg = None if args.svg is None else svg_target(args.svg, reads)
    text = read_text(args.file, "nccl-tests output")
    output = parse(text)
    gpu = output.gpu_names[0] if output.gpu_names else None
    # Rows of one test only; every input the paste cannot give, asked for at once; then G and
    # M (the preset needs M).
    check_one_test(output)
    check_inputs(output, args.gpus, bool(args.topology), presets(), args.collective)
    scenario(output, args.gpus, args.nodes, args.collective)
    mixed = _gpu_mix(output)
    if args.topology:
        topology, reason = load_topology(args.topology, args.command), "given with --topology"
    else:
        if mixed:
            # One preset describes one kind of GPU; which one this run should be priced as is
            # the user's to say.
            raise RingsimError(f"{output.name}'s header names {mixed}: no preset describes a "
                               "mix, so give --topology (a file that describes the machine)")
        nodes = len(output.hosts) or (args.nodes or 1)
        name, reason = preset_for(gpu, nodes, presets())
        topology = load(name)
        reason += assumed_network(topology, nodes)
    log_text = read_text(args.nccl_log, "NCCL_DEBUG=INFO log") if args.nccl_log else None
    tuning = parse_all([text] + ([log_text] if log_text is not None else []))
    # One release prices every part of a report: the one that ran, where ringsim has its
    # tables, as the published runs the model is checked against are priced (docs/cost.md);
    # else the release the model follows. Where NCCL's own tuning output is set beside the
    # model, that is the release which printed it, so NCCL's numbers and the model's differ
    # only where the machine or ringsim's reading does.
    nccl = args.nccl or run_release(output.nccl_version or tuning.version)
    # the model is imported only once the run itself has passed every check
    report = study.diagnose(output, topology, lambda *a, **k: _predict()(*a, **k),
                            gpus=args.gpus, nodes=args.nodes,
                            collective=args.collective, tolerance=tolerance,
                            topology_reason=reason, algo=args.algo, proto=args.proto,
                            nccl=nccl, ran=tuning.version,
                            nvls_off=nvls_off(log_text.lines) if log_text is not None else None,
                            **channel_arguments(args), **ctas_arguments(args),
                            **thread_arguments(args))
    report.tuning_from(tuning, topology)
    if mixed:
        report.notes.append(f"the header names {mixed}; the model takes every GPU as "
                            f"{printable(topology.name)} describes it")
    links, crossing = _log_checks(text, log_text, report)
    if links:  # the log is at hand: say what it shows instead of asking for it
        report.checks = [c for c in report.checks if not c.startswith("run again with NCCL_DEBUG")]
        report.checks += links
    elif log_text is not None:  # the log given cannot say it: ask for one that can
        report.checks = [NO_HOPS.format(printable(log_text.name))
                         if c.startswith("run again with NCCL_DEBUG") else c for c in report.checks]
    lines = [*text.lines, *(log_text.lines if log_text is not None else ())]
    said = log_verdict(report, crossing, gdr_level(text.lines), network_used(lines))
    if said:
        report.verdicts.append(said)
    if svg is not None:
        _write_svg(report, svg)
    if args.json:
        ascii_only = json_ensure_ascii()
        for record in report.records():
            print(json.dumps(record, ensure_ascii=ascii_only))
        if report.tuning_record:
            print(json.dumps(report.tuning_record, ensure_ascii=ascii_only))
        print(json.dumps(report.header(), ensure_ascii=ascii_only))
        return 0
    print(wrap("\n".join(text_lines(report))))
    if not args.no_plot:
        print()
        print(terminal_plot(report, is_terminal(sys.stdout)))
    if svg is not None:
        say(f"\nSVG written to {escaped(svg)}")
    return 0


def _log_checks(text, log_text, report) -> tuple[list[str], dict[str, int]]:
    """What the NCCL_DEBUG=INFO lines (in the paste, or in --nccl-log's `log_text`) say about
    the links, and how many ring hops that cross nodes use each transport; a log that shows
    NCCL's tuning output (report.tuning) need not show its rings."""
    from collections import Counter

    from ..studies import ncclog, ncclplan
    try:
        log = _run_log(log_text, report) if log_text else ncclog.parse(text)
        if log is None:
            return [], {}
    except RingsimError as error:
        if log_text and "printed only the first" in str(error):
            # A log pasted from an issue or a chat often has its ring lists cut: the run can
            # still be read, without the hops' transports.
            report.notes.append(f"--nccl-log: {error}; the rings' transports are left out")
            return [], {}
        if log_text and not (report.tuning and "shows no rings" in str(error)):
            raise
        if log_text:
            report.notes.append("--nccl-log shows no rings and no communicator's size, so whether "
                                "it is this run's log could not be checked")
        return ([] if "shows no rings" in str(error) else
                [f"the NCCL log lines in the paste: {error}"]), {}
    crossing = Counter(v.via for v in ncclplan.hops(log) if v.crosses and v.via)
    return ncclplan.transport_lines(log), dict(crossing)


def _run_log(log_text, r):
    """--nccl-log's communicator of the run's G ranks; a one-line error where the log is of a
    run of other ranks or nodes, a note where its hosts cannot tell its nodes, and None (with a
    note) where its rings may be lists NCCL cut short."""
    from ..studies import ncclog
    sizes = ncclog.communicators(log_text)
    where = f"{r.source} ran {r.gpus} GPUs on {r.nodes} node{'s' * (r.nodes > 1)}"
    other = f"--nccl-log {printable(log_text.name)} is another run's log: "
    if sizes and r.gpus not in sizes:
        ranks = " and ".join(f"{n:,}" for n in sizes)
        raise RingsimError(f"{other}its communicator{'s have' if len(sizes) > 1 else ' has'} "
                           f"{ranks} ranks, and {where}")
    log = ncclog.parse(log_text, r.gpus if sizes else None)
    if log.nranks < r.gpus and not sizes:
        # No communicator line, and rings shorter than the run: lists NCCL cut at 20 ranks or
        # 128 characters can look whole (ranks 0, 1, 2, … in order), so nothing is refused.
        r.notes.append(f"--nccl-log shows rings of {log.nranks} ranks and no communicator line, "
                       f"so it was not read (NCCL may have cut its ring lists); paste its "
                       f"'comm … nRanks {r.gpus}' lines too")
        return None
    if log.nranks != r.gpus:  # its rings, put together from its hop lines, close on these ranks
        raise RingsimError(f"{other}its rings have {log.nranks} ranks, and {where}")
    hosts = len(set(log.hosts.values()))
    nodes = log.nodes or (hosts if len(log.hosts) >= log.nranks else None)
    if (nodes or hosts) > r.nodes or (nodes is not None and nodes != r.nodes):
        raise RingsimError(f"{other}its ranks run on {nodes or hosts} node"
                           f"{'s' * ((nodes or hosts) > 1)}, and {where}")
    if nodes is None:
        r.notes.append(f"--nccl-log shows the hosts of {len(log.hosts)} of its {log.nranks} "
                       "ranks, so only its ranks, not its nodes, were checked against this run's")
    return log


def _predict():
    """NCCL's model (ringsim.studies.predict.predict), pricing the sizes as the paste printed
    them: the nccl-tests release that ran rounded them already, older ones otherwise than today."""
    try:
        from ..studies.predict import predict
    except ImportError:
        raise RingsimError("this ringsim has no NCCL model (ringsim.studies.predict), which "
                           "diagnose compares against") from None
    return functools.partial(predict, printed=True)


# What to check next where a flagged run's --nccl-log has no hop lines to say it.
NO_HOPS = ("the log given ({}) has no hop lines ('Channel 00/0 : 0[…] -> 1[…] via …'), which say "
           "which transport every hop uses: give the whole NCCL_DEBUG=INFO log of every rank "
           "(P2P/IPC and NET/IB/…/GDRDMA are the fast paths; SHM, NET/Socket or NET/IB without "
           "GDRDMA go through host memory)")


def _wrong_key(r) -> str:
    """What ✗ means, where a row carries it."""
    from ..studies.diagnose_verdicts import corrupted
    wrong = [x for x in r.rows if corrupted(x)]
    if not wrong:
        return ""
    counts = ", ".join(f"{format_bytes(x.bytes)} {x.wrong:,.0f}" for x in wrong[:3])
    return f"; ✗ where nccl-tests counted wrong results (#wrong: {counts}{', …' if len(wrong) > 3 else ''})"


def _mark(x) -> str:
    """The row's last column: ◀ where it falls short, ✗ where nccl-tests counted wrong results."""
    from ..studies.diagnose_verdicts import corrupted
    return " ".join(part for part in ("◀" if x.flag else "", "✗" if corrupted(x) else "") if part)


def text_lines(r) -> list[str]:
    """The report in words: the run, one line per size, the verdicts, what to check."""
    from ..studies.diagnose_inputs import SMALLEST_FOR_LATENCY
    from ..studies.diagnose_verdicts import percent
    where = f"{r.gpus:,} GPUs" + (f" on {r.nodes:,} nodes" if r.nodes > 1 else " in one node")
    held = " and ".join(f"{name}={value}" for name, value in (("NCCL_ALGO", r.algo),
                                                              ("NCCL_PROTO", r.proto)) if value)
    model = f"NCCL's model held to {held}" if held else "NCCL's algorithm and protocol choice"
    if r.nvls_off:
        model += " without NVLS or NVLSTree"
    lines = [f"{r.source}: {r.collective}, {where}" + (f", {r.gpu}" if r.gpu else ""),
             f"Model: {model} on topology {r.topology} "
             f"({r.topology_reason}); flagged (◀) where measured busbw is short of the model's "
             f"by more than {percent(r.tolerance)}" + _wrong_key(r), ""]
    header = ("size", "measured", "busbw", "model", "busbw", "NCCL's choice", "measured/model", "")
    body = []
    for x in r.rows:
        choice = "/".join(v for v in (x.algorithm, x.protocol) if v) or "–"
        body.append((format_bytes(x.bytes), format_seconds(x.measured_seconds),
                     format_bandwidth(x.measured_busbw),
                     format_seconds(x.predicted_seconds) if x.predicted_seconds else "–",
                     format_bandwidth(x.predicted_busbw) if x.predicted_busbw else "–", choice,
                     f"{x.ratio:.2f}" if x.ratio is not None else "–", _mark(x)))
    lines += table([header, *body])
    lines.append("")
    # A paste that starts past the small sizes only bounds the latency (its smallest time),
    # and one with no latency-bound size at all says nothing of it.
    at_most = "at most " if r.rows and r.rows[0].bytes > SMALLEST_FOR_LATENCY else ""
    latency = (f"per-call latency {at_most}{format_seconds(r.measured.latency)}"
               if any(x.regime == "latency" for x in r.rows) else
               "per-call latency not measured (every size is bandwidth-bound; run from -b 8)")
    lines.append(f"Fitted to the measured curve: {latency}"
                 + (f", bus bandwidth {format_bandwidth(r.measured.busbw)}" if r.measured.busbw
                    and r.measured.busbw != math.inf else ", no size far enough past the latency "
                    "to fit a bandwidth"))
    if r.modelled:
        lines.append(f"Fitted to the model's curve:    per-call latency {format_seconds(r.modelled.latency)}"
                     + (f", bus bandwidth {format_bandwidth(r.modelled.busbw)}" if r.modelled.busbw
                        and r.modelled.busbw != math.inf else ""))
    if r.tuning:
        lines += [""] + r.tuning
    if r.peer_rows:
        lines += [""] + peer_lines(r)
    lines += ["", "Verdict:"] + [f"  {v}." for v in r.verdicts]
    if r.checks:
        lines += ["", "What to check next:"] + [f"  - {c}" for c in r.checks]
    lines += [f"Note: {n}" for n in r.notes]
    return lines


def _gpu_mix(output) -> str | None:
    """'2 GPU models (NVIDIA H100 80GB HBM3 on 4 ranks, NVIDIA A100 on 4)' where the header's
    ranks name more than one, else None."""
    names = output.gpu_names
    if len(names) < 2:
        return None
    counts = [sum(r.gpu == name for r in output.ranks) for name in names]
    shown = [f"{printable(name)[:40]} on {count}" for name, count in zip(names[:3], counts)]
    more = f" and {len(names) - 3} more" if len(names) > 3 else ""
    return f"{len(names)} GPU models ({', '.join(shown)}{more} ranks)"


def peer_lines(r) -> list[str]:
    """This run beside the published healthy runs on machines like it (studies/peers.py)."""
    from ..studies import peers
    from ..studies.nccltests import PERF
    where = f"{r.gpus:,} GPUs" + (f" in {r.nodes:,} nodes" if r.nodes > 1 else " in one node")
    if r.gpus_per_process > 1:
        where += f", {r.gpus_per_process} GPUs per process"
    lines = wrap(f"Published {PERF[r.collective]} runs on machines like this one ({where}; "
                 f"{r.peer_likeness}, as ringsim's file for each describes it; a source that "
                 "states no NIC rate is taken at its machine type's), each healthy by its "
                 "source's own word:",
                 most=96).split("\n")
    lines += [f"  {line}" for line in peers.describe(r.peers, fill_width(96) - 2)]
    header = ("size", "this run", "fastest", "median", "slowest", "runs", "this/median", "")
    body = [(format_bytes(x.bytes), format_seconds(x.seconds), format_seconds(x.low),
             format_seconds(x.median), format_seconds(x.high), str(x.systems), f"{x.ratio:.2f}",
             "◀ longest" if x.slower_than_all else "") for x in r.peer_rows]
    return lines + [""] + table([header, *body])


def terminal_plot(r, colour: bool) -> str:
    """Measured and modelled busbw over size, log-log, by plotext (or how to get it)."""
    try:
        import plotext as plt
    except ImportError:
        return wrap("(no plot: install plotext, e.g. pip install '.[plot]' from a clone of ringsim)")
    limit = output_width()
    log_log_figure(plt, limit, 22, colour)
    legend = []
    # Drawn last to first, so that where the curves meet the measured one stays on top.
    for number, (name, values) in reversed(list(enumerate(r.series().items()))):
        if values:
            marker, code = series_style(number)
            plt.plot([x for x, _ in values], [y for _, y in values], marker=marker, color=code)
            legend.insert(0, legend_entry(number, name, colour))
    ticks = r.ticks()
    plt.xticks([x for x, _ in ticks], [label for _, label in ticks])
    round_yticks(plt, [y for values in r.series().values() for _, y in values], "busbw", 1e9)
    plt.title(f"busbw over size, {r.gpus} GPUs, {r.topology}")
    drawing = plt.build()
    plt.clear_figure()
    if not colour:
        from ..studies.textfile import clean  # plotext ends lines with colour resets even uncoloured
        drawing = "\n".join(clean(line).rstrip() for line in drawing.splitlines())
    return drawing.rstrip("\n") + "\n" + "\n".join(legend_rows(legend, limit))


def _write_svg(r, path: Path) -> None:
    write_text(path, "--svg", r.svg())  # whole or not at all
