"""ringsim compare: one table, a row per algorithm, measured beside the seed's formulas."""

from __future__ import annotations

import argparse
import json

from ..compare import compare
from ..formula import format_number
from .common import elements_arg, gpus_arg

ORDER = 20
HELP = "compare the algorithms' traffic in one table (any G, no gradients allocated)"


def register(sub) -> None:
    parser = sub.add_parser("compare", help=HELP, description=HELP + ". The seed's interview: "
                            "ringsim compare --gpus 1000 --elements 7000000000")
    parser.add_argument("-g", "--gpus", type=gpus_arg, default=4, metavar="G",
                        help="number of GPUs (default: 4)")
    parser.add_argument("-n", "--elements", type=elements_arg, default=8, metavar="N",
                        help="gradient elements per GPU (default: 8)")
    parser.add_argument("--json", action="store_true", help="print one JSON object per algorithm")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    rows = compare(args.gpus, args.elements)
    if args.json:
        for r in rows:
            print(json.dumps({
                "algorithm": r.algorithm, "gpus": args.gpus, "elements": args.elements,
                "total_elements": r.total, "formula_total": int(r.formulas.total.value),
                "busiest_gpu": r.busiest_gpu + 1, "busiest_sent": r.busiest_sent,
                "busiest_received": r.busiest_received, "steps": r.steps, "messages": r.messages,
            }))
        return 0
    print(f"{args.gpus:,} GPUs · {args.elements:,} elements per GPU\n")
    header = ("algorithm", "elements moved", "busiest GPU sent / received", "steps", "messages",
              "closed form")
    table = [header] + [
        (r.title, format_number(r.total),
         f"GPU{r.busiest_gpu + 1}: {format_number(r.busiest_sent)} / {format_number(r.busiest_received)}",
         format_number(r.steps), format_number(r.messages), str(r.formulas.total))
        for r in rows
    ]
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    for number, row in enumerate(table):
        cells = [row[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(row[1:-1], widths[1:-1])]
        print("  ".join(cells + [row[-1]]))
        if number == 0:
            print("  ".join("─" * w for w in widths))
    ring = next(r for r in rows if r.algorithm == "ring")
    master = next(r for r in rows if r.algorithm == "master")
    if ring.busiest_sent:
        print(f"\nThe master sends {master.busiest_sent / ring.busiest_sent:,.1f}× what the ring's "
              f"busiest GPU sends; the ring's load per GPU is 2·(G−1)·N/G = "
              f"{format_number(ring.formulas.busiest_sent.value)}.")
    return 0
