"""The algorithms' options as command-line flags: the one argparse group every command that
takes them adds (the commands under ringsim/cli/ and the MPI rank program alike)."""

from __future__ import annotations

import argparse

from ..core.checks import count_arg
from . import algorithms_taking


def applies_to(option: str) -> str:
    """The algorithms whose Options take `option`, as its help names them: 'tree, double-tree, …'."""
    # Read from the specs, so that an algorithm that takes an option is named in its help by itself.
    return ", ".join(algorithms_taking(option))


# --nodes is always "the GPUs sit in M nodes"; each command's help adds what it sets from M.
NODES_ALGORITHM = f"{applies_to('nodes')}: M nodes of G/M GPUs (default: the divisor of G nearest √G)"
OPTIONS_TITLE = "algorithm options (each applies to the algorithms named)"


def add_option_arguments(parser: argparse.ArgumentParser, *, nodes: bool = True) -> None:
    """Every algorithm's own options as flags in one group (defaults: the algorithms');
    nodes=False leaves --nodes to the time model's (G = M × GPUs per node)."""
    group = parser.add_argument_group(OPTIONS_TITLE)
    # Ranges that depend on G (the master GPU is 1..G) are checked with G, by the algorithm.
    group.add_argument("--master", type=count_arg("the master GPU", minimum=None), default=None,
                       metavar="K",
                       help=f"{applies_to('master')}: the master GPU, which sums every GPU's "
                            "gradient and sends the sum back, 1..G (default: 1)")
    group.add_argument("--chunks", type=count_arg("the number of chunks", minimum=None), default=None,
                       metavar="C",
                       help=f"{applies_to('chunks')}: pieces the gradient is pipelined in (default: 1)")
    group.add_argument("--gpus-per-node", type=count_arg("the number of GPUs per node", minimum=None),
                       default=None, metavar="L",
                       help=f"{applies_to('gpus_per_node')}: L GPUs in each node's chain (default: "
                            "the largest divisor of G up to 8)")
    group.add_argument("--channels", type=count_arg("the number of channels", minimum=None), default=None,
                       metavar="K",
                       help=f"{applies_to('channels')}: K rings side by side, each on 1/K of the data "
                            "(default: 1)")
    group.add_argument("--ring-order", default=None, metavar="ORDER",
                       help=f"{applies_to('ring_order')}: each ring's GPU order, e.g. 1,3,2,4 or "
                            "1,3,2,4;4,3,2,1, or rails:P for P rings that each leave every node of "
                            "P GPUs through their own GPU's NIC, as NCCL's channels (default: 1,2,…,G)")
    group.add_argument("--tree-parents", default=None, metavar="TREES",
                       help=f"{applies_to('tree_parents')}: the trees GPU by GPU, each GPU's parent "
                            "with 0 for the root, e.g. 0,1,2,3 or 0,1,1,2;2,0,2,3 for one tree per "
                            "channel (default: NCCL's chains and double binary tree)")
    if nodes:
        group.add_argument("--nodes", type=count_arg("the number of nodes", minimum=None), default=None,
                           metavar="M", help=NODES_ALGORITHM)
