"""`ringsim mpi`: the narrated run, its checks, failures in one line, bench and calibrate."""

from __future__ import annotations

import time

import pytest

from ringsim.algorithms import ALGORITHMS, make_plan
from .conftest import ROOT, json_lines, launch, ringsim

EDGES = ROOT / "tests" / "mpi" / "edges.py"

mpi = pytest.mark.mpi


@mpi
@pytest.mark.parametrize("algorithm, ranks, dtype", [("ring", 4, "int32"), ("master", 3, "float64"),
                                                     ("naive", 3, "float32"), ("nvls", 4, "float32")])
def test_json_run_speaks_walks_sentences_and_checks_out(mpiexec, algorithm, ranks, dtype):
    run = ringsim("mpi", "-n", str(ranks), "-a", algorithm, "--dtype", dtype, "--elements", "10", "--json")
    assert run.returncode == 0, run.stderr
    lines = json_lines(run.stdout)
    steps, summary = lines[:-1], lines[-1]
    walk = json_lines(ringsim("walk", "-a", algorithm, "-g", str(ranks), "-n", "10", "--json").stdout)
    assert [[t["sentence"] for t in s["transfers"]] for s in steps] == \
        [[t["sentence"] for t in s["transfers"]] for s in walk[:-1]]
    assert all(s["seconds"] > 0 for s in steps)
    item = 4 if dtype.endswith("32") else 8
    assert summary["sent_bytes"] == [v * item for v in walk[-1]["sent"]]
    assert summary["received_bytes"] == [v * item for v in walk[-1]["received"]]
    assert summary["bytes_equal_ledger"] and summary["every_rank_same_bits"]
    assert summary["bitwise_equal_to_ringsim"] and summary["equal_to_mpi_allreduce"]
    assert summary["correct"]
    if dtype == "int32":
        assert summary["mpi_allreduce_exact"]


@mpi
def test_text_run_reports_bytes_beside_the_ledger_and_the_verdicts(mpiexec):
    run = ringsim("mpi", "-n", "3", "--dtype", "int64", "--size", "96")
    assert run.returncode == 0, run.stderr
    text = run.stdout
    assert "Ring all-reduce over MPI · 3 ranks · 12 int64 elements per rank (96 B)" in text
    assert "GPU1 sends a₁ to GPU2, where it is added to b₁" in text
    assert "rank 0 (GPU1): sent 128 (ledger 128), received 128 (ledger 128)" in text
    assert "measured bytes equal the ledger: yes" in text
    assert "Against MPI_Allreduce on the same data: equal, bit for bit on every rank" in text
    assert "same addition order): bitwise equal" in text


@mpi
def test_the_title_names_the_options_as_walk_does(mpiexec):
    run = ringsim("mpi", "-n", "4", "-a", "master", "--master", "2", "--dtype", "int64", "--elements", "8")
    assert run.returncode == 0, run.stderr
    walk = ringsim("walk", "-g", "4", "-a", "master", "--master", "2").stdout.splitlines()[0]
    assert walk.startswith("Single-GPU master (GPU2) · ")
    assert run.stdout.splitlines()[0] == ("Single-GPU master (GPU2) over MPI · 4 ranks · 8 int64 "
                                          "elements per rank (64 B)")
    bench = ringsim("mpi", "-n", "2", "-a", "tree", "--chunks", "2", "--bench", "-N", "64", "--json")
    assert bench.returncode == 0, bench.stderr
    assert json_lines(bench.stdout)[0]["case"] == "tree (2 chunks) over MPI vs MPI_Allreduce"


