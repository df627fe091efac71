"""Output in a narrow window (ringsim/core/width.py, cli/_help.py): at COLUMNS=40 and 30 every
line of compare, of the other commands' usual runs and of every --help fits; a table too wide
for its keys and one column prints each row as a record; usage lines, section headings, a
plot's legend and a lesson's headings wrap."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ringsim.cli import main
from ringsim.cli._options_table import commands as subcommands
from ringsim.cli._plot import legend_entry, legend_rows
from ringsim.core.width import display_width, table
from ringsim.lessons.text import plain

ROOT = Path(__file__).resolve().parents[1]
COMPARE = ["compare --gpus 4", "compare --gpus 16 --time",
           "compare --gpus 16 --time --topology dgx-h100 --nodes 2"]
# Commands that fit 40 and 30 columns but for no word wider than the line.
OTHERS = ["sweep -g 8 --topology dgx-h100", "predict -g 8", "timeline -g 8", "walk -g 4",
          "zero --params 7B", "overlap -g 8", "compare --numerics -g 8 -n 64", "lesson"]


def printed(monkeypatch, capsys, command: str, columns: int) -> list[str]:
    """The lines `ringsim COMMAND` prints with COLUMNS set (capsys is no terminal)."""
    monkeypatch.setenv("COLUMNS", str(columns))
    assert main(command.split()) == 0
    return capsys.readouterr().out.splitlines()


@pytest.mark.parametrize("columns", [40, 30])
@pytest.mark.parametrize("command", COMPARE)
def test_every_line_of_compare_fits(monkeypatch, capsys, command, columns):
    lines = printed(monkeypatch, capsys, command, columns)
    assert [line for line in lines if display_width(line) > columns] == []
    # Each algorithm starts its record, its values named beneath it.
    assert "Ring all-reduce" in lines
    assert "  steps: 6" in lines or "  steps: 30" in lines


@pytest.mark.parametrize("columns", [40, 30])
@pytest.mark.parametrize("command", OTHERS)
def test_every_line_of_the_other_commands_fits(monkeypatch, capsys, command, columns):
    lines = printed(monkeypatch, capsys, command, columns)
    assert [line for line in lines if display_width(line) > columns] == []


@pytest.mark.parametrize("command", ["lesson", "compare --numerics -g 8 -n 64"])
def test_records_in_ascii_fit_too(command):
    # '—' prints as '--' and '≠' as '!=' where the stream takes only ASCII: a record is
    # filled to what will be shown.
    env = {**os.environ, "COLUMNS": "40", "PYTHONIOENCODING": "ascii", "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "ringsim", *command.split()],
                          capture_output=True, env=env, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.decode("ascii").splitlines()
    assert any("--" in line or "!=" in line for line in lines)
    assert [line for line in lines if len(line) > 40] == []


def test_compare_keeps_its_columns_where_they_fit(monkeypatch, capsys):
    lines = printed(monkeypatch, capsys, "compare --gpus 4", 60)
    assert any(line.startswith("algorithm ") and "steps" in line for line in lines)
    assert not any(line.startswith("  steps:") for line in lines)


@pytest.mark.parametrize("columns", [40, 30])
@pytest.mark.parametrize("command", ["", *sorted(subcommands())])
def test_every_help_fits(monkeypatch, capsys, command, columns):
    lines = printed(monkeypatch, capsys, f"{command} --help".strip(), columns)
    assert [line for line in lines if display_width(line) > columns] == []


def test_a_narrow_usage_goes_under_usage_with_its_options_whole(monkeypatch, capsys):
    lines = printed(monkeypatch, capsys, "overlap --help", 30)
    assert lines[0] == "usage: ringsim overlap [-h]"
    usage = " ".join(lines[:lines.index("")])
    assert "[--bandwidth [LEVEL=]B]" in usage and "[--model MODEL | --layers SPEC]" in " ".join(usage.split())
    assert "  -a, --algorithm ALGORITHM" in lines  # the value named once where twice is too wide
    assert "algorithm options (each" in lines  # a long section heading wraps


ROWS = [("algorithm", "elements moved", "busiest GPU sent / received", ""),
        ("Halving-doubling (Rabenseifner)", "48", "GPU1: 12 / 12", "◀"),
        ("Ring", "96", "GPU1: 24 / 24", "")]


def test_a_table_too_narrow_for_its_keys_and_a_column_prints_records():
    assert table(ROWS, left=(0,), width=30) == [
        "Halving-doubling",
        "(Rabenseifner)",
        "  elements moved: 48",
        "  busiest GPU sent / received:",
        "    GPU1: 12 / 12 ◀",  # the mark stays with its value
        "",
        "Ring",
        "  elements moved: 96",
        "  busiest GPU sent / received:",
        "    GPU1: 24 / 24",
    ]
    wide = table(ROWS, left=(0,), width=80)  # where a block fits, columns as before
    assert wide[0] == "algorithm                        elements moved  busiest GPU sent / received"


def test_records_of_several_keys_wrap_under_the_last_and_a_free_column_under_it():
    listing = [(" 1", "A long title of many words", "ring, G=4, 5 parts"), ("12", "Short", "")]
    assert table(listing, head=0, keys=2, left=(1,), free=True, rule="", width=24) == [
        " 1  A long title of many",
        "    words",
        "      ring, G=4, 5 parts",
        "",
        "12  Short",  # an empty cell gives no line
    ]


def test_a_legend_entry_too_wide_for_its_row_wraps_under_its_name():
    name = "Halving-doubling (Rabenseifner)"
    legend = [legend_entry(1, name, False), legend_entry(2, "ring", False)]
    assert legend_rows(legend, 30) == ["  + Halving-doubling", "    (Rabenseifner)", "  x ring"]
    assert legend_rows(legend, 40) == ["  + Halving-doubling (Rabenseifner)", "  x ring"]
    coloured = legend_rows([legend_entry(1, name, True)], 30)
    assert coloured == ["  \x1b[38;5;9m+\x1b[0m Halving-doubling", "    (Rabenseifner)"]


def test_a_lesson_heading_wider_than_the_line_wraps_with_its_rule():
    assert plain("# In-network reduction: the switch adds\n\nText.", 30).splitlines()[:3] == [
        "In-network reduction: the", "switch adds", "========================="]


def test_every_lesson_fits_40_columns_its_drawings_included(monkeypatch, capsys):
    from ringsim.lessons import load_lessons
    for lesson in load_lessons():
        lines = printed(monkeypatch, capsys, f"lesson {lesson.number} --no-pause", 40)
        assert [line for line in lines if display_width(line) > 40] == [], lesson.number
        if lesson.number == 8:  # the drawings are drawn for 40 columns: none is wrapped or cut
            assert "           → [GPU2: layers 4-6]" in lines
            assert "     backward: ← their gradients" in lines
            assert "     GPU2        m1  m2  m3  m4" in lines
        if lesson.number == 9:  # a table of costs, laid out again as two blocks of columns
            assert "    ring                   510  10.5 ms" in lines
            assert "    ring                   75.76 GB/s" in lines
        if lesson.number == 14:  # a command to type, folded so that it still pastes as one
            assert "  ringsim timeline -g 8 -n 16777216 \\" in lines
            # The Gantt strip: GPU1 sends throughout, GPU2 idles while GPU1's slow sends end.
            gantt = [line for line in lines if line.lstrip().startswith("GPU") and "█" in line]
            assert len(gantt) == 4 and set(gantt[0].split()[1]) == {"█"} and "·" in gantt[1]
        if lesson.number == 19:  # the cheat-sheet, laid out again as a record per row
            ring = lines.index("  ring")
            assert lines[ring + 1:ring + 5] == ["    in all: 2·(G−1)·N", "    busiest GPU, each way:",
                                                "      2·(G−1)·N/G (< 2·N)", "    steps: 2·(G−1)"]


def test_a_wide_table_in_a_lesson_block_is_laid_out_again_as_blocks_or_records():
    from ringsim.lessons.narrow import fit_block
    block = ["  schedule                   healthy      faulty  stretch",
             "  ring                       1.24 ms     2.49 ms  2×",
             "  double binary tree         2.52 ms     2.68 ms  1.06×"]
    assert fit_block(block, 60) == block  # it fits: as written
    # Narrower: blocks of whole columns, the names in each, as every command's tables do.
    assert fit_block(block, 30)[:4] == ["  schedule            healthy", "  ring                1.24 ms",
                                        "  double binary tree  2.52 ms", ""]
    assert fit_block(block, 22) == ["  ring", "    healthy: 1.24 ms", "    faulty: 2.49 ms",
                                    "    stretch: 2×", "", "  double binary tree",
                                    "    healthy: 2.52 ms", "    faulty: 2.68 ms", "    stretch: 1.06×"]
    assert fit_block(["  " + "█" * 50], 30) is None  # a drawing cannot be laid out again
