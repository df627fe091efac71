"""ringsim timeline: the plan as events on a topology, with slow GPUs, slow links and late GPUs."""

from __future__ import annotations

import argparse
import json
import re

from ..core.naming import plural
from ..algorithms import ALGORITHMS, DEFAULT_ALGORITHM
from ..core.errors import RingsimError
from ..core.files import atomic_output, check_not_read, check_output
from ..core.textout import escaped
from ..core.units import format_bytes, format_seconds
from ..core.width import output_width, say
from ..cost.topology import topology_file
from ._cost_args import (MODEL_HELP, add_cost_arguments, elements_from_args, gpus_from_args, node_option,
                         model_from_args)
from ._collective import add_collective_argument
from ._nccl_layout import given_options
from .common import add_option_arguments, elements_arg, gpus_arg

ORDER = 22
HELP = "the plan as a timeline of events: overlap, stragglers, the critical path, trace JSON"
DESCRIPTION = (
    HELP + ". Every transfer starts when the data it sends is ready and its ports are free, so "
    "pipelined chunks and channels overlap. Without faults and with one chunk (the default), "
    "the total equals the lockstep model of compare --time, where every step waits for the "
    "slowest port of the one before (nccl-tree aside: its two trees share each node's chain, "
    "and the events let one tree's chunk go on before the other's has arrived). With --chunks C > 1 the steps of a pipelined tree overlap "
    "and the two differ: the events can finish sooner (tree) or later (double-tree: each port "
    "serves both trees' chunks one at a time, in plan order, and a chunk whose data is late "
    "holds up the next). Faults: --slow-gpu 2:0.5 (GPU2 computes and sends at half "
    "speed), --slow-link 1-2:0.25, --delay 3:10us (GPU3 joins 10 µs late). " + MODEL_HELP)

# Above this many transfers the text report skips the comparison with other schedules.
REPORT_TRANSFERS = 200_000


def _fault(parse):
    def convert(text: str):
        try:
            return parse(text)
        except RingsimError as error:  # argparse names the option already: drop the leading one
            raise argparse.ArgumentTypeError(re.sub(r"^--[a-z-]+:? ", "", str(error))) from None
    return convert


def register(sub) -> None:
    """Add the `timeline` subcommand to `sub`."""
    from ..timeline import faults
    parser = sub.add_parser("timeline", help=HELP, description=DESCRIPTION)
    parser.add_argument("-a", "--algorithm", default=DEFAULT_ALGORITHM, choices=list(ALGORITHMS),
                        help=f"all-reduce algorithm (default: {DEFAULT_ALGORITHM})")
    parser.add_argument("-g", "--gpus", type=gpus_arg, default=None, metavar="G",
                        help="number of GPUs (default: 8, or --nodes × GPUs per node)")
    parser.add_argument("-n", "--elements", type=elements_arg, default=None, metavar="N",
                        help="gradient elements per GPU (default: 16,777,216, 64 MiB of float32)")
    parser.add_argument("--slow-gpu", action="append", default=[], type=_fault(faults.slow_gpu),
                        metavar="K:F", help="GPU K computes and sends at F× speed (0.5: half)")
    parser.add_argument("--slow-link", action="append", default=[], type=_fault(faults.slow_link),
                        metavar="A-B:F", help="the link between GPUs A and B runs at F× speed, both ways")
    parser.add_argument("--delay", action="append", default=[], type=_fault(faults.delay),
                        metavar="K:T", help="GPU K joins T late (e.g. 3:10us)")
    parser.add_argument("--json", action="store_true",
                        help="one JSON object per transfer, then {\"type\": \"summary\", …}")
    parser.add_argument("--trace", default=None, metavar="FILE",
                        help="write Chrome/Perfetto trace JSON (open in ui.perfetto.dev)")
    add_option_arguments(parser, nodes=False)  # --nodes is the topology's (add_cost_arguments)
    add_collective_argument(parser)
    add_cost_arguments(parser)
    parser.set_defaults(run=run)


def _differs(timeline, faults) -> bool:
    """True when, without faults, the events and the lockstep model give different totals."""
    return not faults and abs(timeline.seconds - timeline.lockstep) > 1e-9 * max(timeline.lockstep, 1e-30)


