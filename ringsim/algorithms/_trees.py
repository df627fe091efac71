"""Pipelined reduce-then-broadcast on one or more trees, each on its own C segments."""

from __future__ import annotations

import functools
import numbers

import numpy as np

from ..core.arguments import argument
from ..core.errors import RingsimError
from ..core.formula import ClosedForm
from ..core.plan import Plan, Step
from ..cost.ports import (ACROSS, IN, INSIDE, OUT, PORTS_PER_GPU, node_period, port_keys, port_seconds,
                          slower_level)
from . import _btree
from ._counts import Tally, closed, formula
from ._phases import steps_of, tree_events
from ._step_times import Clock

ROUTE = ("up the tree", "down the tree")
MAX_CHUNKS = 1024


def check_chunks(chunks) -> int:
    """C: a whole number from 1 to MAX_CHUNKS."""
    if isinstance(chunks, bool) or not isinstance(chunks, numbers.Integral) or not 1 <= chunks <= MAX_CHUNKS:
        raise RingsimError(f"{argument('chunks')} must be a whole number from 1 to {MAX_CHUNKS:,}, got {chunks!r}")
    return int(chunks)


def height(gpus: int) -> int:
    """Depth of NCCL's binary tree (and of its mirror or shift): ⌈log₂G⌉."""
    return (gpus - 1).bit_length()


def _phase(ops: np.ndarray) -> str:
    if (ops == 0).all():
        return "Tree reduce"
    if (ops == 1).all():
        return "Broadcast"
    return "Tree reduce and broadcast"


def build(name: str, gpus: int, trees: list[np.ndarray], chunks: int, options: dict) -> Plan:
    """Tree t works on segments t·C … t·C+C−1; all trees run at once."""
    events = [e for t, parents in enumerate(trees) for e in tree_events(parents, chunks, t * chunks)]
    steps: list[Step] = []
    if events:
        columns = steps_of(events)
        phases = [_phase(ops) for _, _, _, ops in columns]
        for index, (src, dst, seg, ops) in enumerate(columns):
            start = index
            while start > 0 and phases[start - 1] == phases[index]:
                start -= 1
            end = index
            while end + 1 < len(phases) and phases[end + 1] == phases[index]:
                end += 1
            steps.append(Step.build(phases[index], index - start + 1, end - start + 1, ops,
                                    src, dst, seg, route=ROUTE))
    return Plan(name, gpus, tuple(steps), options, segments=len(trees) * chunks)


def _sampled(gpus: int, trees: list[_btree.Tree], per_node: int | None, full: int):
    """The sample GPUs and each tree's relations for them (`_btree.sample`), kept per shape."""
    return _structure(gpus, tuple(t.second for t in trees), per_node, full)


@functools.lru_cache(maxsize=64)
def _structure(gpus: int, seconds: tuple, per_node: int | None, full: int):
    """Sample and relations depend only on G, the trees and P: a sweep asks for them often."""
    trees = [_btree.Tree(gpus, second) for second in seconds]
    x = _btree.sample(gpus, trees, per_node, full)
    rels = [t.relations(x) for t in trees]
    for array in [x, *(a for rel in rels for a in rel.values())]:
        array.flags.writeable = False  # shared between calls
    return x, rels


