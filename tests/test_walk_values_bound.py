"""walk --values --force has a ceiling too: a stated count of numbers, and the memory printing
them takes, both checked before the walk starts."""

from __future__ import annotations

import subprocess
import sys
import time

import numpy as np

from ringsim.algorithms import make_plan
from ringsim.cli import main
from ringsim.cli.walk import MAKING_BYTES_PER_VALUE, MAX_VALUES_FORCED, PRINT_BYTES_PER_VALUE
from ringsim.core.layout import Layout
from ringsim.execute.memory import LIMIT_VARIABLE, format_bytes, simulation_bytes


def test_force_stops_at_its_stated_ceiling(capsys):
    assert main(["walk", "-g", "8", "-n", "100000", "--values", "--force"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == ("ringsim walk: error: --values would print 12,000,000 numbers (8 GPUs × "
                            "100,000 elements, at the start and after each of 14 steps); at most "
                            "10,000,000 even with --force: use fewer elements\n")


def test_the_audits_walk_is_refused_at_once():
    # Before the ceiling, this took 3.3 GB and minutes before its first megabytes of output.
    start = time.perf_counter()
    run = subprocess.run([sys.executable, "-m", "ringsim", "walk", "-g", "128", "-n", "1e6",
                          "--values", "--force"], capture_output=True, text=True, timeout=60,
                         check=False)
    assert run.returncode == 2 and run.stdout == ""
    assert run.stderr.startswith("ringsim walk: error: --values would print 32,640,000,000 numbers")
    assert time.perf_counter() - start < 20


def test_force_still_prints_past_the_plain_cap(capsys):
    # 4 GPUs × 1,000 elements × 7 moments = 28,000 numbers: past 20,000, under the ceiling.
    assert main(["walk", "-n", "1000", "--values"]) == 2
    capsys.readouterr()
    assert main(["walk", "-n", "1000", "--values", "--force"]) == 0
    out = capsys.readouterr().out
    assert out.count("GPU4:") == 7 and MAX_VALUES_FORCED == 10_000_000


def test_printing_the_values_counts_in_the_memory_check(monkeypatch, capsys):
    gpus, elements = 8, 20_000
    # the Simulation, and the gradients made before it
    walk = (simulation_bytes(make_plan("ring", gpus), Layout(gpus, elements), np.dtype(np.int64).itemsize)
            + gpus * elements * MAKING_BYTES_PER_VALUE)
    printing = gpus * elements * PRINT_BYTES_PER_VALUE
    monkeypatch.setenv(LIMIT_VARIABLE, str(walk + printing // 2))
    argv = ["walk", "-g", str(gpus), "-n", str(elements)]
    assert main(argv) == 0  # the walk alone fits
    capsys.readouterr()
    assert main([*argv, "--values", "--force"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"ringsim walk: error: a walk of 8 GPUs with 20,000 elements each would need "
                          f"about {format_bytes(walk + printing)} of memory, more than the "
                          f"{format_bytes(walk + printing // 2)} ringsim allows itself "
                          f"({LIMIT_VARIABLE})")
