"""Output that fits the terminal (ringsim/core/width.py): at COLUMNS=80 every command's lines fit
but for a word that has no space to break at (an address), tables come in column blocks with
nothing lost and nothing changed, and with no width (a pipe, no COLUMNS) every line is as it
was recorded in tests/golden/ before there was a width at all."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from golden.corpus import OUTPUTS, commands, output_name
from ringsim.algorithms import ALGORITHMS
from ringsim.cli import main
from ringsim.cli._options_table import commands as subcommands
from ringsim.core import width
from ringsim.core.width import display_width, output_width, table, wrap

ROOT = Path(__file__).resolve().parents[1]
OUT = "tests/data/nccl_outputs/"
# Every command whose text was wider than 80 columns, and a few more (the paste of a whole
# run, its log, the NCCL model's tables, the lessons).
COMMANDS = [
    "sweep -g 8 --topology dgx-h100",
    "sweep -g 8 --topology dgx-h100 --no-plot",
    "sweep --no-plot --topology ethernet-100g -g 16 --sizes 1KiB..1GiB",
    "compare -g 16",
    "compare --time -g 16 --topology dgx-h100",
    "compare --time --topology dgx-h100 -g 1000000 --size 1GiB",
    "compare --numerics -g 8 -n 4096",
    "compare --collective all-gather --time -g 8",
    "predict -g 16 --topology dgx-h100",
    "predict -g 16 --topology dgx-h100 --published",
    "predict --tuning -g 16 --topology dgx-h100",
    f"diagnose {OUT}a3mega_h100_2node_all_reduce.txt --no-plot",
    f"diagnose {OUT}a3mega_h100_2node_all_reduce.txt",
    f"diagnose {OUT}nccltests293_a100pcie_2node_nps1_gdr_across_sockets.txt --no-plot "
    "--topology tests/data/topologies/a100pcie-1hdr.toml",
    f"diagnose {OUT}nccltests252_h100_2node_after_acs_fix_ring.txt --no-plot --gpus 8 --nodes 2 "
    "--topology tests/data/topologies/h100-4gpu-4x200g.toml --algo Ring",
    f"diagnose {OUT}nccltests252_h100_2node_after_acs_fix_ring.txt --gpus 8 --nodes 2 "
    "--topology flat --no-plot --nccl-log tests/data/nccl_logs/deepspeed4715_2node_channel_hops_excerpt.log",
    "timeline -g 8",
    "timeline -a ring -g 8 --delay 2:10us --slow-link 1-2:0.25",
    "overlap -g 8",
    "walk -g 4",
    "walk --time --topology dgx-h100 -g 16 -a ring",
    "walk --values -g 4 -n 16 --dtype float32",
    "walk --nccl-log tests/data/nccl_logs/eks_efa_t4_2node_full.log",
    "zero --params 7B",
    "train -e 2 --zero 2",
    "lesson",
    "lesson 8 --no-pause",
]
PLOTS = {"sweep -g 8 --topology dgx-h100", f"diagnose {OUT}a3mega_h100_2node_all_reduce.txt"}
# The published runs' descriptions break at a hyphen (oci-/hpc) where their width puts one.
HYPHENS = {"predict -g 16 --topology dgx-h100 --published"}


def printed(monkeypatch, capsys, command: str, columns: str | None) -> str:
    """What `ringsim COMMAND` prints into a pipe (capsys is no terminal), with COLUMNS set or not."""
    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    monkeypatch.chdir(ROOT)
    status = main(command.split())
    out = capsys.readouterr()
    assert status == 0, out.err
    return out.out


def overflowing(text: str, limit: int) -> list[str]:
    """The lines wider than `limit` that are not so for a word wider than the line leaves it."""
    out = []
    for line in text.splitlines():
        indent = len(line) - len(line.lstrip(" "))
        if display_width(line) > limit and \
                max(display_width(w) for w in line.split()) <= limit - indent:
            out.append(line)
    return out


def words(text: str) -> set[str]:
    """The words of the output, a table's rules left out (their length follows the block)."""
    return {w for w in text.split() if set(w) != {"─"}}


@pytest.mark.parametrize("command", COMMANDS)
def test_every_line_fits_80_columns(monkeypatch, capsys, command):
    out = printed(monkeypatch, capsys, command, "80")
    assert overflowing(out, 80) == []
    # a value keeps its unit on its line
    assert not re.search(r"\d\n *(?:[nµm]?s|[kMGT]?B/s|[KMG]iB|[kMGT]?B)\b", out)


