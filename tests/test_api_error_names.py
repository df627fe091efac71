"""Errors name the input as the caller wrote it: the keyword from Python, the flag on the command line."""

import numpy as np
import pytest

import ringsim
from ringsim import RingsimError
from ringsim.cli import main
from ringsim.cost.nccl import nccl_choice
from ringsim.lessons import load_lessons
from ringsim.studies.predict import predict
from ringsim.studies.sweep import parse_sizes
from ringsim.training.train import train
from ringsim.training.zero_train import train_zero

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
    (lambda: nccl_choice("dgx-h100", 8, 2**20, algo="foo"),
     ["predict", "--topology", "dgx-h100", "--algo", "foo"],
     "algo: unknown algorithm 'foo'; valid: Tree, Ring, CollNetDirect, CollNetChain, NVLS, NVLSTree, PAT",
     "--algo: unknown algorithm 'foo'; valid: Tree, Ring, CollNetDirect, CollNetChain, NVLS, NVLSTree, "
     "PAT"),
    (lambda: nccl_choice("dgx-h100", 8, 2**20, "broadcast", algo="tree"),
     ["predict", "--topology", "dgx-h100", "--collective", "broadcast", "--algo", "tree"],
     "algo='tree': NCCL tunes only Ring for broadcast (src/graph/tuning.cc); give algo='Ring' or "
     "leave algo out",
     "--algo tree: NCCL tunes only Ring for broadcast (src/graph/tuning.cc); give --algo Ring or "
     "leave --algo out"),
    (lambda: parse_sizes("1KiB..1B"), ["sweep", "--sizes", "1KiB..1B"],
     "sizes: the range '1KiB..1B' must go up from at least 1 byte",
     "--sizes: the range '1KiB..1B' must go up from at least 1 byte"),
    (lambda: predict("dgx-h100", 8, "x"), ["predict", "--topology", "dgx-h100", "--sizes", "x"],
     "sizes: cannot read 'x'; write it like 256MiB, 1GB or 4096",
     "--sizes: cannot read 'x'; write it like 256MiB, 1GB or 4096"),
    (lambda: train(gpus=8, batch=4), ["train", "-g", "8", "--batch", "4"],
     "each GPU needs at least one sample of every batch: gpus (8) must be at most the batch size (4)",
     "each GPU needs at least one sample of every batch: --gpus (8) must be at most the batch "
     "size (4)"),
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


def test_a_zero_stage_from_python_names_the_keyword():
    # the command line's --zero offers 1, 2 and 3 only, so only Python reaches this check
    with pytest.raises(RingsimError, match=r"^stage must be ZeRO stage 1, 2 or 3, got 5$"):
        train_zero(stage=5)
