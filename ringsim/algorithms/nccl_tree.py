"""NCCL's tree: a chain through the GPUs of each node, NCCL's double binary tree across the nodes.

G = M·L GPUs in M nodes of L. Inside a node NCCL's tree is a chain: local GPU i has GPU
i−1 above it and GPU i+1 below (NVIDIA/nccl src/graph/connect.cc, ncclTopoPreset:
`tree.up = treeIntra[i-1]`, `tree.down[0] = treeIntra[i+1]`). Across the nodes it runs
ncclGetDtree over the M nodes (src/graph/trees.cc): the first tree is the binary tree,
the second its mirror (M even) or its shift by one (M odd). connectTrees hangs the
chains together in NCCL's default BALANCED_TREE pattern (src/init.cc; src/include/graph.h):
a node's first GPU (treeToParent) talks to its parent node; a child node that is its
parent's first child (parentChildType 0) attaches to the parent node's second GPU
(treeToChild0 = treeIntra[1]), the other child to its first GPU (treeToChild1 =
treeIntra[0]); with one GPU per node everything attaches to that GPU (NCCL_TOPO_PATTERN_TREE,
search.cc). The two trees each carry half of the data (channel c and c + nChannels), so
tree 1 works on segments 1…C, tree 2 on C+1…2C, both pipelined as `tree` is: the reduce
climbs each chain and then the tree across nodes, the broadcast comes back down.

tree_parents gives the trees GPU by GPU instead (`_given_trees`), one per channel, as an
NCCL log's `Trees` lines print the trees NCCL built: `ringsim walk --nccl-log FILE
--nccl-algo Tree` replays them.
"""

from __future__ import annotations

import functools
import numbers
from dataclasses import dataclass

import numpy as np

from ..core.arguments import argument
from ..core.errors import RingsimError
from ..core.formula import ClosedForm
from ..core.naming import plural
from ..core.plan import Plan
from ..cost.ports import ACROSS, IN, OUT, node_period, port_keys, port_seconds, slower_level
from . import _chains, _given_trees, _trees
from ._counts import closed, formula
from ._phases import btree_parents, dtree_parents
from ._step_times import Clock
from .spec import AlgorithmSpec, Shape

NAME = "nccl-tree"
DEFAULT_GPUS_PER_NODE = 8  # a DGX / HGX node


@dataclass(frozen=True)
class Options:
    """gpus_per_node: L, the length of each node's chain (L divides G; default: the largest divisor of G up to 8); chunks: C pieces per tree;
    tree_parents: the trees given GPU by GPU, 1-based parents, 0 for the root ('0,1,2,3;2,0,2,3'), one per channel, instead of NCCL's own."""

    gpus_per_node: int | None = None
    chunks: int = 1
    tree_parents: tuple[tuple[int, ...], ...] | None = None


def default_gpus_per_node(gpus: int) -> int:
    """The largest divisor of G that is at most 8 (GPUs in a DGX node)."""
    return max(d for d in range(1, min(gpus, DEFAULT_GPUS_PER_NODE) + 1) if gpus % d == 0)


def check_options(gpus: int, gpus_per_node=None, chunks: int = 1, tree_parents=None) -> dict:
    """gpus_per_node divides G; chunks is a whole number from 1 to 1,024; tree_parents, when
    given, are trees of G GPUs (and then no gpus_per_node: the trees say who talks to whom)."""
    chunks = _trees.check_chunks(chunks)
    if tree_parents is not None:
        if gpus_per_node is not None:
            raise RingsimError(f"{argument('tree_parents')} gives the trees themselves; leave out "
                               f"{argument('gpus_per_node')}")
        trees = _given_trees.parse(tree_parents, gpus)
        _given_trees.check_size(gpus, trees, chunks)
        return {"gpus_per_node": None, "chunks": chunks, "tree_parents": trees}
    if gpus_per_node is None:
        return {"gpus_per_node": default_gpus_per_node(gpus), "chunks": chunks}
    if isinstance(gpus_per_node, bool) or not isinstance(gpus_per_node, numbers.Integral) \
            or not 1 <= gpus_per_node <= gpus:
        raise RingsimError(f"{argument('gpus_per_node')} must be a whole number from 1 to {gpus} (the GPUs), "
                           f"got {gpus_per_node!r}")
    if gpus % gpus_per_node:
        divisors = [d for d in range(1, min(gpus, 10_000) + 1) if gpus % d == 0][:8]
        raise RingsimError(f"{argument('gpus_per_node', gpus_per_node)} does not divide {gpus} GPUs: every node "
                           f"holds the same number; try {', '.join(map(str, divisors))}")
    return {"gpus_per_node": int(gpus_per_node), "chunks": chunks}


