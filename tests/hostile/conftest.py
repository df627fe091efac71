"""Hostile-input helpers: ringsim as a bounded subprocess (time and address space)."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from ringsim import RingsimError

ROOT = Path(__file__).resolve().parents[2]
MEMORY = 3 << 30


def _limits() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))


def bounded(*args: str, timeout: float = 60, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    """`python -m ringsim ARGS` with at most `timeout` seconds and MEMORY of address space."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    return subprocess.run([sys.executable, "-m", "ringsim", *args], capture_output=True, text=True,
                          timeout=timeout, env=env, cwd=cwd, preexec_fn=_limits)


def refused(run: subprocess.CompletedProcess, *words: str) -> str:
    """Exit 2, nothing on stdout, one line on stderr naming `words`, no traceback; the line."""
    assert run.returncode == 2, (run.returncode, run.stderr[-2000:])
    assert "Traceback" not in run.stderr
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1, run.stderr
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


def api_refused(call, *words: str) -> str:
    """The one-line RingsimError `call()` raises from the Python API, holding each of `words`."""
    with pytest.raises(RingsimError) as caught:
        call()
    message = str(caught.value)
    assert "\n" not in message
    for word in words:
        assert word in message, (word, message)
    return message
