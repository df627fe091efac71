"""NCCL's double binary tree: two complementary binary trees, each carrying half the data.

The first tree is NCCL's binary tree; the second is its mirror (G even) or its shift by
one (G odd), src/graph/trees.cc ncclGetDtree, so a GPU that is a leaf in one tree is an
inner node of the other and no GPU forwards more than its share ("Massively Scale Your
Deep Learning Training with NCCL 2.4", NVIDIA blog, 2019). Tree 1 works on segments
1…C, tree 2 on C+1…2C (S = 2·C); both run the pipelined reduce-then-broadcast of `tree`
at the same time. NCCL itself runs these trees across nodes only, with a chain inside
each node: that is `nccl-tree`, which equals this one at one GPU per node.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.formula import ClosedForm
from ..core.plan import Plan
from . import _btree, _trees
from ._phases import btree_parents, dtree_parents
from .spec import AlgorithmSpec, Shape, two_lanes

NAME = "double-tree"


@dataclass(frozen=True)
class Options:
    """chunks: C pieces per tree (S = 2·C segments in all)."""

    chunks: int = 1


def check_options(gpus: int, chunks: int = 1) -> dict:
    """chunks is a whole number from 1 to 1,024."""
    return {"chunks": _trees.check_chunks(chunks)}


def _shapes(gpus: int):
    return [_btree.Tree(gpus), _btree.Tree(gpus, True)]


def _trees_of(gpus: int):
    return [btree_parents(gpus), dtree_parents(gpus)]


def plan(gpus: int, chunks: int = 1) -> Plan:
    """Both trees' pipelined reduce and broadcast, side by side."""
    return _trees.build(NAME, gpus, _trees_of(gpus), chunks, {"chunks": chunks})


def transfers(gpus: int, chunks: int = 1) -> int:
    """Two trees of G−1 edges, each edge carrying C chunks up and down."""
    return 4 * (gpus - 1) * chunks


def closed_form(gpus: int, elements: int, chunks: int = 1) -> ClosedForm:
    """2·(G−1)·N in all; per GPU about 2·N each way (3·N/2 + N/2 when inner in one tree, leaf in the other)."""
    return _trees.closed_form(gpus, elements, _shapes(gpus), chunks)


def seconds(gpus: int, elements: int, model, chunks: int = 1):
    """α-β-γ time of the pipelined reduce and broadcast (`_trees.seconds`)."""
    return _trees.seconds(gpus, elements, model, _shapes(gpus), _trees.check_chunks(chunks))


def busiest_gpu(gpus: int, elements: int, chunks: int = 1) -> int:
    """The lowest GPU moving the most: every GPU sends as much as it receives."""
    return _trees.busiest_gpu(gpus, elements, _shapes(gpus), _trees.check_chunks(chunks))


SPEC = AlgorithmSpec(
    NAME, "Double binary tree",
    "two complementary binary trees, each on half the data (NCCL): 2·(G−1)·N, ~2·log₂G steps",
    Options, plan, closed_form, transfers, seconds, busiest_gpu, shape=Shape.TREE,
    check=check_options, lanes=two_lanes)
