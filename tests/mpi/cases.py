"""Run under mpiexec by tests/mpi: every registered algorithm, several dtypes and sizes.

Each case is checked on every rank against MPI_Allreduce (exact for integers, which wrap;
within (G−1)·eps·Σ|x| for floats), and on rank 0 bit for bit against ringsim.allreduce in
one process and against the ledger's bytes per rank. Rank 0 prints one JSON line per case.
"""

from __future__ import annotations

import json
import sys

import numpy as np
from mpi4py import MPI

import ringsim
import ringsim.mpi
from ringsim.execute.ledger import measure
from ringsim.mpi.collective import run
from ringsim.core.reference import tolerance

# Every algorithm, NVLS's switch included: rank 0 plays it beside its GPU (mpi/executor.py).
MPI_ALGORITHMS = list(ringsim.ALGORITHMS)
SIZES = [1, 5, 64, 1001]  # 1 and 5: fewer elements than ranks or uneven; 1001: uneven, larger
DTYPES = ["int32", "int64", "float32", "float64"]


def data(rank_count: int, n: int, dtype: str, seed: int) -> np.ndarray:
    """All ranks' inputs, the same on every rank (each rank takes its own row)."""
    rng = np.random.default_rng(seed)
    kind = np.dtype(dtype)
    if kind.kind == "i":  # the whole range, so that sums wrap around
        info = np.iinfo(kind)
        return rng.integers(info.min, info.max, size=(rank_count, n), dtype=kind, endpoint=True)
    return (rng.standard_normal((rank_count, n)) * 10 ** rng.uniform(-3, 3, (rank_count, n))).astype(kind)


def main() -> None:
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    seed = 0
    for algorithm in MPI_ALGORITHMS:
        for dtype in DTYPES:
            for n in SIZES:
                seed += 1
                inputs = data(size, n, dtype, seed)
                x = inputs[rank].copy()
                done = run(x, algorithm, comm)
                unchanged = bool(np.array_equal(x, inputs[rank]))
                expected = np.empty_like(x)
                comm.Allreduce(x, expected, op=MPI.SUM)
                if x.dtype.kind == "i":
                    matches_mpi = bool(np.array_equal(done.output, expected))
                else:
                    gap = np.abs(done.output.astype(np.float64) - expected.astype(np.float64))
                    matches_mpi = bool((gap <= tolerance(inputs)).all())
                reference = ringsim.allreduce(list(inputs), algorithm).outputs[0]
                bitwise = done.output.tobytes() == reference.tobytes()
                sent = sum(r.sent for r in done.records)
                received = sum(r.received for r in done.records)
                switch = [sum(r.switch_sent for r in done.records),
                          sum(r.switch_received for r in done.records)]
                ledger = measure(done.plan, done.layout)
                table = comm.gather({"mpi": matches_mpi, "bitwise": bitwise, "unchanged": unchanged,
                                     "sent": sent, "received": received, "switch": switch}, root=0)
                if rank == 0:
                    item = x.itemsize
                    print(json.dumps({
                        "algorithm": algorithm, "dtype": dtype, "n": n, "ranks": size,
                        "mpi": all(t["mpi"] for t in table),
                        "bitwise": all(t["bitwise"] for t in table),
                        "unchanged": all(t["unchanged"] for t in table),
                        "sent": [t["sent"] for t in table],
                        "received": [t["received"] for t in table],
                        "ledger_sent": (ledger.sent * item).tolist(),
                        "ledger_received": (ledger.received * item).tolist(),
                        "switch": [t["switch"] for t in table],
                        "ledger_switch": [(ledger.switch_sent * item).tolist(),
                                          (ledger.switch_received * item).tolist()],
                    }), flush=True)
    # The drop-in form: a new array of x's shape, and comm.Allreduce's out= form.
    x = np.arange(12, dtype=np.int64).reshape(3, 4) + rank
    summed = ringsim.mpi.allreduce(x)
    out = np.empty_like(x)
    same = ringsim.mpi.allreduce(x, "naive", out=out) is out
    expected = sum(np.arange(12).reshape(3, 4) + r for r in range(size))
    ok = summed.shape == (3, 4) and np.array_equal(summed, expected) and same and np.array_equal(out, expected)
    # The factory's MPI executor: this rank's part of a plan, stepped by the caller.
    from ringsim.execute.backend import make_executor
    from ringsim.execute.base import Executor
    plan = ringsim.make_plan("ring", size)
    executor = make_executor(plan, ringsim.Layout(size, 12), dtype=np.int64, backend="mpi", comm=comm)
    executor.load(x)
    executor.run()
    ok = ok and isinstance(executor, Executor)
    ok = ok and np.array_equal(executor.result().reshape(3, 4), expected)
    if rank == 0:
        print(json.dumps({"drop_in": bool(ok)}), flush=True)


if __name__ == "__main__":
    main()
    sys.stdout.flush()
