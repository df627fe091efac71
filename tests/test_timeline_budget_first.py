"""`ringsim timeline` refuses a plan too large to time before building it, from the closed
forms' counts, and that early refusal never turns away what the plan's own estimate allows."""

from __future__ import annotations

import pytest

import ringsim.algorithms.collectives as collectives
import ringsim.timeline.budget as budget
from ringsim.algorithms import ALGORITHMS
from ringsim.algorithms.collectives import COLLECTIVES
from ringsim.algorithms.timing import machine_options
from ringsim.cli import main
from ringsim.core.errors import RingsimError
from ringsim.cost.model import CostModel
from ringsim.timeline import model as timeline_model


def test_a_huge_plan_is_refused_before_it_is_built(monkeypatch, capsys):
    def no_plan(*args, **kwargs):
        raise AssertionError("the plan was built before the refusal")
    monkeypatch.setattr(collectives, "make_plan", no_plan)
    assert main(["timeline", "-g", "2000", "-a", "naive"]) == 2
    err = capsys.readouterr().err
    assert err == ("ringsim: error: a timeline of naive on 2,000 GPUs would take at least 0.8 GiB "
                   "and 244.20 s (3,998,000 transfers in 1 step, 3,990,000 of them queued on "
                   "shared ports); the limits are 2.0 GiB and 30.00 s: use fewer GPUs or compare "
                   "--time for the lockstep total\n")


def test_each_fault_is_counted_as_another_run_before_the_plan(monkeypatch, capsys):
    # 500 GPUs of naive: at least 14.9 s once, past the 30 s limit with two faults' runs.
    monkeypatch.setattr(collectives, "make_plan", lambda *a, **k: pytest.fail("plan built"))
    assert main(["timeline", "-g", "500", "-a", "naive", "--slow-gpu", "2:0.5",
                 "--slow-gpu", "3:0.5"]) == 2
    assert ", run 3 times for the faults' costs, would take at least" in capsys.readouterr().err


def _works(monkeypatch) -> dict:
    seen: dict = {}

    def spy(work, what, detail=None, least=False):
        seen["least" if least else "plan"] = work
    monkeypatch.setattr(budget, "check", spy)
    return seen


@pytest.mark.parametrize("topology", ["flat", "dgx-h100"])
@pytest.mark.parametrize("collective", sorted(COLLECTIVES))
def test_the_counts_never_refuse_what_the_plan_allows(monkeypatch, topology, collective):
    seen = _works(monkeypatch)
    model = CostModel.of(topology)
    compared = 0
    for algorithm in ALGORITHMS:
        for gpus in (2, 3, 8, 12, 17, 64):
            try:
                options = machine_options(algorithm, gpus, model)
                counts = COLLECTIVES[collective].closed_form(gpus, 2 ** 40, algorithm, **options)
                plan = COLLECTIVES[collective].plan(gpus, algorithm, **options)
                seen.clear()
                budget.check_counts(int(counts.messages.value), int(counts.steps.value), gpus, "t")
                timeline_model.simulate(plan, 1 << 20, model)
            except RingsimError:
                continue  # an algorithm this collective or topology does not run
            least, full = seen["least"], seen["plan"]
            assert least.transfers == plan.transfer_count()
            assert least.bytes <= full.bytes and least.seconds <= full.seconds
            compared += 1
    assert compared >= 6