def _given(tree_parents, gpus: int):
    """The given trees, checked (make_plan has checked them already; a direct call has not)."""
    return _given_trees.parse(tree_parents, gpus)


def _per(gpus: int, gpus_per_node) -> int:
    return default_gpus_per_node(gpus) if gpus_per_node is None else gpus_per_node


def parents(gpus: int, gpus_per_node: int, second: bool) -> np.ndarray:
    """Every GPU's parent in tree 1 (second=False) or tree 2, −1 for the root (GPU1 of its root node)."""
    per = gpus_per_node
    nodes = gpus // per
    gpu = np.arange(gpus, dtype=np.int64)
    up = np.where(gpu % per > 0, gpu - 1, -1)                 # the chain inside each node
    inter = dtree_parents(nodes) if second else btree_parents(nodes)
    node = np.arange(nodes, dtype=np.int64)
    # parentChildType as ncclGetDtree computes it: in the tree's own rank numbering (mirrored
    # or shifted for the second tree), 0 when the child's rank is below its parent's.
    if not second:
        rank, parent_rank = node, inter
    elif nodes % 2 == 0:
        rank, parent_rank = nodes - 1 - node, nodes - 1 - inter
    else:
        rank, parent_rank = (node - 1) % nodes, (inter - 1) % nodes
    first_child = rank < parent_rank
    attach = np.where(first_child & (per >= 2), 1, 0)          # treeToChild0 = second GPU
    up[node * per] = np.where(inter >= 0, inter * per + attach, -1)
    return up


@functools.lru_cache(maxsize=16)
def _trees_of(gpus: int, per: int) -> tuple[np.ndarray, np.ndarray]:
    out = (parents(gpus, per, False), parents(gpus, per, True))
    for array in out:
        array.flags.writeable = False  # shared between calls
    return out


def plan(gpus: int, gpus_per_node=None, chunks: int = 1, tree_parents=None) -> Plan:
    """Both trees' pipelined reduce (up the chains, then across nodes) and broadcast, side by side
    (or the given trees', each on its own C segments)."""
    if tree_parents is not None:
        trees = _given(tree_parents, gpus)
        return _trees.build(NAME, gpus, _given_trees.arrays(trees), chunks,
                            {"gpus_per_node": None, "chunks": chunks, "tree_parents": trees})
    per = _per(gpus, gpus_per_node)
    return _trees.build(NAME, gpus, list(_trees_of(gpus, per)), chunks,
                        {"gpus_per_node": per, "chunks": chunks})


def transfers(gpus: int, gpus_per_node=None, chunks: int = 1, tree_parents=None) -> int:
    """Two trees (or the given ones) of G−1 edges, each edge carrying C chunks up and down."""
    if tree_parents is not None:
        return _given_trees.transfers(gpus, _given(tree_parents, gpus), chunks)
    return 4 * (gpus - 1) * chunks


def _children(rel: dict) -> list[np.ndarray]:
    """A GPU's children in one tree: the next GPU of its chain and the nodes hung from it."""
    return [rel["chain"], rel["a"], rel["b"]]


def _moves(rel: dict) -> np.ndarray:
    """Transfers of each chunk a GPU sends (and receives) in one tree: its children plus its parent."""
    return sum((v >= 0).astype(np.int64) for v in [rel["parent"], *_children(rel)])


def closed_form(gpus: int, elements: int, gpus_per_node=None, chunks: int = 1,
                tree_parents=None) -> ClosedForm:
    """2·(G−1)·N in all; a GPU with k children in tree t sends (1 + k)·Nₜ of it, and receives as much.

    Only the lowest GPU of each signature is looked at (`_signatures`): what a GPU moves
    follows from its signature, so the lowest GPU moving the most is among them."""
    if tree_parents is not None:
        return _given_trees.closed_form(gpus, elements, _given(tree_parents, gpus),
                                        _trees.check_chunks(chunks))
    per = _per(gpus, gpus_per_node)
    x = _signatures(gpus, per, None, FULL)
    trees = _chains.trees(gpus, per)
    moves = [_moves(t.relations(x)) for t in trees]
    q, r = divmod(elements, 2 * chunks)
    sent = np.zeros(len(x), dtype=object)
    for t, m in enumerate(moves):
        size = q * chunks + min(max(r - t * chunks, 0), chunks)   # tree t's elements
        sent = sent + m.astype(object) * size
    pick = int(np.argmax(sent)) if gpus else 0
    who, best = int(x[pick]), int(sent[pick])
    nonempty = 2 * chunks if q else r
    height = max(t.top for t in trees)
    steps = 0 if gpus == 1 else chunks + 2 * height - 1
    busiest = (f"{int(moves[0][pick])}·N₁ + {int(moves[1][pick])}·N₂ "
               "(N₁, N₂: the two trees' halves)") if gpus > 1 else "0"
    return closed(
        formula("2·(G−1)·N", 2 * (gpus - 1) * elements),
        formula(busiest, best), formula(busiest, best),
        formula("C + 2·H − 1 (H: the taller tree's height, chain plus ⌈log₂M⌉)" if gpus > 1 else "0",
                steps),
        formula("4·(G−1)·min(N/2, C) per tree pair", 2 * (gpus - 1) * nonempty),
        who, who)


