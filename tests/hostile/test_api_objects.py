"""The API's own objects: every value a user hands to a plan, a step, a layout, the ledger,
the checker or a simulation is checked, and refused with one RingsimError line instead of
a TypeError, a MemoryError or a silently wrong answer."""

from __future__ import annotations

import math
from fractions import Fraction
import resource
import signal

import numpy as np
import pytest

import ringsim
from ringsim import Layout, Plan, Simulation, Step, check, make_plan, measure, run_symbolic
from ringsim.algorithms import closed_form

from .conftest import api_refused as refused

MEMORY = 2 << 30  # bytes: a case that would allocate past this fails with MemoryError, not swap


@pytest.fixture(autouse=True)
def bounded():
    """Each case under an address-space limit and a 20 s alarm."""
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    usage = _mapped()
    resource.setrlimit(resource.RLIMIT_AS, (usage + MEMORY, hard))

    def late(*_):
        raise AssertionError("the case ran past 20 s")
    previous = signal.signal(signal.SIGALRM, late)
    signal.alarm(20)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def _mapped() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[0]) * resource.getpagesize()


PLAN = make_plan("ring", 4)


@pytest.mark.parametrize("order, words", [
    ([1.0, 3.0, 2.0, 4.0], "whole GPU numbers"), (5, "must be text"), ([1, None, 2, 3], "whole GPU numbers"),
    ([[1, 2, 3, 4], 7], "must be a list of GPU numbers"), ([[1, 2, 3, 4]] * 65, "at most 64"),
    ([True, 2, 3, 4], "whole GPU numbers"), ([1, 2, 3], "each of GPU1..GPU4 once"),
    ({1, 2, 3, 4}, "must be text")])
def test_ring_orders(order, words):
    refused(lambda: make_plan("ring", 4, ring_order=order), *words.split("|"))


def test_ring_orders_written_well_still_work():
    assert make_plan("ring", 4, ring_order=[1, 3, 2, 4]).gpus == 4
    assert make_plan("ring", 4, ring_order=np.array([[1, 3, 2, 4], [4, 3, 2, 1]])).segments == 8


def test_rails_are_estimated_before_building():
    refused(lambda: closed_form("ring", 10**6, 10**12, ring_order="rails:1000"), "at most 64")
    refused(lambda: closed_form("ring", 10**6, 10**12, ring_order="rails:50"), "GPU numbers in all")
    assert closed_form("ring", 64, 10**6, ring_order="rails:8").total.value > 0


COLUMNS = dict(src=[0, 1], dst=[1, 0], first=[0, 1])


@pytest.mark.parametrize("change, words", [
    ({"src": [0.7, 1]}, "whole numbers"), ({"src": [math.nan, 1]}, "whole numbers"),
    ({"src": [2**63, 1]}, "whole numbers"), ({"src": [2**64, 1]}, "64-bit"),
    ({"src": [None, 1]}, "whole numbers"), ({"src": ["a", "b"]}, "whole numbers"),
    ({"src": [[0], [1, 2]]}, "ragged"), ({"op": None}, "unknown transfer op"),
    ({"op": 0.5}, "unknown transfer op"), ({"op": 7}, "unknown transfer op"),
    ({"op": True}, "unknown transfer op"), ({"op": ["reduce", 0.5]}, "unknown transfer op"),
    ({"dst": [1, 0, 2]}, "must be one length"), ({"last": [0, 0, 0]}, "must be one length")])
def test_step_build(change, words):
    given = {"op": "reduce", **COLUMNS, "last": None, **change}
    refused(lambda: Step.build("p", 1, 1, given["op"], given["src"], given["dst"], given["first"],
                               given["last"]), words)


def test_step_build_takes_whole_floats_and_codes():
    step = Step.build("p", 1, 1, [0, 1], [0.0, 1.0], np.array([1, 0], np.uint8), [0, 1])
    assert step.src.tolist() == [0, 1] and step.ops.tolist() == [0, 1]


@pytest.mark.parametrize("args", [(0, 5), (4, -1), (4, 1.5), (True, 4), (4, None), ("4", 4),
                                  (4, math.inf)])
def test_layouts(args):
    refused(lambda: Layout(*args), "a layout's number of")


def test_a_layout_must_belong_to_its_plan():
    assert measure(PLAN, Layout(4, 8)).total == 48
    refused(lambda: measure(PLAN, Layout(3, 8)), "the plan has 4")
    refused(lambda: measure(PLAN, (4, 8)), "expected a Layout")
    refused(lambda: measure("ring", Layout(4, 8)), "expected a Plan")


@pytest.mark.parametrize("steps", [-1, 99, 2.5, True, "3"])
def test_measure_counts_only_steps_the_plan_has(steps):
    refused(lambda: measure(PLAN, Layout(4, 8), steps), "the number of steps to measure")


