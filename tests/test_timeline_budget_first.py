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
    assert err == ("ringsim timeline: error: a timeline of naive on 2,000 GPUs would take at least 0.8 GiB "
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


@pytest.mark.parametrize("elements", [1 << 20, 3])  # 3: most segments empty, their transfers left out
@pytest.mark.parametrize("topology", ["flat", "dgx-h100"])
@pytest.mark.parametrize("collective", sorted(COLLECTIVES))
def test_the_counts_never_refuse_what_the_plan_allows(monkeypatch, topology, collective, elements):
    seen = _works(monkeypatch)
    model = CostModel.of(topology)
    compared = 0
    for algorithm in ALGORITHMS:
        for gpus in (2, 3, 8, 12, 17, 64):
            try:
                options = machine_options(algorithm, gpus, model)
                counts = COLLECTIVES[collective].closed_form(gpus, elements, algorithm, **options)
                plan = COLLECTIVES[collective].plan(gpus, algorithm, **options)
                per_gpu = budget.distinct_per_gpu(model.topology, gpus, ALGORITHMS[algorithm])
                seen.clear()
                timeline_model.simulate(plan, elements, model)
                full = seen["plan"]
                for capacity in (budget.DISTINCT_PER_GPU, per_gpu):
                    seen.clear()
                    budget.check_counts(int(counts.messages.value), int(counts.steps.value), gpus,
                                        "t", per_gpu=capacity)
                    least = seen["least"]  # the spy keeps the last bound checked: the run's own
                    assert least.transfers == full.transfers
                    assert least.bytes <= full.bytes and least.seconds <= full.seconds, \
                        (algorithm, gpus, capacity)
            except RingsimError:
                continue  # an algorithm this collective or topology does not run
            compared += 1
    assert compared >= 6


def test_a_plan_whose_gpus_send_twice_a_step_on_one_port_is_refused_before_it_is_built(monkeypatch, capsys):
    # Each GPU sends to both neighbours in every step, on the one level flat has: at most G of
    # its 2·G transfers a step can leave distinct ports, so half of them at least queue.
    monkeypatch.setattr(collectives, "make_plan", lambda *a, **k: pytest.fail("plan built"))
    assert main(["timeline", "-a", "bidirectional-ring", "-g", "1000"]) == 2
    assert capsys.readouterr().err == (
        "ringsim timeline: error: a timeline of bidirectional-ring on 1,000 GPUs would take at least 0.6 GiB "
        "and 124.68 s (3,996,000 transfers in 1,998 steps, 1,998,000 of them queued on shared "
        "ports); the limits are 2.0 GiB and 30.00 s: use fewer GPUs or compare --time for the "
        "lockstep total\n")


def test_what_a_step_can_hold_follows_the_levels_the_run_uses_and_the_switch():
    flat, dgx = CostModel.of("flat").topology, CostModel.of("dgx-h100").topology
    ring, nvls = ALGORITHMS["ring"], ALGORITHMS["nvls"]
    assert budget.distinct_per_gpu(flat, 1000, ring) == 1
    assert budget.distinct_per_gpu(dgx, 8, ring) == 1      # one node: the inside level only
    assert budget.distinct_per_gpu(dgx, 9, ring) == 2      # a ninth GPU is on another node
    assert budget.distinct_per_gpu(dgx, 8, nvls) == 2      # the switch's ports send too
    assert budget.distinct_per_gpu(dgx, 16, nvls) == budget.DISTINCT_PER_GPU


class _Built(Exception):
    """The plan builder was reached: the counts let the run through."""


def test_the_counts_are_taken_at_the_runs_elements(monkeypatch):
    # 1,000 elements on 2,000 segments: the second ring's segments are empty, so each GPU
    # sends one transfer a step and none queue. Counted with every segment full, the same
    # run would be refused.
    allreduce = COLLECTIVES["all-reduce"]
    assert int(allreduce.closed_form(1000, 1000, "bidirectional-ring").messages.value) == 1_998_000
    with pytest.raises(RingsimError, match="1,998,000 of them queued"):
        budget.check_counts(3_996_000, 1_998, 1_000, "t", per_gpu=1)

    def reached(*args, **kwargs):
        raise _Built
    monkeypatch.setattr(collectives, "make_plan", reached)
    with pytest.raises(_Built):
        main(["timeline", "-a", "bidirectional-ring", "-g", "1000", "-n", "1000"])
