"""`ringsim mpi --bench`: ringsim's plan over MPI against the library's own MPI_Allreduce.

Same ranks, same data, one run: each is warmed up once, then the two are timed in turn,
five times each (interleaved, so both see the same load on a shared machine), the ranks
lined up by a barrier before each; a time is the slowest rank's, the figure the best of five.
Target: ring over MPI within 1.5× MPI_Allreduce.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from typing import Any

import numpy as np

from ..algorithms import given_text, with_options
from ..core.errors import RingsimError
from .collective import run, session
from .data import rank_data
from .options import elements_of
from ..core.units import format_seconds
from ..core.width import say
from .story import bytes_text, library_name, options_of

TARGET = 1.5
REPEATS = 5


def timed(watch, comm, MPI, action) -> float:
    """The slowest rank's time for one call of `action`, ranks started together."""
    watch.wait([comm.Ibarrier()], [-1], -1)
    start = time.perf_counter()
    action()
    mine = np.array([time.perf_counter() - start])
    slowest = np.empty(1)
    watch.wait([comm.Iallreduce(mine, slowest, op=MPI.MAX)], [-1], -1)
    return float(slowest[0])


def best_of(watch, comm, MPI, *actions) -> list[float]:
    """Warm each action up once, then time them in turn REPEATS times: the best time of each."""
    for action in actions:
        action()
    best = [float("inf")] * len(actions)
    for _ in range(REPEATS):
        for i, action in enumerate(actions):
            best[i] = min(best[i], timed(watch, comm, MPI, action))
    return best


class WrongSum(RingsimError):
    """A timed run whose sum is not MPI_Allreduce's: its times mean nothing (exit status 1)."""


def check_sum(watch, comm, MPI, x: np.ndarray, got: np.ndarray, what: str) -> None:
    """Raise WrongSum on every rank where any rank's `got` is not MPI_Allreduce's sum of `x`:
    integers exactly, floats within (G−1)·eps·G·max|x|, the most two orders of G additions can
    differ by (a bound of scalars, so that the check holds one array and a mask of it)."""
    expected = np.empty_like(x)
    watch.wait([comm.Iallreduce(x, expected, op=MPI.SUM)], [-1], -1)
    if x.dtype.kind in "iu":
        wrong = not np.array_equal(got, expected)
    else:
        largest = np.array([max(abs(float(x.max())), abs(float(x.min()))) if x.size else 0.0])
        watch.wait([comm.Iallreduce(MPI.IN_PLACE, largest, op=MPI.MAX)], [-1], -1)
        size = comm.Get_size()
        bound = (size - 1) * float(np.finfo(x.dtype).eps) * size * float(largest[0])
        np.subtract(got, expected, out=expected)  # the gap, in place: no array more
        wrong = not bool((np.abs(expected, out=expected) <= bound).all())
    flags = np.array([int(wrong)], np.int64)
    watch.wait([comm.Iallreduce(MPI.IN_PLACE, flags, op=MPI.MAX)], [-1], -1)
    if flags[0]:
        raise WrongSum(f"{what} over MPI did not give MPI_Allreduce's sum on every rank, so its "
                       "time means nothing (a plain `ringsim mpi` run names the ranks)")


def bench(args: argparse.Namespace, comm: Any, MPI: Any) -> dict:
    """Time ringsim's plan and MPI_Allreduce on the same data; rank 0 prints the ratio."""
    rank, size = comm.Get_rank(), comm.Get_size()
    x = rank_data(args.seed, rank, elements_of(args), args.dtype)
    out = np.empty_like(x)
    chan, watch = session(MPI, comm, args.timeout)
    # Both write into the same preallocated `out`, as comm.Allreduce(x, out) does.
    ours, theirs = best_of(watch, chan.data, MPI,
                           lambda: run(x, args.algorithm, comm, out=out, timeout=args.timeout,
                                       **options_of(args)),
                           lambda: comm.Allreduce(x, out, op=MPI.SUM))
    # timed, then checked: a fast wrong sum is no result
    run(x, args.algorithm, comm, out=out, timeout=args.timeout, **options_of(args))
    check_sum(watch, chan.data, MPI, x, out, f"ringsim's {args.algorithm}")
    # the options named as every title names them: 'master (GPU2) over MPI vs MPI_Allreduce'
    what = with_options(args.algorithm, given_text(args.algorithm, size, options_of(args)))
    record = {"case": f"{what} over MPI vs MPI_Allreduce", "ranks": size,
              "elements": int(x.size), "dtype": args.dtype, "bytes_per_rank": int(x.nbytes),
              "ringsim_seconds": ours, "mpi_allreduce_seconds": theirs, "ratio": ours / theirs,
              "target": TARGET, "met": ours / theirs <= TARGET, "mpi_library": library_name(MPI),
              "cores": os.cpu_count(), "repeats": REPEATS}
    if rank == 0:
        if args.json:
            print(json.dumps(record))
        else:
            shared = f", sharing {record['cores']} cores" if size > (record["cores"] or size) else ""
            say(f"{record['case']} · {size} ranks{shared} · {x.size:,} {args.dtype} per rank "
                f"({bytes_text(x.nbytes)}) · {record['mpi_library']}")
            say(f"  ringsim {args.algorithm}: {format_seconds(ours)}   MPI_Allreduce: "
                f"{format_seconds(theirs)}   ratio {ours / theirs:.2f} (target ≤ {TARGET}: "
                f"{'met' if record['met'] else 'NOT met'}; best of {REPEATS} after a warm-up)")
    return record