def test_measure_of_some_steps():
    assert measure(PLAN, Layout(4, 8), 0).total == 0
    assert measure(PLAN, Layout(4, 8), 6).total == 48


def test_the_checker():
    refused(lambda: check(None), "expected a Plan")
    refused(lambda: run_symbolic(make_plan("naive", 1000)), "at most 16,777,216")
    assert check(make_plan("naive", 16)) == []


def test_simulations():
    sim = Simulation.create("ring", 4, 8)
    refused(lambda: sim.sentences(-5), "the step index must be from 0 to 5")
    refused(lambda: sim.sentences(99), "the step index must be from 0 to 5")
    assert sim.sentences() == [] and sim.sentences(0)
    bogus = Simulation(Plan("bogus\x1b[2J", PLAN.gpus, PLAN.steps), 8)
    assert bogus.title.startswith("bogus[2J plan") or bogus.title.startswith("bogus plan")
    assert "\x1b" not in bogus.title


def test_masked_arrays():
    masked = np.ma.masked_array([1.0, 2.0], mask=[False, True])
    refused(lambda: ringsim.allreduce([masked, masked]), "masked")
    plain = np.ma.masked_array([1.0, 2.0])  # nothing masked: the data underneath
    assert ringsim.allreduce([plain, plain]).outputs[0].tolist() == [2.0, 4.0]


@pytest.mark.parametrize("segment, words", [
    ("2", "whole number"), (2.5, "whole number"), (None, "whole number"), ([1], "whole number"),
    (math.nan, "whole number"), (math.inf, "whole number"), (True, "whole number"),
    (-1, "from 0 to 4"), (5, "from 0 to 4"), (10**400, "too large")])
def test_a_layouts_segment_offsets(segment, words):
    refused(lambda: Layout(4, 8).offset(segment), "a segment's index", words)


@pytest.mark.parametrize("segment, words", [
    ("2", "whole number"), (2.5, "whole number"), (None, "whole number"), (False, "whole number"),
    (-1, "from 0 to 3"), (4, "from 0 to 3")])
def test_a_layouts_segment_sizes(segment, words):
    refused(lambda: Layout(4, 8).size(segment), "a segment's index", words)


@pytest.mark.parametrize("first, last", [("0", 1), (0, 1.5), (-1, 2), (0, 4), (3, 1)])
def test_a_layouts_spans(first, last):
    refused(lambda: Layout(4, 8).span(first, last), "segment")


@pytest.mark.parametrize("segments, words", [
    (["2"], "whole numbers"), ([2.5], "whole numbers"), ([1, None], "whole numbers"),
    ([True], "whole numbers"), ([10**400], "whole numbers"), ([0, 5], "from 0 to 4"),
    ([-1], "from 0 to 4")])
def test_a_layouts_segment_arrays(segments, words):
    refused(lambda: Layout(4, 8).offsets(segments), "segment", words)


def test_a_layouts_segments_written_well():
    layout = Layout(3, 8)  # segments of 3, 3 and 2 elements
    assert [layout.offset(j) for j in range(4)] == [0, 3, 6, 8]
    assert layout.offset(np.int64(2)) == 6 and layout.offset(2.0) == 6
    assert [layout.size(j) for j in range(3)] == [3, 3, 2]
    assert layout.span(0, 2) == 8 and layout.span(1, 0) == 0
    assert layout.offsets(np.array([0, 3], np.uint8)).tolist() == [0, 8]
    assert layout.spans([0, 1], [2, 1]).tolist() == [8, 3]


HUGE = 10**5000  # past the 4,300 digits Python turns into text


@pytest.mark.parametrize("call", [
    lambda: closed_form("ring", 4, HUGE), lambda: closed_form("ring", 4, 10**400),
    lambda: make_plan("ring", -HUGE), lambda: Layout(4, 10**40), lambda: Layout(-HUGE, 8),
    lambda: Simulation.create("ring", gpus=4, elements=10**400),
    lambda: ringsim.demo_gradients(4, 10**400), lambda: Layout(4, 8).offset(HUGE),
    lambda: Layout(4, 8).offsets([HUGE]), lambda: Layout(4, Fraction(10**400))])
def test_counts_past_forty_digits(call):
    message = refused(call)
    assert len(message) < 300, message


def test_the_time_model_refuses_past_forty_digits():
    from ringsim.cost.model import CostModel, price
    assert len(refused(lambda: price(PLAN, 10**400, CostModel.flat()), "elements")) < 300


def test_forty_digit_counts_still_count():
    assert closed_form("ring", 4, 10**40 - 1).total.value == 2 * 3 * (10**40 - 1)
    assert Layout(4, 10**40 - 1).distinct_sizes() == [(10**40 - 1) // 4, (10**40 - 1) // 4 + 1]
