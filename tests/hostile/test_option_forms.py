"""An option given `--` as its attached value (`--gpus=--`, `-g--`): argparse hands the
command an empty list instead of calling the option's check, so each is refused first."""

from __future__ import annotations

import pytest

from .conftest import bounded, refused


@pytest.mark.parametrize("args", [
    ("walk", "--gpus=--"), ("walk", "-g--"), ("compare", "-g=--"), ("compare", "-g--"),
    ("walk", "-a=--"), ("timeline", "--slow-link=--"), ("predict", "--sizes=--"),
    ("diagnose", "--topology=--", "x.txt")])
def test_double_dash_is_no_value(args):
    line = refused(bounded(*args))
    assert "'--' is not a value" in line, line


def test_double_dash_still_ends_the_options():
    run = bounded("lesson", "--", "5", "--no-pause")
    assert run.returncode == 2 and "unrecognized arguments: --no-pause" in run.stderr
    run = bounded("lesson", "--no-pause", "--", "1")
    assert run.returncode == 0 and run.stdout.startswith("Lesson 1")


@pytest.mark.parametrize("args", [("walk", "--="), ("walk", "--=x"), ("compare", "-g", "8", "--=3")])
def test_an_option_needs_a_name(args):
    line = refused(bounded(*args))
    assert line.startswith(f"ringsim {args[0]}: error: ") and "no option's name" in line, line


def test_double_dash_before_the_command():
    run = bounded("--", "compare", "-g", "8")
    assert run.returncode == 0, run.stderr
    assert run.stdout == bounded("compare", "-g", "8").stdout
