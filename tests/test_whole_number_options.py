"""Every option that takes a whole number reads it as --gpus does: digits 0-9 (1_000) or 1e3,
never another script's digits, and with the same one line when it cannot."""

from __future__ import annotations

import pytest

from ringsim.cli import build_parser, main
from ringsim.cli._options_table import commands


def test_no_option_reads_its_number_with_plain_int():
    # int() takes an Arabic-Indic three for 3 and refuses 1e3, unlike every count option
    plain = [(name, action.option_strings or action.dest) for name, parser in
             commands(build_parser()).items() for action in parser._actions if action.type is int]
    assert plain == []


@pytest.mark.parametrize("argv", [
    ["figure", "x.svg", "--step", "\u0663"],
    ["lesson", "\u0661", "--no-pause"],
    ["mpi", "--kill-rank", "\u0661"],
    ["mpi", "--kill-rank", "1", "--at-step", "\u0662"],
    ["zero", "--params", "1e6", "--stage", "\u0661"],
    ["train", "--zero", "\u0661"],
    ["serve", "--port", "\u0668\u0660\u0660\u0660"],
    ["tui", "--lesson", "\u0661"],
])
def test_another_scripts_digits_are_refused_as_gpus_refuses_them(capsys, tmp_path, monkeypatch, argv):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "must be written with the digits 0-9" in err, err
    assert list(tmp_path.iterdir()) == []


def test_the_forms_counts_take_are_read(capsys, tmp_path):
    out = tmp_path / "x.svg"
    assert main(["figure", str(out), "--step", "1e0"]) == 0
    assert out.exists()
    assert main(["figure", str(out), "--step", "99"]) == 2
    assert "--step must be from 0 (the start) to 6, got 99" in capsys.readouterr().err
    assert main(["lesson", "1_0", "--no-pause"]) == 0
    assert capsys.readouterr().out.startswith("Lesson 10 ")
