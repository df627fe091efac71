"""ringsim predict: what nccl-tests would print on a system, from NCCL's own tuning model."""

from __future__ import annotations

import argparse
import json

from ..core.checks import MAX_GPUS, count_arg
from ..core.errors import RingsimError
from ..core.textout import printable
from ..cost.nccl import MAX_CHANNELS, channel_cap, max_threads, runs_nvls, tuning_table
from ..cost.nccl_notes import algo_note, fallback_note, last_node_note, path_note
from ..cost.nccl_tuner import names, versions
from ..cost.topology import presets
from ..core.width import fill_width, output_width, say, table, wrap
from ..studies.nccltests import PERF
from ..studies.nccltuning_log import format_table
from ..studies.predict import (BUS_FACTORS, TYPES, channels_note, empty_note, falls_note, host_note,
                                nvls_note, predict, rooted_note, rounding_note)
from ._cost_args import (add_channel_arguments, add_ctas_arguments, add_nccl_argument,
                         add_thread_arguments, channel_arguments, ctas_arguments,
                         thread_arguments)

ORDER = 26
HELP = "predict all_reduce_perf's table on a system with NCCL's own tuning model"
DESCRIPTION = (
    HELP + ": for each size, the time, algbw and busbw nccl-tests would print, and the "
    "algorithm, protocol and channels NCCL would pick (the fastest it has on that topology, "
    "as src/graph/tuning.cc computes it; docs/cost.md names the NCCL version and every "
    "deviation). This is NCCL's model, not the textbook α-β-γ model that compare, sweep "
    "and the lessons use.")


