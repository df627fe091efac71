"""Pipelined reduce-then-broadcast on one or more trees, each on its own C segments."""

from __future__ import annotations

import numbers

import numpy as np

from ..errors import RingsimError
from ..formula import ClosedForm
from ..plan import Plan, Step
from ._counts import Tally, closed, formula
from ._phases import steps_of, tree_events

ROUTE = ("up the tree", "down the tree")
MAX_CHUNKS = 1024


def check_chunks(chunks) -> int:
    """C: a whole number from 1 to MAX_CHUNKS."""
    if isinstance(chunks, bool) or not isinstance(chunks, numbers.Integral) or not 1 <= chunks <= MAX_CHUNKS:
        raise RingsimError(f"--chunks must be a whole number from 1 to {MAX_CHUNKS:,}, got {chunks!r}")
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


def closed_form(gpus: int, elements: int, trees: list[np.ndarray], chunks: int) -> ClosedForm:
    """Exact counts: a GPU with a parent and k children sends (1+k)·Nₜ of tree t's Nₜ elements, and receives as much."""
    tally = Tally(gpus, len(trees) * chunks, elements)
    factors = []
    for t, parents in enumerate(trees):
        f = (parents >= 0).astype(np.int64) + np.bincount(parents[parents >= 0], minlength=gpus)
        factors.append(f)
        long = int(tally.long_in(t * chunks, chunks))
        tally.sent += f * chunks
        tally.received += f * chunks
        tally.sent_long += f * long
        tally.received_long += f * long
        first = np.arange(t * chunks, (t + 1) * chunks)
        tally.messages += 2 * (gpus - 1) * int(np.count_nonzero(tally.nonempty(first)))
    sent, who = tally.busiest(tally.sent, tally.sent_long)
    steps = 0 if gpus == 1 else chunks + 2 * height(gpus) - 1
    if len(trees) == 1:
        busiest = f"{int(factors[0][who])}·N" if gpus > 1 else "0"
    else:
        busiest = (f"{int(factors[0][who])}·N₁ + {int(factors[1][who])}·N₂ "
                   "(N₁, N₂: the two trees' halves)") if gpus > 1 else "0"
    per_tree = "C" if len(trees) == 1 else "2·C"
    return closed(
        formula("2·(G−1)·N", tally.total()),
        formula(busiest, sent),
        formula(busiest, sent),
        formula(f"C + 2·⌈log₂G⌉ − 1" if gpus > 1 else "0", steps),
        formula(f"2·(G−1)·min(N,{per_tree})", tally.messages),
        who, who,
    )


def seconds(gpus: int, elements: int, model, trees: list[np.ndarray], chunks: int):
    """α-β-γ time of the pipelined trees, step by step from their events (no Plan built).

    In a step a parent's in port queues the chunks its children send up on that level, and a
    GPU's out port queues the chunk it sends up with those it sends down: each step is priced
    from `_phases.tree_events` port by port (`_timing.price`). On one flat level with one
    chunk, Thakur, Rabenseifner & Gropp's binomial-tree reduce + broadcast has this shape:
    about 2·⌈log₂G⌉ steps of α + Nβ (two children queue 2·(α + Nβ + Nγ) on an in port).
    """
    from ._timing import Clock, price
    clock = Clock()
    events = [e for t, parents in enumerate(trees) for e in tree_events(parents, chunks, t * chunks)]
    if not events or gpus < 2:
        return clock.estimate()
    q, r = divmod(elements, len(trees) * chunks)
    for src, dst, seg, ops in steps_of(events):
        size = q + (seg < r)
        t, level = price(model, src, dst, size, ops == 0)
        clock.add(t, level)
    return clock.estimate("the tree's inner GPUs' ports")


def busiest_gpu(gpus: int, elements: int, trees: list[np.ndarray], chunks: int) -> int:
    """Each GPU sends and receives (1 + children)·Nₜ per tree: the busiest sender, lowest on ties."""
    return closed_form(gpus, elements, trees, chunks).busiest_sender