def run(args: argparse.Namespace) -> int:
    """Run `ringsim timeline` on the parsed `args`; returns the exit status."""
    from ..algorithms.collectives import COLLECTIVES
    from ..algorithms.timing import check_timed
    from ..timeline import budget, simulate, trace
    from ..timeline.report import (alternatives, fault_costs, lesson_lines, path_lines, strip)
    trace_path = None if args.trace is None else check_output(args.trace, "--trace")
    if trace_path is not None and topology_file(args.topology):
        check_not_read(trace_path, "--trace", "timeline", {"the --topology file": args.topology})
    model = model_from_args(args)
    gpus = gpus_from_args(args, model.topology, 8)
    elements = elements_from_args(args, model.itemsize, 1 << 24)
    faults = tuple(args.slow_gpu + args.slow_link + args.delay)
    check_timed(args.algorithm, model, gpus)  # a timeline is its time: none where it cannot run
    collective = COLLECTIVES[args.collective]
    options = {**given_options(args), **node_option(args, model.topology, gpus)}
    # The least the timeline could take, from the closed forms' counts: a plan too large to
    # time is refused before it is built (building one can take seconds and gigabytes).
    # Counted at the run's N: the timeline leaves out transfers that carry nothing at N.
    counts = collective.closed_form(gpus, elements, args.algorithm, **options)
    budget.check_counts(int(counts.messages.value), int(counts.steps.value), gpus,
                        f"a timeline of {args.algorithm} on {gpus:,} GPUs"
                        + (f", run {1 + len(faults):,} times for the faults' costs," if faults else ""),
                        runs=1 + len(faults),
                        per_gpu=budget.distinct_per_gpu(model.topology, gpus, ALGORITHMS[args.algorithm]))
    plan = collective.plan(gpus, args.algorithm, **options)
    if trace_path is not None:
        budget.check_trace(plan.transfer_count(), gpus)
    timeline = simulate(plan, elements, model, faults, runs=1 + len(faults))
    if trace_path is not None:
        with atomic_output(trace_path, "--trace") as out:
            trace.write(timeline, out)
    small = plan.transfer_count() <= REPORT_TRANSFERS
    costs = fault_costs(timeline)
    if args.json:
        for i in range(len(timeline)):
            print(json.dumps(timeline.record(i)))
        print(json.dumps({
            "type": "summary", "algorithm": plan.algorithm, "collective": args.collective, "gpus": gpus, "elements": elements,
            "bytes_per_gpu": elements * model.itemsize, "topology": model.topology.name,
            "seconds": timeline.seconds, "lockstep_seconds": timeline.lockstep,
            "transfers": len(timeline), "critical_path": timeline.critical_path(),
            "critical_path_ties": len(timeline.last_arrivals()),
            "faults": [{"fault": c.fault.flag(), "seconds": c.seconds} for c in costs]}))
        return 0
    # as walk titles the same run: the spec's words (NVLS, Rabenseifner) and the options
    say(f"Timeline of {collective.run_title(plan)} · {plural(gpus, 'GPU')} · "
        f"{format_bytes(elements * model.itemsize)} per GPU · {model.topology.name}")
    if len(timeline):
        how = (f"run as {timeline.events:,} events" if timeline.events
               else "computed step by step (too many to run one event at a time)")
        say(f"{len(timeline):,} transfers, {how}")
    else:
        say("Nothing to send.")
    say(f"Total: {format_seconds(timeline.seconds)}"
        + (f" (lockstep model without faults: {format_seconds(timeline.lockstep)}"
           + (", which pipelined chunks do not follow: see --help" if _differs(timeline, faults)
              else "") + ")"))
    if faults:
        say("Faults, and the time each adds (the others kept):")
        for c in costs:
            share = f" ({c.seconds / timeline.seconds:.0%} of the total)" if timeline.seconds else ""
            say(f"  {c.fault}: +{format_seconds(c.seconds)}{share}")
    print()
    say("\n".join(path_lines(timeline)))
    # The bars fill what the line leaves beside "   GPU12 " (60 columns where it leaves more).
    limit = output_width()
    room = 60 if limit is None else max(10, min(60, limit - 9))
    gantt = strip(timeline, room)
    if gantt:
        say("\nWhen each GPU sends (█) and idles (·):")
        say("\n".join(gantt))
    if faults and small and any(f.kind != "delay" for f in faults) and gpus >= 2 \
            and len(collective.algorithms) > 1:  # another algorithm to switch to
        print()
        say("\n".join(lesson_lines(alternatives(gpus, elements, model, faults))))
    if trace_path is not None:
        say(f"\nTrace written to {escaped(trace_path)} (open it in ui.perfetto.dev or chrome://tracing).")
    return 0
