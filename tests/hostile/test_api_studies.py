"""The notebook's functions (docs/notebook.ipynb): the timeline, the sweep and the figures
refuse a wrong type or value with one RingsimError line, never an AttributeError, a
TypeError or a sweep of sizes nobody asked for."""

from __future__ import annotations

import math

import pytest

from ringsim import Simulation, make_plan
from ringsim.studies.sweep import sweep
from ringsim.timeline.model import simulate

from .conftest import api_refused as refused


@pytest.mark.parametrize("plan", ["ring", None, 8, [make_plan("ring", 4)]])
def test_a_timeline_needs_a_plan(plan):
    refused(lambda: simulate(plan, 1000), "expected a Plan")


@pytest.mark.parametrize("sizes, words", [
    ("1024", "a list of sizes"), (1024, "a list of sizes"), (None, "a list of sizes"),
    ([2.5], "whole number"), ([True], "whole number"), (["2"], "whole number"),
    ([None], "whole number"), ([math.nan], "whole number"), ([-8], "at least 0")])
def test_a_sweep_takes_whole_sizes(sizes, words):
    refused(lambda: sweep(8, sizes), words)


def test_a_sweep_of_sizes_written_well():
    swept = sweep(8, (1024, 4096.0, 2 ** 20))
    assert [point.nbytes for point in swept.points] == [1024, 4096, 2 ** 20]


@pytest.mark.parametrize("sim", ["ring", None, make_plan("ring", 4)])
def test_a_figure_needs_a_simulation(sim):
    pytest.importorskip("drawsvg")
    from ringsim.figures.render import figure_svg
    refused(lambda: figure_svg(sim), "expected a Simulation")


@pytest.mark.parametrize("path", [2.5, None, ["ring.svg"]])
def test_a_figure_file_needs_a_name(path):
    from ringsim.figures.output import write
    refused(lambda: write(Simulation.create("ring", gpus=4), path), "file name")


def test_a_rendering_needs_a_simulation():
    pytest.importorskip("drawsvg")
    from ringsim.figures.output import render
    refused(lambda: render(make_plan("ring", 4), ".svg"), "expected a Simulation")


@pytest.mark.parametrize("gpus, words", [
    (2.5, "whole number"), (True, "whole number"), (-1, "at least 1"), (0, "at least 1"),
    ("2", "whole number"), (math.nan, "whole number")])
def test_an_estimate_needs_whole_gpus(gpus, words):
    from ringsim.algorithms.timing import estimate
    refused(lambda: estimate("ring", gpus, 100), "the number of GPUs", words)


def _every_model_taker():
    from ringsim.algorithms.timing import estimate
    from ringsim.cost.model import price
    return {"estimate": lambda model: estimate("ring", 8, 100, model),
            "price": lambda model: price(make_plan("ring", 8), 100, model),
            "simulate": lambda model: simulate(make_plan("ring", 8), 100, model),
            "sweep": lambda model: sweep(8, [1024], model)}


@pytest.mark.parametrize("taker", ["estimate", "price", "simulate", "sweep"])
@pytest.mark.parametrize("model", ["dgx-h100", 0, "", [], 2.5])
def test_a_cost_model_is_a_cost_model(taker, model):
    refused(lambda: _every_model_taker()[taker](model), "CostModel")


@pytest.mark.parametrize("faults, words", [
    (None, "a list of faults"), (2.5, "a list of faults"), ("slow", "a list of faults"),
    ([2.5], "a ringsim.timeline Fault")])
def test_a_timelines_faults_come_as_a_list(faults, words):
    refused(lambda: simulate(make_plan("ring", 8), 100, None, faults), words)


@pytest.mark.parametrize("runs, words", [
    (2.5, "whole number"), (None, "whole number"), ("2", "whole number"), (0, "at least 1"),
    (-1, "at least 1"), (math.nan, "whole number")])
def test_a_timelines_runs_are_counted(runs, words):
    refused(lambda: simulate(make_plan("ring", 8), 100, None, (), "auto", runs), "runs", words)


@pytest.mark.parametrize("folder", [2.5, ["lessons"], b"lessons"])
def test_lessons_come_from_a_folder_name(folder):
    from ringsim.lessons import load_lessons
    refused(lambda: load_lessons(folder), "file name")


@pytest.mark.parametrize("algorithms, words", [
    ("ring", "a list of algorithm names"), (2.5, "a list of algorithm names"),
    (["ring", "ring"], "'ring' is named twice")])
def test_a_sweeps_algorithms_come_as_a_list_of_names(algorithms, words):
    refused(lambda: sweep(8, [1024], None, algorithms), words)


def test_a_sweep_of_named_algorithms():
    assert sweep(8, [1024], None, ("ring", "tree")).points[0].estimates.keys() == {"ring", "tree"}
