"""Sizes are checked before anything is allocated; counts are whole numbers written as such."""

import os
import subprocess
import sys
import tracemalloc

import numpy as np
import pytest

from ringsim import Layout, RingsimError, Simulation, allreduce, make_plan
from ringsim.algorithms import MAX_PLAN_TRANSFERS
from ringsim.core.checks import check_count, parse_count
from ringsim.execute.memory import (allreduce_bytes, check_memory, format_bytes, memory_limit,
                            parse_size, simulation_bytes)
from ringsim.training.train import train


def cli(*argv, env=None):
    proc = subprocess.run([sys.executable, "-m", "ringsim", *argv], capture_output=True,
                          text=True, timeout=120, env={**os.environ, **(env or {})})
    return proc.returncode, proc.stdout, proc.stderr


def test_make_plan_refuses_plans_past_the_cap_without_building_them():
    with pytest.raises(RingsimError, match=f"more than the {MAX_PLAN_TRANSFERS:,} a plan may hold"):
        make_plan("ring", 1_000_000)
    with pytest.raises(RingsimError, match="MAX_PLAN_TRANSFERS"):
        allreduce([np.zeros(1)] * 20_000)
    assert len(make_plan("ring", 1000).steps) == 1998  # 1,998,000 transfers: allowed


@pytest.mark.parametrize("algorithm, g, n, dtype", [
    ("ring", 8, 100_000, np.float32), ("ring", 7, 100_003, np.float64),
    ("naive", 16, 20_000, np.float64), ("master", 16, 50_000, np.float32),
    ("ring", 24, 50, np.int64)])
def test_the_estimates_bound_what_a_run_really_allocates(algorithm, g, n, dtype):
    x = np.random.default_rng(0).standard_normal((g, n)).astype(dtype)
    allreduce(list(x[:, :3]), algorithm)  # imports and caches out of the measurement
    tracemalloc.start()
    sim = Simulation.create(algorithm, g, n, gradients=x)
    sim.run()
    assert sim.correct()
    sim_peak = tracemalloc.get_traced_memory()[1]
    sim_estimate = simulation_bytes(sim.plan, sim.layout, x.itemsize)
    del sim
    tracemalloc.reset_peak()
    before = tracemalloc.get_traced_memory()[0]
    result = allreduce(list(x), algorithm)
    api_peak = tracemalloc.get_traced_memory()[1] - before
    tracemalloc.stop()
    api_estimate = allreduce_bytes(result.plan, Layout(g, n), x.itemsize)
    assert sim_peak <= sim_estimate <= 4 * sim_peak + (48 << 20)
    assert api_peak <= api_estimate <= 6 * api_peak + (8 << 20)


def test_refusals_say_how_much_and_what_instead(monkeypatch):
    monkeypatch.setenv("RINGSIM_MEMORY_LIMIT", "4M")
    assert memory_limit() == 4_000_000
    with pytest.raises(RingsimError) as info:
        Simulation.create("ring", 4, 1_000_000)
    message = str(info.value)
    assert message.startswith("a simulation of 4 GPUs with 1,000,000 elements each would need about ")
    assert "more than the 4.0 MB ringsim allows itself (RINGSIM_MEMORY_LIMIT)" in message
    assert "`ringsim compare --gpus 4 --elements 1000000`" in message
    with pytest.raises(RingsimError, match=r"ringsim.closed_form\('naive', 4, 1000000\)"):
        allreduce([np.zeros(1_000_000)] * 4, "naive")
    with pytest.raises(RingsimError, match="training on 100,000 samples of 50 features"):
        train(samples=100_000, features=50)
    Simulation.create("ring", 4, 8)  # small runs still fit


def test_memory_settings_and_sizes():
    assert parse_size("2G") == 2 * 10**9 and parse_size("512MiB") == 512 << 20
    assert parse_size("500mb") == 500 * 10**6
    assert parse_size("1000") == 1000
    with pytest.raises(RingsimError, match="RINGSIM_MEMORY_LIMIT must be a size"):
        parse_size("lots")
    for garbled in ("²G", "2²", "9" * 5000 + "G"):  # int() refuses these: no ValueError
        with pytest.raises(RingsimError, match="RINGSIM_MEMORY_LIMIT"):
            parse_size(garbled)
    assert format_bytes(999) == "999 bytes" and format_bytes(9_200_000_000_000_000) == "9.2 PB"
    check_memory(10, "nothing", instead="-")
    with pytest.raises(RingsimError, match="would need about 1,000.0 EB"):
        check_memory(10**21, "it", instead="-")