def register(sub) -> None:
    """Add the `predict` subcommand to `sub`."""
    parser = sub.add_parser("predict", help=HELP, description=DESCRIPTION)
    parser.add_argument("--topology", default="dgx-h100", metavar="T",
                        help=f"the topology: a preset ({', '.join(presets())}) or a .toml file "
                             "(default: dgx-h100)")
    parser.add_argument("-g", "--gpus", type=count_arg("the number of GPUs", minimum=2,
                                                       maximum=MAX_GPUS),
                        default=None, metavar="G", help="number of GPUs, 2 to 1,000,000 "
                        "(default: one node of the topology, 8 on dgx-h100, or 8 where it has no "
                        "nodes; --nodes M gives M × its GPUs per node), filling nodes in order")
    parser.add_argument("--nodes", type=count_arg("the number of nodes", minimum=None),
                        default=None, metavar="M",
                        help="M nodes of the topology's GPUs per node: G = M × GPUs per node "
                             "(with --gpus, the two must agree)")
    parser.add_argument("--sizes", default=None, metavar="A..B",
                        help="bytes per GPU as nccl-tests' size column: a range A..B doubling "
                             "each time (-b A -e B -f 2; the default 8B..8GiB), A..B:xF for a "
                             "factor F (-f F), A..B:+S for a step of S bytes (-i S: A, A+S, ... "
                             "while at most B), or a list 8B,64KiB,1GiB (a bare 64K or 8g is "
                             "binary, in either case as in nccl-tests; 8GB is 8·10^9); rounded down as "
                             "nccl-tests does: to whole elements, and for all-gather and "
                             "reduce-scatter to G shares of a multiple of 16 B each; a size "
                             "that rounds to 0 B is an empty call, which NCCL discards (no "
                             "time, no choice)")
    parser.add_argument("--algo", default=None, metavar="NAME",
                        help="restrict NCCL's choice as NCCL_ALGO does: "
                             f"{', '.join(names('algorithms'))}, a comma list, or ^NAME to "
                             "exclude (any case), and from NCCL 2.24.3 entries for one "
                             "function after ';' (ring;allreduce:tree); broadcast and reduce "
                             "run on Ring only, so a choice without Ring is refused for them")
    parser.add_argument("--proto", default=None, metavar="NAME",
                        help="restrict the protocol as NCCL_PROTO does: "
                             f"{', '.join(names('protocols'))}, a comma list or ^NAME, and "
                             "from NCCL 2.24.3 entries for one function (^LL128;allreduce:LL128)")
    parser.add_argument("--collective", default=None, choices=tuple(BUS_FACTORS),
                        help="all-reduce (all_reduce_perf, the default), all-gather, "
                             "reduce-scatter, broadcast (broadcast_perf) or reduce "
                             "(reduce_perf); NCCL runs the last two on the ring only, and "
                             "nccl-tests prints their busbw equal to algbw")
    parser.add_argument("--dtype", default=None, choices=tuple(TYPES),
                        help="element type, as nccl-tests' -d (default: float); NVLS adds no "
                             "8-bit type (int8, uint8, f8e4m3, f8e5m2), so NCCL runs "
                             "something else for them")
    parser.add_argument("--op", default=None, choices=("sum", "prod", "max", "min", "avg"),
                        help="the reduction, as nccl-tests' -o (default: sum); NVLS takes the "
                             "sum, and the min and max of integers, half and bfloat16, only, so "
                             "NCCL runs something else for the rest")
    add_nccl_argument(parser)
    parser.add_argument("--gpus-per-process", type=count_arg("GPUs per process", minimum=1,
                                                             maximum=MAX_GPUS),
                        default=None, metavar="N",
                        help="GPUs each process drives, as nccl-tests' -g (default: 1, one "
                             "process per GPU): one thread issues every call to each of them "
                             "in turn, so small calls take at least N times the host's issue "
                             "time (docs/cost.md)")
    add_channel_arguments(parser, {
        "min": "as NCCL_MIN_NCHANNELS does: the communicator gets at least N channels, copies of "
               "its rings that add speed only up to the blocks a ring gets by default; a small "
               f"call still runs on fewer (1 to {MAX_CHANNELS} here, held to a release's own "
               "most; NCCL reads 0 as no minimum)",
        "max": "as NCCL_MAX_NCHANNELS does: ring, tree and PAT calls run on the first N channels "
               "(2.22.3 to 2.27.7 then copy them up to NVLS's count), and from 2.28.3 NVLS "
               "across nodes too; NCCL still weighs every ring its search found, and "
               f"CollNetDirect keeps NCCL's time (1 to {MAX_CHANNELS} here; NCCL reads less "
               "than 1 as 1)",
        "nvls": "as NCCL_NVLS_NCHANNELS does: NVLS and NVLSTree run on N channels in place of "
                "NCCL's own count (16 on Hopper); fewer run at that share of its rate, more add "
                "nothing, and NCCL still chooses as if its own count ran; 2.22.3 to 2.27.7 also "
                f"copy the rings up to N (1 to {MAX_CHANNELS} here, held to a release's own most)"})
    add_ctas_arguments(parser, "where both bounds are set, the tighter holds")
    add_thread_arguments(parser, "")
    parser.add_argument("--no-nvls", action="store_true",
                        help="as NCCL_NVLS_ENABLE=0 (or a machine without multicast support): "
                             "NVLS and NVLSTree are off, and NCCL 2.20.5 to 2.27.7 no longer "
                             "copy the rings up to NVLS's channels")
    parser.add_argument("--tuning", action="store_true",
                        help="print instead the tuning table NCCL itself prints at init with "
                             "NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING, row for row: Max "
                             "NThreads, then latency µs / algorithm bandwidth GB/s per "
                             "algorithm and protocol for Broadcast, Reduce, AllGather, "
                             "ReduceScatter and AllReduce; 0.0/0.0 where NCCL has no bandwidth, "
                             "whose latency NCCL prints all the same), to set beside your "
                             "log's; ringsim diagnose --nccl-log compares them")
    parser.add_argument("--nccl-log", default=None, metavar="FILE",
                        help="with --tuning: an NCCL_DEBUG=INFO log of any program run with "
                             "NCCL_DEBUG_SUBSYS=INIT,TUNING ('-' for standard input); sets the "
                             "table and the per-call choices NCCL printed beside the model's, "
                             "priced with the log's NCCL release where ringsim has its tables "
                             "(--nccl chooses another)")
    parser.add_argument("--published", action="store_true",
                        help="beside each size, the median time of the published runs of "
                             "the collective (all_reduce_perf, all_gather_perf or "
                             "reduce_scatter_perf) on machines like the topology "
                             "(the same number of GPUs and nodes, GPU architecture, links inside a node, "
                             "network rate per GPU, latency and GPU-to-NIC path; healthy by their "
                             "sources' word), how many "
                             "there are, and the model over their median; the runs are listed "
                             "with their addresses under the table")
    parser.add_argument("--json", action="store_true",
                        help="one JSON object per size: bytes, requested_bytes (the size "
                             "asked for, before nccl-tests rounds it down), count (per GPU for "
                             "all-gather and reduce-scatter, as nccl-tests prints it), type, "
                             "seconds, algbw, busbw (bytes/s), algorithm, protocol, channels, "
                             "host_bound, fill (seconds the first step takes to cross the "
                             "pipeline, included in seconds), nccl_seconds (NCCL's own "
                             "estimate, which it chose on), and what produced it: topology, "
                             "gpus, nodes, collective, nccl (the release whose tables priced "
                             "it); seconds, fill, nccl_seconds, algorithm and protocol "
                             "null for an empty call (with --tuning: one per table cell, with "
                             "its max_threads)")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Run `ringsim predict` on the parsed `args`; returns the exit status."""
    if args.nccl_log is not None and not args.tuning:
        raise RingsimError("--nccl-log sets a log's tuning table beside the model's: give "
                           "--tuning too")
    if args.published and args.tuning:
        raise RingsimError("--published sets published runs beside the model's times: it "
                           "takes no --tuning")
    if args.published and args.collective not in (None, *_published_collectives()):
        raise RingsimError(f"--published: ringsim holds no published {PERF[args.collective]} "
                           f"run; it holds {_perf_names(_published_collectives())} runs")
    # The tuning table holds every collective, size, type and process layout: a flag that
    # would pick one of them is refused.
    ignored = [flag for flag, value in (("--sizes", args.sizes), ("--dtype", args.dtype),
                                        ("--op", args.op),
                                        ("--gpus-per-process", args.gpus_per_process),
                                        # with a log, the collective picks its choices to compare
                                        ("--collective", args.nccl_log is None and args.collective))
               if value not in (None, False)]
    if args.tuning and ignored:
        raise RingsimError(f"--tuning prints NCCL's table for every collective, size, type and "
                           f"process layout at once: it takes no {', '.join(ignored)}")
    settings, ctas = channel_arguments(args), ctas_arguments(args)
    threads = thread_arguments(args)
    limits = [f"--{key.replace('_', '-')}" for key in (*settings, *ctas, *threads)]
    if args.no_nvls and args.nvls_channels is not None:
        raise RingsimError("--nvls-channels sets the channels of NVLS, which --no-nvls turns off: "
                           "give one of them")
    if args.no_nvls:
        limits.append("--no-nvls")
    if args.tuning and limits:
        raise RingsimError(f"--tuning prints NCCL's table as its model counts every channel and "
                           f"algorithm the search found: it takes no {', '.join(limits)}")
    args.collective = "all-reduce" if args.collective is None else args.collective
    args.sizes = "8B..8GiB" if args.sizes is None else args.sizes
    args.dtype = "float" if args.dtype is None else args.dtype
    args.gpus_per_process = 1 if args.gpus_per_process is None else args.gpus_per_process
    from ._cost_args import gpus_from_args, load_topology
    topology = load_topology(args.topology, args.command)
    # One node of the machine by default (72 GPUs on an NVL72 file), as a first all_reduce_perf
    # run on it would be; 8 where the topology has no nodes of two GPUs or more.
    per_node = topology.gpus_per_node
    args.gpus = gpus_from_args(args, topology, per_node if per_node and per_node >= 2 else 8)
    if args.tuning:
        return _tuning(args, topology)
    if args.no_nvls:
        from ..studies.ncclrun import only_nvls, without_nvls
        if only_nvls(args.algo):
            raise RingsimError(f"--algo {printable(args.algo)[:40]} names only what --no-nvls "
                               "turns off (NVLS, NVLSTree)")
        args.algo = without_nvls(args.algo)
    from ..cost.nccl_ctas import buffsize_note, ctas_note, threads_note, with_ctas
    bounded = with_ctas(topology, args.gpus, args.nccl, settings, **ctas, nvls=not args.no_nvls)
    rows = predict(topology, args.gpus, args.sizes, args.collective, args.algo, args.proto,
                   args.dtype, args.nccl, args.gpus_per_process,
                   nvls=not args.no_nvls, **bounded, redop=args.op or "sum", **threads)
    found, beside = (_published(topology, args.gpus, rows, args.gpus_per_process, args.collective,
                                args.dtype) if args.published else ([], {}))
    if args.json:
        # each line says what produced it, so that a saved file can be traced back
        made = {"topology": topology.name, "gpus": args.gpus, "nodes": topology.nodes(args.gpus),
                "collective": args.collective, "nccl": args.nccl or versions()[0],
                **settings, **ctas, **threads, **({"redop": args.op} if args.op else {}),
                **({"nvls_enable": 0} if args.no_nvls else {})}
        for row in rows:
            record = {**row.to_json(), **made}
            if args.published:
                mark = beside.get(row.bytes)
                record["published"] = None if mark is None else {
                    "fastest": mark.low, "median": mark.median, "slowest": mark.high,
                    "runs": mark.systems, "model_over_median": mark.ratio}
            print(json.dumps(record))
        return 0
    tables = f" (NCCL {args.nccl or versions()[0]}'s tuning tables)"
    say(f"# ringsim predict: NCCL's model of {args.collective} on "
        f"{_where(topology, args.gpus)}{tables}", hang="#   ")
    header = ("size", "count", "type", "time", "algbw", "busbw", "algorithm", "protocol",
              "channels")
    units = ("(B)", "(elements)", "", "(us)", "(GB/s)", "(GB/s)", "", "", "")
    widths = (12, 12, 8, 10, 8, 8, 14, 9, 9)
    far = path_note(topology, args.gpus, args.nccl)
    slow = fallback_note(topology, args.gpus, args.nccl)
    for note in (rooted_note(args.collective), slow and f"# {slow}",
                 algo_note(topology, args.gpus, args.collective, args.algo, args.proto, args.nccl,
                           TYPES[args.dtype][0]),
                 far and f"# {far}",
                 (last := last_node_note(topology, args.gpus)) and f"# {last}",
                 channels_note(args.min_channels, args.max_channels, args.nvls_channels,
                               channel_cap(args.nccl),
                               args.nvls_channels is None
                               or runs_nvls(topology, args.gpus, args.collective, args.nccl,
                                            TYPES[args.dtype][0])),
                 (said := ctas_note(args.min_ctas, args.max_ctas, bounded)) and f"# {said}",
                 threads_note(threads, "(--{})"),
                 buffsize_note(threads.get("buffsize"), "(--buffsize)"),
                 rounding_note(rows, args.collective, args.gpus),
                 empty_note(rows), host_note(rows, args.gpus_per_process), falls_note(rows),
                 "# NCCL_NVLS_ENABLE=0 (--no-nvls): NVLS and NVLSTree are off" if args.no_nvls
                 else nvls_note(topology, args.gpus, rows, args.collective, args.algo, args.proto,
                                args.nccl, args.gpus_per_process),
                 _order_note(args.sizes, len(rows))):
        if note:
            say(note, hang="#   ")
    if args.published:
        header += ("published", "runs", "model/pub")
        units += ("(us)", "", "")
        widths += (11, 6, 11)
    body = []
    for r in rows:
        empty = r.seconds is None  # NCCL discards the call: no time, no pick
        cells = (str(r.bytes), str(r.count), r.dtype, "-" if empty else _time(r.seconds * 1e6),
                 f"{r.algbw / 1e9:.2f}", f"{r.busbw / 1e9:.2f}", r.algorithm or "-",
                 r.protocol or "-", "-" if empty else str(r.channels))
        if args.published:
            mark = beside.get(r.bytes)
            cells += (("-", "0", "-") if mark is None else
                      (_time(mark.median * 1e6), str(mark.systems), f"{mark.ratio:.2f}"))
        body.append(cells)
    # nccl-tests' widths, widened where a cell needs more, so that two spaces at least part
    # every field (a bfloat16 type, a count of 15 digits) and the columns stay readable by awk.
    widths = [max([w] + [len(row[i]) + 2 for row in body]) for i, w in enumerate(widths)]
    # the columns keep their widths (awk reads them), a line no blanks after its last cell
    print("\n".join(line.rstrip() for line in table([header, units, *body], head=2, gap=0,
                                                      minimum=widths, rule="", comment="#",
                                                      strip=False)))
    if args.published:
        print("\n".join(_published_lines(topology, args.gpus, found, args.gpus_per_process,
                                          args.collective, args.dtype)))
    elif args.collective in _published_collectives():
        # NCCL's model is the tuner's reading, not a measurement: say where measured runs of
        # machines like this one can be set beside it.
        found, beside = _published(topology, args.gpus, rows, args.gpus_per_process,
                                   args.collective, args.dtype)
        if found:
            held = [word for word, given in (("chose its channels", settings or ctas or threads),
                                             ("may have run NVLS", args.no_nvls),
                                             ("summed", args.op not in (None, "sum"))) if given]
            held = f" (NCCL {' and '.join(held)} there)" if held else ""
            say(f"# {len(found)} published healthy {PERF[args.collective]} "
                f"run{'s' * (len(found) > 1)} on machines like this one{held}: --published "
                f"sets their median time beside each size{_against(beside.values())}",
                hang="#   ")
    return 0


def _against(marks) -> str:
    """' (the model's time is 0.55 to 1.02 times their median at the 23 sizes they measured)':
    what the published runs' medians say of the model's times, from the numbers ('' where
    they share no size with the table)."""
    ratios = sorted(m.ratio for m in marks)
    if not ratios:
        return ""
    low, high = f"{ratios[0]:.2f}", f"{ratios[-1]:.2f}"
    times = f"{low} times" if low == high else f"{low} to {high} times"
    where = "the size" if len(ratios) == 1 else f"the {len(ratios):,} sizes"
    return f" (the model's time is {times} their median at {where} they measured)"


def _published_collectives() -> tuple[str, ...]:
    from ..studies import peers
    return peers.collectives()


def _perf_names(collectives) -> str:
    """'all_reduce_perf, all_gather_perf and reduce_scatter_perf'."""
    names = [PERF[c] for c in collectives]
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def _published(topology, gpus: int, rows, gpus_per_process: int = 1,
               collective: str = "all-reduce", dtype: str = "float") -> tuple[list, dict]:
    """The published runs of `collective` like this topology, and for each size they
    measured the model's time beside theirs (peers.PeerRow by bytes)."""
    from ..studies import peers
    found = peers.peers(topology, gpus, topology.nodes(gpus), gpus_per_process, collective, dtype)
    timed = [(r.bytes, r.seconds) for r in rows if r.seconds is not None]
    return found, {m.bytes: m for m in peers.beside(timed, found)}