def busiest_gpu(gpus: int, elements: int, gpus_per_node=None, chunks: int = 1,
                tree_parents=None) -> int:
    """The lowest GPU moving the most: every GPU sends as much as it receives."""
    return closed_form(gpus, elements, gpus_per_node, _trees.check_chunks(chunks),
                       tree_parents).busiest_sender


FULL = 4096  # up to this many GPUs every GPU is priced; above, one GPU per signature


@functools.lru_cache(maxsize=32)
def _signatures(gpus: int, per: int, topo_per_node: int | None, full: int) -> np.ndarray:
    """GPUs whose ports show every load there is: all of them up to `full` GPUs, else the
    lowest of each signature. A GPU's ports in every step follow from, in each tree, its
    height and depth, whether its parent link crosses nodes, and its children's heights and
    links (the step a chunk goes up is c + height, down c + H + depth): GPUs alike in these
    are alike in every port (tests hold it to the full count). A signature follows from the
    GPU's place in its node and its node's kind (`_chains`), so only the lowest node of each
    kind is looked at: O(M) work on the M nodes, never an array of G."""
    if gpus <= full:
        return np.arange(gpus, dtype=np.int64)
    trees = _chains.trees(gpus, per)
    nodes = gpus // per
    kinds = _RowKeys(nodes)
    for tree in trees:
        for column in tree.node_columns(topo_per_node):
            kinds.add(column)
    if topo_per_node:  # where the node starts in its topology node decides its chain's links
        kinds.add(np.arange(nodes, dtype=np.int64) * per % topo_per_node)
    _, lowest = np.unique(kinds.key, return_index=True)
    x = (np.sort(lowest)[:, None] * per + np.arange(per)).reshape(-1)
    keys = _RowKeys(len(x))
    for tree in trees:
        rel = tree.relations(x)
        keys.add(rel["height"])
        keys.add(rel["depth"])
        keys.add(np.where(rel["parent"] >= 0, _chains.across(x, rel["parent"], topo_per_node), -1))
        codes = np.stack([np.where(c >= 0, tree.height(c) * 2 + _chains.across(c, x, topo_per_node), -1)
                          for c in _children(rel)], axis=1)
        codes.sort(axis=1)  # the children as a set: their order does not matter
        for k in range(codes.shape[1]):
            keys.add(codes[:, k])
    _, first = np.unique(keys.key, return_index=True)
    out = np.sort(x[first])
    out.flags.writeable = False
    return out


class _RowKeys:
    """One int64 per row, equal exactly when the rows are: columns added in mixed radix, the key
    renumbered densely (a 1-D sort, much faster than np.unique over rows) before it could
    overflow. Columns are folded in one at a time, so no (rows, columns) array is ever held."""

    def __init__(self, rows: int) -> None:
        self.key, self.span = np.zeros(rows, np.int64), 1

    def add(self, column: np.ndarray) -> None:
        """Fold one column of the rows into the key."""
        low = int(column.min())
        width = int(column.max()) - low + 1
        if self.span * width >= 1 << 62:
            _, inverse = np.unique(self.key, return_inverse=True)
            self.key = inverse.reshape(-1).astype(np.int64)
            self.span = int(self.key.max()) + 1
        self.key = self.key * width + (column - low)
        self.span *= width


def _edges(tree: _chains.ChainTree, x: np.ndarray):
    """Every edge with a sampled GPU at either end, in child order: (child, parent)."""
    rel = tree.relations(x)
    child = np.concatenate([x, *_children(rel)])
    parent = np.concatenate([rel["parent"], x, x, x])
    keep = (child >= 0) & (parent >= 0)
    child, first = np.unique(child[keep], return_index=True)  # a child has one parent
    return child, parent[keep][first]


