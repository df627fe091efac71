"""The work a lesson check may do: placeholders get the CLI's limits, a whole check a budget.

Lessons load eagerly (every figure is computed before the first line shows), so a file
could ask for hours of work: `{{train.loss gpus=256 algorithm=naive epochs=50}}`. Each
costly figure estimates its work before starting and spends it from one Budget shared by
the whole check; past its share a figure is refused with a one-line reason, and past the
whole budget the check stops there (OverBudget). Every placeholder spends a little, so a
file of thousands of cheap ones is bounded too, and so does each lesson's own scenario as
far as its figures step it (and again when they step it back): a folder of many large
lessons cannot add up to minutes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..core.errors import RingsimError

# Estimated milliseconds on a 2-core machine, measured once (see docs/lessons.md):
# a symbolic simulation costs about G²·steps/500, a ledger 1 per 1,000 transfers,
# a training run about a quarter of a millisecond per GPU or step per sync.
CHECK_BUDGET_MS = 8_000
FIGURE_BUDGET_MS = 4_000
# Any placeholder: parsing and evaluating it, measured at 0.1 to 4 ms (the cheap ones, well
# under 1 ms, at the lessons' own G), plus what grows with another scenario's G (a ZeRO
# table of 100,000 GPUs: 10 ms).
PLACEHOLDER_MS = 1
GPUS_PER_PLACEHOLDER_MS = 10_000
# A folder holds at most this many lesson files (the shipped course has 19): each is read,
# parsed and its plan built before any budget is spent, even to list the course.
MAX_LESSON_FILES = 100


class OverBudget(RingsimError):
    """The whole check's budget is spent: the check stops at this figure."""


def simulation_cost(gpus: int, steps: int, elements: int) -> int:
    """Estimated ms to simulate a scenario with its labels."""
    return (gpus * gpus * steps) // 500 + (gpus * elements * max(steps, 1)) // 1_000_000 + 1


def placeholder_cost(gpus: int) -> int:
    """Estimated ms of any placeholder whose scenario has `gpus` GPUs, before its own work."""
    return PLACEHOLDER_MS + gpus // GPUS_PER_PLACEHOLDER_MS


def own_simulation_costs(plan, elements: int) -> tuple[list[int], list[int]]:
    """Estimated ms to simulate a lesson's own scenario for its first 0, 1, …, all steps,
    labels and sentences and all, and to replay as many (a Simulation goes back by replaying
    from the start, its sentences kept): counted from the plan in one pass (sim.work,
    as `ringsim walk` counts its walk)."""
    from ..sim.work import runs
    forward, replay = [], []
    for run in runs(plan, elements, np.ones((plan.gpus, plan.segments), bool)):
        forward.append(math.ceil((run.label_seconds() + run.number_seconds()) * 1000))
        replay.append(math.ceil(run.replay_seconds() * 1000))
    return forward, replay


def own_simulation_cost(plan, elements: int, steps: int | None = None) -> int:
    """Estimated ms to simulate a lesson's own scenario for its first `steps` steps (default:
    all): own_simulation_costs at one position."""
    forward, _ = own_simulation_costs(plan, elements)
    return forward[len(forward) - 1 if steps is None else steps]


def ledger_cost(transfers: int) -> int:
    """Estimated ms to measure a plan of this many transfers."""
    return transfers // 1_000 + 1


def training_cost(epochs: int, syncs_per_epoch: int, gpus: int, steps: int) -> int:
    """Estimated ms of a training run."""
    return (epochs * syncs_per_epoch * (gpus + steps)) // 4 + 1


@dataclass
class Budget:
    """Milliseconds of estimated work left to a check (the module's limits by default)."""

    left: int | None = None
    figure: int | None = None

    def __post_init__(self) -> None:
        self.total = CHECK_BUDGET_MS if self.left is None else self.left
        self.left = self.total
        self.figure = FIGURE_BUDGET_MS if self.figure is None else self.figure

    def spend(self, cost: int, what: str, *, per_figure: bool = True) -> None:
        """Take `cost` from the budget, or refuse `what` in one line: RingsimError past one
        figure's share (unless `per_figure` is False: a lesson's own scenario, bounded by the
        front matter's limits), OverBudget past what is left of the whole check's."""
        if per_figure and cost > self.figure:
            raise RingsimError(f"{what} is too much work for a lesson (about {cost / 1000:,.0f} s; "
                               f"at most {self.figure / 1000:,.0f} s per figure): use a smaller scenario")
        if cost > self.left:
            raise OverBudget(f"{what} would pass the lesson check's work budget "
                             f"({self.total / 1000:,.0f} s in all): use fewer or smaller scenarios")
        self.left -= cost
