"""ringsim.cost from Python: every number a cost model takes is checked when it is built, with
the ranges a topology file and the command line enforce, and refused in one line."""

from __future__ import annotations

import math
import warnings
from dataclasses import replace
from fractions import Fraction

import numpy as np
import pytest

import ringsim
from ringsim.core.errors import RingsimError
from ringsim.cost.model import CostModel, algbw, busbw, price
from ringsim.cost.nccl import nccl_choice, nccl_choices
from ringsim.cost.topology import load
from ringsim.cost.topology_model import Level, Topology

PLAN = ringsim.make_plan("ring", 4)
SECONDS = "must be from 0 to 1,000,000 s"
RATE = "must be from 1 to 10^18 B/s (or inf: free)"


@pytest.mark.parametrize("build, message", [
    (lambda: CostModel.flat(alpha=float("nan")), f"alpha {SECONDS}, got nan"),
    (lambda: CostModel.flat(alpha=-1.0), f"alpha {SECONDS}, got -1.0"),
    (lambda: CostModel.flat(alpha=2e6), f"alpha {SECONDS}, got 2000000.0"),
    (lambda: CostModel.flat(alpha=math.inf), f"alpha {SECONDS}, got inf"),
    (lambda: CostModel.flat(alpha="1us"), "alpha must be a number of seconds, got '1us' "
                                          "(ringsim.core.units.parse_seconds reads text with a unit)"),
    (lambda: CostModel.flat(alpha=None), "alpha must be a number of seconds, got None"),
    (lambda: CostModel.flat(alpha=True), "alpha must be a number of seconds, got True"),
    (lambda: CostModel.flat(bandwidth=float("nan")), f"bandwidth {RATE}, got nan"),
    (lambda: CostModel.flat(bandwidth=-5.0), f"bandwidth {RATE}, got -5.0"),
    (lambda: CostModel.flat(bandwidth=0.0), f"bandwidth {RATE}, got 0.0"),
    (lambda: CostModel.flat(bandwidth=0.5), f"bandwidth {RATE}, got 0.5"),
    (lambda: CostModel.flat(bandwidth=1e19), f"bandwidth {RATE}, got 1e+19"),
    (lambda: CostModel.flat(bandwidth=-math.inf), f"bandwidth {RATE}, got -inf"),
    (lambda: CostModel.flat(reduce_bandwidth=0.0), f"reduce_bandwidth {RATE}, got 0.0"),
    (lambda: CostModel.flat(itemsize=0), "itemsize (bytes per element) must be from 1 to 1,024, got 0"),
    (lambda: CostModel.flat(itemsize=-4), "itemsize (bytes per element) must be from 1 to 1,024, got -4"),
    (lambda: CostModel.flat(itemsize=4.5), "itemsize (bytes per element) must be a whole number, got 4.5"),
    (lambda: CostModel.of(5), "a topology is a preset name, a .toml path or a Topology, got 5"),
    (lambda: CostModel.of(None), "a topology is a preset name, a .toml path or a Topology, got None"),
    (lambda: CostModel("flat"), "a CostModel's topology must be a Topology (or use CostModel.of "
                                "with a preset name), got 'flat'"),
    (lambda: Level("inside", "x", float("nan"), -1.0), f"the inside level's alpha {SECONDS}, got nan"),
    (lambda: Level("inside", "x", 1e-6, -1.0), f"the inside level's bandwidth {RATE}, got -1.0"),
    (lambda: Level("middle", "x", 1e-6, 1e9), "a level's key must be one of inside, across, got 'middle'"),
    (lambda: Level("across", "x", 1e-6, 1e9, net_latency=1.0),
     "the across level's net_latency must be from 0 to 10 ms, got 1.0"),
    (lambda: Level("inside", "x", 1e-6, 1e9, gpus_per_switch=0, uplink=1e9),
     "the inside level's gpus_per_switch must be from 1 to 1,024, got 0"),
    (lambda: Level("inside", "x", 1e-6, 1e9, kind="fiber"),
     "the inside level's kind must be one of nvlink, pcie, network, got 'fiber'"),
    (lambda: Topology("t", "t", None, {}, math.inf),
     "topology 't': levels must be a dict with an 'inside' or an 'across' Level, got {}"),
    (lambda: Topology("t", "t", None, {"inside": Level("across", "x", 0.0, 1e9)}, math.inf),
     "topology 't': levels must map 'inside' and 'across' to a Level of that key"),
    (lambda: Topology("t", "t", None, {"across": Level("across", "x", 0.0, 1e9)}, math.inf),
     "topology 't': an across level needs gpus_per_node"),
    (lambda: Topology("t", "t", 0, {"inside": Level("inside", "x", 0.0, 1e9)}, math.inf),
     "topology 't': gpus_per_node must be from 1 to 1,000,000, got 0"),
    (lambda: Topology("t", "t", None, {"inside": Level("inside", "x", 0.0, 1e9)}, float("nan")),
     f"topology 't': reduce_bandwidth {RATE}, got nan"),
    (lambda: replace(load("dgx-h100"), arch="pascal"),
     "topology 'dgx-h100': arch must be one of volta, ampere, hopper, blackwell, got 'pascal'"),
    (lambda: load("dgx-h100").with_overrides(alpha={"inside": -1e-6}),
     f"the inside level's alpha {SECONDS}, got -1e-06"),
    (lambda: load("dgx-h100").with_overrides(reduce_bandwidth=0.0),
     f"topology 'dgx-h100': reduce_bandwidth {RATE}, got 0.0"),
])
def test_a_model_out_of_range_is_refused_when_built(build, message):
    with pytest.raises(RingsimError) as refused:
        build()
    assert str(refused.value).startswith(message)
    assert "\n" not in str(refused.value)


