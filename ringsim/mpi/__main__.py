"""`python -m ringsim.mpi …`: one rank of an MPI run (the form for mpiexec, mpirun and srun)."""

import sys

from .runner import main

if __name__ == "__main__":
    sys.exit(main())
