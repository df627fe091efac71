"""Run under mpiexec by tests/mpi: the API's edge cases, each rank printing what it saw.

`mismatch`: ranks pass different sizes, then different dtypes; `single`: one rank, and N = 0.
"""

from __future__ import annotations

import sys

import numpy as np
from mpi4py import MPI

import ringsim.mpi
from ringsim.core.errors import RingsimError


def mismatch() -> None:
    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    seen = []
    for x in (np.ones(4 + rank, np.float32), np.ones(4, np.float32 if rank else np.float64)):
        try:
            ringsim.mpi.allreduce(x, timeout=10)
            seen.append(f"{rank} no error")
        except RingsimError as error:
            seen.append(f"{rank} {error}")
    everyone = comm.gather(seen, root=0)  # rank 0 prints all: the launcher may split lines
    if rank == 0:
        print("\n".join(line for lines in everyone for line in lines), flush=True)


def single() -> None:
    x = np.arange(5, dtype=np.int32)
    y = ringsim.mpi.allreduce(x)
    z = ringsim.mpi.allreduce(np.zeros(0, np.float32), "naive")
    print(y.tolist(), y is not x, z.shape, flush=True)


if __name__ == "__main__":
    {"mismatch": mismatch, "single": single}[sys.argv[1]]()