@mpi
def test_rank_0_plays_the_switch_and_its_bytes_are_counted_apart(mpiexec):
    run = ringsim("mpi", "-n", "4", "-a", "nvls", "--dtype", "int32", "--elements", "8")
    assert run.returncode == 0, run.stderr
    text = run.stdout
    assert "Rank r plays GPU r+1, and rank 0 also plays the switch;" in text
    assert "GPU1 sends a₁ to the switch, which adds it up with what the other GPUs send" in text
    assert "The switch sends (a₁+b₁+c₁+d₁) by multicast to GPU4, where it replaces d₁" in text
    # each GPU's link carries its 8 elements up and the sum back; the switch takes 4 × 8 and
    # multicasts 4 × 8, over those same links
    assert "rank 0 (GPU1): sent 32 (ledger 32), received 32 (ledger 32)" in text
    assert ("the switch (played by rank 0): sent 128 (ledger 128), received 128 (ledger 128), "
            "over the GPUs' links") in text
    assert "measured bytes equal the ledger: yes" in text
    assert "Against MPI_Allreduce on the same data: equal, bit for bit on every rank" in text
    summary = json_lines(ringsim("mpi", "-n", "4", "-a", "nvls", "--elements", "8", "--json").stdout)[-1]
    assert summary["switch_ranks"] == [0] and summary["correct"]
    assert summary["switch_sent_bytes"] == summary["ledger_switch_sent_bytes"] == [128]


@mpi
@pytest.mark.parametrize("algorithm, dead, step", [("ring", 2, 3), ("naive", 0, 1), ("nvls", 0, 2)])
def test_a_killed_rank_stops_every_other_rank_with_one_line(mpiexec, algorithm, dead, step):
    start = time.monotonic()
    run = ringsim("mpi", "-n", "4", "-a", algorithm, "--kill-rank", str(dead), "--at-step", str(step),
                  "--timeout", "2", timeout=90)
    elapsed = time.monotonic() - start
    assert run.returncode == 1
    assert run.stderr.strip().splitlines() == [
        f"ringsim mpi: error: rank {dead} (GPU{dead + 1}) stopped answering at step {step}: no reply "
        "for 2 s, so every other rank stopped"]
    assert elapsed < 45  # startup, 0.5 s before pinging, 2 s of silence, shutdown


@mpi
def test_a_rank_stopped_before_a_step_it_has_no_part_in_is_explained(mpiexec):
    # The binary tree on 4 GPUs: the leaves send first, so its root, rank 0, has no part in
    # step 1; which step first needs it is read from the plan's own steps.
    from ringsim.algorithms import make_plan
    steps = make_plan("tree", 4).steps
    assert 0 not in steps[0].src and 0 not in steps[0].dst
    first = next(i for i, s in enumerate(steps, 1) if 0 in s.src or 0 in s.dst)
    run = ringsim("mpi", "-n", "4", "-a", "tree", "--kill-rank", "0", "--at-step", "1",
                  "--timeout", "2", timeout=90)
    assert run.returncode == 1
    assert run.stderr.strip().splitlines() == [
        f"ringsim mpi: error: rank 0 (GPU1) stopped answering at step {first}: no reply for 2 s, "
        "so every other rank stopped",
        f"note: rank 0 (GPU1) stopped before step 1 (--kill-rank 0 --at-step 1), a step it has no "
        f"part in; its peers first need it at step {first}"]


@mpi
def test_ranks_that_disagree_on_size_or_dtype_get_one_clear_line(mpiexec):
    run = launch(mpiexec, 2, [str(EDGES), "mismatch"], timeout=60)
    assert run.returncode == 0, run.stderr
    lines = sorted(run.stdout.splitlines())
    assert lines == [
        "0 every rank must pass the same dtype to allreduce: rank 0 and rank 1 differ",
        "0 every rank must pass the same number of elements to allreduce: rank 0 has 4, rank 1 has 5",
        "1 every rank must pass the same dtype to allreduce: rank 0 and rank 1 differ",
        "1 every rank must pass the same number of elements to allreduce: rank 0 has 4, rank 1 has 5",
    ]


