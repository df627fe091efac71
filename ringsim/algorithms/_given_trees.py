"""Trees given GPU by GPU (as an NCCL log's `Trees` lines print them): read, checked, counted, priced.

A tree is written as every GPU's parent, 1-based, 0 for the root: '0,1,2,3' is the chain
GPU1 ← GPU2 ← GPU3 ← GPU4; trees are separated by semicolons, one per NCCL channel. Each
tree runs `_trees.build`'s pipelined reduce up to its root and broadcast back down on its
own C segments, as NCCL's Tree all-reduce runs one tree per channel on that channel's part
of the buffer (NVIDIA/nccl src/device/all_reduce.h, runTreeUpDown: reduce, then broadcast).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..core.arguments import argument
from ..core.errors import RingsimError
from ..core.parents import find_cycle
from ..core.formula import ClosedForm
from ..cost.ports import step_seconds
from ..cost.topology_model import LEVELS
from ..core.layout import Layout
from ._counts import Tally, from_tally
from ._phases import heights, steps_of, tree_events
from ._step_times import Clock

MAX_TREES = 64  # NCCL's MAXCHANNELS: one tree per channel
MAX_NUMBERS = 1 << 24  # parents in all, counted before any is read (as the rings' GPU numbers)
# Given trees are counted and priced transfer by transfer (they have no closed form): as many
# as a plan may hold (MAX_PLAN_TRANSFERS in the registry), so the work stays bounded.
MAX_TRANSFERS = 5_000_000
_SEQUENCES = (list, tuple)
SUBSCRIPTS = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")


def parse(tree_parents, gpus: int) -> tuple[tuple[int, ...], ...] | None:
    """Trees as users write them — '0,1,2,3;2,0,2,3' or [[0,1,2,3], …] — 1-based parents, checked."""
    if tree_parents is None:
        return None
    if isinstance(tree_parents, str):
        if tree_parents.count(",") + tree_parents.count(";") >= MAX_NUMBERS:
            raise RingsimError(f"{argument('tree_parents')} holds more than {MAX_NUMBERS:,} parents")
        parts = [part for part in tree_parents.split(";") if part.strip()]
        if len(parts) > MAX_TREES:
            raise RingsimError(f"{argument('tree_parents')} gives {len(parts):,} trees; at most {MAX_TREES}")
        try:
            trees = [[int(x) for x in part.split(",")] for part in parts]
        except ValueError:
            raise RingsimError(f"{argument('tree_parents')} must be each GPU's parent (0 for the root) separated "
                               f"by commas, trees by semicolons (0,1,2,3;2,0,2,3), got "
                               f"{tree_parents[:60]!r}") from None
    elif isinstance(tree_parents, _SEQUENCES):
        items = list(tree_parents)
        if items and not any(isinstance(x, _SEQUENCES) for x in items):
            items = [items]  # one tree, written as a flat list of parents
        if len(items) > MAX_TREES:
            raise RingsimError(f"tree_parents gives {len(items):,} trees; at most {MAX_TREES}")
        if sum(len(t) if isinstance(t, _SEQUENCES) else 1 for t in items) > MAX_NUMBERS:
            raise RingsimError(f"tree_parents holds more than {MAX_NUMBERS:,} parents")
        trees = []
        for number, tree in enumerate(items, 1):
            if not isinstance(tree, _SEQUENCES) or not all(
                    isinstance(x, (int, np.integer)) and not isinstance(x, bool) for x in tree):
                raise RingsimError(f"tree {number} of tree_parents must be a list of whole numbers")
            trees.append([int(x) for x in tree])
    else:
        raise RingsimError(f"tree_parents must be text such as '0,1,2,3' or a list of parents, "
                           f"got a {type(tree_parents).__name__}")
    if not trees:
        raise RingsimError(f"{argument('tree_parents')} names no tree")
    for number, tree in enumerate(trees, 1):
        check_tree(tree, gpus, f"tree {number}")
    return tuple(tuple(tree) for tree in trees)


def check_tree(parents: Sequence[int], gpus: int, name: str) -> None:
    """One tree: G parents from 0 to G, one root (0), no GPU its own parent, no cycle."""
    if len(parents) != gpus:
        raise RingsimError(f"{name} gives {len(parents)} parents for {gpus} GPUs: one per GPU, "
                           "0 for the root")
    bad = [(k + 1, p) for k, p in enumerate(parents) if not 0 <= p <= gpus or p == k + 1]
    if bad:
        gpu, parent = bad[0]
        why = "its own parent" if parent == gpu else f"not a GPU of 1..{gpus} (nor 0, the root)"
        raise RingsimError(f"{name}: GPU{gpu}'s parent {parent} is {why}")
    roots = [k + 1 for k, p in enumerate(parents) if p == 0]
    if len(roots) != 1 and gpus:
        what = "no root (0)" if not roots else f"{len(roots)} roots (GPU{', GPU'.join(map(str, roots[:8]))})"
        raise RingsimError(f"{name} has {what}: a tree has exactly one")
    cycle = find_cycle([p - 1 for p in parents])
    if cycle:
        raise RingsimError(f"{name} has a cycle: " + " → ".join(f"GPU{g + 1}" for g in cycle)
                           + " (each names the next its parent), so no data reaches the root")


def arrays(trees: tuple[tuple[int, ...], ...]) -> list[np.ndarray]:
    """The trees as 0-based parent arrays (−1 for the root), as `_trees.build` takes them."""
    return [np.asarray(tree, dtype=np.int64) - 1 for tree in trees]


def written(trees: tuple[tuple[int, ...], ...]) -> str:
    """'0,1;2,0': the trees as --tree-parents reads them."""
    return ";".join(",".join(str(p) for p in tree) for tree in trees)


def transfers(gpus: int, trees, chunks: int) -> int:
    """Each tree's G−1 edges carry every chunk up and down: 2·(G−1)·C per tree."""
    return 2 * (gpus - 1) * chunks * len(trees)


