"""A value thousands of characters long, given to any option of any command or to the API's
names, comes back cut: the error stays one readable line whatever was typed."""

from __future__ import annotations

import argparse

import numpy as np
import pytest

import ringsim
from ringsim.cli import build_parser, main
from ringsim.cli._options_table import commands
from ringsim.core.errors import RingsimError

LONG = "x" * 3000
MOST = 400  # characters in the error line


def _takes_a_value() -> list[tuple[str, list[str]]]:
    """Each command with each of its options that takes a value (and its positionals)."""
    found = []
    for name, parser in commands(build_parser()).items():
        for action in parser._actions:
            if isinstance(action, (argparse._HelpAction, argparse._VersionAction)) \
                    or action.nargs == 0:
                continue
            found.append((name, [action.option_strings[-1]] if action.option_strings else []))
    return found


def test_every_option_echoes_a_long_value_cut(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # nothing a command might write lands in the checkout
    options = _takes_a_value()
    assert len(options) > 150
    for name, flag in options:
        status = main([name, *flag, LONG])
        err = capsys.readouterr().err
        assert status == 2, (name, flag, status, err[:300])
        assert err.count("\n") == 1 and len(err) < MOST, (name, flag, len(err), err[:300])


@pytest.mark.parametrize("call", [
    lambda: ringsim.allreduce([np.ones(2)] * 2, LONG),
    lambda: ringsim.allreduce([np.ones(2)] * 2, backend=LONG),
    lambda: ringsim.reduce_scatter([np.ones(2)] * 2, LONG),
    lambda: ringsim.all_gather([np.ones(2)] * 2, LONG),
    lambda: ringsim.make_plan(LONG, 4),
    lambda: ringsim.closed_form(LONG, 4, 8),
    lambda: ringsim.Simulation.create(LONG, 4, 8),
], ids=["allreduce", "backend", "reduce_scatter", "all_gather", "make_plan", "closed_form",
        "Simulation"])
def test_the_api_echoes_a_long_name_cut(call):
    with pytest.raises(RingsimError) as caught:
        call()
    message = str(caught.value)
    assert len(message) < MOST and "xxxx" in message, message[:MOST]
