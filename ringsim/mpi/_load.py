"""mpi4py, imported only when an MPI run is asked for, or one clear line saying how to get it."""

from __future__ import annotations

import importlib
from types import ModuleType

from ..core.errors import RingsimError, first_line

INSTALL = "pip install '.[mpi]' from a clone of ringsim"


def mpi() -> ModuleType:
    """mpi4py.MPI (initialising MPI on first use), or a RingsimError naming the extra."""
    try:
        return importlib.import_module("mpi4py.MPI")
    except ModuleNotFoundError as exc:
        if exc.name not in ("mpi4py", "mpi4py.MPI"):
            raise RingsimError(f"mpi4py cannot be imported: {exc}") from None
        raise RingsimError(f"mpi4py is not installed: {INSTALL}") from None
    except (ImportError, RuntimeError) as exc:  # e.g. no MPI library found for mpi4py
        raise RingsimError(f"mpi4py cannot load an MPI library: {first_line(exc)}; {INSTALL}") from None
