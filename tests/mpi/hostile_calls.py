"""Run under mpiexec: hostile calls of ringsim.mpi.allreduce, one case per argv[1]; each rank
prints one line 'rank R: <outcome>' so the test reads what every rank saw."""

import os
import sys
import threading
import time

import numpy as np
from mpi4py import MPI

import ringsim.mpi
import ringsim.mpi.collective
from ringsim.core.errors import RingsimError

comm = MPI.COMM_WORLD
rank = comm.Get_rank()
case = sys.argv[1]


def call(**kwargs):
    x = kwargs.pop("x", np.ones(4))
    try:
        ringsim.mpi.allreduce(x, "ring", **kwargs)
    except RingsimError as error:
        return f"RingsimError {error}"
    return "ok"


if case == "bad-array":
    outcome = call(x=np.array(["a"] * 4) if rank == 1 else np.ones(4), timeout=5)
elif case == "masked":
    outcome = call(x=np.ma.array(np.ones(4), mask=[0, 1, 0, 0]) if rank == 1 else np.ones(4),
                   timeout=5)
elif case == "wrong-bench":
    # A rank whose executor adds 1 where it reduces: --bench must not time a wrong sum.
    from ringsim.mpi import executor
    from ringsim.mpi.runner import main as rank_main
    original = executor.MPIExecutor._write

    def corrupted(self, mine, incoming):
        original(self, mine, incoming)
        if rank == 1 and mine.arrivals:
            first = mine.arrivals[0]
            self.buffers[first.dst][self.layout.offset(first.first)] += 1
    executor.MPIExecutor._write = corrupted
    outcome = f"status {rank_main(['--bench', '--elements', '100', '--timeout', '20'])}"
elif case == "bad-out":
    outcome = call(out=np.zeros(3) if rank == 1 else np.zeros(4), timeout=5)
elif case == "bad-timeout":
    outcome = "|".join(call(timeout=t) for t in (0, -1, float("nan"), "5", None))
elif case == "bad-comm":
    outcome = call(comm=5)
elif case == "exit-before":
    if rank == 1:
        os._exit(0)  # as a rank that crashes before its first call, without MPI_Finalize
    outcome = call(timeout=2)
elif case == "sleep-before":
    if rank == 1:
        time.sleep(6)  # the others give up after 2 s; it then finds them gone
    outcome = call(timeout=2)
elif case == "dies-during":
    try:  # rank 1 dies at the first step of the plan; the others must name it and the job end
        ringsim.mpi.collective.run(np.ones(4), "ring", timeout=2, kill_at=0 if rank == 1 else None)
        outcome = "ok"
    except RingsimError as error:
        outcome = f"{type(error).__name__} {error}"
    outcome += " | then " + call(timeout=2)
elif case in ("threads", "threads-cold"):
    if case == "threads":
        call(timeout=5)  # a warm communicator
    inside, refused = threading.Event(), threading.Event()

    class Held:
        """An array whose flattening waits until the other thread's call has been refused, so
        on every rank the two calls overlap whatever the scheduler does."""

        dtype, shape = np.dtype(np.float64), (2_000_000,)

        def reshape(self, *shape):
            inside.set()
            refused.wait(30)
            return np.full(self.shape, 1.0).reshape(*shape)
    first: list[str] = []
    worker = threading.Thread(target=lambda: first.append(call(x=Held(), timeout=10)))
    worker.start()
    inside.wait(30)
    second = call(timeout=10)
    refused.set()
    worker.join()
    outcome = f"{first[0]} | {second}"
# One write call per line: hydra forwards each rank's output as it reads it, and a line
# written in pieces could be cut by another rank's line.
sys.stdout.flush()
os.write(1, f"rank {rank}: {outcome}\n".encode())
