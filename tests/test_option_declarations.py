"""What the specs declare about their options (a GPU option, the GPU every transfer passes
through) is what the scenario, the MPI runner, the TUI and the lessons read: none of them
names an algorithm's option itself."""

from __future__ import annotations

import argparse
import ast
import dataclasses
from pathlib import Path

import pytest

from ringsim import RingsimError
from ringsim.core.arguments import as_flag, naming
from ringsim.algorithms import (ALGORITHMS, OPTION_ORDER, algorithms_taking, default_options, make_plan,
                                option_names, plan_hub, whole_number_options)
from ringsim.lessons import load_lessons
from ringsim.sim.scenario import Scenario

ROOT = Path(__file__).resolve().parents[1] / "ringsim"


@pytest.mark.parametrize("name", list(ALGORITHMS))
def test_gpu_options_are_options_and_hold_exactly_on_gpus_that_exist(name):
    spec = ALGORITHMS[name]
    assert set(spec.gpu_options) <= set(option_names(name))
    for option in option_names(name):
        for gpus in (1, 4, 8):
            for value in (0, 1, 4, 5, 8, 9):
                assert spec.holds_on(gpus, option, value) == (option in spec.gpu_options
                                                              and 1 <= value <= gpus)


@pytest.mark.parametrize("name", list(ALGORITHMS))
def test_a_new_g_keeps_what_the_spec_says_still_holds(name):
    spec = ALGORITHMS[name]
    for option in spec.gpu_options:
        for value, gpus in ((3, 4), (3, 2), (1, 1)):
            scenario = Scenario(name, 8, 8, {option: value})
            kept = scenario.with_gpus(gpus).option(option, default_options(name)[option])
            assert kept == (value if value <= gpus else default_options(name)[option])


def test_a_new_g_asks_the_spec_not_the_option_name(monkeypatch):
    # A tree whose spec says its chunks hold on any G that has that many GPUs keeps them,
    # the way the master keeps its GPU: the scenario reads the declaration, whatever it names.
    tree = dataclasses.replace(ALGORITHMS["tree"], gpu_options=("chunks",))
    monkeypatch.setitem(ALGORITHMS, "tree", tree)
    assert Scenario("tree", 8, 8, {"chunks": 3}).with_gpus(4).option("chunks") == 3
    assert Scenario("tree", 8, 8, {"chunks": 5}).with_gpus(4).option("chunks") is None
    assert Scenario("ring", 8, 8, {"channels": 2}).with_gpus(4).option("channels") is None


@pytest.mark.parametrize("name", list(ALGORITHMS))
def test_the_declared_hub_is_the_gpu_on_every_transfer(name):
    # At G = 8 no tree or pairing puts one GPU on every transfer: only a star does, and its
    # spec must say so for the TUI to draw that GPU apart.
    choices = [{}] + [{option: k} for option in ALGORITHMS[name].gpu_options for k in (1, 5, 8)]
    for options in choices:
        plan = make_plan(name, 8, **options)
        transfers = [t for step in plan.steps for t in step.transfers()]
        on_every = [g for g in range(8) if all(g in (t.src, t.dst) for t in transfers)]
        assert [plan_hub(plan)] == (on_every or [None])


def test_whole_number_options_are_those_typed_int():
    assert set(whole_number_options()) == {"master", "chunks", "channels", "nodes", "gpus_per_node"}


def test_option_order_is_every_option_the_algorithms_take():
    assert set(OPTION_ORDER) == {o for name in ALGORITHMS for o in option_names(name)}


def _lesson(tmp_path, front: str, body: str = "<!-- stop 1 -->\n{{G}}\n"):
    path = tmp_path / "01-lesson.md"
    path.write_text(f"---\ntitle: T\n{front}gpus: 4\nelements: 8\nstops: 1\n---\n{body}",
                    encoding="utf-8")
    return path, load_lessons(tmp_path)


@pytest.mark.parametrize("option", OPTION_ORDER)
def test_front_matter_refuses_an_option_the_algorithm_does_not_take(tmp_path, option):
    # Whatever the option, in one line naming the key and every algorithm that takes it.
    others = [n for n in ALGORITHMS if option not in option_names(n)]
    value = "1" if option in whole_number_options() else "1,2,3,4"
    path = tmp_path / "01-lesson.md"
    with pytest.raises(RingsimError) as info:
        _lesson(tmp_path, f"algorithm: {others[0]}\n{option}: {value}\n")
    takes = [f"'algorithm: {n}'" for n in algorithms_taking(option)]
    said = " or ".join(filter(None, (", ".join(takes[:-1]), takes[-1])))
    assert str(info.value) == f"{path}:4: '{option}:' applies only to {said}"