def _published_lines(topology, gpus: int, found, gpus_per_process: int = 1,
                     collective: str = "all-reduce", dtype: str = "float") -> list[str]:
    """Comment lines naming the published runs (or saying there are none)."""
    from ..studies import peers
    like = peers.likeness(topology, topology.nodes(gpus), dtype) + (
        f", {gpus_per_process} GPUs per process" if gpus_per_process > 1 else "")
    if not found:
        return [wrap(f"# no published {PERF[collective]} run matches {_where(topology, gpus)} ({like}); "
                     "docs/cost.md's validation table lists the runs ringsim holds", hang="#   ")]
    return ([wrap(f"# published: the median time of the runs on machines like this one ({like}, "
                  "as ringsim's file for each describes it; healthy by their sources' word; "
                  "each let NCCL choose its algorithm, protocol and channels):",
                  hang="#   ")]
            + [f"#   {line}" for line in peers.describe(found, fill_width(96) - 4)])


def _order_note(text: str, priced: int) -> str | None:
    """One comment line where a list of sizes was put in increasing order or held a size twice
    (None where it was printed as given)."""
    if ".." in text:
        return None  # a range goes up by itself
    from ..core.units import parse_size
    given = [parse_size(part, "--sizes") for part in text.split(",")]
    repeated = len(given) - priced
    if not repeated and given == sorted(given):
        return None
    return ("# the sizes asked for are printed in increasing order, each once, as nccl-tests "
            "prints them" + (f" ({repeated:,} repeated size{'s' * (repeated > 1)} left out)"
                             if repeated else ""))


