"""The program every rank runs (`python -m ringsim.mpi`, started by `ringsim mpi` or srun/mpirun).

Each rank makes its own data, runs the plan with ringsim.mpi, and sends rank 0 what it
measured; rank 0 tells the story in walk's sentences and checks the result against
MPI_Allreduce and against the in-process executor. A failure anywhere ends every rank
with one line from the lowest surviving rank, and a non-zero exit status.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
import time

from ..core.arguments import as_flag, naming
from ..core.errors import RingsimError
from ..core.textout import printable
from ._load import mpi
from .data import rank_data
from .options import add_run_arguments, check_run, elements_of

PROG = "ringsim mpi"  # its errors read as `ringsim mpi`'s own


def _backstop(limit: float) -> None:
    """A thread that ends this rank if one wait's loop stops turning (stuck inside an MPI call)."""
    from . import watch

    def guard() -> None:
        while True:
            time.sleep(1.0)
            if time.monotonic() - watch.heartbeat[0] > limit:
                sys.stderr.write(f"{PROG}: error: this rank made no progress for {limit:g} s "
                                 "(blocked inside MPI); stopping\n")
                sys.stderr.flush()
                os._exit(1)
    threading.Thread(target=guard, name="ringsim-backstop", daemon=True).start()


def ranks_on_this_node(comm, MPI) -> int:
    """How many of the communicator's ranks share this rank's machine (and its memory)."""
    node = comm.Split_type(MPI.COMM_TYPE_SHARED)
    try:
        return node.Get_size()
    finally:
        node.Free()


def _refusal(args: argparse.Namespace, comm, MPI) -> str | None:
    """Why the run cannot go ahead, the same on every rank, or None. Each rank checks the
    memory of all the ranks on its machine, since they share it; every rank then learns of
    any refusal, so that none is left waiting for one that has stopped."""
    try:
        check_run(args, comm.Get_size(), ranks_on_this_node(comm, MPI), running=True,
                  more_ranks="start it with mpiexec -n 4 python -m ringsim.mpi")
        mine = None
    except RingsimError as error:
        mine = str(error)
    return next((found for found in comm.allgather(mine) if found), None)


def _launcher_rank() -> int | None:
    """This process's rank as mpiexec, mpirun or srun number it, read before MPI starts (None
    where none says)."""
    for name in ("OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID"):
        value = os.environ.get(name, "")
        if value.isdigit():
            return int(value)
    return None


def main(argv: list[str] | None = None) -> int:
    """Parse, run this rank's part, report from rank 0; returns the exit status."""
    with naming(as_flag):  # errors name the flags typed, not the Python keywords
        return _run(argv)


def _run(argv: list[str] | None) -> int:
    """main's work, with errors naming the command line's flags."""
    parser = argparse.ArgumentParser(prog="python -m ringsim.mpi",
                                     description="One rank of a ringsim MPI run (start it with "
                                                 "mpiexec, srun or `ringsim mpi -n G`).")
    add_run_arguments(parser)

    def error(message: str):
        # One line, as `ringsim` says it, and once for the job: by rank 0 (as the launcher
        # numbers it) where the launcher says, before MPI is started.
        if _launcher_rank() in (None, 0):
            print(f"{PROG}: error: {printable(message)}", file=sys.stderr)
        sys.exit(2)
    parser.error = error
    args = parser.parse_args(argv)
    try:
        MPI = mpi()
    except RingsimError as error:
        print(f"{PROG}: error: {error}", file=sys.stderr)
        return 2
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    # MPICH's hydra signals survivors with SIGUSR1 when a rank dies; ringsim finds the rank itself.
    if hasattr(signal, "SIGUSR1"):
        signal.signal(signal.SIGUSR1, signal.SIG_IGN)
    refused = _refusal(args, comm, MPI)
    if refused is not None:
        if rank == 0:
            print(f"{PROG}: error: {refused}", file=sys.stderr)
        return 2
    _backstop(3 * args.timeout + 30)
    from .watch import RankFailedError
    try:
        if args.bench:
            from .bench import bench
            bench(args, comm, MPI)
        elif args.calibrate:
            from .calibrate import calibrate
            calibrate(args, comm, MPI)
        else:
            from .story import narrated_run
            return narrated_run(args, comm, MPI, rank_data(args.seed, rank, elements_of(args), args.dtype))
    except RankFailedError as error:
        if rank == min(r for r in range(size) if r != error.dead):
            print(f"{PROG}: error: {error}", file=sys.stderr)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(1)  # MPI_Finalize would wait for the dead rank: leave without it
    except RingsimError as error:
        from .bench import WrongSum
        if rank == 0:
            print(f"{PROG}: error: {error}", file=sys.stderr)
        return 1 if isinstance(error, WrongSum) else 2
    return 0
