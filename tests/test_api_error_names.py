"""Errors name the input as the caller wrote it: the keyword from Python, the flag on the command line."""

import numpy as np
import pytest

import ringsim
from ringsim import RingsimError
from ringsim.cli import main
from ringsim.lessons import load_lessons

GRADS = [np.ones(8, np.float32)] * 4

# (a Python call, the same input on the command line, what each says)
CASES = [
    (lambda: ringsim.make_plan("tree", 4, chunks=0), ["walk", "-g", "4", "-a", "tree", "--chunks", "0"],
     "chunks must be a whole number from 1 to 1,024, got 0",
     "--chunks must be a whole number from 1 to 1,024, got 0"),
    (lambda: ringsim.allreduce(GRADS, "ring", chunks=2), ["walk", "-g", "4", "-a", "ring", "--chunks", "2"],
     "ring takes channels, ring_order, not chunks (chunks is for tree, double-tree, nccl-tree, nvls)",
     "ring takes --channels, --ring-order, not --chunks (--chunks is for tree, double-tree, "
     "nccl-tree, nvls)"),
    (lambda: ringsim.closed_form("ring", 4, 8, ring_order="rails:3"),
     ["walk", "-g", "4", "--ring-order", "rails:3"],
     "ring_order='rails:3' needs 3 GPUs per node to divide G = 4",
     "--ring-order rails:3 needs 3 GPUs per node to divide G = 4"),
    (lambda: ringsim.Simulation.create("hierarchical", gpus=4, elements=8, nodes=3),
     ["walk", "-g", "4", "-a", "hierarchical", "--nodes", "3"],
     "nodes=3 does not divide 4 GPUs: every node holds G/M GPUs; try 1, 2, 4",
     "--nodes 3 does not divide 4 GPUs: every node holds G/M GPUs; try 1, 2, 4"),
    (lambda: ringsim.make_plan("nccl-tree", 4, gpus_per_node=9),
     ["walk", "-g", "4", "-a", "nccl-tree", "--gpus-per-node", "9"],
     "gpus_per_node must be a whole number from 1 to 4 (the GPUs), got 9",
     "--gpus-per-node must be a whole number from 1 to 4 (the GPUs), got 9"),
    (lambda: ringsim.all_gather(GRADS, "tree"), ["walk", "-g", "4", "--collective", "all-gather", "-a", "tree"],
     "all-gather is built for the ring only, not 'tree' (use algorithm='ring')",
     "all-gather is built for the ring only, not 'tree' (use --algorithm ring)"),
    (lambda: load_lessons(gpus=1), ["lesson", "--gpus", "1"],
     "a lesson needs at least 2 GPUs (gpus=2 or more): one GPU has nothing to synchronise",
     "a lesson needs at least 2 GPUs (--gpus 2 or more): one GPU has nothing to synchronise"),
]


@pytest.mark.parametrize("call, argv, from_python, on_command_line", CASES)
def test_python_names_keywords_and_the_command_line_names_flags(call, argv, from_python,
                                                                on_command_line, capsys):
    with pytest.raises(RingsimError) as error:
        call()
    assert str(error.value) == from_python
    assert main(argv) == 2
    assert capsys.readouterr().err == f"ringsim {argv[0]}: error: {on_command_line}\n"
    with pytest.raises(RingsimError) as again:  # the command line's naming ends with it
        call()
    assert str(again.value) == from_python
