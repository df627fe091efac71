"""Running a hostile case bounded: the command line in a child process with a wall-clock
timeout and an address-space limit, and the checks every refusal must pass."""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MEMORY = 2 << 30   # bytes of address space a case may map: a runaway allocation fails fast
TIMEOUT = 60       # seconds; the refusals below take about one (Python's start-up)


def _limits() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))
    os.setsid()  # its own process group, so that the timeout ends every child it started


@dataclass
class Ran:
    """What one bounded run gave."""

    status: int
    out: str
    err: str


def cli(*args: str, cwd: Path | str | None = None, timeout: float = TIMEOUT) -> Ran:
    """`python -m ringsim ARGS`, bounded in time and memory; a timeout fails the test."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "120", "NO_COLOR": "1"}
    process = subprocess.Popen([sys.executable, "-m", "ringsim", *args], cwd=cwd, env=env,
                               stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, preexec_fn=_limits)
    try:
        out, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        raise AssertionError(f"ringsim {' '.join(args)[:200]} ran past {timeout} s") from None
    return Ran(process.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace"))


def refused(ran: Ran, *words: str) -> str:
    """Assert a clean refusal: exit status 2, exactly one line on stderr naming `words`, no
    traceback and nothing a terminal would act on. Returns the line."""
    assert ran.status == 2, (ran.status, ran.err[-2000:])
    assert "Traceback" not in ran.err, ran.err[-2000:]
    lines = ran.err.splitlines()
    assert len(lines) == 1 and ran.err.endswith("\n"), ran.err[-2000:]
    assert "error:" in lines[0]
    assert not any(ord(c) < 32 or 0x7f <= ord(c) < 0xa0 for c in lines[0]), repr(lines[0])
    for word in words:
        assert word in lines[0], (word, lines[0])
    return lines[0]


def no_leftovers(folder: Path, *keep: str) -> None:
    """Nothing half-written in `folder`: no temporary files, nothing but the names in `keep`."""
    names = sorted(p.name for p in Path(folder).iterdir())
    assert names == sorted(keep), names
