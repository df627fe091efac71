"""What running a Simulation of a plan costs, estimated from the plan before it runs, for the
commands and checks that must bound their work first (`ringsim walk`, `ringsim figure`, the
lesson check).

A Simulation's time goes into its sentences, one per transfer, each naming what the sender
and the receiver hold: a label with one term per GPU summed in. `contributor_counts` runs a
plan on integers alone (how many GPUs each buffer has summed), a few array operations a
step, and `run_of` adds up what the sentences will name, the segments moved and the steps.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from ..core.layout import Layout
from ..core.plan import COPY, Plan


def contributor_counts(plan: Plan, held: np.ndarray) -> Iterator[np.ndarray]:
    """How many GPUs' copies each participant's segment has summed, at the start and after
    each step: one (participants, S) array per position, 0 to len(plan), the same array
    updated in place (copy it to keep one). `held`: the (G, S) booleans of the segments each
    GPU holds at the start (Collective.holdings). A label names as many terms as its count
    (a complete sum names all G), so these count what the walk's sentences and the figure's
    cells write, in a few array operations a step."""
    gpus, segments = plan.gpus, plan.segments
    counts = np.zeros((plan.participants, segments), np.int64)
    counts[:gpus] = held
    yield counts
    for step in plan.steps:
        if len(step):
            widths = step.last - step.first + 1
            owner = np.repeat(np.arange(len(step)), widths)
            starts = np.cumsum(widths) - widths
            segment = step.first[owner] + np.arange(int(widths.sum())) - starts[owner]
            src, dst = step.src[owner], step.dst[owner]
            copy = step.ops[owner] == COPY
            add = ~copy
            # Every send reads the counts before the step; a reduce adds to what is there.
            copied, added = counts[src[copy], segment[copy]], counts[src[add], segment[add]]
            counts[dst[copy], segment[copy]] = copied
            np.add.at(counts, (dst[add], segment[add]), added)
        yield counts


# A Simulation's own work, per unit (measured on one core, rounded up): each step writes a
# sentence per transfer, each naming what the sender and the receiver hold, a label built
# from one term per GPU summed in (shortened for show only after every term is written).
SENTENCE_SECONDS = 9e-6       # a sentence's words, without its labels
TERM_SECONDS = 0.5e-6         # one term a label names ('a₁'), and checking it is there once
TOUCH_SECONDS = 0.1e-6        # a segment a transfer covers, read when its step is carried out
SUMMED_SECONDS = 0.03e-6      # one GPU of a sum a reduce writes into a label (at most)
CELL_STEP_SECONDS = 0.02e-6   # each step copies every buffer's list of contributors
STEP_SECONDS = 0.4e-3         # a step's bookkeeping and its compiled array operations
CELL_SECONDS = 15e-9          # each GPU's element: made, loaded, checked at the end
FLOAT_CELL_SECONDS = 45e-9    # the same for random floats, checked against the exact sum
MOVED_SECONDS = 8e-9          # an element sent and added or copied


@dataclass(frozen=True)
class Run:
    """What a Simulation of a plan does in its first `steps` steps, in counts."""

    gpus: int
    steps: int
    transfers: int
    terms: int        # terms the sentences' labels name, senders' and receivers'
    sent_terms: int   # of which the senders'
    touches: int      # segments the transfers cover
    summed: int       # GPUs a reduce writes into labels, at most
    cell_steps: int   # buffers' lists of contributors copied, step by step
    cells: int        # elements of every participant
    moved: int        # elements sent (sums copied to many counted once)

    def label_seconds(self) -> float:
        """The sentences and labels, estimated."""
        return (self.transfers * SENTENCE_SECONDS + self.terms * TERM_SECONDS
                + self.touches * TOUCH_SECONDS + self.summed * SUMMED_SECONDS
                + self.cell_steps * CELL_STEP_SECONDS + self.steps * STEP_SECONDS)

    def replay_seconds(self) -> float:
        """Stepping through the same steps again (a Simulation goes back by replaying from the
        start): the sums and the numbers once more, the sentences kept from the first time."""
        return (self.touches * TOUCH_SECONDS + self.summed * SUMMED_SECONDS
                + self.cell_steps * CELL_STEP_SECONDS + self.steps * STEP_SECONDS
                + self.number_seconds())

    def number_seconds(self, floats: bool = False) -> float:
        """The numbers: made, moved and checked, estimated."""
        return (self.cells * (FLOAT_CELL_SECONDS if floats else CELL_SECONDS)
                + self.moved * MOVED_SECONDS)


def runs(plan: Plan, elements: int, held: np.ndarray) -> Iterator[Run]:
    """The counts of simulating `plan` with `elements` per GPU for its first 0, 1, …, all
    steps, one Run each, in one pass; `held` as for contributor_counts."""
    gpus, participants, segments = plan.gpus, plan.participants, plan.segments
    layout = Layout(segments, elements)
    cells = participants * elements
    transfers = terms = sent_terms = touches = summed = moved = 0
    yield Run(gpus, 0, 0, 0, 0, 0, 0, 0, cells, 0)
    # counts: how many terms each buffer's label names before the step (a complete sum: G).
    for done, (step, counts) in enumerate(zip(plan.steps, contributor_counts(plan, held)), 1):
        if len(step):
            transfers += len(step)
            several = step.first != step.last  # a sentence names a range's first and last segment
            sent = int((counts[step.src, step.first]
                        + np.where(several, counts[step.src, step.last], 0)).sum())
            kept = int((counts[step.dst, step.first]
                        + np.where(several, counts[step.dst, step.last], 0)).sum())
            terms += sent + kept
            sent_terms += sent
            widths = step.last - step.first + 1
            touches += int(widths.sum())
            # A reduce writes each buffer it adds into once a step, a tuple of at most G GPUs.
            summed += min(int(widths[step.ops != COPY].sum()), participants * segments) * gpus
            # A sum that several GPUs receive is computed once and copied (execute/numeric.py),
            # so no step moves more than every buffer once over.
            moved += min(int(layout.spans(step.first, step.last).sum()), cells)
        yield Run(gpus, done, transfers, terms, sent_terms, touches, summed,
                  done * participants * segments, cells, moved)


def run_of(plan: Plan, elements: int, held: np.ndarray, steps: int | None = None) -> Run:
    """The counts of simulating `plan` with `elements` per GPU for its first `steps` steps
    (default: all); `held` as for contributor_counts."""
    steps = len(plan.steps) if steps is None else min(steps, len(plan.steps))
    for run in runs(plan, elements, held):
        if run.steps == steps:
            return run
    raise AssertionError("unreachable: runs() yields every prefix of the plan")
