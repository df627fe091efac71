"""Lesson 9's latency–bandwidth model: engine closed forms, and textbook formulas checked by hand."""

from __future__ import annotations

import pytest

from ringsim import closed_form
from ringsim.lessons.costs import cost_rows, format_seconds


def rows(g, n, **kw):
    return {r.key: r for r in cost_rows(g, n, **kw)}


def test_rows_follow_the_closed_forms_and_the_textbook():
    r = rows(1000, 1_000_000, alpha_us=5, gbps=100)
    ring = closed_form("ring", 1000, 1_000_000)
    assert r["ring"].latencies == int(ring.steps.value) == 1998
    assert r["ring"].elements == int(ring.busiest_sent.value) == 1_998_000
    assert r["master"].elements == 2 * 999 * 1_000_000
    # α·latencies + β·elements, β = 4 bytes / 100 GB/s
    assert r["ring"].seconds == pytest.approx(1998 * 5e-6 + 1_998_000 * 4e-11)
    # Rows of algorithms in the engine's registry are simulated; the textbook rows are not
    # (until an algorithm module of that name lands: then its closed form prices the row).
    from ringsim.algorithms import ALGORITHMS
    assert [x.simulated for x in r.values()] == [key in ALGORITHMS for key in r]


def _textbook(key):
    from ringsim.algorithms import ALGORITHMS
    if key in ALGORITHMS:
        pytest.skip(f"{key} is now an engine algorithm: its row comes from its closed form")


def test_halving_doubling_at_a_power_of_two_and_not():
    _textbook("halving_doubling")
    # Thakur, Rabenseifner & Gropp 2005: 2·lg p·α + 2·(p−1)/p·n·β at p = 2^k; otherwise
    # fold the r = p − 2^⌊lg p⌋ extra processes in and out: two more steps, 2·n·β more.
    at_1024 = rows(1024, 1024)["halving_doubling"]
    assert (at_1024.latencies, at_1024.elements) == (20, 2 * 1023)
    at_1000 = rows(1000, 100_000_000)["halving_doubling"]
    assert at_1000.latencies == 2 * 9 + 2
    assert at_1000.elements == 2 * 511 * 100_000_000 // 512 + 2 * 100_000_000  # exact here
    # The figure: 16.1 ms at α = 5 µs, 100 GB/s (not 8.1 ms as if 1,000 were 1,024).
    assert format_seconds(at_1000.seconds) == "16.1 ms"


def test_the_binomial_tree_moves_whole_gradients_on_every_level():
    _textbook("tree")
    r = rows(1000, 1_000_000)["tree"]
    assert (r.latencies, r.elements) == (2 * 10, 20 * 1_000_000)   # 2·⌈log₂ 1000⌉ levels of N


def test_the_ring_pays_the_largest_segment_each_step():
    assert rows(8, 14)["ring"].elements == 14 * 2  # 14 steps of ⌈14/8⌉ = 2 elements


def test_small_messages_favour_few_latencies_and_large_ones_few_elements():
    small = {k: r.seconds for k, r in rows(1000, 1000).items()}
    large = {k: r.seconds for k, r in rows(1000, 100_000_000).items()}
    assert small["tree"] < small["ring"] / 50
    assert large["ring"] < large["tree"] < large["master"]


def test_one_gpu_costs_nothing():
    assert all(r.seconds == 0 for r in cost_rows(1, 1000))


@pytest.mark.parametrize("seconds, text", [(1e-4, "100.0 µs"), (0.0125, "12.5 ms"), (7.994, "7.99 s")])
def test_format_seconds(seconds, text):
    assert format_seconds(seconds) == text
