"""The work a lesson check may do: placeholders get the CLI's limits, a whole check a budget.

Lessons load eagerly (every figure is computed before the first line shows), so a file
could ask for hours of work: `{{train.loss gpus=256 algorithm=naive epochs=50}}`. Each
costly figure estimates its work before starting and spends it from one Budget shared by
the whole check; past the budget the figure is refused with a one-line reason.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.errors import RingsimError

# Estimated milliseconds on a 2-core machine, measured once (see docs/lessons.md):
# a symbolic simulation costs about G²·steps/500, a ledger 1 per 1,000 transfers,
# a training run about a quarter of a millisecond per GPU or step per sync.
CHECK_BUDGET_MS = 8_000
FIGURE_BUDGET_MS = 4_000


def simulation_cost(gpus: int, steps: int, elements: int) -> int:
    """Estimated ms to simulate a scenario with its labels."""
    return (gpus * gpus * steps) // 500 + (gpus * elements * max(steps, 1)) // 1_000_000 + 1


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

    def spend(self, cost: int, what: str) -> None:
        """Take `cost` from the budget, or refuse `what` in one line."""
        if cost > self.figure:
            raise RingsimError(f"{what} is too much work for a lesson (about {cost / 1000:,.0f} s; "
                               f"at most {self.figure / 1000:,.0f} s per figure): use a smaller scenario")
        if cost > self.left:
            raise RingsimError(f"{what} would pass the lesson check's work budget "
                               f"({self.total / 1000:,.0f} s in all): use fewer or smaller scenarios")
        self.left -= cost
