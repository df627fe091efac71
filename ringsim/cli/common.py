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
    if backend:
        add_backend_argument(parser)


def add_backend_argument(parser: argparse.ArgumentParser) -> None:
    """--backend numpy|cupy|auto."""
    parser.add_argument("--backend", default="auto", choices=BACKENDS,
                        help="array module for the GPUs' buffers: CuPy when installed and a "
                             "CUDA device is visible (auto, the default), or numpy / cupy")


def simulation_from_args(args: argparse.Namespace) -> Simulation:
    """The Simulation the scenario options describe."""
    xp = array_module(getattr(args, "backend", "numpy"))
    return Scenario(args.algorithm, args.gpus, args.elements, args.master).simulation(xp)
