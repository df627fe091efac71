"""The algorithms' options are one group of flags: every command that takes any of them takes
--master too, lists it with the others, checks it with the same one line, and uses it."""

from __future__ import annotations

import argparse
import dataclasses
import json

import pytest

from ringsim import RingsimError
from ringsim.algorithms import ALGORITHMS, OPTION_ORDER, algorithms_taking, make_plan, option_flag
from ringsim.algorithms.flags import OPTIONS_TITLE, add_option_arguments
from ringsim.algorithms.timing import estimate
from ringsim.cli import build_parser, main
from ringsim.cli._options_table import commands
from ringsim.cost.model import CostModel

OUT_OF_RANGE = "--master must be from 1 to 4, got 9"


def _groups(parser: argparse.ArgumentParser) -> dict[str, set[str]]:
    """Each argument group's title and the long flags in it."""
    return {g.title: {f for a in g._group_actions for f in a.option_strings if f.startswith("--")}
            for g in parser._action_groups}


# --nodes is also the time model's (M nodes of the topology), in commands with no algorithm option
OWN_FLAGS = {option_flag(o) for o in OPTION_ORDER} - {"--nodes"}


def _with_options() -> dict[str, argparse.ArgumentParser]:
    return {name: sub for name, sub in commands(build_parser()).items()
            if any(OWN_FLAGS & flags for flags in _groups(sub).values())}


def test_every_command_with_algorithm_options_lists_every_one_in_their_group():
    found = _with_options()
    assert {"walk", "tui", "serve", "export", "figure", "timeline", "compare", "train", "mpi",
            "overlap", "zero"} <= set(found)
    for name, sub in found.items():
        groups = _groups(sub)
        assert OWN_FLAGS <= groups[OPTIONS_TITLE], name
        elsewhere = [title for title, flags in groups.items()
                     if title != OPTIONS_TITLE and "--master" in flags]
        assert not elsewhere, (name, elsewhere)


def test_tui_help_lists_master_under_the_algorithm_options(capsys):
    assert main(["tui", "--help"]) == 0
    text = capsys.readouterr().out
    general, options = text.split(OPTIONS_TITLE + ":")
    assert "--master K" not in general.split("options:", 1)[1]  # past the usage line
    assert "  --master K            master: the master GPU" in options
    assert options.index("--master") < options.index("--chunks")


def _named_in_help() -> dict[str, list[str]]:
    """Each algorithm option of the flag group, and the algorithms its help names before ': '."""
    parser = argparse.ArgumentParser()
    add_option_arguments(parser)
    (group,) = [g for g in parser._action_groups if g.title == OPTIONS_TITLE]
    return {a.dest: a.help.split(": ", 1)[0].split(", ") for a in group._group_actions}


def test_each_flag_help_names_exactly_the_algorithms_that_take_it():
    named = _named_in_help()
    assert set(named) == set(OPTION_ORDER)
    for option, names in named.items():
        assert names == algorithms_taking(option), option


def test_a_new_algorithm_that_takes_chunks_is_named_in_the_help_by_itself(monkeypatch):
    monkeypatch.setitem(ALGORITHMS, "tree2", dataclasses.replace(ALGORITHMS["tree"], name="tree2"))
    assert _named_in_help()["chunks"][-1] == "tree2"


def _argv(command: str, tmp_path) -> list[str]:
    """The command with what it needs besides the scenario (an output path, a model)."""
    return {"export": ["export", "--svg", str(tmp_path / "frames")],
            "figure": ["figure", str(tmp_path / "x.svg")],
            "overlap": ["overlap", "--model", "resnet-50"],
            "mpi": ["mpi"]}.get(command, [command])


@pytest.mark.parametrize("command", ["walk", "tui", "serve", "export", "figure", "timeline",
                                     "compare", "train", "mpi", "overlap"])
def test_a_master_out_of_range_is_one_line_the_same_everywhere(command, tmp_path, capsys):
    assert main([*_argv(command, tmp_path), "-g", "4", "-a", "master", "--master", "9"]
                if command != "compare" else ["compare", "-g", "4", "--master", "9"]) == 2
    captured = capsys.readouterr()
    assert captured.err == f"ringsim {command}: error: {OUT_OF_RANGE}\n"
    assert captured.out == ""
    # From Python the same check names the keyword argument, not the flag
    with pytest.raises(RingsimError, match="^master must be from 1 to 4, got 9$"):
        make_plan("master", 4, master=9)


def _timeline(capsys, *argv) -> tuple[list[dict], dict]:
    assert main(["timeline", "-a", "master", "--json", *argv]) == 0
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    return records[:-1], records[-1]


