"""The ringsim command: one module per subcommand in this package, found automatically.

A command module defines ORDER (its place in --help), HELP (one line) and
register(subparsers). It must not import Textual, CuPy or MPI at import time, so that
`ringsim walk` stays light; those load inside the command's own run function.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys

from ..errors import RingsimError

PROG = "ringsim"


def _command_modules():
    names = [m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_")
             and m.name != "common"]
    modules = [importlib.import_module(f"{__name__}.{name}") for name in names]
    return sorted(modules, key=lambda m: m.ORDER)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand registered."""
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Watch GPUs synchronise gradients, iteration by iteration: naive all-to-all, "
                    "a single-GPU master, and ring all-reduce. With no command: the TUI in a "
                    "terminal, the walkthrough when output is piped.",
    )
    from .. import __version__
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in _command_modules():
        module.register(sub)
    for command in [parser, *sub.choices.values()]:
        _one_line_errors(command)
    return parser


def _one_line_errors(parser: argparse.ArgumentParser) -> None:
    """Bad options: one line on stderr and exit status 2 (`--help` still shows the usage)."""
    def error(message: str):
        parser.exit(2, f"{parser.prog}: error: {message}\n")
    parser.error = error


def main(argv: list[str] | None = None) -> int:
    """Run ringsim; returns the exit status (2 for bad input, with a one-line message)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        # Bare `ringsim`: the TUI for a person at a terminal, the walkthrough for a pipe.
        command = "tui" if sys.stdout.isatty() and sys.stdin.isatty() and "tui" in _choices(parser) \
            else "walk"
        args = parser.parse_args([command])
    try:
        return int(args.run(args) or 0)
    except RingsimError as error:
        print(f"{PROG}: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # `ringsim walk | head`: the reader left; say nothing more.
        sys.stderr.close()
        return 0


def _choices(parser: argparse.ArgumentParser) -> set[str]:
    for action in parser._actions:  # argparse keeps subcommands only here
        if isinstance(action, argparse._SubParsersAction):
            return set(action.choices)
    return set()
