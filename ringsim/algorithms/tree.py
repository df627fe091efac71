"""Binary tree all-reduce: reduce up NCCL's binary tree to GPU1, broadcast back down, pipelined in C chunks.

The tree is NCCL's (src/graph/trees.cc, ncclGetBtree): GPU1 is the root with one child,
odd-numbered ranks are leaves. The gradient is cut into C chunks (S = C segments); chunk
c leaves a node of height h at step c+h, so while later chunks still climb, earlier ones
already come back down ("Massively Scale Your Deep Learning Training with NCCL 2.4",
NVIDIA blog, 2019). Every GPU but the root sends each chunk up once and receives it down
once: 2·(G−1)·N in all, in C + 2·⌈log₂G⌉ − 1 steps instead of the ring's 2·(G−1); an
inner node with two children moves 3·N each way (Thakur, Rabenseifner & Gropp, IJHPCA 2005,
analyse the same reduce + broadcast pair).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.formula import ClosedForm
from ..core.plan import Plan
from . import _btree, _trees
from ._phases import btree_parents
from .spec import AlgorithmSpec, Implementation, Shape

NAME = "tree"


@dataclass(frozen=True)
class Options:
    """chunks: C pieces the gradient is cut into, so that reduce and broadcast overlap (S = C)."""

    chunks: int = 1


def check_options(gpus: int, chunks: int = 1) -> dict:
    """chunks is a whole number from 1 to 1,024."""
    return {"chunks": _trees.check_chunks(chunks)}


def plan(gpus: int, chunks: int = 1) -> Plan:
    """Pipelined reduce then broadcast on NCCL's binary tree."""
    return _trees.build(NAME, gpus, [btree_parents(gpus)], chunks, {"chunks": chunks})


def transfers(gpus: int, chunks: int = 1) -> int:
    """Each of the G−1 tree edges carries every chunk up and down: 2·(G−1)·C."""
    return 2 * (gpus - 1) * chunks


def closed_form(gpus: int, elements: int, chunks: int = 1) -> ClosedForm:
    """2·(G−1)·N in all; the busiest GPU (a parent of two that has a parent) moves 3·N each way."""
    return _trees.closed_form(gpus, elements, [_btree.Tree(gpus)], chunks)


def seconds(gpus: int, elements: int, model, chunks: int = 1):
    """α-β-γ time of the pipelined reduce and broadcast (`_trees.seconds`)."""
    return _trees.seconds(gpus, elements, model, [_btree.Tree(gpus)], _trees.check_chunks(chunks))


def busiest_gpu(gpus: int, elements: int, chunks: int = 1) -> int:
    """The lowest GPU moving the most: every GPU sends as much as it receives."""
    return _trees.busiest_gpu(gpus, elements, [_btree.Tree(gpus)], _trees.check_chunks(chunks))


# The same schedule in MPI libraries (pmodels/mpich, open-mpi/ompi on GitHub).
MPI = (
    Implementation("MPICH", "src/mpi/coll/allreduce/allreduce_intra_tree.c",
                   "MPIR_Allreduce_intra_tree"),
)

SPEC = AlgorithmSpec(
    NAME, "Binary tree",
    "reduce up a binary tree, broadcast down, pipelined in C chunks: 2·(G−1)·N, ~2·log₂G steps",
    Options, plan, closed_form, transfers, seconds, busiest_gpu, shape=Shape.TREE,
    check=check_options, mpi_implementations=MPI)
