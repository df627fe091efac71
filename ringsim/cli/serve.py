"""ringsim serve: the TUI in a web browser, through textual-serve, on 127.0.0.1."""

from __future__ import annotations

import argparse
import shlex
import sys

from ..errors import RingsimError
from ..tui.scenario import check_view_limits
from .common import add_scenario_arguments, options_from_args
from .tui import add_view_arguments

ORDER = 55
HELP = "serve the TUI to a web browser on 127.0.0.1 (needs textual-serve)"


def register(sub) -> None:
    parser = sub.add_parser("serve", help=HELP, description=HELP + "; open the printed address.")
    parser.add_argument("--port", type=int, default=8000, help="TCP port (default: 8000)")
    add_scenario_arguments(parser)
    add_view_arguments(parser)
    parser.set_defaults(run=run)


def tui_command(args: argparse.Namespace) -> str:
    """The `ringsim tui …` command line each browser session runs."""
    words = [sys.executable, "-m", "ringsim", "tui", "--algorithm", args.algorithm,
             "--gpus", str(args.gpus), "--elements", str(args.elements), "--backend", args.backend]
    if args.master is not None:
        words += ["--master", str(args.master)]
    for name, value in options_from_args(args):
        words += ["--" + name.replace("_", "-"), str(value)]
    words += ["--present"] * args.present + ["--values"] * args.values
    return shlex.join(words)


def run(args: argparse.Namespace) -> int:
    if not 1 <= args.port <= 65535:
        raise RingsimError(f"--port must be from 1 to 65535, got {args.port}")
    check_view_limits(args.gpus, args.elements)
    try:
        from textual_serve.server import Server
    except ImportError:
        raise RingsimError("textual-serve is not installed: pip install 'ringsim[serve]'") from None
    Server(tui_command(args), host="127.0.0.1", port=args.port, title="ringsim").serve()
    return 0
