"""NCCL's binary trees without building them: node relations by formula, and the few GPUs that show every case.

Rank r ≠ 0 with lowest set bit b hangs below (r xor b) | 2b, or r xor b when that is out of
range (src/graph/trees.cc, ncclGetBtree; `_phases.btree_parents`). So a node's children
are r − b/2 and r + b/2 when it is in range, else the adopted r + b′ with b′ the largest
power of two below G − r; GPU0 has one child, the largest power of two below G. A node
whose in-order range r − b + 1 … r + b − 1 lies below G roots a complete subtree of
height lg b; the others (at most one per height) lie on the right edge.

Every GPU's ports in every step follow from its "signature" in each tree: its height,
depth, whether it has a parent and on which level, its children's heights and levels.
Along the ranks these repeat: inside one complete subtree, nodes of lowest bit 2^k share
height and depth and their levels repeat with period lcm(2^(k+2), P) (P GPUs per node).
`sample` picks, between consecutive boundaries of the complete subtrees (of both trees),
the first and last nodes of every k for one such period: O(P·log²G) GPUs whose
signatures are all the signatures the G GPUs have. Closed forms and time hooks then work
on those GPUs only (tests hold them against the full trees).
"""

from __future__ import annotations

import math

import numpy as np

FULL = 4096  # up to this many GPUs every GPU is its own sample


def top(gpus: int) -> int:
    """GPU0's only child: the largest power of two below G (0 when G = 1)."""
    return 1 << ((gpus - 1).bit_length() - 1) if gpus > 1 else 0


def parents(ranks: np.ndarray, gpus: int) -> np.ndarray:
    """Parents of tree ranks (−1 for rank 0), as ncclGetBtree."""
    ranks = np.asarray(ranks, np.int64)
    bit = ranks & -ranks
    up = (ranks ^ bit) | (bit << 1)
    up = np.where(up >= gpus, ranks ^ bit, up)
    return np.where(ranks == 0, -1, up)


