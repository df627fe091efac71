"""The ringsim command: one module per subcommand in this package, found automatically.

A command module defines ORDER (its place in --help), HELP (one line) and
register(subparsers). It must not import Textual, CuPy or MPI at import time, so that
`ringsim walk` stays light; those load inside the command's own run function.
"""

from __future__ import annotations

import argparse
import errno
import importlib
import io
import os
import pkgutil
import re
import signal
import sys

from ..core.arguments import as_flag, naming
from ..core.errors import RingsimError, WriteError
from ..core.terminal import dumb_terminal, is_terminal
from ..core.textout import clip, prepare_streams, printable
from ._help import FittingHelp

PROG = "ringsim"
# The most words a command line may hold. argparse's work grows with the square of the options
# it is given (it looks for the next option among all of them, once per option): 10,000 take it
# seconds, 30,000 minutes. The longest command a person writes is far shorter: each option is
# given once, and the fault options (--slow-gpu, --slow-link, --delay) at most MAX_FAULTS times.
MAX_WORDS = 1_000
# Errors a write to an output stream raises (no file name: opening a file gives one).
_WRITE_ERRORS = {errno.ENOSPC, errno.EIO, errno.EFBIG, errno.EDQUOT, errno.EBADF}
# Errors that say the file name given is at fault (bad input, exit 2), not the disk or device.
_NAME_ERRORS = {errno.ENAMETOOLONG, errno.ELOOP}


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
                    "a single-GPU master, ring all-reduce, trees, halving-doubling and more, with "
                    "what each moves and how long it takes. With no command: the TUI in a "
                    "terminal, the walkthrough when output is piped.",
    )
    from .. import __version__
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in _command_modules():
        module.register(sub)
    for command in [parser, *sub.choices.values()]:
        command.formatter_class = FittingHelp
        _one_line_errors(command)
        for action in command._actions:
            if action.option_strings and isinstance(action, _HOLDS_ONE):
                action.__class__ = _given_once(type(action))
    return parser


# Options that hold one value or one switch; argparse would keep the last of two without a word
# (`--topology dgx-h100 --topology flat` is flat, `--time --time` passes), a silent choice. The
# options that gather a list (--alpha, --slow-gpu, ...) may be given again; --help and
# --version end the run at once.
_HOLDS_ONE = (argparse._StoreAction, argparse._StoreConstAction, argparse.BooleanOptionalAction)


class _GivenOnce(argparse.Action):
    """An option refused when given twice, with one line naming it."""

    def __call__(self, parser, namespace, values, option_string=None):
        given = namespace.__dict__.setdefault("_options_given", {})
        if self.dest in given:
            first = given[self.dest]
            twice = f"{first} is given twice" if first == option_string else \
                f"{first} and {option_string} are the same option, given twice"
            parser.error(f"{twice}: give it once")
        given[self.dest] = option_string
        super().__call__(parser, namespace, values, option_string)


_ONCE_CLASSES: dict[type, type] = {}


def _given_once(kind: type) -> type:
    """`kind` (argparse's action class, or a command's own) refused when given twice."""
    if issubclass(kind, _GivenOnce):
        return kind
    if kind not in _ONCE_CLASSES:
        _ONCE_CLASSES[kind] = type(kind.__name__, (_GivenOnce, kind), {})
    return _ONCE_CLASSES[kind]


def _one_line_errors(parser: argparse.ArgumentParser) -> None:
    """Bad options: one line on stderr and exit status 2 (`--help` still shows the usage)."""
    def error(message: str):
        parser.exit(2, f"{parser.prog}: error: {_readable(message)}\n")
    parser.error = error
    quiet = parser._print_message

    def print_message(message: str, file=None) -> None:
        # argparse drops a failed write; --help or --version into a full disk must say so.
        if file is sys.stdout and message:
            file.write(message)
        else:
            quiet(message, file)
    parser._print_message = print_message


