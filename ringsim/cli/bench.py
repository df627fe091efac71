"""ringsim bench: the performance targets, as ratios measured side by side in one run."""

from __future__ import annotations

import argparse
import json

from ..core.width import say
from ..execute.backend import array_module
from .common import add_backend_argument

ORDER = 40
HELP = "measure the engine against the machine's own copy bandwidth (ratios)"
DESCRIPTION = (
    HELP + ", and the commands against their time budgets. Each row is a ratio beside its "
    "target: an algorithm's useful bytes per second over NumPy's own copy bandwidth measured "
    "in the same run (the device's with --backend cupy, which also sets ringsim beside NCCL; "
    "higher is better), or a time, a peak memory or a file size over its budget (lower is "
    "better). A full run takes minutes; --quick, seconds.")


def register(sub) -> None:
    """Add the `bench` subcommand to `sub`."""
    parser = sub.add_parser("bench", help=HELP, description=DESCRIPTION)
    add_backend_argument(parser)
    parser.add_argument("--quick", action="store_true",
                        help="small sizes: a smoke run in seconds; its ratios are not "
                             "comparable with the targets")
    parser.add_argument("--json", action="store_true", help="print one JSON object per case")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Run `ringsim bench` on the parsed `args`; returns the exit status."""
    xp = array_module(args.backend)
    if xp.__name__ == "cupy":
        from ..studies.gpu_bench import cupy_cases
        records = cupy_cases(quick=args.quick)
    else:
        from ..studies.bench import numpy_cases
        records = numpy_cases(quick=args.quick)
    if args.json:
        for record in records:
            print(json.dumps({**record, "quick": args.quick}))
        return 0
    lines = text_lines(records, quick=args.quick)
    if args.quick:  # the note above the rows wraps on its own, not under their columns
        say(lines.pop(0))
    # Every line, a case's first too, continues under the column after the case's name.
    say("\n".join(lines), hang=" " * 19)
    return 0


QUICK_NOTE = ("quick run (small sizes, where overheads dominate): the ratios are not comparable "
              "with the targets, so no row gives a verdict")


def text_lines(records: list[dict], *, quick: bool) -> list[str]:
    """The records as the table `ringsim bench` prints (a quick run: one line saying it
    claims no verdict, and rows without one)."""
    # Quick sizes fit in cache and are dominated by overheads: a ratio there says nothing
    # about the targets, which are set for the full sizes. Said once, above the rows.
    lines = [QUICK_NOTE] if quick else []
    for r in records:
        target = r.get("target")
        verdict = ""
        if target is not None and not quick:
            ok = r["ratio"] <= target if "lower" in r.get("meaning", "") else r["ratio"] >= target
            verdict = f"  target {'≤' if 'lower' in r.get('meaning', '') else '≥'} {target}: " \
                      f"{'met' if ok else 'NOT met'}"
        seconds = f"{r['seconds']:.3f} s" if r.get("seconds") is not None else "—"
        lines.append(f"{r['case']:<18} {r['backend']:<6} G={r['gpus']:<5} N={r['elements']:<10,} "
                     f"{seconds:>9}  ratio {r['ratio']:.3f}{verdict}")
        if r.get("meaning"):
            lines.append(f"{'':<18} ({r['meaning']})")
        if r.get("cpu_seconds") is not None:
            lines.append(f"{'':<18} CPU time {r['cpu_seconds']:.3f} s (the process's own, "
                         "without other processes' share of the machine)")
        if r.get("busbw") is not None:
            lines.append(f"{'':<18} NCCL allReduce: algbw {r['algbw'] / 1e9:.1f} GB/s, "
                         f"busbw {r['busbw'] / 1e9:.1f} GB/s")
        if r.get("note"):
            lines.append(f"{'':<18} note: {r['note']}")
    return lines
