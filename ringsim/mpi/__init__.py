"""ringsim over MPI: the engine's plans run as real messages between processes, one rank per GPU.

`ringsim.mpi.allreduce(x, algorithm="ring")` replaces comm.Allreduce in an mpi4py program;
`python -m ringsim.mpi` is the program `ringsim mpi` starts under mpiexec (or srun).
mpi4py is imported only when an MPI call is made, never by `import ringsim`.
"""

from __future__ import annotations

from ..algorithms import DEFAULT_ALGORITHM
from .watch import ArrivalError, RankFailedError


def allreduce(x, algorithm: str = DEFAULT_ALGORITHM, comm=None, **options):
    """Sum x over every rank of comm (default COMM_WORLD) with a ringsim plan; see collective.allreduce."""
    from .collective import allreduce as _allreduce
    return _allreduce(x, algorithm, comm, **options)


__all__ = ["ArrivalError", "RankFailedError", "allreduce"]