def _tuning(args: argparse.Namespace, topology) -> int:
    """The model's tuning table, as NCCL prints its own (or one JSON object per cell); with
    --nccl-log, NCCL's own table and choices from the log beside the model's."""
    if args.nccl_log is not None:
        return _beside_log(args, topology)
    tuned = tuning_table(topology, args.gpus, args.nccl, args.algo, args.proto)
    threads = max_threads(topology, args.gpus, args.nccl)
    if args.json:
        for (func, algo, proto), (latency, bandwidth) in tuned.items():
            print(json.dumps({"function": func, "algorithm": algo, "protocol": proto,
                              "latency": latency * 1e-6, "algbw": bandwidth * 1e9,
                              "max_threads": threads[(algo, proto)]}))
        return 0
    say(f"# ringsim predict --tuning: NCCL {args.nccl or versions()[0]}'s tuning table as "
        f"NCCL would print it on {_where(topology, args.gpus)}: latency (us) / algorithm "
        "bandwidth (GB/s)", hang="#   ")
    # NCCL prints three algorithms a block, 51 columns each beside the 15 of the names.
    limit = output_width()
    per = 3 if limit is None else max(1, min(3, (limit - 15) // 51))
    print("\n".join(format_table(tuned, per=per, threads=threads)))
    return 0


def _beside_log(args: argparse.Namespace, topology) -> int:
    from ..studies import nccltuning, nccltuning_log
    from ..studies.textfile import read_text
    from ..studies.ncclrun import without_nvls
    from ..studies.nccltests import nvls_off
    text = read_text(args.nccl_log, "NCCL_DEBUG=INFO log")
    # Where the log says NCCL ran without NVLS the model leaves it out too, as diagnose does.
    off = nvls_off(text.lines)
    algo = without_nvls(args.algo) if off else args.algo
    lines, record = nccltuning.beside_model(nccltuning_log.parse(text), topology, args.gpus,
                                            args.collective, args.nccl, algo, args.proto)
    if not lines:
        raise RingsimError(f"{text.name} shows no tuning table and no 'Bytes -> Algo' lines: "
                           "run with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,TUNING")
    if args.json:
        print(json.dumps({**record, "nvls_off": off}))
        return 0
    say(f"# ringsim predict --tuning --nccl-log {text.name}: {args.collective} on "
        f"{_where(topology, args.gpus)}", hang="#   ")
    say("\n".join(lines))
    if off:
        say(f"Note: {off} in the NCCL log: NCCL ran without NVLS and NVLSTree, and so does the model")
    return 0


def _where(topology, gpus: int) -> str:
    """'dgx-h100, 16 GPUs in 2 nodes': the topology's name made printable (a file's text)."""
    nodes = topology.nodes(gpus)
    name = "".join(c if c.isprintable() else "?" for c in topology.name[:80])
    return f"{name}, {gpus:,} GPUs in {nodes:,} node{'s' * (nodes > 1)}"


def _time(micro: float) -> str:
    """Microseconds as nccl-tests prints them: two decimals below 1 ms, one below 10 ms, none
    above; from 10^7 s in scientific form, as ringsim prints every duration that long."""
    if micro >= 1e13:
        return f"{micro:.3e}"
    if micro >= 10000:
        return f"{micro:.0f}"
    if micro >= 1000:
        return f"{micro:.1f}"
    return f"{micro:.2f}"
