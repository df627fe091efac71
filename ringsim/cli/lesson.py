"""ringsim lesson: list the course, run one lesson, or check a lessons folder."""

from __future__ import annotations

import argparse
import shlex
import sys

from ..core.checks import count_arg
from ..core.naming import plural
from ..core.textout import printable
from ..execute.backend import array_module
from ..core.errors import RingsimError
from ..core.terminal import is_terminal
from ..core.width import say
from ..sim.simulation import SYMBOLIC_MAX_GPUS
from .common import add_backend_argument, elements_arg, gpus_up_to

ORDER = 30
HELP = "list the lessons, run lesson N (Enter at each stop), or --check a lessons folder"


def register(sub) -> None:
    """Add the `lesson` subcommand to `sub`."""
    parser = sub.add_parser("lesson", help=HELP, description=HELP + ". Every number a lesson "
                            "states is computed by the engine.")
    parser.add_argument("number", nargs="?", type=count_arg("the lesson number", minimum=None), metavar="N",
                        help="the lesson to run (omit to list them)")
    parser.add_argument("-g", "--gpus", type=gpus_up_to(SYMBOLIC_MAX_GPUS, fewest=2), default=None, metavar="G",
                        help="run the lesson on G GPUs instead of its own scenario "
                             f"(2..{SYMBOLIC_MAX_GPUS})")
    parser.add_argument("-n", "--elements", type=elements_arg, default=None, metavar="N",
                        help="run the lesson with N elements per GPU (0..100,000)")
    parser.add_argument("--no-pause", action="store_true",
                        help="print straight through, answers shown (also when stdin or stdout "
                             "is not a terminal)")
    parser.add_argument("--lessons-dir", metavar="DIR", default=None,
                        help="read lessons from DIR instead of the shipped course")
    parser.add_argument("--check", metavar="DIR", nargs="?", const="", default=None,
                        help="check every lesson file in DIR (the shipped course if omitted; at "
                             "most 100 files, all of them within one bounded budget of work, "
                             "docs/lessons.md); exit 0 when all load, else 2 with each problem "
                             "as file:line: reason")
    add_backend_argument(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Run `ringsim lesson` on the parsed `args`; returns the exit status."""
    from ..lessons import check_lessons, load_lessons, load_numbered, outline_lessons
    from ..lessons.runner import listing, run_lesson
    scenario = {"gpus": args.gpus, "elements": args.elements}
    if args.check is not None:
        if args.number is not None:
            raise RingsimError("--check takes a folder and no lesson number")
        lessons, problems = check_lessons(args.check or args.lessons_dir, **scenario)
        for problem in problems:
            print(problem, file=sys.stderr)
        if problems:
            return 2
        print(f"{plural(len(lessons), 'lesson')} OK")
        return 0
    if args.number is None:
        print("\n".join(listing(outline_lessons(args.lessons_dir, **scenario))))
        folder = "" if args.lessons_dir is None else f" --lessons-dir {shlex.quote(printable(str(args.lessons_dir)))}"
        say(f"\nRun one with: ringsim lesson N{folder} · check every figure with: "
            f"ringsim lesson{folder} --check")
        return 0
    if args.gpus is None and args.elements is None:
        # The course as written: the whole folder must load, as `--check` would say.
        lessons = load_lessons(args.lessons_dir)
        chosen = [l for l in lessons if l.number == args.number]
        if not chosen:
            numbers = ", ".join(str(l.number) for l in lessons)
            raise RingsimError(f"there is no lesson {args.number}; the lessons are {numbers}")
    else:
        chosen = [load_numbered(args.number, args.lessons_dir, **scenario)]
    # Questions need a person at a terminal on both ends; otherwise print straight through
    # (a closed stdin, a pipe or a file must never leave the lesson waiting).
    terminal_out = is_terminal(sys.stdout)
    interactive = not args.no_pause and is_terminal(sys.stdin) and terminal_out
    return run_lesson(chosen[0], sys.stdout, sys.stdin if interactive else None,
                      xp=array_module(args.backend), rich=terminal_out)