@pytest.mark.parametrize("command", [c for c in COMMANDS if c not in PLOTS | HYPHENS])
def test_wrapping_loses_and_changes_nothing(monkeypatch, capsys, command):
    whole = printed(monkeypatch, capsys, command, None)
    fitted = printed(monkeypatch, capsys, command, "80")
    assert words(fitted) == words(whole)
    assert fitted != whole or max(map(display_width, whole.splitlines())) <= 80


def test_every_algorithm_column_of_the_sweep_is_in_a_block(monkeypatch, capsys):
    out = printed(monkeypatch, capsys, "sweep -g 8 --topology dgx-h100 --no-plot", "80")
    blocks = [b for b in out.split("\n\n") if "──" in b]
    assert len(blocks) > 2  # the two tables, each cut in several
    heads = [next((x for x in b.splitlines() if x.lstrip().startswith("size ")), "") for b in blocks]
    assert all(heads)  # the key column in every block
    headers = " ".join(heads)
    for name in ALGORITHMS:
        assert re.search(rf"(?<![\w-]){re.escape(name)}\*?(?![\w-])", headers), name
    for rows in ("1KiB", "8GiB"):  # every block has every size
        assert all(re.search(rf"^ *{rows} ", b, re.M) for b in blocks)


# The golden outputs of commands whose printing goes through core/width.py, recorded before it.
UNCHANGED = [(output_name(n, c), c) for n, c in enumerate(commands(), 1)
             if c.split()[0] in {"walk", "compare", "sweep", "predict", "diagnose", "zero",
                                 "overlap", "lesson", "train"}
             and "--help" not in c and "--json" not in c and c != "walk -a nope"]


@pytest.mark.parametrize("name,command", UNCHANGED, ids=[n for n, _ in UNCHANGED])
def test_with_no_width_every_line_is_as_before(monkeypatch, capsys, name, command):
    recorded = (OUTPUTS / name).read_text(encoding="utf-8")
    stdout = recorded.split("\n", 1)[1].rsplit("--- stderr\n", 1)[0]
    assert printed(monkeypatch, capsys, command, None) == stdout


JUNK = {"letters": "abc", "zero": "0", "negative": "-5", "empty": "", "twenty digits": "9" * 20,
        "5,000 digits": "9" * 5000}


@pytest.mark.parametrize("columns", JUNK.values(), ids=JUNK.keys())
def test_a_junk_columns_is_no_width_or_the_widest(monkeypatch, capsys, columns):
    command = "compare --time -g 16 --topology dgx-h100"
    out = printed(monkeypatch, capsys, command, columns)
    if columns.isdigit() and columns.strip("0"):  # as wide as allowed: 1,000 columns
        assert words(out) == words(printed(monkeypatch, capsys, command, None))
    else:  # no width, as if COLUMNS were not set
        assert out == printed(monkeypatch, capsys, command, None)
    monkeypatch.setenv("COLUMNS", columns)
    assert main(["walk", "--help"]) == 0
    assert "usage: ringsim walk" in capsys.readouterr().out


@pytest.mark.parametrize("command", sorted(subcommands()))
def test_every_help_fits_80_columns(monkeypatch, capsys, command):
    monkeypatch.setenv("COLUMNS", "80")
    assert main([command, "--help"]) == 0
    out = capsys.readouterr().out
    assert overflowing(out, 80) == []
    assert "{ring,master" not in out  # a long list of choices is named, then listed in the help


def test_the_ascii_forms_fit_too():
    env = {**os.environ, "COLUMNS": "80", "PYTHONIOENCODING": "ascii", "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "ringsim", "compare", "--time", "-g", "16",
                           "--topology", "dgx-h100"], capture_output=True, env=env, cwd=ROOT,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    text = done.stdout.decode("ascii")  # every character in its ASCII form
    assert "->" in text or "us" in text
    assert overflowing(text, 80) == []


@pytest.mark.parametrize("value,expected", [("80", 80), ("5", 20), ("1000", 1000), ("1001", 1000),
                                            (" 120 ", 120), ("99999999999999999999", 1000),
                                            ("abc", None), ("0", None), ("-80", None),
                                            ("8_0", None), ("80.5", None), ("", None)])
def test_columns_is_read_within_bounds(monkeypatch, value, expected):
    monkeypatch.setenv("COLUMNS", value)
    assert output_width(sys.stdout) == expected  # capsys: no terminal, so COLUMNS alone


class _Terminal:
    """A stream that says it is a terminal (or fails to say)."""

    def __init__(self, answer):
        self.answer = answer

    def isatty(self):
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


