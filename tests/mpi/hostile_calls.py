"""Run under mpiexec: hostile calls of ringsim.mpi.allreduce, one case per argv[1]; each rank
prints one line 'rank R: <outcome>' so the test reads what every rank saw."""

import sys
import threading

import numpy as np
from mpi4py import MPI

import ringsim.mpi
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
elif case == "bad-out":
    outcome = call(out=np.zeros(3) if rank == 1 else np.zeros(4), timeout=5)
elif case == "bad-timeout":
    outcome = "|".join(call(timeout=t) for t in (0, -1, float("nan"), "5", None))
elif case == "bad-comm":
    outcome = call(comm=5)
elif case == "threads":
    call(timeout=5)  # a warm communicator
    results = []
    barrier = threading.Barrier(2)

    def worker():
        barrier.wait()
        results.append(call(x=np.full(2_000_000, 1.0), timeout=10))
    threads = [threading.Thread(target=worker) for _ in range(2)]
    [t.start() for t in threads]
    [t.join() for t in threads]
    outcome = "|".join(sorted(r.split(" ")[0] for r in results))
print(f"rank {rank}: {outcome}", flush=True)
