"""ringsim serve: the TUI in a web browser, through textual-serve, on 127.0.0.1."""

from __future__ import annotations

import argparse
import errno
import shlex
import socket
import sys

from ..core.checks import count_arg
from ..core.errors import RingsimError
from ..tui.limits import MAX_GPUS as TUI_MAX_GPUS
from ._view_args import add_view_arguments, check_scenario, elements_follow_gpus
from .common import add_scenario_arguments, options_from_args

ORDER = 55
HELP = "serve the TUI to a web browser on 127.0.0.1 (needs textual-serve)"
HOST = "127.0.0.1"
MAX_SESSIONS = 8  # browser sessions at once: each runs its own `ringsim tui` process


def register(sub) -> None:
    """Add the `serve` subcommand to `sub`."""
    parser = sub.add_parser("serve", help=HELP, description=HELP + "; open the printed address. "
                            f"Each browser tab runs its own `ringsim tui` (at most {MAX_SESSIONS} "
                            "at once); only pages of this server may connect.")
    parser.add_argument("--port", type=count_arg("--port", minimum=None), default=8000, help="TCP port (default: 8000)")
    add_scenario_arguments(parser, most_gpus=TUI_MAX_GPUS)
    elements_follow_gpus(parser)
    add_view_arguments(parser)
    parser.set_defaults(run=run)


def tui_command(args: argparse.Namespace) -> str:
    """The `ringsim tui …` command line each browser session runs."""
    words = [sys.executable, "-m", "ringsim", "tui", "--algorithm", args.algorithm,
             "--gpus", str(args.gpus), "--elements", str(args.elements), "--backend", args.backend]
    for name, value in options_from_args(args):
        words += ["--" + name.replace("_", "-"), str(value)]
    words += ["--present"] * args.present + ["--values"] * args.values
    return shlex.join(words)


def check_port(port: int) -> None:
    """Refuse a port out of range or already in use, before textual-serve prints "Serving…"."""
    if not 1 <= port <= 65535:
        raise RingsimError(f"--port must be from 1 to 65535, got {port}")
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        # As aiohttp binds (SO_REUSEADDR): a port left in TIME_WAIT is free, a listener is not.
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((HOST, port))
        except OSError as error:
            raise RingsimError(_port_problem(port, error)) from None


def _port_problem(port: int, error: OSError) -> str:
    if error.errno == errno.EADDRINUSE:
        return f"port {port} is in use on {HOST}; choose another with --port"
    if error.errno == errno.EACCES:
        return f"port {port} needs extra privileges; choose one from 1024 up with --port"
    return f"cannot listen on {HOST}:{port}: {error.strerror or error}"


def run(args: argparse.Namespace) -> int:
    """Run `ringsim serve` on the parsed `args`; returns the exit status."""
    check_scenario(args)  # the same refusals as `ringsim tui`, before anything is served
    check_port(args.port)
    try:
        import textual_serve.server  # noqa: F401  (asked first: ..tui.web.server may be loaded already)
        from ..tui.web.server import GuardedServer
    except ImportError:
        raise RingsimError("textual-serve is not installed: from a clone of ringsim, "
                           "pip install '.[serve]'") from None
    server = GuardedServer(tui_command(args), host=HOST, port=args.port, title="ringsim",
                           max_sessions=MAX_SESSIONS)
    try:
        server.serve()
    except OSError as error:  # lost the port between the check and the bind
        raise RingsimError(_port_problem(args.port, error)) from None
    return 0
