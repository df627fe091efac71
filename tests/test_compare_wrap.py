"""compare's hint "(their source files: compare --json)" keeps its command on one line at every
width, and wrap's `keep` phrases stay whole without changing anything else."""

from __future__ import annotations

import pytest

from ringsim.cli import main
from ringsim.core.width import display_width, wrap

HINT = "(their source files: compare --json)."


def _compare(monkeypatch, capsys, columns: int | None) -> list[str]:
    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", str(columns))
    assert main(["compare", "--time"]) == 0
    return capsys.readouterr().out.splitlines()


@pytest.mark.parametrize("columns", [None, *range(60, 121)])
def test_the_command_in_compares_hint_is_never_cut(monkeypatch, capsys, columns):
    lines = _compare(monkeypatch, capsys, columns)
    holding = [line for line in lines if "compare --json)." in line]
    assert len(holding) == 1, columns
    assert display_width(holding[0]) <= (columns or 100)
    assert not any(line.endswith("compare") or line.startswith("--json") for line in lines)
    words = " ".join(lines[lines.index(next(x for x in lines if x.startswith("Not in NCCL"))):])
    assert words.endswith(HINT)


@pytest.mark.parametrize("width", range(12, 60))
def test_a_kept_phrase_stays_on_one_line_and_nothing_else_changes(width):
    text = "Not in NCCL: Recursive doubling, Halving-doubling " + HINT
    out = wrap(text, width, keep=("compare --json",))
    assert "compare --json)." in out.splitlines()[-1]
    assert out.split() == text.split()
    # A line is wider than the width only where one word, or the kept phrase, is.
    assert all(display_width(line) <= width or " " not in line.replace("compare --json", "")
               for line in out.splitlines())


def test_a_kept_phrase_in_a_line_that_fits_or_with_no_width_is_as_written(monkeypatch):
    monkeypatch.delenv("COLUMNS", raising=False)
    text = "see compare --json\n" + "x " * 60 + "compare --json"
    assert wrap(text, keep=("compare --json",)) == text  # no width: untouched
    out = wrap(text, 100, keep=("compare --json",))
    assert out.splitlines()[0] == "see compare --json"
    assert out.splitlines()[-1].endswith(" x compare --json")
    assert "\ue000" not in out
