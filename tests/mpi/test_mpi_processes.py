"""Hostile runs of `ringsim mpi`: bounded ranks, options checked before mpiexec, stop signals
reaching every process, and output errors handled as every other command handles them.

Each case runs `ringsim mpi` in a session of its own (start_new_session), bounded by a
timeout and an address-space limit, with a mark in its environment that every process it
starts inherits (MPICH's proxy puts the ranks in sessions of their own, so a session scan
alone would miss them); afterwards /proc is scanned for the mark: nothing may outlive it.
"""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import time

import pytest

import uuid

from .conftest import ROOT, environment

MEMORY = 4 << 30  # address space of the launcher; the ranks inherit it


def _limits() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))


def marked(mark: str) -> list[int]:
    """Processes whose environment holds MARK=mark."""
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/environ", "rb") as handle:
                    if f"RINGSIM_TEST_MARK={mark}".encode() in handle.read().split(b"\0"):
                        found.append(int(name))
            except OSError:
                pass
    return found


def start(*args: str, stdout=subprocess.PIPE, env: dict | None = None) -> subprocess.Popen:
    """`ringsim mpi ARGS` in its own session (its pid is the session id), marked."""
    env = dict(env or environment())
    env["RINGSIM_TEST_MARK"] = uuid.uuid4().hex
    process = subprocess.Popen([sys.executable, "-m", "ringsim", "mpi", *args], stdout=stdout,
                            stderr=subprocess.PIPE, text=True, cwd=ROOT, env=env,
                               start_new_session=True, preexec_fn=_limits)
    process.mark = env["RINGSIM_TEST_MARK"]
    return process


def finish(process: subprocess.Popen, timeout: float = 90) -> tuple[int, str, str]:
    """Its status and output, and the check that no process of its session is left."""
    try:
        out, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        raise AssertionError("ringsim mpi did not end in time")
    left = _wait_gone(process.mark)
    assert not left, f"processes of the job outlived it: {left}"
    return process.returncode, out or "", err


def _wait_gone(mark: str, seconds: float = 5.0) -> list[int]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        left = marked(mark)
        if not left:
            return []
        time.sleep(0.1)
    for pid in left:  # leave the machine clean for the next test, then fail
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return left


def one_error_line(err: str, text: str) -> None:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("ringsim") and "error" in lines[0] and text in lines[0], err
    assert "Traceback" not in err


@pytest.mark.parametrize("args, text", [
    (["-n", "1000000"], "the number of ranks must be from 1 to 4,096"),
    (["-n", str(4 * (os.cpu_count() or 1) + 1)], "--oversubscribe"),
    (["--timeout", "nan"], "--timeout"),
    (["--timeout", "inf"], "--timeout"),
    (["--timeout", "1e-300"], "--timeout"),
    (["--timeout", "0"], "--timeout"),
    (["--timeout", "-1"], "--timeout"),
    (["--seed", "-1"], "--seed"),
    (["--seed", "1e999"], "--seed"),
])
def test_options_are_refused_in_one_line_before_mpiexec_starts(args, text):
    status, out, err = finish(start(*args), timeout=60)
    assert status == 2 and out == ""
    one_error_line(err, text)



@pytest.mark.mpi
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_a_stop_signal_ends_mpiexec_and_every_rank(mpiexec, signum):
    # Rank 1 dies at once; the others would wait 60 s for it: the signal must not wait.
    process = start("-n", "4", "--kill-rank", "1", "--at-step", "1", "--timeout", "60")
    deadline = time.monotonic() + 30
    while len(marked(process.mark)) < 7 and time.monotonic() < deadline:
        time.sleep(0.1)  # the launcher, mpiexec, its proxy and four ranks
    assert len(marked(process.mark)) >= 6, "the ranks never started"
    time.sleep(1.0)  # rank 1 has died; the others are waiting for it
    began = time.monotonic()
    os.kill(process.pid, signum)
    status, _, err = finish(process, timeout=30)
    assert time.monotonic() - began < 20
    assert status == 128 + signum or (signum == signal.SIGINT and status == 130)
    assert "Traceback" not in err


@pytest.mark.mpi
def test_a_full_disk_gets_one_line_and_status_1(mpiexec):
    with open("/dev/full", "w") as full:
        status, _, err = finish(start("-n", "4", stdout=full))
    assert status == 1
    one_error_line(err, "No space left on device")


@pytest.mark.mpi
def test_an_ascii_terminal_gets_the_ascii_forms(mpiexec):
    env = environment() | {"PYTHONIOENCODING": "ascii"}
    status, out, err = finish(start("-n", "4", env=env))
    assert status == 0 and err == ""
    assert "(G-1)*eps*sum|x|" in out and "bitwise equal" in out
    out.encode("ascii")


@pytest.mark.mpi
def test_a_reader_that_leaves_early_ends_the_job_with_status_0(mpiexec):
    for _ in range(3):
        process = start("-n", "4")
        first = process.stdout.readline()
        process.stdout.close()  # as `| head -1` does
        assert first.startswith("Ring all-reduce over MPI · 4 ranks")
        process.stdout = None
        status, _, err = finish(process)
        assert status == 0 and "Traceback" not in err and err == ""


CALLS = ROOT / "tests" / "mpi" / "hostile_calls.py"


