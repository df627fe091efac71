"""Lesson 9's figures come from the engine's cost model; textbook formulas checked independently."""

from __future__ import annotations

import math

import pytest

from ringsim.cost import model as cost
from ringsim.algorithms import ALGORITHMS, make_plan
from ringsim.algorithms.timing import estimate, timed_algorithms
from ringsim.core.units import format_seconds
from ringsim.lessons.costs import cost_rows, model_of

ALPHA, BANDWIDTH = 5e-6, 100e9
BETA = 1 / BANDWIDTH  # seconds per byte


def rows(g, n, **kw):
    return {r.key: r for r in cost_rows(g, n, model_of(**kw))}


@pytest.mark.parametrize("p", [2, 4, 8, 16])
def test_textbook_formulas_at_powers_of_two(p):
    # Thakur, Rabenseifner & Gropp 2005, Table 1 (γ = 0: the lessons' flat machine adds for free).
    elements = 64 * p
    nbytes = 4 * elements
    r = rows(p, elements)
    lg = int(math.log2(p))
    assert r["ring"].seconds == pytest.approx(2 * (p - 1) * ALPHA + 2 * (p - 1) / p * nbytes * BETA, rel=1e-9)
    assert r["recursive_doubling"].seconds == pytest.approx(lg * (ALPHA + nbytes * BETA), rel=1e-9)
    assert r["halving_doubling"].seconds == pytest.approx(
        2 * lg * ALPHA + 2 * (p - 1) / p * nbytes * BETA, rel=1e-9)


def test_every_engine_algorithm_is_priced_and_none_is_textbook_only():
    # Every one the flat machine can run: NVLS needs a switch that adds, and its switch forwards.
    assert [r.name for r in cost_rows(16, 1000)] == [n for n in ALGORITHMS if n != "nvls"]
    assert [r.name for r in cost_rows(16, 1000, only="nvls")] == ["nvls"]  # asked by name: priced
    # Hierarchical needs whole nodes of 8: not at G = 12.
    assert "hierarchical" not in rows(12, 1000)


def test_rows_equal_the_engines_price_of_the_real_plan():
    model = model_of()
    for r in cost_rows(8, 1000, model):
        priced = cost.price(make_plan(r.name, 8, **r.options), 1000, model)
        assert r.seconds == pytest.approx(priced.seconds, rel=1e-12), r.name
    # The hook and the plan agree where a hook exists (the one choice `seconds` makes).
    for name in timed_algorithms():
        hook = estimate(name, 8, 1000, model).seconds
        assert hook == pytest.approx(cost.price(make_plan(name, 8), 1000, model).seconds, rel=1e-9)


def test_halving_doubling_at_a_power_of_two_and_not():
    # MPICH folds the G − 2^⌊lg G⌋ extra GPUs in and out: two more steps, 2·N·β more.
    def hd(g, n):
        return cost_rows(g, n, model_of(), only="halving_doubling")[0]
    at_1024 = hd(1024, 100_000_000)
    assert at_1024.steps == 20
    assert at_1024.time == "8.1 ms"
    at_1000 = hd(1000, 100_000_000)
    assert at_1000.steps == 2 * 9 + 2
    expected = 20 * ALPHA + (2 * 511 / 512 + 2) * 4e8 * BETA   # 512 ∤ N: segments differ by one
    assert at_1000.seconds == pytest.approx(expected, rel=1e-5)
    assert at_1000.time == "16.1 ms"   # not 8.1 ms as if 1,000 were 1,024


def test_small_messages_favour_few_latencies_and_large_ones_few_elements():
    small = {k: r.seconds for k, r in rows(256, 1000).items()}
    large = {k: r.seconds for k, r in rows(256, 100_000_000).items()}
    assert min(small, key=small.get) == "recursive_doubling"
    assert small["recursive_doubling"] < small["ring"] / 50
    assert small["tree"] < small["ring"] / 10
    assert min(large, key=large.get) == "halving_doubling"
    assert large["ring"] < large["recursive_doubling"] < large["naive"] < large["master"]
    # NCCL's double binary tree halves what one pipelined tree's inner nodes carry.
    assert large["double_tree"] < large["tree"]


def test_busbw_is_algbw_times_two_g_minus_one_over_g():
    r = rows(64, 1 << 28)["ring"]
    assert r.algbw == pytest.approx((1 << 30) / r.seconds)
    assert r.busbw == pytest.approx(r.algbw * 2 * 63 / 64)
    assert r.busbw < BANDWIDTH   # what every link must carry, under its line rate


def test_one_gpu_costs_nothing():
    assert all(r.seconds == 0 for r in cost_rows(1, 1000))


@pytest.mark.parametrize("value, text", [(1e-4, "100.0 µs"), (0.0125, "12.5 ms"), (7.994, "7.99 s")])
def test_format_seconds(value, text):
    assert format_seconds(value, digits=1) == text


def test_halving_doubling_overtakes_recursive_doubling_where_the_textbook_says():
    # lg p·(α + nβ) = 2·lg p·α + 2·(p−1)/p·nβ  ⇒  n = lg p·α / ((lg p − 2·(p−1)/p)·β) bytes.
    from ringsim.lessons.costs import overtake
    p, lg = 64, 6
    textbook = lg * ALPHA / ((lg - 2 * (p - 1) / p) * BETA)
    elements = overtake("recursive-doubling", "halving-doubling", 256, 1 << 18, p, model_of())
    assert elements * 4 == pytest.approx(textbook, rel=1e-3)