def test_timeline_puts_the_master_where_master_says(capsys):
    transfers, _ = _timeline(capsys, "-g", "4", "-n", "8", "--master", "2")
    assert transfers and all(2 in (t["src"], t["dst"]) for t in transfers)
    assert {t["phase"] for t in transfers} == {"Reduce to GPU2", "Broadcast from GPU2"}
    # A slow GPU that is the master holds up every transfer; one that is not, only its own.
    slow = ("-g", "4", "-n", "100000", "--slow-gpu", "2:0.5")
    _, leaf = _timeline(capsys, *slow)
    _, hub = _timeline(capsys, *slow, "--master", "2")
    assert hub["seconds"] > leaf["seconds"]
    # 12 GPUs of DGX H100 nodes: GPU9 sits in the half node, so most GPUs reach it across nodes.
    machine = ("--topology", "dgx-h100", "-g", "12", "--size", "64MiB")
    _, first = _timeline(capsys, *machine)
    _, ninth = _timeline(capsys, *machine, "--master", "9")
    assert ninth["seconds"] > first["seconds"]


def test_timeline_takes_every_algorithm_option_it_lists(capsys):
    # --gpus-per-node and --tree-parents are used, not dropped on the way to the plan
    for option in (("--gpus-per-node", "2"), ("--tree-parents", "0,1,2,3,4,5,6,7")):
        totals = []
        for argv in ((), option):
            assert main(["timeline", "-a", "nccl-tree", "-g", "8", "-n", "1000", "--json", *argv]) == 0
            totals.append(json.loads(capsys.readouterr().out.splitlines()[-1])["seconds"])
        assert totals[0] != totals[1], option


def test_timeline_refuses_master_for_another_algorithm(capsys):
    assert main(["timeline", "-a", "ring", "--master", "2"]) == 2
    assert capsys.readouterr().err == ("ringsim timeline: error: --master only applies to the "
                                       "master algorithm\n")


def _rows(capsys, *argv) -> dict[str, dict]:
    assert main(["compare", "--json", *argv]) == 0
    return {r["algorithm"]: r for r in map(json.loads, capsys.readouterr().out.splitlines())
            if "algorithm" in r and not r.get("options", {}).get("ring_order")}


def test_compare_gives_master_to_the_master_row_only(capsys):
    assert main(["compare", "-g", "4", "--master", "2"]) == 0
    lines = capsys.readouterr().out.splitlines()
    (row,) = [line for line in lines if line.startswith("Single-GPU master")]
    assert row.startswith("Single-GPU master (GPU2) ") and "GPU2: 24 / 24" in row
    plain, given = _rows(capsys, "-g", "4"), _rows(capsys, "-g", "4", "--master", "2")
    assert given["master"]["options"] == {"master": 2} and given["master"]["busiest_gpu"] == 2
    assert {k: v for k, v in given.items() if k != "master"} == \
        {k: v for k, v in plain.items() if k != "master"}


def test_compare_times_the_master_where_master_puts_it(capsys):
    machine = ("--time", "--topology", "dgx-h100", "-g", "12", "--size", "64MiB")
    first, ninth = _rows(capsys, *machine)["master"], _rows(capsys, *machine, "--master", "9")["master"]
    model = CostModel.of("dgx-h100")
    elements = 64 * 2**20 // 4
    assert ninth["seconds"] == pytest.approx(estimate("master", 12, elements, model, master=9).seconds)
    assert ninth["seconds"] > first["seconds"]
    assert "GPU9's ports (the master)" in ninth["bottleneck"]
    # two whole nodes: the master costs the same in either, and the row names where it sits
    assert main(["compare", "--time", "--topology", "dgx-h100", "--nodes", "2", "--master", "9"]) == 0
    (row,) = [line for line in capsys.readouterr().out.splitlines()
              if line.startswith("Single-GPU master (GPU9)") and "ports" in line]
    assert "GPU9's ports (the master)" in row


@pytest.mark.parametrize("argv, message", [
    (["compare", "--numerics", "--master", "2", "--chunks", "2"],
     "--numerics measures every algorithm at its default options: give it without --master, --chunks"),
    (["compare", "--collective", "reduce-scatter", "--master", "2"],
     "the ring's reduce-scatter takes no options, got --master"),
    (["zero", "--params", "1B", "-g", "4", "--master", "2"],
     "--master only applies to the master algorithm"),
])
def test_where_no_algorithm_shown_takes_it_master_is_refused(argv, message, capsys):
    assert main(argv) == 2
    assert capsys.readouterr().err == f"ringsim {argv[0]}: error: {message}\n"


def test_mpi_passes_every_algorithm_option_to_its_ranks():
    from ringsim.cli.mpi import _rebuild
    mpi = commands(build_parser())["mpi"]
    args = mpi.parse_args(["-g", "4", "-a", "tree", "--chunks", "2"])
    forwarded = _rebuild(args)
    assert forwarded[forwarded.index("--chunks") + 1] == "2"
    args = mpi.parse_args(["-g", "4", "-a", "master", "--master", "3"])
    forwarded = _rebuild(args)
    assert forwarded[forwarded.index("--master") + 1] == "3"
