"""The registry's recipe for a new algorithm, followed by a throwaway one written here.

"direct": every GPU sends its whole gradient to GPU1, which adds it, then GPU1 copies the
sum back to every GPU. One module's worth of functions, one AlgorithmSpec, one entry in
ALGORITHMS, and the API, the checker and the CLI take it up.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

import ringsim
from ringsim.algorithms import ALGORITHMS, option_text, plan_closed_form
from ringsim.algorithms.spec import AlgorithmSpec, Shape
from ringsim.cli import main
from ringsim.core.formula import ClosedForm, Formula
from ringsim.core.plan import Plan, Step
from ringsim.cost.model import Estimate, price

NAME = "direct"


@dataclass(frozen=True)
class Options:
    """No options."""


def plan(gpus: int) -> Plan:
    """Everyone reduces into GPU1, then GPU1 copies the sum to everyone."""
    others = np.arange(1, gpus, dtype=np.int64)
    steps = []
    if len(others):
        steps.append(Step.build("Reduce to GPU1", 1, 1, "reduce", others, 0, 0, gpus - 1))
        steps.append(Step.build("Copy from GPU1", 1, 1, "copy", 0, others, 0, gpus - 1))
    return Plan(NAME, gpus, tuple(steps))


def transfers(gpus: int) -> int:
    """G−1 transfers in, G−1 out."""
    return 2 * (gpus - 1)


def closed_form(gpus: int, elements: int) -> ClosedForm:
    """2·(G−1)·N in all, every element of it through GPU1."""
    g, n = gpus, elements
    return ClosedForm(
        total=Formula("2·(G−1)·N", 2 * (g - 1) * n),
        busiest_sent=Formula("(G−1)·N", (g - 1) * n),
        busiest_received=Formula("(G−1)·N", (g - 1) * n),
        steps=Formula("2", 2 if g > 1 else 0),
        messages=Formula("2·(G−1)", 2 * (g - 1) if n else 0))


def seconds(gpus: int, elements: int, model) -> Estimate:
    """The plan priced step by step (a real module would count it without building the plan)."""
    cost = price(plan(gpus), elements, model)
    return Estimate(cost.seconds, cost.bottleneck_level(), "GPU1's ports")


def busiest_gpu(gpus: int, elements: int) -> int:
    """GPU1 moves the most (and wins every tie)."""
    return 0


SPEC = AlgorithmSpec(NAME, "Direct to GPU1", "everyone into GPU1, GPU1 back to everyone",
                     Options, plan, closed_form, transfers, seconds, busiest_gpu, shape=Shape.STAR)


@pytest.fixture
def registered(monkeypatch):
    """The recipe's last step: one more entry in the registry."""
    monkeypatch.setitem(ALGORITHMS, NAME, SPEC)


def test_the_registry_builds_counts_and_checks_it(registered):
    plan_ = ringsim.make_plan(NAME, 5)
    assert len(plan_) == 2 and ringsim.check(plan_) == []
    assert ringsim.closed_form(NAME, 5, 12).total.value == 2 * 4 * 12
    assert plan_closed_form(plan_, 12).busiest_sent.value == 4 * 12
    assert option_text(plan_) == ""
    ledger = ringsim.measure(plan_, ringsim.Layout(plan_.segments, 12))
    assert ledger.total == 2 * 4 * 12 and ledger.busiest() == busiest_gpu(5, 12)


def test_its_options_are_checked_like_any_others(registered):
    with pytest.raises(ringsim.RingsimError, match=r"^direct takes no options, not chunks \(chunks is for "):
        ringsim.make_plan(NAME, 4, chunks=2)


def test_allreduce_with_it_is_the_element_wise_sum(registered):
    rng = np.random.default_rng(3)
    arrays = [rng.integers(-100, 100, size=7) for _ in range(6)]
    result = ringsim.allreduce(arrays, NAME)
    expected = np.sum(arrays, axis=0)
    assert all(np.array_equal(out, expected) for out in result.outputs)


def test_the_cli_reads_the_registry_when_it_runs(registered, capsys):
    # The CLI's --algorithm choices are read from ALGORITHMS each time main() builds its parser.
    assert main(["walk", "-a", NAME, "-g", "3", "-n", "3"]) == 0
    out = capsys.readouterr().out
    assert "Direct to GPU1" in out and "Reduce to GPU1" in out


def test_the_checks_every_registered_algorithm_gets_hold_for_it(registered):
    from ringsim.algorithms.timing import estimate, timed_algorithms
    from ringsim.cost.model import CostModel
    from ringsim.studies.compare import compare
    assert NAME in timed_algorithms()
    model = CostModel.of("dgx-h100")
    for gpus in range(2, 9):
        plan_ = ringsim.make_plan(NAME, gpus)
        assert ringsim.check(plan_) == []
        ledger = ringsim.measure(plan_, ringsim.Layout(plan_.segments, 5 * gpus))
        assert ledger.total == ringsim.closed_form(NAME, gpus, 5 * gpus).total.value
        priced = price(plan_, 1 << 20, model).seconds
        assert estimate(NAME, gpus, 1 << 20, model).seconds == pytest.approx(priced, rel=1e-12)
    rows = {row.algorithm: row for row in compare(8, 64, model)}
    assert rows[NAME].title == "Direct to GPU1" and rows[NAME].total == 2 * 7 * 64
