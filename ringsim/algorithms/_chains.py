"""NCCL's tree (chains in nodes, binary trees across them) by formula, for any GPUs asked about.

G = M·L GPUs; GPU n·L + i is local GPU i of node n. Across nodes each tree is NCCL's binary
tree on M node ranks (`_btree`): a left child (rank below its parent's) hangs from the
parent node's GPU1, any other child from its GPU0 (everything from GPU0 when L = 1). So a
node's first GPU lies 1 + [left child] below its parent node's first GPU, local GPU i lies
i below its node's first, and a complete subtree of 2^k − 1 nodes is L − 1 + 2k high (k when
L = 1). Only the O(log M) spine nodes of `_btree` need a walk. Nothing here is O(G): it
answers for the GPUs it is given, and `lowest_per_node_kind` looks at the M nodes only.
"""

from __future__ import annotations

import functools

import numpy as np

from . import _btree


class ChainTree:
    """One of nccl-tree's two trees on G GPUs in nodes of L (second: NCCL's mirrored or shifted tree)."""

    def __init__(self, gpus: int, per: int, second: bool) -> None:
        self.gpus, self.per, self.nodes = gpus, per, gpus // per
        self.tree = _btree.Tree(self.nodes, second)
        self.spine = self._spine()
        self.top = int(self.node_height(np.array([0]))[0])  # the root node has rank 0

    # Node ranks ---------------------------------------------------------------------------
    def _complete(self, ranks: np.ndarray) -> np.ndarray:
        bit = ranks & -ranks
        k = _btree.floor_log2(np.maximum(bit, 1))
        return np.where(self.per >= 2, self.per - 1 + 2 * k, k)

    def _spine(self) -> dict[int, int]:
        """Height of each spine rank's first GPU (its subtree is not complete)."""
        out: dict[int, int] = {}
        m, per = self.nodes, self.per

        def height(r: int) -> int:
            b = r & -r
            if r != 0 and r + b <= m:
                return int(self._complete(np.array([r]))[0])
            if r not in out:
                left, right = (int(v[0]) for v in _btree.children(np.array([r]), m))
                if per >= 2:
                    h1 = max(per - 2, 1 + height(left)) if left >= 0 else per - 2
                    out[r] = max(1 + h1, 1 + height(right)) if right >= 0 else 1 + h1
                else:
                    kids = [height(k) for k in (left, right) if k >= 0]
                    out[r] = 1 + max(kids) if kids else 0
            return out[r]

        height(0)
        return out

    def node_height(self, ranks: np.ndarray) -> np.ndarray:
        """Height of the first GPU of the nodes of these ranks (−1 for rank −1)."""
        ranks = np.asarray(ranks, np.int64)
        out = self._complete(np.maximum(ranks, 0))
        for r, h in self.spine.items():
            out = np.where(ranks == r, h, out)
        return np.where(ranks >= 0, out, -1)

    def node_depth(self, ranks: np.ndarray) -> np.ndarray:
        """Depth of the first GPU of the nodes of these ranks: 1 + [left child] per step up."""
        node = np.asarray(ranks, np.int64).copy()
        depth = np.zeros(node.shape, np.int64)
        while (node > 0).any():
            up = _btree.parents(node, self.nodes)
            depth += np.where(node > 0, 1 + ((node < up) & (self.per >= 2)), 0)
            node = np.where(node > 0, up, node)
        return depth

    # GPUs ---------------------------------------------------------------------------------
    def relations(self, gpu: np.ndarray) -> dict[str, np.ndarray]:
        """For GPUs: parent, chain child, attached child nodes' first GPUs (−1: none), height, depth."""
        gpu = np.asarray(gpu, np.int64)
        per = self.per
        node, i = gpu // per, gpu % per
        rank = self.tree.rank(node)
        up = _btree.parents(rank, self.nodes)
        left, right = _btree.children(rank, self.nodes)
        first = lambda ranks: np.where(ranks >= 0, self.tree.gpu(ranks) * per, -1)  # noqa: E731
        attach = np.where((rank < up) & (per >= 2), 1, 0)
        parent = np.where(i > 0, gpu - 1, np.where(up >= 0, first(up) + attach, -1))
        chain = np.where(i + 1 < per, gpu + 1, -1)
        if per >= 2:
            a = np.where(i == 0, first(right), np.where(i == 1, first(left), -1))
            b = np.full(gpu.shape, -1, np.int64)
        else:
            a, b = first(left), first(right)
        h0, hl = self.node_height(rank), self.node_height(left)
        if per >= 2:
            h1 = np.where(left >= 0, np.maximum(per - 2, 1 + hl), per - 2)
            height = np.where(i >= 2, per - 1 - i, np.where(i == 1, h1, h0))
        else:
            height = h0
        return {"parent": parent, "chain": chain, "a": a, "b": b, "height": height,
                "depth": self.node_depth(rank) + i}

    def height(self, gpu: np.ndarray) -> np.ndarray:
        """Height of GPUs (−1 for −1)."""
        gpu = np.asarray(gpu, np.int64)
        return np.where(gpu >= 0, self.relations(np.maximum(gpu, 0))["height"], -1)

    def _by_rank(self) -> tuple[np.ndarray, np.ndarray]:
        """First-GPU depth and height of every node rank, a vector step per lowest set bit: a
        parent's lowest bit is above its child's, so the ranks of bit 2^k find their parents done."""
        m, per = self.nodes, self.per
        depth, height = np.zeros(m, np.int64), np.zeros(m, np.int64)
        for k in range(max(m - 1, 1).bit_length() - 1, -1, -1):
            r = np.arange(1 << k, m, 2 << k, dtype=np.int64)
            up = _btree.parents(r, m)
            depth[r] = depth[up] + 1 + ((r < up) & (per >= 2))
            height[r] = per - 1 + 2 * k if per >= 2 else k
        for r, h in self.spine.items():
            height[r] = h
        return depth, height

    def node_columns(self, topo_per_node: int | None):
        """Per node (in node order) what its GPUs' signatures depend on besides n·L mod P:
        its first GPU's depth, and for its parent and child links the height and level."""
        m, per = self.nodes, self.per
        node = np.arange(m, dtype=np.int64)
        rank = self.tree.rank(node)
        up = _btree.parents(rank, m)
        left, right = _btree.children(rank, m)
        depth, height = self._by_rank()
        attach = np.where((rank < up) & (per >= 2), 1, 0)
        yield depth[rank]
        hang = self.tree.gpu(up) * per + attach
        yield np.where(up >= 0, across(node * per, hang, topo_per_node), -1)
        for child, at in ((left, 1 if per >= 2 else 0), (right, 0)):
            yield np.where(child >= 0, height[np.maximum(child, 0)], -1)
            yield np.where(child >= 0, across(self.tree.gpu(child) * per, node * per + at,
                                              topo_per_node), -1)


@functools.lru_cache(maxsize=16)
def trees(gpus: int, per: int) -> tuple[ChainTree, ChainTree]:
    """Both trees (shared between calls)."""
    return ChainTree(gpus, per, False), ChainTree(gpus, per, True)


def across(a: np.ndarray, b: np.ndarray, topo_per_node: int | None) -> np.ndarray:
    """1 where GPUs a and b sit in different topology nodes (b = −1 reads as 0, as NCCL's arrays did)."""
    if not topo_per_node:
        return np.zeros(np.shape(a), np.int64)
    return (np.asarray(a) // topo_per_node != np.maximum(b, 0) // topo_per_node).astype(np.int64)
