"""Output names that are not regular files: a FIFO no program reads, a block device and a
socket are refused in one line before any work; a FIFO with a reader and a character device
(/dev/null) are written through."""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from ringsim.core import files
from ringsim.core.errors import RingsimError
from ringsim.core.files import atomic_output, check_output

ROOT = Path(__file__).resolve().parents[1]
NCCL_OUTPUT = ROOT / "tests" / "data" / "nccl_outputs" / "a3mega_h100_2node_all_reduce.txt"
NOT_READ = "is not a regular file (a FIFO or pipe that no program reads would block forever)"

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs (POSIX)")


def ringsim(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """The command line in a child process; a hang fails the test instead of stalling it."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "120", "NO_COLOR": "1"}
    return subprocess.run([sys.executable, "-m", "ringsim", *args], cwd=cwd, env=env,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("args", [
    ("diagnose", str(NCCL_OUTPUT), "--svg", "OUT.svg"),
    ("timeline", "--gpus", "4", "--trace", "OUT.json"),
    ("overlap", "--trace", "OUT.json"),
    ("sweep", "--svg", "OUT.svg"),
    ("figure", "OUT.svg"),
    ("figure", "OUT.gif"),
])
def test_a_fifo_no_program_reads_is_refused_in_one_line(tmp_path, args):
    name = next(a for a in args if a.startswith("OUT."))
    os.mkfifo(tmp_path / name)
    ran = ringsim(*args, cwd=tmp_path)
    assert ran.returncode == 2, ran.stderr
    assert ran.stderr.endswith(f"{name} {NOT_READ}; start its reader first or give a file "
                               "name\n"), ran.stderr
    assert ran.stderr.startswith(f"ringsim {args[0]}: error: ") and ran.stderr.count("\n") == 1
    assert ran.stdout == ""  # refused before any work
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]  # no temporary file


def test_a_fifo_with_a_reader_gets_the_whole_trace(tmp_path):
    fifo = tmp_path / "t.json"
    os.mkfifo(fifo)
    # A non-blocking open makes this test the FIFO's reader at once, with no thread; the
    # trace (about 16 KiB) fits the pipe's buffer, so the writer never waits for the read.
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        ran = ringsim("timeline", "--gpus", "4", "--trace", "t.json", cwd=tmp_path)
        assert ran.returncode == 0, ran.stderr
        os.set_blocking(reader, True)
        with os.fdopen(reader, "rb") as stream:
            reader = None
            trace = json.loads(stream.read())
    finally:
        if reader is not None:
            os.close(reader)
    assert trace["traceEvents"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.json"]


def test_a_fifo_with_a_reader_is_written_by_atomic_output(tmp_path):
    fifo = tmp_path / "f.svg"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        with atomic_output(fifo, "--svg") as out:
            out.write("<svg/>")
        assert os.read(reader, 100) == b"<svg/>"
        assert os.read(reader, 100) == b""  # the writer closed: the reader sees the end
    finally:
        os.close(reader)
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)  # not replaced by a rename


def test_a_socket_is_refused(tmp_path):
    server = socket.socket(socket.AF_UNIX)
    try:
        server.bind(str(tmp_path / "t.json"))
        ran = ringsim("timeline", "--gpus", "4", "--trace", "t.json", cwd=tmp_path)
    finally:
        server.close()
    assert ran.returncode == 2
    assert ran.stderr == ("ringsim timeline: error: --trace t.json is not a regular file (a socket "
                          "cannot be written as one); give a file name\n")


def test_a_block_device_is_refused_before_it_is_opened(tmp_path, monkeypatch):
    # A stand-in: a real disk must never be opened for writing, not even by a test.
    monkeypatch.chdir(tmp_path)
    disk = Path("disk")
    disk.write_bytes(b"data")
    real_stat = os.stat

    def as_a_disk(path, *args, **kwargs):
        info = real_stat(path, *args, **kwargs)
        if os.fspath(path) != str(disk):
            return info
        return os.stat_result((stat.S_IFBLK | 0o600, *tuple(info)[1:]))

    monkeypatch.setattr(files.os, "stat", as_a_disk)
    with pytest.raises(RingsimError) as refusal:
        check_output(str(disk), "--svg")
    assert str(refusal.value) == ("--svg disk is not a regular file (a disk or other block "
                                  "device is never written over); give a file name")
    monkeypatch.undo()
    assert (tmp_path / "disk").read_bytes() == b"data"


@pytest.mark.skipif(not Path("/dev/null").exists(), reason="needs /dev/null")
def test_dev_null_still_takes_the_output_and_stays_a_device(tmp_path):
    ran = ringsim("timeline", "--gpus", "4", "--trace", "/dev/null", cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    assert "Trace written to /dev/null" in ran.stdout
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
    assert list(tmp_path.iterdir()) == []


def test_a_written_files_name_is_shown_with_its_escapes_spelled_out(tmp_path):
    # the success line names the file written, and no escape reaches the terminal raw
    name = tmp_path / "ok\x1b[2Jt.json"
    # wide lines: a long temporary folder must not wrap the line this test reads
    done = subprocess.run([sys.executable, "-m", "ringsim", "timeline", "-g", "4", "--trace",
                           str(name)], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "COLUMNS": "1000"})
    assert done.returncode == 0 and name.is_file()
    assert "\x1b" not in done.stdout
    assert f"Trace written to {tmp_path}/ok\\x1b[2Jt.json (open it" in done.stdout


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs Linux's /dev/full")
@pytest.mark.parametrize("args", [
    ("diagnose", str(NCCL_OUTPUT), "--svg", "OUT.svg", "--no-plot"),
    ("timeline", "--gpus", "4", "--trace", "OUT.json"),
    ("sweep", "--svg", "OUT.svg", "--no-plot"),
    ("figure", "OUT.gif"),
])
def test_a_full_disk_under_a_file_name_is_one_line_and_status_1(tmp_path, args):
    # /dev/full fails every write with "no space left on device"; a link gives it a name
    name = next(a for a in args if a.startswith("OUT."))
    (tmp_path / name).symlink_to("/dev/full")
    ran = ringsim(*args, cwd=tmp_path)
    assert ran.returncode == 1, ran.stderr
    what = "the figure" if args[0] == "figure" else args[args.index(name) - 1]
    assert ran.stderr == f"ringsim {args[0]}: error: cannot write {what} {name}: No space left on device\n"
    assert ran.stdout == "" and sorted(p.name for p in tmp_path.iterdir()) == [name]
