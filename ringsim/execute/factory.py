"""The one place that chooses an executor: NumPy, CuPy (ringsim.execute.gpu) or MPI (ringsim.mpi).

Executors live in their own modules and never import each other's front doors; the engine
asks this factory, which imports CuPy or mpi4py code only when that backend is asked for.
"""

from __future__ import annotations

from typing import Any

from ..core.errors import RingsimError
from ..core.layout import Layout
from ..core.plan import Plan

EXECUTOR_BACKENDS = ("numpy", "cupy", "mpi")


def make_executor(plan: Plan, layout: Layout, xp: Any = None, dtype: Any = None, *,
                  backend: str | None = None, **options: Any):
    """The executor for a plan: by array module `xp` (numpy, cupy) or by `backend` name.

    backend='mpi' gives this rank's part of the plan over an mpi4py communicator
    (options: comm=, default COMM_WORLD, and timeout=); load() takes this rank's array and
    result() gives its sum. The other two hold every simulated GPU in this process.
    """
    if backend is None:
        backend = "cupy" if getattr(xp, "__name__", "") == "cupy" else "numpy"
    if backend == "numpy":
        import numpy as np

        from .numeric import NumericExecutor
        return NumericExecutor(plan, layout, np if xp is None else xp, dtype)
    if backend == "cupy":
        if xp is None:
            from .backend import array_module
            xp = array_module("cupy")
        from .gpu.executor import cupy_executor  # loads CuPy code only when CuPy is in use
        return cupy_executor(plan, layout, xp, dtype, **options)
    if backend == "mpi":
        from ..mpi.collective import mpi_executor  # loads mpi4py only when MPI is in use
        return mpi_executor(plan, layout, dtype, **options)
    raise RingsimError(f"unknown executor backend {backend!r}; choose one of: "
                       f"{', '.join(EXECUTOR_BACKENDS)}")