def children(ranks: np.ndarray, gpus: int) -> tuple[np.ndarray, np.ndarray]:
    """(left, right) children of tree ranks, −1 where there is none."""
    ranks = np.asarray(ranks, np.int64)
    bit = np.where(ranks == 0, 0, ranks & -ranks)
    left = np.where(bit >= 2, ranks - bit // 2, -1)
    right = np.where((bit >= 2) & (ranks + bit // 2 < gpus), ranks + bit // 2, -1)
    # Adopted child: the largest power of two b' below G − r, when r + b/2 is out of range.
    room = gpus - ranks - 1
    lone = np.where(room >= 1, 1 << np.maximum(floor_log2(room), 0), 0)
    adopt = ((ranks == 0) | ((bit >= 2) & (ranks + bit // 2 >= gpus))) & (room >= 1)
    adopt &= (ranks == 0) | (lone < bit // 2)
    right = np.where(adopt, ranks + lone, right)
    return left, right


def floor_log2(values: np.ndarray) -> np.ndarray:
    """⌊log₂ v⌋ for v ≥ 1 (−1 for 0), exact for int64."""
    v = np.asarray(values, np.int64).copy()
    out = np.where(v > 0, 0, -1)
    shift = 32
    while shift:
        big = v >= (1 << shift)
        out = out + np.where(big, shift, 0)
        v = np.where(big, v >> shift, v)
        shift //= 2
    return out


def _spine(gpus: int) -> dict[int, int]:
    """Height of every node whose subtree is not complete (the right edge; O(log G) nodes)."""
    out: dict[int, int] = {}

    def height(r: int) -> int:
        if r != 0:
            b = r & -r
            if r + b <= gpus:
                return b.bit_length() - 1
        if r in out:
            return out[r]
        left, right = children(np.array([r]), gpus)
        kids = [int(k) for k in (left[0], right[0]) if k >= 0]
        out[r] = 1 + max(height(k) for k in kids) if kids else 0
        return out[r]

    height(0)
    return out


def heights(ranks: np.ndarray, gpus: int, spine: dict[int, int]) -> np.ndarray:
    """Height of tree ranks: lg of the lowest bit inside complete subtrees, else from the spine."""
    ranks = np.asarray(ranks, np.int64)
    bit = ranks & -ranks
    out = floor_log2(np.maximum(bit, 1))
    for r, h in spine.items():
        out = np.where(ranks == r, h, out)
    return out


def depths(ranks: np.ndarray, gpus: int) -> np.ndarray:
    """Depth of tree ranks (GPU0: 0), following parents: O(log G) vector steps."""
    node = np.asarray(ranks, np.int64).copy()
    depth = np.zeros(node.shape, np.int64)
    while (node > 0).any():
        depth += node > 0
        node = np.where(node > 0, parents(node, gpus), node)
    return depth


def boundaries(gpus: int, spine: dict[int, int]) -> list[int]:
    """Ranks where a new complete subtree (or a spine node) starts or ends."""
    out = {0, 1, gpus}
    for r in spine:
        out.update((r, r + 1))
        left, right = children(np.array([r]), gpus)
        for k in (int(left[0]), int(right[0])):
            if k > 0:
                b = k & -k
                out.update((k - b + 1, min(k + b, gpus)))
    return sorted(x for x in out if 0 <= x <= gpus)


class Tree:
    """One of the trees on G GPUs: GPU x plays tree rank `rank(x)` (tree 1: x; NCCL's second tree: mirrored or shifted)."""

    def __init__(self, gpus: int, second: bool = False) -> None:
        self.gpus, self.second = gpus, second
        self.spine = _spine(gpus)

    def rank(self, x):
        """The tree rank GPU x plays."""
        x = np.asarray(x, np.int64)
        if not self.second:
            return x
        return self.gpus - 1 - x if self.gpus % 2 == 0 else (x - 1) % self.gpus

    def gpu(self, r):
        """The GPU playing tree rank r (−1 stays −1)."""
        r = np.asarray(r, np.int64)
        if not self.second:
            return r
        g = self.gpus - 1 - r if self.gpus % 2 == 0 else (r + 1) % self.gpus
        return np.where(r < 0, -1, g)

    def boundaries(self) -> list[int]:
        """Boundaries in GPU numbers (both ends of every rank interval)."""
        cuts = boundaries(self.gpus, self.spine)
        out = set()
        for c in cuts:
            for v in (c, c - 1):
                if 0 <= v < self.gpus:
                    out.add(int(self.gpu(v)))
        return sorted(out)

    def relations(self, x: np.ndarray) -> dict[str, np.ndarray]:
        """For GPUs x: parent and children (GPUs, −1 none), heights of x and its children, depth of x."""
        r = self.rank(x)
        up = parents(r, self.gpus)
        left, right = children(r, self.gpus)
        h = lambda ranks: np.where(ranks >= 0, heights(np.maximum(ranks, 0), self.gpus, self.spine), -1)  # noqa: E731
        return {"parent": self.gpu(up), "left": self.gpu(left), "right": self.gpu(right),
                "height": h(r), "left_height": h(left), "right_height": h(right),
                "depth": depths(r, self.gpus)}


def sample(gpus: int, trees: list[Tree], per_node: int | None, full: int = FULL) -> np.ndarray:
    """GPUs that show every signature the trees give (all GPUs when G ≤ `full`)."""
    if gpus <= full:
        return np.arange(gpus, dtype=np.int64)
    cuts = sorted({0, gpus, *(c for t in trees for c in t.boundaries()),
                   *(c + 1 for t in trees for c in t.boundaries() if c + 1 <= gpus)})
    period = per_node or 1
    picks = [np.array(cuts[:-1], np.int64)]
    for a, b in zip(cuts, cuts[1:]):
        if b <= a:
            continue
        for t in trees:
            ra, rb = sorted((int(t.rank(a)), int(t.rank(b - 1))))
            if rb - ra != b - 1 - a:  # the shift wraps GPU0 to the last rank: two pieces
                pieces = [(int(t.rank(a)), gpus - 1), (0, int(t.rank(b - 1)))]
            else:
                pieces = [(ra, rb)]
            for lo, hi in pieces:
                for k in range(hi.bit_length() + 1):
                    step = 1 << (k + 1)
                    count = math.lcm(step * 2, period) // step + 2
                    first = ((lo - (1 << k)) + step - 1) // step * step + (1 << k)  # ≥ lo, lowbit 2^k
                    last = (hi - (1 << k)) // step * step + (1 << k)               # ≤ hi
                    if first > hi or last < lo:
                        continue
                    n = (last - first) // step + 1
                    j = np.arange(min(n, count), dtype=np.int64)
                    picks.append(t.gpu(first + j * step))
                    picks.append(t.gpu(last - j * step))
    return np.unique(np.concatenate(picks))