def main(argv: list[str] | None = None) -> int:
    """Run ringsim; returns the exit status (2 for bad input, with a one-line message).

    Output problems end quietly or in one line: a reader that leaves early (`| head`) ends
    the command with status 0, a full disk or a closed stdout gets one line and status 1
    or 2, and a terminal that cannot encode a₁ gets the ASCII forms (textout.py). Ctrl-C
    ends it with status 130 and no traceback, whenever it comes.
    """
    previous = sys.unraisablehook
    try:
        sys.unraisablehook = _interrupt_again(previous)
        return _main(argv)
    except KeyboardInterrupt:  # also while the commands' modules load, before any runs
        return 130
    finally:
        sys.unraisablehook = previous


def _interrupt_again(previous):
    """A hook for exceptions Python cannot raise that sends a lost Ctrl-C again."""
    def hook(unraisable) -> None:
        # A Ctrl-C that lands in a callback Python cannot raise from (a weak reference's, such
        # as the import system's lock cleanup) is printed as "Exception ignored ... Traceback"
        # and dropped, and the command runs on. A millisecond later, when the callback is
        # over, an alarm raises it again where main() catches it.
        if (isinstance(unraisable.exc_value, KeyboardInterrupt) and hasattr(signal, "setitimer")
                and signal.getsignal(signal.SIGINT) is signal.default_int_handler):
            before = signal.getsignal(signal.SIGALRM)

            def interrupt(signum, frame):
                signal.signal(signal.SIGALRM, before)
                raise KeyboardInterrupt

            signal.signal(signal.SIGALRM, interrupt)
            signal.setitimer(signal.ITIMER_REAL, 0.001)
            return
        previous(unraisable)
    return hook


def _main(argv: list[str] | None) -> int:
    parser = build_parser()
    argv = _join_negative_values(sys.argv[1:] if argv is None else list(argv))
    if argv[:1] == ["--"]:
        # `ringsim -- walk`: the options end before the command; argparse would take the
        # `--` itself for the command's name.
        argv = argv[1:]
    # The command's name heads every error line, as argparse's own do ("ringsim predict:
    # error: ..."), so that all of one command's errors read alike.
    prog = [f"{PROG} {argv[0]}" if argv and argv[0] in _choices(parser) else PROG]
    if len(argv) > MAX_WORDS:
        from ..timeline.budget import MAX_FAULTS  # here only: numpy stays out of a light start
        _say(f"the command line holds {len(argv):,} words; at most {MAX_WORDS:,} (each option "
             f"once, the fault options at most {MAX_FAULTS} times in all)", prog[0])
        return 2
    given = next((word for word in argv if _DASHES_AS_VALUE.fullmatch(word)), None)
    if given is not None:
        _say(f"{given}: '--' is not a value; give the option its value, or write -- alone to "
             "end the options", prog[0])
        return 2
    # argparse reads `--=x` as an abbreviation of every option and says it "could match
    # --help, --version", under the bare program's name.
    given = next((word for word in argv if word.startswith("--=")), None)
    if given is not None:
        _say(f"{clip(given, 40)} has no option's name before '='; write --NAME=VALUE", prog[0])
        return 2
    if sys.stdout is None:  # started with stdout closed (`ringsim >&-`)
        _say("standard output is closed: nothing could be printed (run it without >&-)", prog[0])
        return 2
    prepare_streams()
    try:
        with naming(as_flag):  # errors name the flags typed, not the Python keywords
            status = _run(parser, argv, prog)
        sys.stdout.flush()  # a write error surfaces here, inside the guard, not at exit
        return status
    except BrokenPipeError:
        return _reader_left()
    except OSError as error:
        failure = _stdout_failure()
        if failure is None and error.filename is None and error.errno in _WRITE_ERRORS:
            failure = error  # a write to stdout failed mid-run; its buffer was dropped
        if isinstance(failure, BrokenPipeError):
            return _reader_left()
        if failure is not None:
            _say(f"cannot write to standard output: {failure.strerror or failure}", prog[0])
            _discard_stdout()
            return 1
        _say(f"{error.strerror or error}" + (f": {error.filename}" if error.filename else ""),
             prog[0])
        return 2 if error.errno in _NAME_ERRORS else 1


