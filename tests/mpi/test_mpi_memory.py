"""`ringsim mpi`'s memory guard: an estimate at least what the ranks were measured to hold, and
the simulator's limit (half the memory available now), checked before any rank starts."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys

import pytest

import ringsim.algorithms
import ringsim.execute.memory as memory
from ringsim.algorithms import make_plan
from ringsim.core.errors import RingsimError
from ringsim.mpi.options import add_run_arguments, bytes_needed, check_run, receive_bytes

from .conftest import launch

MiB = 2 ** 20


def parsed(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_run_arguments(parser)
    return parser.parse_args(list(argv))


# Peak summed resident memory of the ranks, measured (psutil, every 20 ms) on a 2-core machine;
# the first is the audit's `ringsim mpi --ranks 4 --elements 5e7`, which the old guard put at
# 4,005 MiB.
MEASURED = [
    (("--elements", "5e7"), 4, 5868),
    (("--elements", "1e7"), 4, 1379),
    (("--elements", "1e7", "-a", "naive"), 4, 1788),
    (("--elements", "1e7", "-a", "master"), 4, 1448),
    (("--elements", "1e7"), 3, 1080),
    (("--elements", "5e6", "--dtype", "float64"), 4, 1028),
    (("--elements", "1e7", "--bench", "-a", "naive"), 4, 1247),  # with the sum checked after timing
]


@pytest.mark.parametrize("argv, ranks, measured_mib", MEASURED)
def test_the_estimate_covers_what_the_ranks_were_measured_to_hold(argv, ranks, measured_mib):
    estimate = bytes_needed(parsed(*argv), ranks, ranks) / MiB
    # Above what was measured, and not wildly so: the guard should refuse only what cannot fit.
    assert measured_mib <= estimate <= 1.3 * measured_mib


def test_a_rank_receives_at_most_what_its_plan_sends_it_in_one_step():
    assert receive_bytes(make_plan("naive", 4), 1000, 4).tolist() == [3 * 4000] * 4
    assert receive_bytes(make_plan("ring", 4), 1000, 4).tolist() == [1000] * 4
    # The switch (participant 4) is played by rank 0: its arrivals count there.
    nvls = receive_bytes(make_plan("nvls", 4), 1000, 4)
    assert nvls[0] == 4 * 4000 and nvls[1:].tolist() == [4000] * 3


def _available(monkeypatch, nbytes: int) -> None:
    monkeypatch.delenv(memory.LIMIT_VARIABLE, raising=False)
    monkeypatch.setattr(memory, "_host_available", lambda: nbytes)


def test_the_limit_is_half_the_memory_available(monkeypatch):
    args = parsed("--elements", "1e7")
    needed = bytes_needed(args, 4, 4)
    _available(monkeypatch, 2 * needed)
    check_run(args, 4, 4)  # exactly half: allowed
    _available(monkeypatch, 2 * needed - 2)
    with pytest.raises(RingsimError) as refused:
        check_run(args, 4, 4)
    message = str(refused.value)
    assert message.startswith("4 ranks of 10,000,000 float32 elements would need about 1.5 GB of "
                              "memory, more than the 1.5 GB ringsim allows itself (half of the "
                              "memory available now); try fewer --elements or ranks")
    assert "\n" not in message


def test_many_ranks_are_refused_on_their_processes_before_a_plan_is_built(monkeypatch):
    _available(monkeypatch, 2 * 1024 * MiB)

    def no_plan(*args, **kwargs):
        raise AssertionError("the plan was built before the refusal")
    monkeypatch.setattr(ringsim.algorithms, "make_plan", no_plan)
    with pytest.raises(RingsimError, match=r"^4,096 ranks of 8 float32 elements would need about 274\.9 GB"):
        check_run(parsed("-a", "naive"), 4096, 4096)


def test_the_cli_refuses_in_one_line_before_any_rank_starts():
    env = {**os.environ, memory.LIMIT_VARIABLE: "1GB"}
    run = subprocess.run([sys.executable, "-m", "ringsim", "mpi", "--ranks", "4", "--elements", "1e7"],
                         capture_output=True, text=True, env=env, timeout=120, check=False)
    assert run.returncode == 2
    assert run.stdout == ""
    assert run.stderr == ("ringsim mpi: error: 4 ranks of 10,000,000 float32 elements would need about "
                          "1.5 GB of memory, more than the 1.0 GB ringsim allows itself "
                          "(RINGSIM_MEMORY_LIMIT); try fewer --elements or ranks (ringsim walk "
                          "shows the same plan without the data)\n")


def test_a_rank_holds_its_buffers_to_the_simulators_limit(monkeypatch):
    # Each rank checks its own buffers as the simulator does: within RINGSIM_MEMORY_LIMIT (or
    # half of what is available), not within all the memory free now.
    from ringsim.mpi.executor import check_memory
    monkeypatch.setenv("RINGSIM_MEMORY_LIMIT", "1MiB")
    check_memory(2**20)
    with pytest.raises(RingsimError, match=r"this rank's buffers would need about 2\.1 MB of memory, "
                                           r"more than the 1\.0 MB ringsim allows itself"):
        check_memory(2**21)


def test_ranks_started_by_mpiexec_check_the_memory_of_every_rank_on_their_machine(mpiexec,
                                                                                  monkeypatch):
    # Four ranks on this machine share its memory: a limit that one rank's share fits under
    # but the four ranks' together do not is refused by every rank, in one line from rank 0,
    # before any buffer is allocated.
    args = parsed("--elements", "2e6")
    alone, together = (bytes_needed(args, 4, here, running=True) for here in (1, 4))
    limit = (alone + together) // 2
    assert alone < limit < together
    monkeypatch.setenv(memory.LIMIT_VARIABLE, f"{limit}B")
    run = launch(mpiexec, 4, ["-m", "ringsim.mpi", "--elements", "2e6"])
    assert run.returncode != 0
    assert run.stdout == ""
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1, run.stderr
    assert lines[0].startswith("ringsim mpi: error: 4 ranks of 2,000,000 float32 elements would need "
                               "about ")
    assert "ringsim allows itself (RINGSIM_MEMORY_LIMIT)" in lines[0]
