"""Reusable plan builders: rings over sets of GPUs, binary trees, pairwise exchanges.

Each builder returns per-iteration columns (src, dst, first, last) so that algorithms
compose them: the K-channel ring runs K rings side by side, the hierarchical all-reduce
is a ring inside each node, then rings across nodes, then rings inside nodes again.
"""

from __future__ import annotations

import numpy as np

Columns = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def ring_iterations(orders: np.ndarray, bases, width: int, gather: bool) -> list[Columns]:
    """Reduce-scatter (or all-gather) iterations of R rings at once, the walkthrough's way.

    `orders` is (R, L): ring i visits GPUs orders[i, 0] → orders[i, 1] → … → back.
    Ring i works on L blocks of `width` segments starting at segment bases[i]. In
    reduce-scatter iteration s the GPU at position p sends block (p+1−s) mod L to the next
    GPU; in all-gather it forwards block (p+2−s) mod L, the complete block it got last.
    """
    orders = np.atleast_2d(np.asarray(orders, dtype=np.int64))
    length = orders.shape[1]
    bases = np.broadcast_to(np.asarray(bases, dtype=np.int64).reshape(-1, 1), orders.shape)
    p = np.arange(length)
    src, dst = orders, orders[:, (p + 1) % length]
    out = []
    for s in range(1, length):
        block = (p + (2 if gather else 1) - s) % length
        first = bases + block * width
        out.append((src.reshape(-1).copy(), dst.reshape(-1).copy(), first.reshape(-1),
                    (first + width - 1).reshape(-1)))  # fresh arrays: plan builders hand them over
    return out


def btree_parents(gpus: int) -> np.ndarray:
    """Parent of every rank in NCCL's binary tree (src/graph/trees.cc, ncclGetBtree); −1 for the root 0.

    The lowest set bit of rank r is b; its parent is (r xor b) | 2b, or r xor b when that
    is out of range: leaves are the odd ranks, 2^k-aligned ranks sit k levels up.
    """
    rank = np.arange(gpus, dtype=np.int64)
    bit = rank & -rank
    up = (rank ^ bit) | (bit << 1)
    up = np.where(up >= gpus, rank ^ bit, up)
    if gpus:
        up[0] = -1
    return up


def dtree_parents(gpus: int) -> np.ndarray:
    """Parents in the second tree of NCCL's double binary tree (ncclGetDtree).

    The first tree mirrored (rank r plays rank G−1−r) when G is even, or shifted by one
    (rank r plays rank r−1) when G is odd, so that the first tree's leaves are inner
    nodes of the second.
    """
    base = btree_parents(gpus)
    rank = np.arange(gpus, dtype=np.int64)
    if gpus % 2 == 0:
        up = base[gpus - 1 - rank]
        return np.where(up < 0, -1, gpus - 1 - up)
    up = base[(rank - 1) % gpus]
    return np.where(up < 0, -1, (up + 1) % gpus)


def depths(parents: np.ndarray) -> np.ndarray:
    """Depth of every node (the root's is 0), following parents."""
    depth = np.zeros(len(parents), dtype=np.int64)
    node = parents.copy()
    while (node >= 0).any():
        depth += node >= 0
        node = np.where(node >= 0, parents[np.maximum(node, 0)], -1)
    return depth


def heights(parents: np.ndarray) -> np.ndarray:
    """Height of every node: the longest way down to a leaf below it (leaves: 0)."""
    height = np.zeros(len(parents), dtype=np.int64)
    depth = depths(parents)
    for level in range(int(depth.max(initial=0)), 0, -1):  # deepest nodes first
        nodes = np.flatnonzero(depth == level)
        np.maximum.at(height, parents[nodes], height[nodes] + 1)
    return height


def tree_events(parents: np.ndarray, chunks: int, base: int) -> list[tuple[int, np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
    """A pipelined reduce-then-broadcast on one tree as (step, src, dst, segment, op) columns.

    Chunk c (segment base+c) leaves a node of height h for its parent at step c+h — by
    then every child has sent it — and the root, complete after step c+H−1 (H its
    height), sends it down at step c+H; a node at depth d passes it on at step c+H+d.
    So the tree reduces later chunks up while it broadcasts earlier ones down.
    """
    nonroot = np.flatnonzero(parents >= 0)
    if len(nonroot) == 0:
        return []
    height, depth = heights(parents), depths(parents)
    top = int(height[parents < 0].max())
    c = np.arange(chunks, dtype=np.int64)
    kids = nonroot  # each edge (parent[k], k) once, named by the child
    up_step = (c[:, None] + height[kids][None, :]).reshape(-1)
    down_step = (c[:, None] + top + depth[parents[kids]][None, :]).reshape(-1)
    seg = np.repeat(base + c, len(kids))
    child = np.tile(kids, chunks)
    parent = parents[child]
    zeros, ones = np.zeros(len(seg), np.int8), np.ones(len(seg), np.int8)
    return [(up_step, child, parent, seg, zeros), (down_step, parent, child, seg, ones)]


def steps_of(events, count: int | None = None) -> list[tuple[np.ndarray, ...]]:
    """Group (step, src, dst, segment, op) event columns into per-step columns, in step order."""
    step = np.concatenate([e[0] for e in events])
    cols = [np.concatenate([e[i] for e in events]) for i in range(1, 5)]
    order = np.lexsort((cols[0], cols[3], step))  # within a step: reduces first, then by sender
    step = step[order]
    cols = [col[order] for col in cols]
    total = int(step.max()) + 1 if count is None else count
    cuts = np.searchsorted(step, np.arange(total + 1))
    return [tuple(col[cuts[i]:cuts[i + 1]] for col in cols) for i in range(total)]