@mpi
def test_one_rank_and_no_elements_pass_through_the_api_unchanged(mpiexec):
    run = launch(mpiexec, 1, [str(EDGES), "single"], timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[0, 1, 2, 3, 4] True (0,)"


@pytest.mark.parametrize("args, message", [
    (["-n", "1"], "an MPI all-reduce needs at least 2 ranks, got 1"),
    # named by ringsim's own flag, whichever of --ranks, -n or -g gave it
    (["--ranks", "4096"], "--ranks 4,096 is more than 4 ranks per core on this machine"),
    (["-N", "0"], "there are 0 elements per rank: nothing to send"),
    (["--kill-rank", "4"], "--kill-rank must be from 0 to 3, got 4"),
    (["--kill-rank", "1", "--at-step", "7"], "--at-step must be from 1 to 6 (the plan's steps), got 7"),
    (["-a", "ring", "--master", "2"], "--master only applies to the master algorithm"),
    # the one line every command gives, the ranks being the GPUs
    (["-a", "master", "--master", "9"], "--master must be from 1 to 4, got 9"),
    (["-a", "tree", "--chunks", "0"], "--chunks must be a whole number from 1 to 1,024, got 0"),
    (["--calibrate", "-a", "tree", "--chunks", "2"],
     "--calibrate times every algorithm at its default options: give it without --chunks"),
    (["--size", "lots"], "argument --size: cannot read 'lots'; write it like 256MiB, 1GB or 4096"),
    (["--size", "1GB", "--dtype", "float64", "-n", "1"], "at least 2 ranks"),
    # A size that splits an element is refused as every other command refuses it, not rounded.
    (["--size", "3B"], "--size 3B is not a whole number of float32 elements (4 bytes each)"),
    (["--size", "6B"], "--size 6B is not a whole number of float32 elements (4 bytes each)"),
    (["--size", "1001B", "--dtype", "float64"],
     "--size 1,001B is not a whole number of float64 elements (8 bytes each)"),
])
def test_bad_input_gets_one_line_before_any_process_starts(args, message):
    run = ringsim("mpi", *args, timeout=60)
    assert run.returncode == 2
    assert len(run.stderr.strip().splitlines()) == 1
    assert message in run.stderr


@mpi
def test_bench_and_calibrate_report_their_figures(mpiexec):
    bench = ringsim("mpi", "-n", "2", "--bench", "-N", "4096", "--json")
    assert bench.returncode == 0, bench.stderr
    (record,) = json_lines(bench.stdout)
    assert record["ringsim_seconds"] > 0 and record["mpi_allreduce_seconds"] > 0
    assert record["ratio"] == pytest.approx(record["ringsim_seconds"] / record["mpi_allreduce_seconds"])
    calibration = ringsim("mpi", "-n", "3", "--calibrate", "-N", "3000", "--json")
    assert calibration.returncode == 0, calibration.stderr
    (fit,) = json_lines(calibration.stdout)
    assert fit["alpha"] >= 0 and fit["beta"] >= 0 and fit["alpha_error"] >= 0 and fit["beta_error"] >= 0
    # The line describes the ping-pong it was fitted to, however loaded the machine: at the
    # largest message it lies within a factor of 10 of the measured time.
    largest, measured = fit["ping_pong"]["bytes"][-1], fit["ping_pong"]["seconds"][-1]
    assert measured / 10 <= fit["alpha"] + fit["beta"] * largest <= measured * 10
    assert [row["algorithm"] for row in fit["algorithms"]] == [
        a for a in ALGORITHMS if not make_plan(a, 2).switches]  # no rank plays a switch
    assert all(row["predicted_seconds"] > 0 and row["measured_seconds"] > 0 for row in fit["algorithms"])


@mpi
def test_calibrate_writes_a_topology_file_that_compare_reads(mpiexec, tmp_path):
    from ringsim.cost.topology import load
    path = tmp_path / "here.toml"
    calibration = ringsim("mpi", "-n", "2", "--calibrate", "-N", "2000", "--json",
                          "--write-topology", str(path))
    assert calibration.returncode == 0, calibration.stderr
    (fit,) = json_lines(calibration.stdout)
    topology = load(str(path))
    level = topology.level("inside")
    assert level.alpha == pytest.approx(fit["alpha"], rel=1e-5)
    assert level.beta == pytest.approx(fit["beta"], rel=1e-5) or fit["beta"] == 0
    assert topology.gamma == pytest.approx(fit["gamma"], rel=1e-5)
    compare = ringsim("compare", "--topology", str(path), "--time", "--gpus", "4", "--size", "1MiB")
    assert compare.returncode == 0, compare.stderr


def test_write_topology_needs_calibrate_and_a_writable_toml_path(tmp_path):
    for argv, message in ((["--write-topology", str(tmp_path / "a.toml")], "add --calibrate"),
                          (["--calibrate", "--write-topology", str(tmp_path)], "is a folder"),
                          (["--calibrate", "--write-topology", str(tmp_path / "a.txt")], "NAME.toml"),
                          (["--calibrate", "--write-topology", str(tmp_path / "no" / "a.toml")], "does not exist")):
        run = ringsim("mpi", "-n", "2", *argv)
        assert run.returncode == 2 and message in run.stderr, run.stderr


@mpi
def test_the_ranks_run_the_plan_with_the_algorithm_options_given(mpiexec):
    run = ringsim("mpi", "-n", "4", "-a", "tree", "--chunks", "2", "--elements", "8", "--json")
    assert run.returncode == 0, run.stderr
    steps = json_lines(run.stdout)[:-1]
    walk = json_lines(ringsim("walk", "-a", "tree", "--chunks", "2", "-g", "4", "-n", "8",
                              "--json").stdout)[:-1]
    assert len(walk) != len(json_lines(ringsim("walk", "-a", "tree", "-g", "4", "-n", "8",
                                               "--json").stdout)[:-1])
    assert [[t["sentence"] for t in s["transfers"]] for s in steps] == \
        [[t["sentence"] for t in s["transfers"]] for s in walk]
    assert json_lines(run.stdout)[-1]["correct"]


@mpi
def test_g_counts_ranks_as_it_counts_gpus_in_every_other_command(mpiexec):
    run = ringsim("mpi", "-g", "3", "-a", "master", "--master", "2", "--size", "48")
    assert run.returncode == 0, run.stderr
    assert "3 ranks" in run.stdout and "equal, bit for bit on every rank" in run.stdout


def _with_launcher(tmp_path, script: str, *args: str, timeout: float = 60):
    """`ringsim mpi ARGS` where the only mpiexec is `script`: Python is started through a link
    in a folder of its own, so the mpiexec beside this environment's Python is not found."""
    import os
    import site
    import subprocess
    import sys
    python = tmp_path / "python" / "python"
    python.parent.mkdir()
    python.symlink_to(sys.executable)
    launcher = tmp_path / "launcher" / "mpiexec"
    launcher.parent.mkdir()
    launcher.write_text("#!/bin/sh\n" + script + "\n")
    launcher.chmod(0o755)
    env = dict(os.environ, PATH=f"{launcher.parent}{os.pathsep}/usr/bin{os.pathsep}/bin",
               PYTHONPATH=os.pathsep.join([str(ROOT), *site.getsitepackages()]))
    return subprocess.run([str(python), "-m", "ringsim", "mpi", *args], capture_output=True,
                          text=True, timeout=timeout, env=env, cwd=ROOT)


def test_a_launcher_that_fails_without_a_word_is_named(tmp_path):
    run = _with_launcher(tmp_path, "exit 3", "--ranks", "2")
    assert run.returncode == 1 and "Traceback" not in run.stderr
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ringsim mpi: error: "), run.stderr
    assert "status 3" in lines[0] and "mpiexec" in lines[0]


def test_a_launcher_that_speaks_is_left_to_speak(tmp_path):
    run = _with_launcher(tmp_path, "echo 'cannot reach host n1' >&2; exit 3", "--ranks", "2")
    assert run.returncode == 1 and run.stderr.strip() == "cannot reach host n1"
