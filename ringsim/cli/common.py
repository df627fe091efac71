"""Options shared by the commands that set up a scenario: algorithm, G, N, the algorithm's
options, backend."""

from __future__ import annotations

import argparse

from ..algorithms import ALGORITHMS, DEFAULT_ALGORITHM, given_options
from ..algorithms.flags import add_option_arguments, applies_to
from ..execute.backend import BACKENDS, array_module
from ..core.checks import MAX_GPUS, count_arg
from ..sim.simulation import Simulation


gpus_arg = count_arg("the number of GPUs", minimum=1, maximum=MAX_GPUS)
elements_arg = count_arg("the number of elements per GPU", minimum=0)
COUNT_HELP = "whole numbers: digits (1000000, 1_000_000) or 1e6, never a decimal point"
# --nodes is always "the GPUs sit in M nodes" (NODES_ALGORITHM); each command's help adds
# what it sets from M.
NODES_TOPOLOGY = ("M nodes of the topology (dgx-h100, …): G = M × its GPUs per node, and M "
                  f"for {applies_to('nodes')}")


def gpus_up_to(most: int, fewest: int = 1):
    """--gpus for a command that shows at most `most` GPUs: too few (or more than any command
    takes) is refused naming the command's own range, fewest..most; a G between `most` and
    1,000,000 is left to the command, whose own check says which command takes it."""
    return count_arg("the number of GPUs", minimum=1, maximum=MAX_GPUS, stated=(fewest, most))


def add_scenario_arguments(parser: argparse.ArgumentParser, *, gpus: int = 4, elements: int = 8,
                           backend: bool = True, most_gpus: int | None = None) -> None:
    """--algorithm, --gpus, --elements, the algorithm options (and --backend); defaults: the
    4-GPU example; `most_gpus`: the most the command shows, said in --gpus' help."""
    parser.add_argument("-a", "--algorithm", default=DEFAULT_ALGORITHM, choices=list(ALGORITHMS),
                        help=f"all-reduce algorithm (default: {DEFAULT_ALGORITHM})")
    parser.add_argument("-g", "--gpus", type=gpus_up_to(most_gpus) if most_gpus else gpus_arg,
                        default=gpus, metavar="G",
                        help=f"number of GPUs{f', 1..{most_gpus}' if most_gpus else ''} "
                             f"(default: {gpus})")
    parser.add_argument("-n", "--elements", type=elements_arg, default=elements, metavar="N",
                        help=f"gradient elements per GPU (default: {elements}); counts are "
                             f"{COUNT_HELP}")
    add_option_arguments(parser)
    if backend:
        add_backend_argument(parser)


def options_from_args(args: argparse.Namespace) -> tuple[tuple[str, object], ...]:
    """The algorithm options given on the command line, as (name, value) pairs for a Scenario."""
    return given_options(args)


def add_backend_argument(parser: argparse.ArgumentParser) -> None:
    """--backend numpy|cupy|auto."""
    parser.add_argument("--backend", default="auto", choices=BACKENDS,
                        help="array module for the GPUs' buffers: CuPy when installed and a "
                             "CUDA device is visible (auto, the default), or numpy / cupy")


def simulation_from_args(args: argparse.Namespace) -> Simulation:
    """The Simulation the scenario options describe."""
    xp = array_module(getattr(args, "backend", "numpy"))
    return Simulation.create(args.algorithm, args.gpus, args.elements, xp=xp,
                             **dict(options_from_args(args)))
