"""Options shared by the commands that set up a scenario: algorithm, G, N, master, backend."""

from __future__ import annotations

import argparse

from ..algorithms import ALGORITHMS
from ..backend import BACKENDS, array_module
from ..checks import check_elements, check_gpus
from ..errors import RingsimError
from ..scenario import Scenario
from ..simulation import Simulation


def _arg(check):
    """An argparse type that applies a ringsim check and reports its message on failure."""
    def parse(text: str):
        try:
            value = int(text)
        except ValueError:
            try:
                value = float(text)
            except ValueError:
                raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        try:
            return check(value)
        except RingsimError as error:
            raise argparse.ArgumentTypeError(str(error)) from None
    return parse


gpus_arg = _arg(check_gpus)
elements_arg = _arg(check_elements)


def add_scenario_arguments(parser: argparse.ArgumentParser, *, gpus: int = 4, elements: int = 8,
                           backend: bool = True) -> None:
    """--algorithm, --gpus, --elements, --master (and --backend) with the seed's defaults."""
    parser.add_argument("-a", "--algorithm", default="ring", choices=list(ALGORITHMS),
                        help="all-reduce algorithm (default: ring)")
    parser.add_argument("-g", "--gpus", type=gpus_arg, default=gpus, metavar="G",
                        help=f"number of GPUs (default: {gpus})")
    parser.add_argument("-n", "--elements", type=elements_arg, default=elements, metavar="N",
                        help=f"gradient elements per GPU (default: {elements})")
    parser.add_argument("--master", type=int, default=None, metavar="K",
                        help="the master GPU of the master algorithm, 1..G (default: 1)")
    add_option_arguments(parser)
    if backend:
        add_backend_argument(parser)


def _whole(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None


OPTION_FLAGS = ("chunks", "channels", "ring_order", "nodes")


def add_option_arguments(parser: argparse.ArgumentParser) -> None:
    """--chunks, --channels, --ring-order, --nodes: the algorithms' own options (default: theirs)."""
    group = parser.add_argument_group("algorithm options (each applies to the algorithms named)")
    group.add_argument("--chunks", type=_whole, default=None, metavar="C",
                       help="tree, double-tree: pieces the gradient is pipelined in (default: 1)")
    group.add_argument("--channels", type=_whole, default=None, metavar="K",
                       help="ring: K rings side by side, each on 1/K of the data (default: 1)")
    group.add_argument("--ring-order", default=None, metavar="ORDER",
                       help="ring: each ring's GPU order, e.g. 1,3,2,4 or 1,3,2,4;4,3,2,1 "
                            "(default: 1,2,…,G)")
    group.add_argument("--nodes", type=_whole, default=None, metavar="M",
                       help="hierarchical: M nodes of G/M GPUs (default: the divisor of G nearest √G)")


def options_from_args(args: argparse.Namespace) -> tuple[tuple[str, object], ...]:
    """The algorithm options given on the command line, as (name, value) pairs for a Scenario."""
    return tuple((name, getattr(args, name)) for name in OPTION_FLAGS
                 if getattr(args, name, None) is not None)


def add_backend_argument(parser: argparse.ArgumentParser) -> None:
    """--backend numpy|cupy|auto."""
    parser.add_argument("--backend", default="auto", choices=BACKENDS,
                        help="array module for the GPUs' buffers: CuPy when installed and a "
                             "CUDA device is visible (auto, the default), or numpy / cupy")


def simulation_from_args(args: argparse.Namespace) -> Simulation:
    """The Simulation the scenario options describe."""
    xp = array_module(getattr(args, "backend", "numpy"))
    return Scenario(args.algorithm, args.gpus, args.elements, args.master,
                    options_from_args(args)).simulation(xp)
