"""ringsim figure: any step of any algorithm and collective as a picture, chosen by the file's
suffix: .svg or .png (one step), .pdf (one page per step), .gif or .html (animated)."""

from __future__ import annotations

import argparse

from ..core.checks import count_arg
from ..algorithms.collectives import collective
from ..core.errors import RingsimError
from ..core.files import check_not_read
from ..core.textout import escaped
from ..core.width import say
from ..figures.budget import MAX_BYTES as FIGURE_BYTES, MAX_SECONDS as FIGURE_SECONDS
from ..sim.scenario import shown_elements
from ..sim.simulation import SYMBOLIC_MAX_GPUS, Simulation
from ._collective import add_collective_argument
from ._nccl_log import add_nccl_log_arguments, apply_nccl_log, print_preface
from ._view_args import elements_follow_gpus
from .common import add_scenario_arguments, options_from_args

ORDER = 52
HELP = "draw a step (or every step, animated) as .svg, .png, .pdf, .gif or .html"
DEFAULT_GPUS = 4  # the 4-GPU example, as add_scenario_arguments says
MAX_ELEMENTS = 1_000_000  # a figure shows labels, not numbers: more elements only cost memory


def register(sub) -> None:
    """Add the `figure` subcommand to `sub`."""
    parser = sub.add_parser(
        "figure", help=HELP,
        description=HELP + ". GPUs are columns of segment cells coloured by whose gradients "
        "they hold (a complete sum in full colour), an arrow per transfer marked add or copy. "
        "Example: ringsim figure ring.gif (the 4-GPU example, animated); ringsim figure "
        "tree.svg -a tree -g 8 --step 2; ringsim figure --all docs/figures. A file estimated "
        f"to take more than {FIGURE_SECONDS:g} s or {FIGURE_BYTES / 1e9:g} GB of memory (from "
        "the frames, the segment buffers and transfers each draws, and for .gif and .png the "
        "pixels) is refused before anything is drawn. Needs the figures extra: pip install "
        "'.[figures]' from a clone of ringsim.")
    parser.add_argument("output", nargs="?", metavar="FILE",
                        help="the file to write: .svg, .png, .pdf, .gif or .html")
    parser.add_argument("--step", type=count_arg("--step", minimum=None), default=None, metavar="K",
                        help="the picture after K steps, 0 (the start) to the plan's length "
                             "(default: step 1 for .svg/.png; every step for .pdf/.gif/.html)")
    parser.add_argument("--theme", default="light", choices=("light", "dark"),
                        help="colours (default: light)")
    # --size is bytes per GPU in every other command: the picture's size is --dimensions.
    # Its own dest, not "size": the NCCL log's helper reads args.size as bytes per GPU.
    parser.add_argument("--dimensions", default=None, metavar="W[xH]", dest="dimensions",
                        help="width (or width x height) in px of the picture shown, 64 to 4096, "
                             "for every kind of file; with both, the drawing is scaled to fit "
                             "and centred (default: its natural size; a .png twice that, sharp "
                             "on a slide; --dimensions 1920x1080 makes a full-HD slide)")
    parser.add_argument("--size", dest="dimensions", help=argparse.SUPPRESS)
    parser.add_argument("--all", default=None, metavar="DIR",
                        help="draw every picture the README and docs show into DIR "
                             "(docs/figures), instead of FILE")
    add_scenario_arguments(parser, backend=False, most_gpus=SYMBOLIC_MAX_GPUS)
    elements_follow_gpus(parser)
    add_collective_argument(parser)
    add_nccl_log_arguments(parser)
    for action in parser._actions:  # argparse has no public way to reword one option's help
        if action.dest == "nccl_log":
            action.help = action.help.replace("walk the rings", "draw the rings")
    # None until the log (if any) is read: then the log's ranks, else the 4-GPU example; the
    # algorithm None so that an -a beside --nccl-log, which the log overrides, can be refused.
    parser.set_defaults(run=run, gpus=None, elements=None, algorithm=None)


def run(args: argparse.Namespace) -> int:
    """Run `ringsim figure` on the parsed `args`; returns the exit status."""
    from ..figures.output import parse_size, suffix_of, write
    from ..figures.render import need_drawsvg
    if args.all is not None:
        if args.output is not None:
            raise RingsimError("give FILE or --all DIR, not both")
        if args.nccl_log is not None:
            raise RingsimError("--all draws the docs' own pictures; --nccl-log needs a FILE instead")
        need_drawsvg()
        from ..figures.gallery import write_all
        for path in write_all(args.all):
            print(escaped(path))
        return 0
    if args.output is None:
        raise RingsimError("say which file to write, e.g. ringsim figure ring.svg (or --all DIR)")
    suffix_of(args.output)
    check_not_read(args.output, "the figure", "figure", {"the --nccl-log file": args.nccl_log})
    size = parse_size(args.dimensions) if args.dimensions is not None else None
    log = apply_nccl_log(args, SYMBOLIC_MAX_GPUS)  # sets the algorithm: ring, or the log's
    if args.gpus is None:
        args.gpus = DEFAULT_GPUS
    if args.gpus > SYMBOLIC_MAX_GPUS:
        raise RingsimError(f"a figure shows at most {SYMBOLIC_MAX_GPUS} GPUs, got {args.gpus:,}; "
                           f"`ringsim compare --gpus {args.gpus}` gives the counts")
    if args.elements is not None and args.elements > MAX_ELEMENTS:
        raise RingsimError(f"a figure takes at most {MAX_ELEMENTS:,} elements per GPU, got "
                           f"{args.elements:,} (the picture is the same for any N)")
    c = collective(args.collective)
    plan = c.plan(args.gpus, args.algorithm, **dict(options_from_args(args)))
    if args.elements is None:
        args.elements = shown_elements(plan.segments)
    if args.step is not None and not 0 <= args.step <= len(plan):
        raise RingsimError(f"--step must be from 0 (the start) to {len(plan)}, got {args.step}")
    need_drawsvg()
    sim = Simulation(plan, args.elements, collective=c)
    written = write(sim, args.output, args.step, args.theme, size)
    if log is not None:
        print_preface(log, as_json=False)
    say(f"wrote {escaped(args.output)} ({written:,} bytes)")
    return 0
