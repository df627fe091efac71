"""ringsim tui: the interactive simulator (Textual), one iteration per key press."""

from __future__ import annotations

import argparse

from ..errors import RingsimError
from .common import add_scenario_arguments, simulation_from_args

ORDER = 5
HELP = "open the interactive simulator in the terminal (the default in a terminal)"


def register(sub) -> None:
    parser = sub.add_parser("tui", help=HELP, description=HELP + ". Defaults: the seed's ring "
                            "of 4 GPUs with 8 elements each; press ? inside for the keys.")
    add_scenario_arguments(parser)
    add_view_arguments(parser)
    parser.add_argument("--lesson", type=int, metavar="K",
                        help="open the lesson panel at lesson K (key l opens it at any time)")
    parser.set_defaults(run=run)


def add_view_arguments(parser: argparse.ArgumentParser) -> None:
    """--present and --values, shared by tui, export and serve."""
    parser.add_argument("--present", action="store_true",
                        help="presentation mode: large, high-contrast cells for a projector")
    parser.add_argument("--values", action="store_true",
                        help="cells show their numbers instead of labels such as a₁+b₁")


def make_app(args: argparse.Namespace):
    """The TUI App for the scenario options (refuses a G or N the view cannot show)."""
    from ..tui.scenario import check_view_limits
    check_view_limits(args.gpus, args.elements)
    from ..tui.app import RingsimApp  # Textual loads only here, not at `ringsim` start-up
    lesson = getattr(args, "lesson", None)
    if lesson is not None:
        from ..lessons import load_lessons
        count = len(load_lessons())
        if not 1 <= lesson <= count:
            raise RingsimError(f"--lesson must be from 1 to {count}, got {lesson}")
    return RingsimApp(simulation_from_args(args), master=args.master,
                      present=args.present, values=args.values, lesson=lesson)


def run(args: argparse.Namespace) -> int:
    make_app(args).run()
    return 0