@pytest.mark.parametrize("argv", [
    ["walk", "--gpus", "128", "--elements", "1000000000000"],
    ["walk", "--elements", "1e20"],
    ["walk", "--elements", "9223372036854775807"],
    ["train", "--samples", "10000000", "--features", "10000"],
    ["train", "--gpus", "1000", "--batch", "10000", "--samples", "10000", "-a", "naive"],
])
def test_cli_refuses_runs_that_do_not_fit(argv):
    status, out, err = cli(*argv, env={"RINGSIM_MEMORY_LIMIT": "8G"})
    assert status == 2 and out == ""
    assert len(err.splitlines()) == 1 and err.startswith(f"ringsim {argv[0]}: error: ")
    assert "would need about" in err and "ringsim compare" in err


@pytest.mark.parametrize("text, value", [
    ("8", 8), ("1_000_000", 1_000_000), ("1e6", 1_000_000), ("1E+3", 1000), (" 12 ", 12),
    ("10000000000000001", 10_000_000_000_000_001), ("1e20", 10**20), ("0e999", 0)])
def test_counts_parse_exactly(text, value):
    assert parse_count(text, "N", minimum=0) == value


@pytest.mark.parametrize("text, message", [
    ("10000000000000001.0", "must be a whole number written with digits only"),
    ("4.0000000000000001", "must be a whole number written with digits only"),
    ("4.0", "written with digits only"), ("1.5e3", "written with digits only"),
    ("four", "expected a whole number, got 'four'"), ("nan", "must be a whole number"), ("inf", "must be a whole number"),
    ("1e1000000000", "is too large"), ("9" * 100_000, r"is too large \(100000 digits\)"),
    ("-1e3", "must be at least 0, got -1,000"),
    # Python's int() reads Arabic-Indic or full-width digits; the help offers 0-9 only.
    ("١٢٣", "must be written with the digits 0-9"), ("１２", "must be written with the digits 0-9")],
    ids=lambda v: str(v)[:20])
def test_counts_written_otherwise_are_refused(text, message):
    with pytest.raises(RingsimError, match=message) as info:
        parse_count(text, "N", minimum=0)
    assert len(str(info.value)) < 200  # a long value is cut, not echoed whole


def test_cli_counts_are_integers_written_as_integers():
    for argv, message in [(["--elements", "10000000000000001.0"], "written with digits only"),
                          (["--gpus", "4.0000000000000001"], "written with digits only")]:
        status, _, err = cli("walk", *argv)
        assert status == 2 and message in err and "Traceback" not in err
    status, out, _ = cli("walk", "--gpus", "2", "--elements", "1e1")
    assert status == 0 and "2 GPUs · 10 elements per GPU" in out
    status, out, _ = cli("walk", "--help")
    assert "1e6" in out and "decimal point" in out


@pytest.mark.parametrize("value, message", [
    (1e16, "a float, which cannot hold every whole number above 2\\*\\*53"),
    (2.5, "must be a whole number"), ("4", "must be a whole number"),
    (np.float64(3.5), "must be a whole number"), (None, "must be a whole number")])
def test_api_counts_refuse_floats_that_lost_precision(value, message):
    with pytest.raises(RingsimError, match=message):
        check_count(value, "G", minimum=1)


def test_api_counts_accept_exact_floats_and_numpy_integers():
    assert check_count(4.0, "G", minimum=1) == 4
    assert check_count(np.int32(7), "G", minimum=1) == 7
    assert check_count(2.0 ** 53, "N", minimum=0) == 2 ** 53


@pytest.mark.parametrize("argv, message", [
    (["timeline", "-g", "8", "-n", "1e21"], "the time model prices at most 2**62"),
    (["timeline", "-g", "8", "--size", "1e25B"], "the time model prices at most 2**62"),
    (["mpi", "--elements", "1e21"], "would need about 16,000.0 EB of memory"),
])
def test_element_counts_past_int64_get_one_line(argv, message, capsys):
    from ringsim.cli import main
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err
