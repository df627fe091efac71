"""Single-GPU master (parameter server): everyone sends to the master, which sums and sends back."""

from __future__ import annotations


import numpy as np

from ..formula import ClosedForm, Formula
from ..naming import gpu_name
from ..plan import Plan, Step

NAME = "master"
TITLE = "Single-GPU master"
SUMMARY = "reduce onto one GPU, broadcast back: 2·(G−1)·N, all of it through the master"


def plan(gpus: int, master: int = 0) -> Plan:
    """Every other GPU sends its whole gradient to `master` (0-based), which then sends the sum back."""
    others = np.array([g for g in range(gpus) if g != master], dtype=np.int64)
    last = gpus - 1
    steps = []
    if len(others):
        name = gpu_name(master)
        steps.append(Step.build(f"Reduce to {name}", 1, 1, "reduce", others, master, 0, last))
        steps.append(Step.build(f"Broadcast from {name}", 1, 1, "copy", master, others, 0, last))
    return Plan(NAME, gpus, tuple(steps), {"master": master})


def transfers(gpus: int, master: int = 0) -> int:
    """Transfers the plan holds: G−1 into the master, then G−1 out of it."""
    return 2 * (gpus - 1)


def closed_form(gpus: int, elements: int, master: int = 0) -> ClosedForm:
    """2·(G−1)·N in all; the master (0-based `master`) receives (G−1)·N and sends (G−1)·N.

    Every transfer carries a whole gradient, so these are exact for every G and N.
    """
    g, n = gpus, elements
    return ClosedForm(
        total=Formula("2·(G−1)·N", 2 * (g - 1) * n),
        busiest_sent=Formula("(G−1)·N", (g - 1) * n),
        busiest_received=Formula("(G−1)·N", (g - 1) * n),
        steps=Formula("2", 2 if g > 1 else 0),
        messages=Formula("2·(G−1)", 2 * (g - 1) if n else 0),
        busiest_sender=master if g > 2 and n else 0,
        busiest_receiver=master if g > 2 and n else 0,
    )