def test_a_terminal_gives_its_width_and_a_pipe_none(monkeypatch):
    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.setattr(width.shutil, "get_terminal_size", lambda: os.terminal_size((132, 40)))
    assert output_width(_Terminal(True)) == 132
    assert output_width(_Terminal(False)) is None
    assert output_width(_Terminal(ValueError("closed"))) is None
    monkeypatch.setattr(width.shutil, "get_terminal_size", lambda: os.terminal_size((3, 40)))
    assert output_width(_Terminal(True)) == 20
    monkeypatch.setenv("COLUMNS", "90")  # COLUMNS says it first, as for shutil
    assert output_width(_Terminal(True)) == 90


def test_display_width():
    assert display_width("15.24 µs · a₁ → b₂ ─│") == 21
    assert display_width("漢字") == 4 and display_width("e\u0301") == 1
    assert display_width("\x1b[38;5;12m•\x1b[0m x") == 3


def test_prose_wraps_under_its_indent_and_keeps_values_whole():
    line = "  " + " ".join(["word"] * 10) + " 15.24 µs and 1.90 GB/s, then more words"
    out = wrap(line, 40).splitlines()
    assert all(display_width(x) <= 40 for x in out)
    assert out[0].startswith("  word") and all(x.startswith("    ") for x in out[1:])
    assert "15.24 µs" in "\n".join(out) and "1.90 GB/s" in "\n".join(out)
    bullet = wrap("  - " + "item " * 12, 30).splitlines()
    assert bullet[0].startswith("  - ") and bullet[1].startswith("    i")
    path = "see " + "/very/long" * 10
    assert wrap(path, 30) == "see\n" + "/very/long" * 10  # kept whole, never cut
    assert wrap("short line\n" + line, 200) == "short line\n" + line


def test_prose_is_untouched_without_a_width(monkeypatch):
    monkeypatch.delenv("COLUMNS", raising=False)
    text = "x " * 500
    assert wrap(text) == text
    assert wrap(text, most=100) == "\n".join(["x " * 49 + "x"] * 10)  # filled as it always was


ROWS = [("size", "alpha", "beta", "gamma", ""), ("1KiB", "1.00 µs", "2.00 µs", "3.00 µs", "◀"),
        ("8GiB", "4.00 ms", "5.00 ms", "6.00 ms", "")]


def test_a_table_is_cut_into_blocks_with_its_key_in_each(monkeypatch):
    monkeypatch.delenv("COLUMNS", raising=False)
    whole = table(ROWS)  # no width: one block, every line as the commands always printed it
    assert whole == ["size    alpha     beta    gamma", "────  ───────  ───────  ───────  ─",
                     "1KiB  1.00 µs  2.00 µs  3.00 µs  ◀", "8GiB  4.00 ms  5.00 ms  6.00 ms"]
    cut = table(ROWS, width=24)
    assert cut == ["size    alpha     beta", "────  ───────  ───────",
                   "1KiB  1.00 µs  2.00 µs", "8GiB  4.00 ms  5.00 ms", "",
                   "size    gamma", "────  ───────  ─",  # the mark stays with its column
                   "1KiB  3.00 µs  ◀", "8GiB  6.00 ms"]
    assert table(ROWS, width=200) == whole


def test_a_free_column_wraps_beside_its_keys_or_under_them():
    rows = [("name", "n", "why"), ("ring", "1", "every GPU's ports across nodes"),
            ("tree", "22", "the inner GPUs")]
    assert table(rows, free=True, left=(0,), width=200)[2] == "ring   1  every GPU's ports across nodes"
    beside = table(rows, free=True, left=(0,), width=24)
    assert beside[2:5] == ["ring   1  every GPU's", "          ports across", "          nodes"]
    assert all(display_width(x) <= 24 for x in beside)
    listing = [(" 1", "A long title here", "ring, G=4, 5 parts"), ("12", "Short", "tree, G=8")]
    under = table(listing, head=0, keys=2, left=(1,), free=True, rule="", width=22)
    assert under == [" 1  A long title here", "    ring, G=4, 5 parts", "12  Short", "    tree, G=8"]


@pytest.mark.parametrize("lesson", ["9", "14"])
def test_a_lesson_in_ascii_fits_its_80_columns(lesson):
    # Piped, a lesson fills 80 columns; its ASCII forms ('→' is '->', 'Ψ' is 'Psi') are longer
    # than the characters they stand for, so it is filled after they are put in.
    env = {**os.environ, "PYTHONIOENCODING": "ascii", "PYTHONPATH": str(ROOT)}
    env.pop("COLUMNS", None)
    done = subprocess.run([sys.executable, "-m", "ringsim", "lesson", lesson, "--no-pause"],
                          capture_output=True, env=env, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    text = done.stdout.decode("ascii")
    assert " -- " in text or "->" in text  # an ASCII form of a dash or an arrow
    assert overflowing(text, 80) == []
