"""Plots at their edges: 0-byte sizes, α = 0 with infinite bandwidths, and one GPU, which
sweep refuses as predict does (nothing to synchronise, so no algorithm is fastest). The table
still prints, the terminal plot says in one line why there is nothing to draw, --svg is
refused in one line before any file is written, and a tie is never a crossover."""

from __future__ import annotations

import pytest

from ringsim.cost.model import CostModel
from ringsim.cost.topology import load
from ringsim.studies.sweep import sweep

from .bounded import cli, no_leftovers, refused

FREE = ("--alpha", "0", "--bandwidth", "inf", "--reduce-bandwidth", "inf")
EDGES = {"0 bytes": ("--sizes", "0"), "free links": FREE}


def test_one_gpu_is_refused_as_predict_refuses_it():
    for command in ("sweep", "predict"):
        refused(cli(command, "--gpus", "1"), "the number of GPUs must be from 2 to 1,000,000, got 1")


@pytest.mark.parametrize("metric", ["time", "busbw"])
@pytest.mark.parametrize("edge", sorted(EDGES))
def test_the_terminal_plot_says_why_it_is_empty(edge, metric):
    ran = cli("sweep", *EDGES[edge], "--plot", metric)
    assert ran.status == 0 and ran.err == "", ran.err
    assert "Traceback" not in ran.out
    # the note closing the output: its first line, however the width wrapped it
    last = next(line for line in reversed(ran.out.splitlines()) if line.startswith("("))
    if edge == "free links":  # NCCL's model keeps its own latencies and caps: only its line is drawn
        assert last.startswith("(textbook rows not drawn: nothing to draw on log axes"), last
        assert "NCCL's model" in ran.out
    else:
        assert last.startswith("(no plot: nothing to draw on log axes"), last
    assert "size" in ran.out  # the table came first


@pytest.mark.parametrize("metric", ["time", "busbw"])
@pytest.mark.parametrize("edge", sorted(EDGES))
def test_an_empty_svg_is_refused_before_writing(tmp_path, edge, metric):
    ran = cli("sweep", *EDGES[edge], "--plot", metric, "--svg", "s.svg", cwd=tmp_path)
    if edge == "free links":  # NCCL's model still has a curve to draw
        assert ran.status == 0, ran.err
        assert "NCCL's model" in (tmp_path / "s.svg").read_text()
        no_leftovers(tmp_path, "s.svg")
        return
    refused(ran, "--svg: nothing to draw on log axes")
    assert ran.out == ""
    no_leftovers(tmp_path)


def test_a_zero_size_beside_real_ones_is_left_off_the_log_axes(tmp_path):
    ran = cli("sweep", "--sizes", "0,4,1MiB", "--svg", "s.svg", cwd=tmp_path)
    assert ran.status == 0, ran.err
    assert "<polyline" in (tmp_path / "s.svg").read_text()
    no_leftovers(tmp_path, "s.svg")


def test_a_tie_is_no_crossover():
    ran = cli("sweep", "--sizes", "0,4", "--no-plot")
    assert ran.status == 0, ran.err
    assert "No crossover" in ran.out and "at 4 bytes" not in ran.out
    # At 0 bytes every algorithm takes 0 s: whichever is fastest at 4 bytes tied at 0.
    result = sweep(64, [0, 4], CostModel(load("flat"), 4))
    assert result.crossovers == ()
    assert len({e.seconds for e in result.points[0].estimates.values()}) == 1


def test_real_crossovers_are_still_found():
    result = sweep(64, [4, 2**30], CostModel(load("flat"), 4))
    assert result.crossovers and result.crossovers[0].nbytes > 4
