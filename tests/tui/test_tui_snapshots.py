"""Snapshot tests of the 4-GPU example's key frames and more (pytest-textual-snapshot, autoplay off).

Regenerate with `pytest tests/tui --snapshot-update` and look at the SVGs before accepting.
"""

import pytest

from ringsim import Simulation
from ringsim.tui.app import RingsimApp

SIZE = (120, 40)


@pytest.mark.parametrize("steps", [0, 1, 2, 3, 4, 6],
                         ids=["start", "reduce-scatter-1", "reduce-scatter-2", "reduce-scatter-3",
                              "all-gather-1", "done"])
def test_ring_key_frames(snap_compare, steps):
    assert snap_compare(RingsimApp(), press=["n"] * steps, terminal_size=SIZE)


def test_master_reduce(snap_compare):
    assert snap_compare(RingsimApp(Simulation.create("master", 4, 8)), press=["n"], terminal_size=SIZE)


def test_naive_flood(snap_compare):
    assert snap_compare(RingsimApp(Simulation.create("naive", 4, 8)), press=["n"], terminal_size=SIZE)


def test_small_terminal(snap_compare):
    assert snap_compare(RingsimApp(), terminal_size=(60, 20))


def test_heat_map_16_gpus(snap_compare):
    assert snap_compare(RingsimApp(Simulation.create("ring", 16, 32)), press=["n"] * 10, terminal_size=SIZE)


def test_presentation_mode(snap_compare):
    assert snap_compare(RingsimApp(present=True), press=["n", "n"], terminal_size=SIZE)


def test_values(snap_compare):
    assert snap_compare(RingsimApp(values=True), press=["n"], terminal_size=SIZE)


def test_help(snap_compare):
    assert snap_compare(RingsimApp(), press=["question_mark"], terminal_size=SIZE)


def test_80x24_ring_step(snap_compare):
    assert snap_compare(RingsimApp(), press=["n"], terminal_size=(80, 24))


def test_80x24_8_gpus_master_reduce(snap_compare):
    # Panels of 10 columns: the load goes on a row of its own, whole ('↑0 ↓56').
    assert snap_compare(RingsimApp(Simulation.create("master", 8, 8)), press=["n"], terminal_size=(80, 24))


def test_80x24_help(snap_compare):
    assert snap_compare(RingsimApp(), press=["question_mark"], terminal_size=(80, 24))


def test_80x24_lesson_below_the_gpu_cells(snap_compare):
    assert snap_compare(RingsimApp(lesson=2), press=["right_square_bracket"] * 2, terminal_size=(80, 24))


def test_heat_map_end_of_reduce_scatter_shows_complete_sums(snap_compare):
    assert snap_compare(RingsimApp(Simulation.create("ring", 16, 64)), press=["n"] * 15, terminal_size=SIZE)


def test_80x24_run_done_notice_in_the_footers_row(snap_compare):
    # The notice takes the key footer's row: the counters above it stay whole.
    assert snap_compare(RingsimApp(), press=["n"] * 7, terminal_size=(80, 24))
