"""Options shared by the commands that set up a scenario: algorithm, G, N, master, backend."""

from __future__ import annotations

import argparse

from ..algorithms import ALGORITHMS, DEFAULT_ALGORITHM, OPTION_ORDER, given_options
from ..execute.backend import BACKENDS, array_module
from ..core.checks import MAX_GPUS, count_arg
from ..sim.simulation import Simulation


gpus_arg = count_arg("the number of GPUs", minimum=1, maximum=MAX_GPUS)
elements_arg = count_arg("the number of elements per GPU", minimum=0)
master_arg = count_arg("the master GPU", minimum=None)  # its range (1..G) is checked with G
COUNT_HELP = "whole numbers: digits (1000000, 1_000_000) or 1e6, never a decimal point"
# --nodes is always "the GPUs sit in M nodes"; each command's help adds what it sets from M.
NODES_ALGORITHM = "M nodes of G/M GPUs, for the hierarchical algorithm (default: the divisor of G nearest √G)"
NODES_TOPOLOGY = ("M nodes of the topology (dgx-h100, …): G = M × its GPUs per node, and the "
                  "hierarchical algorithm's M")


def gpus_up_to(most: int, fewest: int = 1):
    """--gpus for a command that shows at most `most` GPUs: too few (or more than any command
    takes) is refused naming the command's own range, fewest..most; a G between `most` and
    1,000,000 is left to the command, whose own check says which command takes it."""
    return count_arg("the number of GPUs", minimum=1, maximum=MAX_GPUS, stated=(fewest, most))


def add_scenario_arguments(parser: argparse.ArgumentParser, *, gpus: int = 4, elements: int = 8,
                           backend: bool = True, most_gpus: int | None = None) -> None:
    """--algorithm, --gpus, --elements, --master (and --backend); defaults: the 4-GPU example;
    `most_gpus`: the most the command shows, said in --gpus' help."""
    parser.add_argument("-a", "--algorithm", default=DEFAULT_ALGORITHM, choices=list(ALGORITHMS),
                        help=f"all-reduce algorithm (default: {DEFAULT_ALGORITHM})")
    parser.add_argument("-g", "--gpus", type=gpus_up_to(most_gpus) if most_gpus else gpus_arg,
                        default=gpus, metavar="G",
                        help=f"number of GPUs{f', 1..{most_gpus}' if most_gpus else ''} "
                             f"(default: {gpus})")
    parser.add_argument("-n", "--elements", type=elements_arg, default=elements, metavar="N",
                        help=f"gradient elements per GPU (default: {elements}); counts are "
                             f"{COUNT_HELP}")
    parser.add_argument("--master", type=master_arg, default=None, metavar="K",
                        help="the master GPU of the master algorithm, 1..G (default: 1)")
    add_option_arguments(parser)
    if backend:
        add_backend_argument(parser)


# Every option an algorithm's Options holds, as a flag, in the order an error names them.
OPTION_FLAGS = OPTION_ORDER


def add_option_arguments(parser: argparse.ArgumentParser, *, nodes: bool = True) -> None:
    """--chunks, --channels, --ring-order, --nodes: the algorithms' own options (default: theirs).

    nodes=False leaves --nodes to the cost model's arguments (G = M × GPUs per node)."""
    group = parser.add_argument_group("algorithm options (each applies to the algorithms named)")
    group.add_argument("--chunks", type=count_arg("the number of chunks", minimum=None), default=None, metavar="C",
                       help="tree, double-tree, nccl-tree, nvls: pieces the gradient is pipelined in (default: 1)")
    group.add_argument("--gpus-per-node", type=count_arg("the number of GPUs per node", minimum=None),
                       default=None, metavar="L",
                       help="nccl-tree: L GPUs in each node's chain (default: the largest divisor "
                            "of G up to 8)")
    group.add_argument("--channels", type=count_arg("the number of channels", minimum=None), default=None, metavar="K",
                       help="ring: K rings side by side, each on 1/K of the data (default: 1)")
    group.add_argument("--ring-order", default=None, metavar="ORDER",
                       help="ring: each ring's GPU order, e.g. 1,3,2,4 or 1,3,2,4;4,3,2,1, or rails:P "
                            "for P rings that each leave every node of P GPUs through their own "
                            "GPU's NIC, as NCCL's channels (default: 1,2,…,G)")
    group.add_argument("--tree-parents", default=None, metavar="TREES",
                       help="nccl-tree: the trees GPU by GPU, each GPU's parent with 0 for the "
                            "root, e.g. 0,1,2,3 or 0,1,1,2;2,0,2,3 for one tree per channel "
                            "(default: NCCL's chains and double binary tree)")
    if nodes:
        group.add_argument("--nodes", type=count_arg("the number of nodes", minimum=None), default=None,
                           metavar="M", help=NODES_ALGORITHM)


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