def test_front_matter_takes_another_algorithms_option_as_it_takes_the_master(tmp_path):
    _, lessons = _lesson(tmp_path, "algorithm: tree\nchunks: 2\n")
    assert lessons[0].scenario == Scenario("tree", 4, 8, {"chunks": 2})
    _, lessons = _lesson(tmp_path, "algorithm: ring\nring_order: 1,3,2,4\n")
    assert lessons[0].scenario.option("ring_order") == "1,3,2,4"
    path = tmp_path / "01-lesson.md"
    with pytest.raises(RingsimError, match=f"^{path}:4: chunks must be a whole number, got 'two'$"):
        _lesson(tmp_path, "algorithm: tree\nchunks: two\n")


def test_placeholders_take_the_options_of_the_algorithm_they_name(tmp_path):
    from ringsim.algorithms import closed_form
    steps = int(closed_form("tree", 8, 8, chunks=4).steps.value)
    assert steps != closed_form("tree", 8, 8).steps.value
    body = "<!-- stop 1 -->\n{{formula.steps.value algorithm=tree gpus=8 chunks=4}}\n"
    _, lessons = _lesson(tmp_path, "", body)
    assert f"{steps:,}" in " ".join(s.text for s in lessons[0].sections())
    path = tmp_path / "01-lesson.md"
    with pytest.raises(RingsimError, match="chunks= only applies to algorithm=tree, algorithm=double-tree, "
                                           "algorithm=nccl-tree or algorithm=nvls$"):
        _lesson(tmp_path, "", "<!-- stop 1 -->\n{{G chunks=2}}\n")
    with pytest.raises(RingsimError, match=f"^{path}:8: .*master= only applies to algorithm=master$"):
        _lesson(tmp_path, "", "<!-- stop 1 -->\n{{G master=2}}\n")


def test_the_mpi_runner_checks_the_declared_gpu_options_against_its_ranks():
    from ringsim.mpi.options import add_run_arguments, check_run
    from ringsim.mpi.story import options_of
    parser = argparse.ArgumentParser()
    add_run_arguments(parser)
    args = parser.parse_args(["-a", "master", "--master", "5"])
    assert options_of(args) == {"master": 5}
    with naming(as_flag), pytest.raises(RingsimError, match="^--master must be from 1 to 4, got 5$"):
        check_run(args, 4)  # as the runner calls it: its errors name its flags
    check_run(parser.parse_args(["-a", "master", "--master", "4"]), 4)


# A GPU panel's master= says how to draw it (heavy border, '· master'): the grid feeds it the
# GPU the spec declares every transfer passes through, not an option.
DRAWING_CALLS = {"title_wordings", "show"}


def _keys(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, key) for each constant used as an option's key: {"k": …}, x["k"], x.get("k"),
    x.option("k"), "k" in x, f(k=…) and args.k."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            found += [(node.lineno, k.value) for k in node.keys if isinstance(k, ast.Constant)]
        elif isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
            found.append((node.lineno, node.slice.value))
        elif isinstance(node, ast.Call):
            if isinstance(node.func, ast.Attribute) and node.func.attr in ("get", "option") and \
                    node.args and isinstance(node.args[0], ast.Constant):
                found.append((node.lineno, node.args[0].value))
            called = getattr(node.func, "attr", getattr(node.func, "id", ""))
            if called not in DRAWING_CALLS:
                found += [(node.lineno, k.arg) for k in node.keywords if k.arg]
        elif isinstance(node, ast.Compare) and isinstance(node.left, ast.Constant) and \
                isinstance(node.ops[0], (ast.In, ast.NotIn)):
            found.append((node.lineno, node.left.value))
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and \
                node.value.id == "args":
            found.append((node.lineno, node.attr))
    return found


# ringsim.allreduce(arrays, "master", master=2): the public signature names it since its start.
PUBLIC_SIGNATURES = {"api.py"}


def test_no_code_outside_the_algorithms_uses_an_option_named_after_its_algorithm():
    # Such an option (the master) is the easiest to special-case: the scenario, the runners,
    # the TUI and the lessons read what the specs declare instead.
    named = {o for o in OPTION_ORDER if algorithms_taking(o) == [o]}
    assert named, "no option is named after its algorithm: pick another to watch"
    found = []
    for path in ROOT.rglob("*.py"):
        where = path.relative_to(ROOT)
        if where.parts[0] == "algorithms" or str(where) in PUBLIC_SIGNATURES:
            continue
        found += [f"{where}:{line} uses {key!r}" for line, key in _keys(ast.parse(path.read_text("utf-8")))
                  if key in named]
    assert not found, "; ".join(found)


def test_the_key_check_catches_what_it_should():
    code = ('a = {"master": 1}; b = o["master"]; c = o.get("master"); d = s.option("master")\n'
            'e = "master" in o; make_plan("m", 4, master=2); f = args.master')
    assert [key for _, key in _keys(ast.parse(code))] .count("master") == 7