# A negative quantity with a unit ('-1us', '-5GB/s'): argparse takes a word that starts with
# '-' and is not a plain number for an option, and would say the option before it lacks its
# value. Joined to that option ('--alpha=-1us') it reaches the option's own check instead.
_NEGATIVE_WITH_UNIT = re.compile(r"-\.?\d[\w.+/%-]*[A-Za-z%/][\w.+/%-]*")


# An option with `--` attached as its value (`--gpus=--`, `-g--`): argparse drops the `--` and
# gives the command an empty list, which skips the option's own check.
_DASHES_AS_VALUE = re.compile(r"(--[^=]+=|-[A-Za-z]=?)--")


def _join_negative_values(argv: list[str]) -> list[str]:
    """argv with each negative quantity that has a unit joined to the long option before it."""
    out: list[str] = []
    for word in argv:
        before = out[-1] if out else ""
        if (_NEGATIVE_WITH_UNIT.fullmatch(word) and before.startswith("--")
                and "=" not in before and before != "--"):
            out[-1] = f"{before}={word}"
        else:
            out.append(word)
    return out


def _run(parser: argparse.ArgumentParser, argv: list[str], prog: list[str]) -> int:
    """Parse and run one command; `prog[0]` becomes "ringsim COMMAND" once it is known."""
    try:
        args, extra = parser.parse_known_args(argv)
        if extra:
            # said under the command's name, as its other errors are (argparse says "ringsim")
            if getattr(args, "command", None):
                prog[0] = f"{PROG} {args.command}"
            shown = printable(" ".join(extra))
            _say(f"unrecognized arguments: {shown[:200]}{'…' if len(shown) > 200 else ''}", prog[0])
            return 2
        if args.command is None:
            # Bare `ringsim`: the TUI for a person at a terminal, the walkthrough for a pipe
            # or for a terminal that cannot move its cursor (TERM=dumb).
            command = "tui" if is_terminal(sys.stdout) and is_terminal(sys.stdin) and \
                not dumb_terminal() and "tui" in _choices(parser) else "walk"
            args = parser.parse_args([command])
        prog[0] = f"{PROG} {args.command}"
        return int(args.run(args) or 0)
    except SystemExit as done:  # argparse's --help, --version and usage errors
        if done.code is None or isinstance(done.code, int):
            return done.code or 0
        print(done.code, file=sys.stderr)  # sys.exit("message"), as Python itself would
        return 1
    except WriteError as error:  # a full disk or a failed device: not the input's fault
        _say(str(error), prog[0])
        return 1
    except RingsimError as error:
        _say(str(error), prog[0])
        return 2


def _say(message: str, prog: str = PROG) -> None:
    """One line on stderr, headed "PROG: error:" (nowhere when stderr is closed too)."""
    if sys.stderr is not None:
        try:
            # One line, and nothing a terminal would act on: messages may quote a file's text.
            print(f"{prog}: error: {_readable(message)}", file=sys.stderr, flush=True)
        except (OSError, ValueError):
            pass


# A word longer than this in an error line (a value typed at length, or a path as long as the
# system allows, echoed by argparse or the OS) is cut to its two ends: the line stays readable.
_LONGEST_WORD = 160


def _readable(message: str) -> str:
    """An error message as one terminal-safe line, each overlong word cut to its two ends."""
    words = printable(message).split(" ")
    if max(map(len, words)) <= _LONGEST_WORD:
        return " ".join(words)
    return " ".join(clip(word, 80) if len(word) > _LONGEST_WORD else word for word in words)


def _stdout_failure() -> OSError | None:
    """The error writing stdout's pending output raises now (a failed write stays buffered)."""
    try:
        sys.stdout.flush()
    except OSError as error:
        return error
    except ValueError:  # closed
        return None
    return None


def _discard_stdout() -> None:
    """Point stdout at /dev/null so that the interpreter's last flush finds nothing to fail."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
        pass  # not a file descriptor (an in-memory stream): nothing is flushed at exit


def _reader_left() -> int:
    """`ringsim walk | head`: the reader has gone; end quietly, as `head` users expect."""
    _discard_stdout()
    return 0


def _choices(parser: argparse.ArgumentParser) -> set[str]:
    for action in parser._actions:  # argparse keeps subcommands only here
        if isinstance(action, argparse._SubParsersAction):
            return set(action.choices)
    return set()
