"""Shared test set-up: Hypothesis profiles (`ci` is chosen when CI=true), how many
pytest-xdist workers `-n auto` (pyproject.toml's addopts) starts, no COLUMNS (output as a pipe
gets it), and this checkout's ringsim compiled to bytecode once for the hundreds of
`python -m ringsim` the tests start."""

import compileall
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile("dev", max_examples=60, deadline=None)
settings.register_profile("ci", max_examples=120, deadline=None, print_blob=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))

MAX_WORKERS = 8  # each worker collects the whole suite first; more buy little at this size


def pytest_xdist_auto_num_workers(config):
    """`-n auto`: one worker per CPU this process may use, at most MAX_WORKERS.

    pytest-xdist's own count is psutil's physical cores, which is 1 on a 2-vCPU cloud machine
    (one core, two hyperthreads) and would run the suite in one worker there. The tests wait
    on child processes (the CLI, mpiexec, Chromium) as much as they compute, so every CPU
    counts. PYTEST_XDIST_AUTO_NUM_WORKERS, when set, is left to pytest-xdist.
    """
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cpus = os.cpu_count() or 1
    return max(1, min(cpus, MAX_WORKERS))


def pytest_configure(config):
    """No COLUMNS; and this checkout's ringsim compiled to bytecode (files already current are
    skipped).

    Many tests start `python -m ringsim` (and MPI ranks) from this checkout. With
    PYTHONDONTWRITEBYTECODE set, as some shells and CI images do, no process writes the
    bytecode, so each one compiled every module again: a quarter of a second of CPU each.
    Python still reads bytecode that is there. Workers leave it to the main process.
    """
    # A shell may export COLUMNS, and ringsim reads COLUMNS as its output width: the tests
    # run as a pipe does, with none, unless they set it.
    os.environ.pop("COLUMNS", None)
    if hasattr(config, "workerinput"):
        return
    compileall.compile_dir(Path(__file__).resolve().parents[1] / "ringsim", quiet=2)


@pytest.fixture(autouse=True)
def _no_width_from_readline():
    """No COLUMNS or LINES in what a test's child processes inherit, unless the test set them.

    GNU readline, once something in a worker loads it, writes the terminal's size into the C
    environment (COLUMNS=80, LINES=24 with no terminal) behind os.environ's back; a child
    process started without env= inherits them and wraps its output to 80 columns.
    """
    for name in ("COLUMNS", "LINES"):
        if name not in os.environ:
            os.unsetenv(name)


def pytest_collection_modifyitems(config, items):
    """Tests marked `slow` first (the rest keep their order): started last, one of them
    would keep a pytest-xdist worker busy while the others sit idle at the end."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)
