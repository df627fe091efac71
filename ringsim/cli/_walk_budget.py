"""How long a walk would take, estimated from its plan before the first line is printed.

A walk is a Simulation run to its end, every sentence printed: its time goes into the
sentences' labels, which sim/work.py counts on integers alone, step by step (a few
array operations a step), before anything runs. The plan itself is cheap next to the walk:
the largest plan a walk takes (given trees, about 5 million transfers) builds in under a
second, where walking it would take hours. Printing adds a little per transfer, JSON Lines
more, and --values per number printed.

Measured on one core, with output to /dev/null, every measured walk stays near or under
its estimate (ring of 128 GPUs: 32,512 transfers, 2.3 s; on 4 channels: 9.3 s; nvls of 128
GPUs in 1,024 chunks: 12.0 s; tree of 128 GPUs in 512 chunks: 7.1 s; ring of 8 GPUs with 10
million elements each: 1.9 s), so a walk the budget accepts takes at most about MAX_SECONDS.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.errors import RingsimError
from ..core.naming import plural
from ..core.plan import Plan
from ..core.units import format_seconds
from ..sim.work import TERM_SECONDS, run_of

MAX_SECONDS = 15.0  # estimated time a walk may take: past it, the text is no longer read anyway

# What printing adds to the Simulation's own work (sim/work.py), measured on one core.
PRINT_PER_TRANSFER = 3e-6      # a sentence wrapped to the terminal and printed
JSON_PER_TRANSFER = 8e-6       # JSON Lines encodes every transfer as an object too
# --values: each number printed (a float's digits take longer than a small whole number's),
# and in text each segment's numbers joined on its own.
SECONDS_PER_VALUE = 0.2e-6
SECONDS_PER_FLOAT_VALUE = 0.5e-6
JSON_PER_VALUE = 0.9e-6
SECONDS_PER_VALUE_PART = 1.8e-6
# --values on floats ends with each element's exact sum (math.fsum over the GPUs) and, for
# small runs, every other algorithm's sums of the same gradients.
SECONDS_PER_FLOAT_REPORT_CELL = 0.3e-6


@dataclass(frozen=True)
class WalkWork:
    """A walk's size: its transfers and steps, the terms its sentences name, the elements it
    moves, the numbers --values prints, and the estimated seconds of each part."""

    transfers: int
    steps: int
    terms: int
    moved: int
    values: int
    sentence_seconds: float
    number_seconds: float
    value_seconds: float

    @property
    def seconds(self) -> float:
        """The walk's estimated seconds in all."""
        return self.sentence_seconds + self.number_seconds + self.value_seconds


def estimate(plan: Plan, elements: int, held: np.ndarray, *, as_json: bool = False,
             values: int = 0, floats: bool = False) -> WalkWork:
    """The work of walking `plan` with `elements` per GPU; `held`: the (G, S) booleans of the
    segments each GPU holds at the start (Collective.holdings); `values`: the numbers --values
    prints; `floats`: the gradients are random floats, not small whole numbers."""
    run = run_of(plan, elements, held)
    sentences = run.label_seconds() + run.transfers * PRINT_PER_TRANSFER
    terms = run.terms
    if as_json:  # JSON Lines also labels each sender on its own
        sentences += run.transfers * JSON_PER_TRANSFER + run.sent_terms * TERM_SECONDS
        terms += run.sent_terms
        shown = values * JSON_PER_VALUE
    else:
        parts = plan.gpus * plan.segments * (len(plan.steps) + 1) if values else 0
        shown = (values * (SECONDS_PER_FLOAT_VALUE if floats else SECONDS_PER_VALUE)
                 + parts * SECONDS_PER_VALUE_PART)
    if values and floats:
        shown += plan.gpus * elements * SECONDS_PER_FLOAT_REPORT_CELL
    return WalkWork(run.transfers, run.steps, terms, run.moved, values, sentences,
                    run.number_seconds(floats), shown)


def check(work: WalkWork, what: str, instead: str) -> None:
    """Refuse, in one line with the figures, a walk estimated past MAX_SECONDS."""
    if work.seconds <= MAX_SECONDS:
        return
    parts = [f"{plural(work.transfers, 'transfer')} in {plural(work.steps, 'step')}, a sentence "
             f"each, their labels naming {work.terms:,} terms"]
    fewer = "GPUs, channels or chunks"
    if work.number_seconds >= work.seconds / 4:
        parts.append(f"{work.moved:,} elements moved")
    if work.values:
        parts.append(f"{work.values:,} numbers for --values")
    if work.number_seconds + work.value_seconds >= work.seconds / 4:
        fewer = "GPUs, channels, chunks or elements"
    raise RingsimError(
        f"{what} would take about {format_seconds(work.seconds)} ({'; '.join(parts)}); the limit "
        f"is {format_seconds(MAX_SECONDS)}: use fewer {fewer}; {instead}")