def _calls(mpiexec: str, case: str, printing: int = 3) -> dict[int, str]:
    """Every printing rank's outcome of one case of hostile_calls.py (3 ranks), nothing left
    running afterwards; the job must end within 60 s."""
    status, seen = _calls_status(mpiexec, case, printing)
    return seen


def _calls_status(mpiexec: str, case: str, printing: int = 3) -> tuple[int, dict[int, str]]:
    from ringsim.cli.mpi import launcher_flags
    env = dict(environment())
    env["RINGSIM_TEST_MARK"] = mark = uuid.uuid4().hex
    job = subprocess.Popen([mpiexec, "-n", "3", *launcher_flags(mpiexec), sys.executable,
                            str(CALLS), case], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, env=env, cwd=ROOT, start_new_session=True,
                           preexec_fn=_limits)
    try:
        out, err = job.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(job.pid, signal.SIGKILL)
        _wait_gone(mark)  # kills the ranks too (they run in sessions of their own)
        out, err = job.communicate()
        raise AssertionError(f"the job of case {case} did not end in 60 s: {out}{err}")
    assert not _wait_gone(mark), "processes of the job outlived it"
    assert "Traceback" not in err, err
    lines = [line for line in out.splitlines() if line.startswith("rank ")]
    assert len(lines) == printing, out + err
    return job.returncode, {int(line.split(":")[0].split()[1]): line.split(": ", 1)[1]
                            for line in lines}


@pytest.mark.mpi
@pytest.mark.parametrize("case, said", [
    ("bad-array", "the array must be numeric"),
    # a masked entry would be summed as if present: refused as ringsim.allreduce refuses it
    ("masked", "the array is a masked array with masked entries"),
    ("bad-out", "out must have 4 elements of float64"),
])
def test_a_bad_argument_on_one_rank_reaches_every_rank_naming_it(mpiexec, case, said):
    seen = _calls(mpiexec, case)
    assert sorted(seen) == [0, 1, 2]
    assert seen[1] == f"RingsimError rank 1: {said}, got <U1" or seen[1].startswith(f"RingsimError rank 1: {said}")
    for rank in (0, 2):
        assert seen[rank].startswith("RingsimError rank 1 passed allreduce a bad argument")


@pytest.mark.mpi
def test_a_bench_of_a_wrong_sum_is_no_result(mpiexec):
    # One rank adds 1 where it reduces: --bench checks the sum against MPI_Allreduce after
    # timing it and ends every rank with status 1 instead of printing a ratio.
    status, seen = _calls_status(mpiexec, "wrong-bench")
    assert seen == {0: "status 1", 1: "status 1", 2: "status 1"}


@pytest.mark.mpi
def test_timeouts_and_communicators_are_checked(mpiexec):
    seen = _calls(mpiexec, "bad-timeout")
    assert sorted(seen) == [0, 1, 2]
    for rank, outcome in seen.items():
        parts = outcome.split("|")
        assert len(parts) == 5 and all(p.startswith(f"RingsimError rank {rank}: timeout must be")
                                       for p in parts), outcome
    seen = _calls(mpiexec, "bad-comm")
    assert set(seen.values()) == {"RingsimError comm must be an mpi4py intracommunicator such as "
                                  "MPI.COMM_WORLD, got int"}


@pytest.mark.mpi
@pytest.mark.parametrize("case", ["threads", "threads-cold"])
def test_two_threads_on_one_communicator_one_is_refused_the_other_sums(mpiexec, case):
    # Cold: the second thread is refused before the communicator's channels exist; no MPI abort.
    status, seen = _calls_status(mpiexec, case)
    assert status == 0
    refusal = ("RingsimError ringsim.mpi.allreduce is already running on this communicator in "
               "another thread: call it from one thread, or give each thread its own comm.Dup()")
    assert seen == {rank: f"ok | {refusal}" for rank in range(3)}


@pytest.mark.mpi
def test_a_rank_that_exits_before_the_first_call_ends_the_job_with_one_line_each(mpiexec):
    status, seen = _calls_status(mpiexec, "exit-before", printing=2)
    assert status != 0 and sorted(seen) == [0, 2]
    for rank in (0, 2):
        others = "ranks 1, 2" if rank == 0 else "ranks 0, 1"
        assert seen[rank] == (f"RingsimError rank {rank}: waited 2 s at the start of "
                              f"ringsim.mpi.allreduce for {others} and not all arrived (one "
                              f"exited, is stuck, or never called it; MPI cannot tell which), "
                              f"so this rank stopped"), seen


@pytest.mark.mpi
def test_a_rank_that_sleeps_before_the_first_call_ends_the_job_with_one_line_each(mpiexec):
    status, seen = _calls_status(mpiexec, "sleep-before")
    assert status != 0 and sorted(seen) == [0, 1, 2]
    for rank, outcome in seen.items():
        assert outcome.startswith(f"RingsimError rank {rank}: waited 2 s at the start"), seen


@pytest.mark.mpi
def test_after_a_rank_failed_error_the_job_ends_and_later_calls_are_refused(mpiexec):
    status, seen = _calls_status(mpiexec, "dies-during", printing=2)
    assert status != 0 and sorted(seen) == [0, 2]
    for outcome in seen.values():
        failed, then = outcome.split(" | then ")
        assert failed.startswith("RankFailedError rank 1 (GPU2) stopped answering at step 1"), seen
        assert then.startswith("RingsimError an earlier ringsim.mpi.allreduce in this process "
                               "failed (rank 1 (GPU2) stopped answering"), seen