@functools.lru_cache(maxsize=64)
def _kinds(gpus: int, seconds: tuple, per_node: int | None, full: int):
    """(relations, levels, one sampled GPU of each kind): they depend on G, the trees and P only,
    not on N, so a sweep over sizes finds them once."""
    x, rels = _structure(gpus, seconds, per_node, full)
    levels = {}
    rows = []
    for t, rel in enumerate(rels):
        for key in ("parent", "left", "right"):
            other = rel[key]
            src, dst = np.asarray(x, np.int64), np.maximum(other, 0)
            across = (src // per_node) != (dst // per_node) if per_node else np.zeros(len(x), bool)
            levels[t, key] = np.where(other >= 0, across, -1)
            levels[t, key].flags.writeable = False
        rows += [rel["height"], rel["depth"], levels[t, "parent"], rel["left_height"],
                 levels[t, "left"], rel["right_height"], levels[t, "right"]]
    _, keep = np.unique(np.stack(rows, axis=1), axis=0, return_index=True)
    keep.flags.writeable = False
    return rels, levels, keep


@functools.lru_cache(maxsize=64)
def _port_columns(gpus: int, seconds: tuple, per_node: int | None, full: int, chunks: int):
    """Every sampled port's transfers as columns that do not depend on N: (step·4·kinds + port,
    inbound?, across?, reduce?, segment, (steps, kinds)); None when nothing moves. `seconds`
    adds the sizes (q + 1 on segments below r) and prices them, so a sweep builds these once."""
    trees = [_btree.Tree(gpus, second) for second in seconds]
    rels, levels, keep = _kinds(gpus, seconds, per_node, full)
    reps = len(keep)
    c = np.arange(chunks, dtype=np.int64)
    step_cols, port_cols, seg_cols, reduce_cols, level_cols = [], [], [], [], []
    index = np.arange(reps, dtype=np.int64)

    def add(mask, step, lv, direction, reduce, seg):
        m = np.flatnonzero(mask)
        if not len(m):
            return
        step_cols.append((step[m][:, None] + c[None, :]).ravel())
        port_cols.append(np.repeat(port_keys(index[m], lv[m], direction), chunks))
        seg_cols.append(np.tile(seg + c, len(m)))
        reduce_cols.append(np.full(len(m) * chunks, reduce))
        level_cols.append(np.repeat(lv[m], chunks))

    for t, rel in enumerate(rels):
        top = int(trees[t].spine.get(0, 0))
        h, d = rel["height"][keep], rel["depth"][keep]
        seg = t * chunks
        lv = levels[t, "parent"][keep]
        has = lv >= 0
        add(has, h, np.maximum(lv, 0), OUT, True, seg)             # up to the parent
        add(has, top + d - 1, np.maximum(lv, 0), IN, False, seg)   # down from the parent
        for key in ("left", "right"):
            lv = levels[t, key][keep]
            has = lv >= 0
            add(has, rel[f"{key}_height"][keep], np.maximum(lv, 0), IN, True, seg)  # up from a child
            add(has, top + d, np.maximum(lv, 0), OUT, False, seg)                 # down to a child
    if not step_cols:
        return None
    step, port = np.concatenate(step_cols), np.concatenate(port_cols)
    out = (step * (PORTS_PER_GPU * reps) + port, port % 2 == IN, np.concatenate(level_cols).astype(bool),
           np.concatenate(reduce_cols), np.concatenate(seg_cols), (int(step.max()) + 1, reps))
    for array in out[:5]:
        array.flags.writeable = False  # shared between calls
    return out


def _moves(rel: dict) -> np.ndarray:
    """Transfers of each chunk a GPU sends (and receives) in one tree: 1 + its children, 0 for a lone root."""
    return sum((rel[k] >= 0).astype(np.int64) for k in ("parent", "left", "right"))


def closed_form(gpus: int, elements: int, trees: list[_btree.Tree], chunks: int,
                full: int = _btree.FULL) -> ClosedForm:
    """Exact counts: a GPU with a parent and k children sends (1+k)·Nₜ of tree t's Nₜ elements, and receives as much.

    Nothing but the sampled GPUs is looked at (`_btree.sample`): every (1+k) pattern
    there is shows among them, with its lowest GPU first.
    """
    tally = Tally(1, len(trees) * chunks, elements)
    x, rels = _sampled(gpus, trees, None, full)
    factors = [_moves(rel) for rel in rels]
    sent = np.zeros(len(x), dtype=object)
    messages = 0
    for t, f in enumerate(factors):
        long = int(tally.long_in(t * chunks, chunks))
        sent = sent + f.astype(object) * (tally.q * chunks + long)
        first = np.arange(t * chunks, (t + 1) * chunks)
        messages += 2 * (gpus - 1) * int(np.count_nonzero(tally.nonempty(first)))
    best = max(sent.tolist(), default=0)
    pick = int(np.flatnonzero(sent == best)[0]) if len(x) else 0
    who = int(x[pick]) if len(x) else 0
    steps = 0 if gpus == 1 else chunks + 2 * height(gpus) - 1
    if len(trees) == 1:
        busiest = f"{int(factors[0][pick])}·N" if gpus > 1 else "0"
    else:
        busiest = (f"{int(factors[0][pick])}·N₁ + {int(factors[1][pick])}·N₂ "
                   "(N₁, N₂: the two trees' halves)") if gpus > 1 else "0"
    per_tree = "C" if len(trees) == 1 else "2·C"
    best = int(best)
    return closed(
        formula("2·(G−1)·N", 2 * (gpus - 1) * elements),
        formula(busiest, best),
        formula(busiest, best),
        formula("C + 2·⌈log₂G⌉ − 1" if gpus > 1 else "0", steps),
        formula(f"2·(G−1)·min(N,{per_tree})", messages),
        who, who,
    )


def seconds(gpus: int, elements: int, model, trees: list[_btree.Tree], chunks: int,
            full: int = _btree.FULL):
    """α-β-γ time of the pipelined trees, step by step, from the sampled GPUs' ports (no plan).

    A GPU of height h and depth d sends chunk c up at step c+h and down at step c+H+d
    (`_phases.tree_events`): in a step its out port queues the chunk going up with those
    going down on that level, its in port the chunks its children send up with the one its
    parent sends down. GPUs with equal heights, depths and levels in every tree have equal
    ports, so one of each kind is priced (`_btree.sample`, then one per signature).
    On one flat level with one chunk, each step costs about α + Nβ, or 2·(α + Nβ + Nγ) on
    an in port with two children: Thakur, Rabenseifner & Gropp's reduce + broadcast shape.
    """
    clock = Clock()
    if gpus < 2:
        return clock.estimate()
    columns = _port_columns(gpus, tuple(t.second for t in trees),
                            node_period(model, gpus), full, chunks)
    if columns is None:
        return clock.estimate()
    key, inbound, across, reduce, segment, shape = columns
    q, r = divmod(elements, len(trees) * chunks)
    wire, arrive = port_seconds(model, q + (segment < r), across, reduce)
    weight = np.where(inbound, arrive, wire)
    busy = np.bincount(key, weight, shape[0] * shape[1] * PORTS_PER_GPU).reshape(shape[0], shape[1], 2, 2)
    per_level = busy.max(axis=(1, 3))
    clock.add(*slower_level(per_level[:, INSIDE], per_level[:, ACROSS]))
    return clock.estimate("the tree's inner GPUs' ports")


def busiest_gpu(gpus: int, elements: int, trees: list[_btree.Tree], chunks: int) -> int:
    """Each GPU sends and receives (1 + children)·Nₜ per tree: the busiest sender, lowest on ties."""
    return closed_form(gpus, elements, trees, chunks).busiest_sender
