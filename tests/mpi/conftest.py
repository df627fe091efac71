"""MPI test set-up: real mpiexec runs (oversubscribed), skipped with the reason without MPI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CASES = Path(__file__).with_name("cases.py")


def _mpiexec() -> str | None:
    try:
        import mpi4py  # noqa: F401  (only whether it is installed)
    except ImportError:
        return None
    from ringsim.cli.mpi import find_mpiexec
    from ringsim.core.errors import RingsimError
    try:
        found = find_mpiexec()
    except RingsimError:
        return None
    return found


@pytest.fixture(scope="session")
def mpiexec():
    """The mpiexec to start ranks with, or a skip that says why there is none."""
    found = _mpiexec()
    if found is None:
        pytest.skip("needs mpi4py and an mpiexec: pip install '.[mpi]'")
    return found


def environment() -> dict:
    """The ranks import this checkout's ringsim."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    return env


def launch(mpiexec: str, ranks: int, args: list[str], timeout: float = 120):
    """Run `mpiexec -n ranks python <args>`, bounded by `timeout` seconds."""
    from ringsim.cli.mpi import launcher_flags
    command = [mpiexec, "-n", str(ranks), *launcher_flags(mpiexec), sys.executable, *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout,
                          env=environment(), cwd=ROOT)


def ringsim(*args: str, timeout: float = 120):
    """Run the `ringsim` command from this checkout, bounded by `timeout` seconds."""
    return subprocess.run([sys.executable, "-m", "ringsim", *args], capture_output=True, text=True,
                          timeout=timeout, env=environment(), cwd=ROOT)


def json_lines(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.startswith("{")]