@pytest.mark.parametrize("call, message", [
    (lambda: price(PLAN, 10**30, CostModel.flat()),
     "the time model prices at most 2**62 (about 4.6·10^18) elements per GPU, got 1e+30"),
    (lambda: price(PLAN, -1, CostModel.flat()),
     "the number of elements per GPU must be at least 0, got -1"),
    (lambda: price(PLAN, 8.5, CostModel.flat()),
     "the number of elements per GPU must be a whole number, got 8.5"),
    (lambda: price(PLAN, 8, "flat"), "expected a CostModel (CostModel.of('dgx-h100')), got 'flat'"),
    (lambda: price("ring", 8), "price needs a Plan (make_plan('ring', 8)), got 'ring'"),
])
def test_price_refuses_what_it_cannot_price(call, message):
    with pytest.raises(RingsimError) as refused:
        call()
    assert str(refused.value) == message


def test_the_ranges_are_the_ones_the_units_parser_enforces():
    # The bounds themselves price, as numbers of any kind, and come back as plain numbers.
    edge = CostModel.flat(alpha=np.float32(0.0), bandwidth=1, reduce_bandwidth=10**18,
                          itemsize=np.int64(1024))
    assert type(edge.topology.level("inside").alpha) is float and type(edge.itemsize) is int
    assert CostModel.flat(alpha=Fraction(10**6)).topology.level("inside").alpha == 1e6
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no NumPy warning on the way
        free = price(PLAN, 8, CostModel.flat(alpha=1e-6, bandwidth=math.inf, itemsize=np.int64(4)))
    assert free.seconds == pytest.approx(6e-6)  # 6 steps of α alone: an infinite link is free
    assert price(PLAN, np.int64(2**62), CostModel.flat()).seconds > 0


def test_a_checked_model_prices_as_before():
    textbook = price(PLAN, 4000, CostModel.flat(alpha=3e-6, bandwidth=80e9, reduce_bandwidth=500e9))
    n = 4000 * 4
    assert textbook.seconds == pytest.approx(6 * 3e-6 + 1.5 * n / 80e9 + 0.75 * n / 500e9, rel=1e-12)


def test_nccl_choice_takes_numpy_integers_as_make_plan_does():
    topology = load("dgx-h100")
    assert nccl_choice(topology, np.int64(8), np.int64(8)) == nccl_choice(topology, 8, 8)
    assert nccl_choice("dgx-h100", np.int32(16), np.uint64(1 << 20), gpus_per_process=np.int64(2)) \
        == nccl_choice("dgx-h100", 16, 1 << 20, gpus_per_process=2)
    assert nccl_choices(topology, np.int64(8), np.array([8, 1024])) == nccl_choices(topology, 8, [8, 1024])
    with pytest.raises(RingsimError, match=r"^gpus must be a whole number from 2 to 1,000,000, got 8\.0$"):
        nccl_choice(topology, 8.0, 8)
    with pytest.raises(RingsimError, match=r"^bytes must be a whole number from 0 to 1,125,899,906,842,624, got -1$"):
        nccl_choice(topology, np.int64(8), np.int64(-1))


@pytest.mark.parametrize("call, message", [
    (lambda: algbw("2", 1.0), "nbytes must be a whole number, got '2'"),
    (lambda: algbw(-5, 1.0), "nbytes must be at least 0, got -5"),
    (lambda: algbw(2**20, "1ms"), "seconds must be a number of seconds, at least 0, got '1ms'"),
    (lambda: algbw(2**20, -1.0), "seconds must be a number of seconds, at least 0, got -1.0"),
    (lambda: algbw(2**20, float("nan")), "seconds must be a number of seconds, at least 0, got nan"),
    (lambda: busbw("2", 4), "algbw_value must be a number of bytes per second (or None), at least 0, "
                            "got '2'"),
    (lambda: busbw(float("nan"), 4), "algbw_value must be a number of bytes per second (or None), "
                                     "at least 0, got nan"),
    (lambda: busbw(1e9, 0), "the number of GPUs must be from 1 to 1,000,000, got 0"),
    (lambda: busbw(1e9, "8"), "the number of GPUs must be a whole number, got '8'"),
])
def test_the_bandwidth_formulas_refuse_bad_input_in_one_line(call, message):
    with pytest.raises(RingsimError) as error:
        call()
    assert str(error.value) == message
    # good input still gives nccl-tests' figures, the formulas untouched
    assert algbw(10**9, 0.5) == 2e9 and busbw(2e9, 8) == 2e9 * 14 / 8 and algbw(8, 0) is None
