"""Every front end titles a run as walk does: the algorithm's title, then its options in the
words its spec gives them ('Single-GPU master (GPU2)', 'Binary tree (2 chunks)')."""

from __future__ import annotations

import pytest

from ringsim.algorithms import make_plan
from ringsim.cli import main
from ringsim.cost.model import CostModel
from ringsim.timeline import simulate

CASES = [("master", ("--master", "2")), ("tree", ("--chunks", "2")), ("ring", ("--channels", "2")),
         ("nccl-tree", ("--chunks", "2")), ("nccl-tree", ("--tree-parents", "0,1,2,3")),
         ("ring", ())]


def _lines(capsys, *argv: str) -> list[str]:
    assert main(list(argv)) == 0
    return capsys.readouterr().out.splitlines()


def _walk_title(capsys, name: str, options: tuple[str, ...]) -> str:
    """What walk calls the run: its first line up to the G."""
    return _lines(capsys, "walk", "-g", "4", "-a", name, *options)[0].split(" · ")[0]


@pytest.mark.parametrize("name, options", CASES)
def test_timeline_titles_a_run_as_walk_does(capsys, name, options):
    walk = _walk_title(capsys, name, options)
    first = _lines(capsys, "timeline", "-g", "4", "-n", "64", "-a", name, *options)[0]
    assert first.startswith(f"Timeline of {walk} · 4 GPUs · ")


@pytest.mark.parametrize("name, options", CASES)
def test_train_titles_its_sync_as_walk_does(capsys, name, options):
    walk = _walk_title(capsys, name, options)
    first = _lines(capsys, "train", "-g", "4", "-a", name, "--epochs", "1", *options)[0]
    assert first == f"Data-parallel logistic regression · 4 GPUs · {walk}"


@pytest.mark.parametrize("name, options", [case for case in CASES if case[1]])
def test_compare_labels_the_row_of_the_options_given_as_walk_does(capsys, name, options):
    walk = _walk_title(capsys, name, options)
    assert any(line.startswith(walk + "  ") for line in _lines(capsys, "compare", "-g", "4", *options))


def test_the_master_is_named_by_its_gpu_in_every_title(capsys):
    assert _lines(capsys, "timeline", "-g", "4", "-a", "master", "--master", "2")[0] \
        .startswith("Timeline of Single-GPU master (GPU2) · 4 GPUs")
    assert _lines(capsys, "timeline", "-g", "4", "-a", "tree", "--chunks", "2")[0] \
        .startswith("Timeline of Binary tree (2 chunks) · 4 GPUs")
    rows = _lines(capsys, "compare", "-g", "12", "--master", "9")
    assert any(line.startswith("Single-GPU master (GPU9)  ") for line in rows)
    assert not any("master 9" in line for line in rows)


def test_a_timeline_object_and_its_chart_name_the_options():
    timeline = simulate(make_plan("master", 4, master=2), 64, CostModel.of("flat"))
    assert repr(timeline).startswith("<Timeline of master (GPU2) · 4 GPUs · ")
    pytest.importorskip("drawsvg")
    from ringsim.figures.timeline_chart import timeline_svg
    assert ">master (GPU2) · 4 GPUs · 64 elements: " in timeline_svg(timeline)


def test_a_count_comes_before_its_noun_and_brackets_are_never_doubled():
    from ringsim.algorithms import option_label, with_options
    assert option_label("tree", 8, {"chunks": 1}) == ""  # the default is not named
    assert option_label("tree", 8, {"chunks": 4}) == "4 chunks"
    assert option_label("hierarchical", 8, {"nodes": 2}) == "2 nodes"
    assert option_label("ring", 8, {"channels": 2}) == "2 channels"
    assert with_options("Binary tree", "4 chunks") == "Binary tree (4 chunks)"
    assert with_options("NVLS (NVLink SHARP)", "3 chunks") == "NVLS (NVLink SHARP; 3 chunks)"
    assert with_options("Halving-doubling (Rabenseifner)", "") == "Halving-doubling (Rabenseifner)"
