"""ringsim tui: the interactive simulator (Textual), one iteration per key press."""

from __future__ import annotations

import argparse
import os
import sys

from ..core.errors import RingsimError
from ..core.terminal import dumb_terminal, is_terminal
from ..sim.scenario import SHOWN_ELEMENTS, shown_elements
from ._nccl_log import add_nccl_log_arguments, apply_nccl_log
from ..tui.scenario import MAX_GPUS as TUI_MAX_GPUS
from .common import COUNT_HELP, add_scenario_arguments, options_from_args, simulation_from_args

ORDER = 5
HELP = "open the interactive simulator in the terminal (the default in a terminal)"


def register(sub) -> None:
    parser = sub.add_parser("tui", help=HELP, description=HELP + ". Defaults: the 4-GPU example, "
                            "a ring of 4 GPUs with 8 elements each; press ? inside for the keys.")
    add_scenario_arguments(parser, most_gpus=TUI_MAX_GPUS)
    elements_follow_gpus(parser)
    add_view_arguments(parser)
    parser.add_argument("--lesson", type=int, metavar="K",
                        help="open the lesson panel at lesson K (key l opens it at any time)")
    add_nccl_log_arguments(parser)
    add_topology_argument(parser)
    parser.set_defaults(run=run)


def add_topology_argument(parser: argparse.ArgumentParser) -> None:
    """--topology: the preset the clock starts on (key t goes on to the next)."""
    from ..cost.topology import presets
    parser.add_argument("--topology", default=None, metavar="T",
                        help=f"the clock's topology preset ({', '.join(presets())}; default flat); "
                             "key t goes on to the next one G fits")


def check_topology(args: argparse.Namespace) -> str:
    """The preset --topology names, refused in one line when G does not fit its nodes."""
    name = getattr(args, "topology", None) or "flat"
    from ..tui.clock import fitting
    fit, skip = fitting(args.gpus)
    if name in fit:
        return name
    if name in skip:
        raise RingsimError(f"{args.gpus} GPUs do not fit {name}'s nodes; the presets {args.gpus} "
                           f"GPUs fit: {', '.join(fit)}")
    raise RingsimError(f"the TUI's clock takes a preset topology, one of {', '.join(fit + skip)}; "
                       f"got {name!r} (`ringsim walk --time --topology FILE` reads a file)")


def add_view_arguments(parser: argparse.ArgumentParser) -> None:
    """--present and --values, shared by tui, export and serve."""
    parser.add_argument("--present", action="store_true",
                        help="presentation mode: large, high-contrast cells for a projector")
    parser.add_argument("--values", action="store_true",
                        help="cells show their numbers instead of labels such as a₁+b₁")


def elements_follow_gpus(parser: argparse.ArgumentParser) -> None:
    """--elements defaults to 8, or one per segment of a plan with more (sim.scenario.shown_elements)."""
    for action in parser._actions:  # argparse offers no public way to change one option's help
        if action.dest == "elements":
            action.default = None
            action.help = (f"gradient elements per GPU (default: {SHOWN_ELEMENTS}, or one per "
                           f"segment when the plan has more: G on a ring of more than "
                           f"{SHOWN_ELEMENTS} GPUs, 2G on the bidirectional ring; so that no "
                           f"segment is empty); counts are {COUNT_HELP}")


def default_elements(args: argparse.Namespace) -> None:
    """Fill in N when the user left it out (see elements_follow_gpus)."""
    if getattr(args, "elements", None) is None:
        from ..algorithms import make_plan
        plan = make_plan(args.algorithm, args.gpus, **dict(options_from_args(args)))
        args.elements = shown_elements(plan.segments)


def check_scenario(args: argparse.Namespace):
    """Everything `tui` refuses, checked before any window opens: view limits, the scenario
    (--master, the algorithm), the backend and --lesson. Returns the Simulation."""
    from ..tui.scenario import MAX_GPUS, check_view_limits
    apply_nccl_log(args, MAX_GPUS, gpus_given=False)
    check_view_limits(args.gpus, args.elements or 0)  # G first: N's default needs G's plan
    default_elements(args)
    check_view_limits(args.gpus, args.elements)
    sim = simulation_from_args(args)
    lesson = getattr(args, "lesson", None)
    if lesson is not None:
        from ..lessons import load_lessons
        count = len(load_lessons())
        if not 1 <= lesson <= count:
            raise RingsimError(f"--lesson must be from 1 to {count}, got {lesson}")
    return sim


def make_app(args: argparse.Namespace):
    """The TUI App for the scenario options (refuses a G or N the view cannot show)."""
    sim = check_scenario(args)
    topology = check_topology(args)
    from ..tui.app import RingsimApp  # Textual loads only here, not at `ringsim` start-up
    from ..tui.clock import Clock, on_machine
    if getattr(args, "nodes", None) is None:  # the hierarchical ring on the machine's nodes
        from ..algorithms import plan_options
        from ..tui.scenario import Scenario
        shown = Scenario(sim.plan.algorithm, sim.plan.gpus, sim.layout.elements,
                         plan_options(sim.plan))
        machine = on_machine(shown, topology)
        if machine != shown:
            sim = machine.simulation(sim.xp)
    app = RingsimApp(sim, present=args.present, values=args.values,
                     lesson=getattr(args, "lesson", None))
    if topology != app.state.topology:  # set before the first frame: no watcher runs
        from dataclasses import replace
        app.set_reactive(type(app).state, replace(app.state, topology=topology))
        app.clock = Clock(topology)
    return app


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
    app = make_app(args)
    check_terminal()
    app.run()
    return 0
