"""--nccl-log FILE for walk and tui: step through the rings NCCL built, as its log prints them."""

from __future__ import annotations

import argparse
import json

from ..core.checks import count_arg
from ..core.textout import json_ensure_ascii

NCCL_LOG_HELP = ("an NCCL_DEBUG=INFO log ('-' for standard input): walk the rings NCCL built, "
                 "channel c as ring c, NCCL rank r as GPU r+1, with the link each hop used")


def add_nccl_log_arguments(parser: argparse.ArgumentParser) -> None:
    """--nccl-log FILE and --nccl-ranks N (which communicator, when the log holds several)."""
    parser.add_argument("--nccl-log", metavar="FILE", default=None, help=NCCL_LOG_HELP)
    parser.add_argument("--nccl-ranks", type=count_arg("the communicator's ranks", minimum=1),
                        default=None, metavar="N",
                        help="with --nccl-log: the communicator of N ranks, when the log holds several")


def apply_nccl_log(args: argparse.Namespace, max_gpus: int, *, gpus_given: bool = True):
    """Read the log and set the scenario to NCCL's rings (ring algorithm, one ring per channel).

    gpus_given=False where --gpus has a default of its own (tui), which the log then replaces.
    Returns the parsed log. N defaults to one element per segment (K channels × G)."""
    from ..core.errors import RingsimError
    from ..studies import ncclplan
    if getattr(args, "nccl_log", None) is None:
        if getattr(args, "nccl_ranks", None) is not None:
            raise RingsimError("--nccl-ranks chooses a communicator of --nccl-log; give --nccl-log too")
        return None
    if getattr(args, "ring_order", None) or getattr(args, "channels", None):
        raise RingsimError("--nccl-log sets the rings and channels from the log; leave out "
                           "--ring-order and --channels")
    log = ncclplan.load(args.nccl_log, args.nccl_ranks)
    ncclplan.check_walkable(log, max_gpus)
    if gpus_given and args.gpus not in (None, log.nranks):
        raise RingsimError(f"--gpus {args.gpus} disagrees with the log's {log.nranks} ranks; "
                           "leave --gpus out")
    args.algorithm = "ring"
    args.gpus = log.nranks
    args.channels = len(log.rings)
    args.ring_order = ncclplan.ring_order_text(log)
    if getattr(args, "elements", None) is None and getattr(args, "size", None) is None:
        args.elements = len(log.rings) * log.nranks
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
        print("\n".join(ncclplan.text(log)) + "\n")
