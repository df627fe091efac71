"""The three strategies side by side: what each moves, in all and through its busiest GPU."""

from __future__ import annotations

from dataclasses import dataclass

from .algorithms import ALGORITHMS, closed_form, make_plan
from .checks import check_elements, check_gpus
from .formula import ClosedForm
from .layout import Layout
from .ledger import measure


@dataclass(frozen=True)
class Row:
    """One algorithm's measured ledger (from its plan, no gradients allocated) and its formulas."""

    algorithm: str
    title: str
    total: int
    busiest_gpu: int
    busiest_sent: int
    busiest_received: int
    steps: int
    messages: int
    formulas: ClosedForm


def compare(gpus: int, elements: int) -> list[Row]:
    """A row per algorithm for G GPUs of N elements each, measured from the plans' transfers."""
    gpus, elements = check_gpus(gpus), check_elements(elements)
    rows = []
    for name, module in ALGORITHMS.items():
        plan = make_plan(name, gpus)
        ledger = measure(plan, Layout(plan.segments, elements))
        busiest = ledger.busiest()
        rows.append(Row(name, module.TITLE, ledger.total, busiest, int(ledger.sent[busiest]),
                        int(ledger.received[busiest]), ledger.steps, ledger.messages,
                        closed_form(name, gpus, elements)))
    return rows
