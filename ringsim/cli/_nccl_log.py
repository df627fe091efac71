"""--nccl-log FILE for walk, tui and figure: step through the rings (or, with --nccl-algo Tree,
the trees) NCCL built, as its log prints them."""

from __future__ import annotations

import argparse
import json

from ..core.checks import count_arg
from ..core.textout import json_ensure_ascii
from ..core.width import say

NCCL_LOG_HELP = ("an NCCL_DEBUG=INFO log ('-' for standard input): walk the rings NCCL built, "
                 "channel c as ring c, NCCL rank r as GPU r+1, with the link each hop used "
                 "(its trees instead with --nccl-algo Tree)")
NCCL_ALGO_HELP = ("with --nccl-log: which of NCCL's plans to replay, named as NCCL_ALGO names them: "
                  "Ring (the default: the channels' rings) or Tree (each channel's tree from the "
                  "'Trees' lines: children add into their parent up to the root, which sends the "
                  "sum back down); any case")


def _nccl_algo(text: str) -> str:
    """Ring or Tree, as NCCL spells them, from any case."""
    from ..studies.ncclplan import REPLAYS
    for name in REPLAYS:
        if name.lower() == text.strip().lower():
            return name
    raise argparse.ArgumentTypeError(f"--nccl-algo must be {' or '.join(REPLAYS)}, got {text[:40]!r}")


def add_nccl_log_arguments(parser: argparse.ArgumentParser) -> None:
    """--nccl-log FILE, --nccl-ranks N (which communicator, when the log holds several) and
    --nccl-algo Ring|Tree (which of NCCL's plans to replay)."""
    parser.add_argument("--nccl-log", metavar="FILE", default=None, help=NCCL_LOG_HELP)
    parser.add_argument("--nccl-ranks", type=count_arg("the communicator's ranks", minimum=1),
                        default=None, metavar="N",
                        help="with --nccl-log: the communicator of N ranks, when the log holds several")
    parser.add_argument("--nccl-algo", type=_nccl_algo, default=None, metavar="{Ring,Tree}",
                        help=NCCL_ALGO_HELP)
    # None until apply_nccl_log: then the default algorithm, or the log's own plan, and an -a
    # the log would override silently is refused instead.
    parser.set_defaults(algorithm=None)


def apply_nccl_log(args: argparse.Namespace, max_gpus: int, *, gpus_given: bool = True):
    """Read the log and set the scenario to NCCL's rings (ring algorithm, one ring per channel)
    or, with --nccl-algo Tree, its trees (nccl-tree with the log's trees, one per channel).

    gpus_given=False where --gpus has a default of its own (tui), which the log then replaces.
    Returns the parsed log. N defaults to one element per segment (K channels × G for the
    rings, K channels × C chunks for the trees)."""
    from ..algorithms import DEFAULT_ALGORITHM, nccl_algorithm
    from ..core.errors import RingsimError
    from ..studies import ncclplan
    replay = getattr(args, "nccl_algo", None)
    given = getattr(args, "algorithm", None)
    if getattr(args, "nccl_log", None) is None:
        if given is None:
            args.algorithm = DEFAULT_ALGORITHM
        ranks = getattr(args, "nccl_ranks", None)
        for words, value in (("--nccl-ranks chooses a communicator of --nccl-log", ranks),
                             ("--nccl-algo chooses which plan of --nccl-log to replay", replay)):
            if value is not None:
                raise RingsimError(f"{words}; give --nccl-log too")
        return None
    if given is not None:
        raise RingsimError("--nccl-log replays the algorithm the log gives, its rings (or its "
                           "trees with --nccl-algo Tree); leave out -a")
    if getattr(args, "collective", None) not in (None, "all-reduce"):
        # ringsim's all-gather and reduce-scatter are the ring's halves, on no channels of their own
        raise RingsimError("--nccl-log replays NCCL's rings (or trees) as an all-reduce; leave out "
                           f"--collective {args.collective}")
    for name in ("ring_order", "channels", "tree_parents", "gpus_per_node"):
        if getattr(args, name, None):
            raise RingsimError("--nccl-log sets the rings, trees and channels from the log; leave "
                               f"out --{name.replace('_', '-')}")
    replay = replay or "Ring"
    log = ncclplan.load(args.nccl_log, args.nccl_ranks, need_rings=replay == "Ring")
    ncclplan.check_walkable(log, max_gpus)
    if gpus_given and args.gpus not in (None, log.nranks):
        raise RingsimError(f"--gpus {args.gpus} disagrees with the log's {log.nranks} ranks; "
                           "leave --gpus out")
    options, segments = ncclplan.REPLAYS[replay](log, getattr(args, "chunks", None))
    args.algorithm = nccl_algorithm(replay)
    args.gpus = log.nranks
    for name, value in options.items():
        setattr(args, name, value)
    if getattr(args, "elements", None) is None and getattr(args, "size", None) is None:
        args.elements = segments
    return log


def print_preface(log, as_json: bool, topology=None) -> None:
    """The log's plan in words (or one JSON line) before the walk; a note where the topology
    that prices it places GPUs in nodes otherwise than the log's hosts."""
    from ..studies import ncclplan
    note = ncclplan.placement_note(log, topology)
    if note:
        log.notes.append(note)
    if as_json:
        print(json.dumps(ncclplan.summary(log), ensure_ascii=json_ensure_ascii()))
    else:
        say("\n".join(ncclplan.text(log)) + "\n")