def check_size(gpus: int, trees, chunks: int) -> None:
    """Refuse trees whose transfers are too many to count and price one by one."""
    count = transfers(gpus, trees, chunks)
    if count > MAX_TRANSFERS:
        raise RingsimError(f"{len(trees)} given trees of {gpus:,} GPUs in {chunks:,} chunks make "
                           f"{count:,} transfers; at most {MAX_TRANSFERS:,} (given trees are "
                           "counted and priced transfer by transfer): use fewer chunks")


def _tally(gpus: int, elements: int, trees, chunks: int) -> Tally:
    tally = Tally(gpus, len(trees) * chunks, elements)
    for t, parents in enumerate(arrays(trees)):
        child = np.flatnonzero(parents >= 0)
        for c in range(chunks):
            segment = t * chunks + c
            tally.add_sends(child, parents[child], segment, 1)   # up: children add into parents
            tally.add_sends(parents[child], child, segment, 1)   # down: the sum comes back
    return tally


def steps(trees, chunks: int) -> int:
    """C + 2·H − 1, H the tallest tree's height (0 when no GPU has a parent)."""
    tops = [int(heights(p).max(initial=0)) for p in arrays(trees)]
    top = max(tops, default=0)
    return chunks + 2 * top - 1 if top else 0


def closed_form(gpus: int, elements: int, trees, chunks: int) -> ClosedForm:
    """Exact counts: in tree t a GPU with a parent and k children sends (1 + k)·Nₜ, and receives as much."""
    tally = _tally(gpus, elements, trees, chunks)
    moves = [np.bincount(p[p >= 0], minlength=gpus) + (p >= 0) for p in arrays(trees)]
    _, who = tally.busiest(tally.sent, tally.sent_long)
    if len(trees) <= 4:
        busiest = " + ".join(f"{int(m[who])}·N{str(t + 1).translate(SUBSCRIPTS)}"
                             for t, m in enumerate(moves)) + (
            " (Nₜ: tree t's part of N)" if len(trees) > 1 else "")
    else:
        busiest = "Σₜ (1 + its children in tree t)·Nₜ (Nₜ: tree t's part of N)"
    texts = {"total": "2·(G−1)·N", "sent": busiest, "received": busiest,
             "steps": "C + 2·H − 1 (H: the tallest tree's height)",
             "messages": "2·(G−1)·(non-empty segments)"}
    return from_tally(tally, texts, steps(trees, chunks) if gpus > 1 else 0)


def busiest_gpu(gpus: int, elements: int, trees, chunks: int) -> int:
    """The lowest GPU moving the most: every GPU sends as much as it receives."""
    return closed_form(gpus, elements, trees, chunks).busiest_sender


def seconds(gpus: int, elements: int, model, trees, chunks: int):
    """α-β-γ time, step by step: each step's transfers (`_trees.build`'s, without the Plan) priced
    by their busiest port, as `cost.model.price` prices the plan."""
    clock = Clock()
    events = [e for t, p in enumerate(arrays(trees)) for e in tree_events(p, chunks, t * chunks)]
    if not events:
        return clock.estimate()
    layout = Layout(len(trees) * chunks, elements)
    for src, dst, seg, ops in steps_of(events):
        t, port = step_seconds(model, src, dst, layout.spans(seg, seg), ops == 0)
        clock.add(t, None if port is None else LEVELS.index(port.level))
    return clock.estimate("the trees' inner GPUs' ports")
