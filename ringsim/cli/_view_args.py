"""Arguments and checks shared by the commands that show the simulator (tui, export, serve) or
its scenario (figure, walk): --present, --values, --topology, N's default, and the App they build."""

from __future__ import annotations

import argparse

from ..core.errors import RingsimError
from ..sim.scenario import SHOWN_ELEMENTS, Scenario, shown_elements
from ._nccl_log import apply_nccl_log
from .common import COUNT_HELP, options_from_args, simulation_from_args


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
    from ..tui.limits import MAX_GPUS, check_view_limits
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
    from ..tui.clock import on_machine
    if getattr(args, "nodes", None) is None:  # the hierarchical ring on the machine's nodes
        from ..algorithms import plan_options
        shown = Scenario(sim.plan.algorithm, sim.plan.gpus, sim.layout.elements,
                         plan_options(sim.plan))
        machine = on_machine(shown, topology)
        if machine != shown:
            sim = machine.simulation(sim.xp)
    return RingsimApp(sim, present=args.present, values=args.values,
                      lesson=getattr(args, "lesson", None), topology=topology)
