"""Lesson 9's latency–bandwidth model: engine closed forms for the simulated algorithms."""

from __future__ import annotations

import pytest

from ringsim import closed_form
from ringsim.lessons.costs import costs, format_seconds


def test_rows_follow_the_closed_forms_and_the_textbook():
    rows = {r.name: r for r in costs(1000, 1_000_000, alpha_us=5, gbps=100)}
    ring = closed_form("ring", 1000, 1_000_000)
    assert rows["Ring all-reduce"].latencies == int(ring.steps.value) == 1998
    assert rows["Ring all-reduce"].elements == int(ring.busiest_sent.value) == 1_998_000
    assert rows["Single-GPU master"].elements == 2 * 999 * 1_000_000
    assert rows["Binary tree"].latencies == rows["Halving-doubling"].latencies == 2 * 10
    assert rows["Halving-doubling"].elements == rows["Ring all-reduce"].elements
    # α·latencies + β·elements, β = 4 bytes / 100 GB/s
    assert rows["Ring all-reduce"].seconds == pytest.approx(1998 * 5e-6 + 1_998_000 * 4e-11)
    assert [r.simulated for r in rows.values()] == [True, True, True, False, False]


def test_small_messages_favour_few_latencies_and_large_ones_few_elements():
    small = {r.name: r.seconds for r in costs(1000, 1000)}
    large = {r.name: r.seconds for r in costs(1000, 100_000_000)}
    assert small["Binary tree"] < small["Ring all-reduce"] / 50
    assert large["Ring all-reduce"] < large["Binary tree"] < large["Single-GPU master"]


def test_one_gpu_costs_nothing():
    assert all(r.seconds == 0 for r in costs(1, 1000))


@pytest.mark.parametrize("seconds, text", [(1e-4, "100.0 µs"), (0.0125, "12.5 ms"), (7.994, "7.99 s")])
def test_format_seconds(seconds, text):
    assert format_seconds(seconds) == text
