"""Shared test set-up: Hypothesis profiles (`ci` is chosen when CI=true) and how many
pytest-xdist workers `-n auto` (pyproject.toml's addopts) starts."""

import os

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
