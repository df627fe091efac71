"""Files read: topology files, pasted NCCL logs and lessons share one reader (core/files), each
keeping its own size cap and its own words."""

from __future__ import annotations

import io
import os

import pytest

from ringsim.core.errors import RingsimError
from ringsim.core.files import read_bytes, read_lines
from ringsim.lessons import load_lessons
from ringsim.studies import textfile


def _readers(path):
    """Each caller's refusal of `path`, as the user sees it."""
    seen = {}
    for name, read in (("core", lambda: read_bytes(str(path), "topology file", 65_536)),
                       ("diagnose", lambda: textfile.read_text(str(path), "NCCL log"))):
        with pytest.raises(RingsimError) as error:
            read()
        seen[name] = str(error.value)
    return seen


def test_a_fifo_is_refused_by_every_reader_in_its_own_words(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    seen = _readers(fifo)
    assert seen["core"].endswith("is not a regular file (a folder, FIFO or device cannot be read as one)")
    assert seen["diagnose"].endswith("save the NCCL log to a file or pipe it to '-'")


def test_each_reader_keeps_its_size_cap(tmp_path):
    big = tmp_path / "big"
    with open(big, "wb") as handle:
        handle.truncate(40 * 1024 * 1024)  # sparse: nothing is read
    seen = _readers(big)
    assert seen["core"].endswith("is 41,943,040 bytes; at most 65,536 are read")
    assert "holds 40 MiB, more than 32 MiB" in seen["diagnose"]
    lessons = tmp_path / "lessons"
    lessons.mkdir()
    os.rename(big, lessons / "01-big.md")
    with pytest.raises(RingsimError) as error:
        load_lessons(lessons)
    assert str(error.value) == (f"{lessons / '01-big.md'}:1: the file holds more than 256 KiB; "
                                "a lesson is at most that long")


def test_standard_input_only_where_it_is_allowed(tmp_path, monkeypatch):
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b"ab\n" + b"x" * 50 + b"\n")))
    assert read_lines("-", "log", 1000, 10, stdin=True) == (["ab", "x" * 10], 1)
    with pytest.raises(RingsimError, match="cannot read log -"):
        read_bytes("-", "log", 1000)  # '-' names a file here: there is none in this folder
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b"y" * 2000)))
    with pytest.raises(RingsimError, match="standard input is more than 1,000 bytes"):
        read_bytes("-", "log", 1000, stdin=True)


def test_a_name_with_a_nul_is_refused_in_one_line(tmp_path, capsys):
    # Only a Python caller of main() can pass one: the shell cannot put NUL in a word.
    from ringsim.cli import main
    assert main(["figure", "--nccl-log=a\0b", str(tmp_path / "o.svg")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ringsim figure: error: ") and err.count("\n") == 1, err
    assert not (tmp_path / "o.svg").exists()