@functools.lru_cache(maxsize=32)
def _ports(gpus: int, per: int, chunks: int, topo_per_node: int | None, full: int = FULL):
    """The sampled GPUs' port columns, without N: (port of each transfer side, step starts of
    the used ports, are they across?, segment, reduce?, across?, ports) — a sweep over sizes
    builds these once."""
    x = _signatures(gpus, per, topo_per_node, full)
    c = np.arange(chunks, dtype=np.int64)
    steps, keys, segs, reduces, levels = [], [], [], [], []
    for t, tree in enumerate(_chains.trees(gpus, per)):
        child, parent = _edges(tree, x)
        across = _chains.across(child, parent, topo_per_node).astype(bool)
        depth = tree.relations(parent)["depth"]
        # Each edge, chunk by chunk: up at c + h(child), down at c + H + depth(parent).
        for src, dst, at, reduce in ((child, parent, tree.height(child), True),
                                     (parent, child, tree.top + depth, False)):
            for gpu, side in ((src, OUT), (dst, IN)):
                where = np.minimum(np.searchsorted(x, gpu), len(x) - 1)
                mine = np.flatnonzero(x[where] == gpu)
                if not len(mine):
                    continue
                steps.append((at[mine][:, None] + c[None, :]).ravel())
                keys.append(np.repeat(port_keys(where[mine], across[mine].astype(np.int64), side),
                                      chunks))
                segs.append(np.tile(t * chunks + c, len(mine)))
                reduces.append(np.full(len(mine) * chunks, reduce and side == IN))
                levels.append(np.repeat(across[mine], chunks))
    if not steps:
        return None
    step, key = np.concatenate(steps), np.concatenate(keys)
    stride = 4 * len(x)
    used, inverse = np.unique(step * stride + key, return_inverse=True)
    starts = np.searchsorted(used // stride, np.arange(int(step.max()) + 1))
    on_across = (used % stride // 2) % 2 == ACROSS
    out = (inverse.reshape(-1), starts, on_across, np.concatenate(segs), np.concatenate(reduces),
           np.concatenate(levels), len(used))
    for array in out[:6]:
        array.flags.writeable = False
    return out


def seconds(gpus: int, elements: int, model, gpus_per_node=None, chunks: int = 1,
            tree_parents=None, full: int = FULL):
    """α-β-γ time of both pipelined trees, step by step from the GPUs' ports (no plan).

    A step lasts as long as its busiest port (cost/ports.py): each GPU's out port queues what
    it sends up and down in the step, its in port what arrives, with γ on what it adds. Past
    `full` GPUs one GPU of each signature is priced (`_signatures`). Given trees are priced
    transfer by transfer (`_given_trees.seconds`).
    """
    chunks = _trees.check_chunks(chunks)
    if tree_parents is not None:
        return _given_trees.seconds(gpus, elements, model, _given(tree_parents, gpus), chunks)
    per = _per(gpus, gpus_per_node)
    clock = Clock()
    columns = _ports(gpus, per, chunks, node_period(model, gpus), full)
    if columns is None:
        return clock.estimate()
    inverse, starts, on_across, seg, reduce, across, ports = columns
    q, r = divmod(elements, 2 * chunks)
    out, into = port_seconds(model, q + (seg < r), across, reduce)
    busy = np.bincount(inverse, np.where(reduce, into, out), ports)
    # Every step uses some port, so the steps' runs of ports are never empty.
    inside = np.maximum.reduceat(np.where(on_across, -np.inf, busy), starts)
    over = np.maximum.reduceat(np.where(on_across, busy, -np.inf), starts)
    clock.add(*slower_level(inside, over))
    return clock.estimate("the chains' and trees' inner GPUs' ports")


def label(gpus_per_node=None, chunks: int = 1, tree_parents=None) -> str:
    """'nodes of 8, 4 chunks': the chain length always (it shapes the tree), chunks when not 1;
    given trees as '2 given trees 0,1;2,0' (their parents, when short enough for a title)."""
    words = [f"nodes of {gpus_per_node}"] if gpus_per_node else []
    if tree_parents is not None:
        text = _given_trees.written(tree_parents)
        count = len(tree_parents)
        words.append(f"{count} given tree{'s' * (count > 1)}" + (f" {text}" if len(text) <= 40 else ""))
    if chunks != 1:
        words.append(plural(chunks, "chunk"))
    return ", ".join(words)


def retitle(gpus_per_node=None, chunks: int = 1, tree_parents=None) -> str | None:
    """Given trees are NCCL's Tree all-reduce on trees of its own, not the chain and two trees."""
    return None if tree_parents is None else "NCCL tree all-reduce"


def lanes(gpus_per_node=None, chunks: int = 1, tree_parents=None) -> int:
    """Trees sharing the segments: NCCL's two, or one per given tree."""
    return 2 if tree_parents is None else len(tree_parents)


SPEC = AlgorithmSpec(
    NAME, "NCCL tree (chain + 2 trees)",
    "a chain inside each node, NCCL's double binary tree across nodes, each tree on half the "
    "data: 2·(G−1)·N, ~2·(L + log₂M) steps",
    Options, plan, closed_form, transfers, seconds, busiest_gpu, shape=Shape.TREE,
    check=check_options, label=label, lanes=lanes, nccl_name="Tree", retitle=retitle)
