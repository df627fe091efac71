"""ringsim tui: the interactive simulator (Textual), one iteration per key press."""

from __future__ import annotations

import argparse
import os
import sys

from ..core.checks import count_arg
from ..core.errors import RingsimError
from ..core.terminal import dumb_terminal, is_terminal
from ..tui.limits import MAX_GPUS as TUI_MAX_GPUS
from ._nccl_log import add_nccl_log_arguments
from ._view_args import add_topology_argument, add_view_arguments, elements_follow_gpus, make_app
from .common import add_scenario_arguments

ORDER = 5
HELP = "open the interactive simulator in the terminal (the default in a terminal)"


def register(sub) -> None:
    """Add the `tui` subcommand to `sub`."""
    parser = sub.add_parser("tui", help=HELP, description=HELP + ". Defaults: the 4-GPU example, "
                            "a ring of 4 GPUs with 8 elements each; press ? inside for the keys.")
    add_scenario_arguments(parser, most_gpus=TUI_MAX_GPUS)
    elements_follow_gpus(parser)
    add_view_arguments(parser)
    parser.add_argument("--lesson", type=count_arg("--lesson", minimum=None), metavar="K",
                        help="open the lesson panel at lesson K (key l opens it at any time)")
    add_nccl_log_arguments(parser)
    add_topology_argument(parser)
    parser.set_defaults(run=run)


def check_terminal() -> None:
    """The TUI draws on a terminal and reads keys from it: without one it would spin forever.

    A Textual driver named in TEXTUAL_DRIVER (textual-serve's browser sessions set its web
    driver) brings its own screen and keys over pipes, so it needs no terminal."""
    if os.environ.get("TEXTUAL_DRIVER"):
        return
    if not (is_terminal(sys.stdin) and is_terminal(sys.stdout)):
        raise RingsimError("the TUI needs a terminal (standard input and output are not one); "
                           "`ringsim walk` prints the same run as text, `ringsim serve` shows it "
                           "in a browser")
    if dumb_terminal():  # Textual would redraw forever between Rich's 80×25 and the real size
        raise RingsimError("the TUI needs a terminal that can move its cursor, and TERM=dumb "
                           "says this one cannot; `ringsim walk` prints the same run as text, "
                           "`ringsim serve` shows it in a browser")


def run(args: argparse.Namespace) -> int:
    """Run `ringsim tui` on the parsed `args`; returns the exit status."""
    app = make_app(args)
    check_terminal()
    app.run()
    return 0
