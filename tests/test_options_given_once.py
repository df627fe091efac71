"""One rule for every command: an option that holds one value or one switch is refused when
given twice (one line naming it, exit 2), never the last one kept without a word; the options
that gather a list (--alpha, --slow-gpu, ...) may be given again."""

from __future__ import annotations

import argparse
import contextlib
import io

import pytest

from ringsim.cli import build_parser, main
from ringsim.cli._options_table import commands

# Values tried in turn until one is accepted on its own: each option is then given it twice.
CANDIDATES = ("4", "2", "1", "8", "flat", "1us", "1GB/s", "1KiB", "0.5", "x.svg", "ring", "2.18.3",
              "80GB", "100x30")
# Options that gather a list, so a second one adds to the first.
GATHERS = (argparse._AppendAction, argparse._AppendConstAction, argparse._CountAction)


def _accepts(command: str, flag: str, value: str) -> bool:
    """Whether `ringsim COMMAND FLAG VALUE` parses with no word about FLAG (a command may
    still want another option); the command itself is not run."""
    said = io.StringIO()
    with contextlib.redirect_stderr(said), contextlib.redirect_stdout(io.StringIO()):
        try:
            build_parser().parse_known_args([command, flag, value])
        except SystemExit:
            return flag not in said.getvalue()
    return True


def _once_given(command: str, action: argparse.Action) -> list[str] | None:
    """The option with a value it accepts (none for a switch), or None where none found."""
    flag = action.option_strings[-1]
    if action.nargs == 0:
        return [flag]
    choices = [str(c) for c in action.choices or ()]
    for value in [*choices[:1], *CANDIDATES]:
        if _accepts(command, flag, value):
            return [flag, value]
    return None


def _options() -> list[tuple[str, argparse.Action]]:
    """Every option of every command that holds one value or switch."""
    return [(name, action) for name, parser in commands(build_parser()).items()
            for action in parser._actions
            if action.option_strings and not isinstance(action, GATHERS)
            and not isinstance(action, (argparse._HelpAction, argparse._VersionAction))]


def test_every_command_has_options_to_check():
    found = {name for name, _ in _options()}
    assert found == set(commands(build_parser())), set(commands(build_parser())) - found
    assert len(_options()) > 200


def test_an_option_given_twice_is_refused_naming_it_in_every_command(capsys):
    unchecked = []
    for name, action in _options():
        once = _once_given(name, action)
        if once is None:
            unchecked.append((name, action.option_strings))
            continue
        assert main([name, *once, *once]) == 2, (name, once)
        err = capsys.readouterr().err
        assert err == f"ringsim {name}: error: {once[0]} is given twice: give it once\n", err
    assert unchecked == [], unchecked


@pytest.mark.parametrize("argv, err", [
    (["compare", "--time", "--time"], "--time is given twice"),
    (["predict", "--json", "--json"], "--json is given twice"),
    (["compare", "--gpus", "4", "--gpus", "8"], "--gpus is given twice"),
    (["compare", "-g", "4", "--gpus", "4"], "-g and --gpus are the same option, given twice"),
    (["walk", "--dtype", "float32", "--dtype", "float16"], "--dtype is given twice"),
    (["predict", "--no-nvls", "--no-nvls"], "--no-nvls is given twice"),
])
def test_the_common_cases(capsys, argv, err):
    assert main(argv) == 2
    assert capsys.readouterr().err == f"ringsim {argv[0]}: error: {err}: give it once\n"


def test_options_that_gather_a_list_may_be_given_again(capsys):
    assert main(["compare", "--time", "--topology", "dgx-h100", "--alpha", "inside=1us",
                 "--alpha", "across=3us", "--gpus", "16"]) == 0
    assert "error" not in capsys.readouterr().err
    assert main(["timeline", "-g", "4", "-n", "64", "--slow-gpu", "2:0.5",
                 "--slow-gpu", "3:0.5"]) == 0
