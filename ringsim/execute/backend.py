"""Choosing a backend: the array module that holds the buffers (NumPy, CuPy) and the executor
that runs a plan on them (NumPy, CuPy or MPI).

CuPy code (ringsim.execute.gpu) and mpi4py code (ringsim.mpi) are imported inside the
functions that need them, only when that backend is asked for, so `import ringsim` loads
neither.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

import numpy as np

from ..core.checks import echo
from ..core.errors import RingsimError, first_line
from ..core.layout import Layout
from ..core.plan import Plan
from .base import Executor
from .numeric import NumericExecutor

BACKENDS = ("auto", "numpy", "cupy")
EXECUTOR_BACKENDS = ("numpy", "cupy", "mpi")
# ringsim is installed from a clone (it is not on the package index), so the extra is '.[gpu]'.
INSTALL_CUPY = ("CuPy is not installed: in your ringsim clone, pip install '.[gpu]' "
                "(CUDA 12; '.[gpu-cuda13]' for CUDA 13)")


def _cupy() -> ModuleType:
    """CuPy with a usable CUDA device, or a RingsimError that says why not in one line."""
    try:
        cupy = importlib.import_module("cupy")
    except ModuleNotFoundError as exc:
        if exc.name != "cupy":  # CuPy is there but something it needs is not
            raise RingsimError(f"CuPy cannot be imported: {first_line(exc)}") from None
        raise RingsimError(INSTALL_CUPY) from None
    except Exception as exc:  # a broken install (e.g. a CUDA library it links) fails its own way
        raise RingsimError(f"CuPy cannot be imported: {first_line(exc)}") from None
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:  # CUDA reports its reason as an exception of its own kind
        raise RingsimError(f"CuPy cannot use a GPU: {first_line(exc)}") from None
    if count < 1:
        raise RingsimError("CuPy cannot use a GPU: no CUDA device is visible")
    return cupy


def array_module(name: str = "auto") -> ModuleType:
    """The array module for a backend name: 'numpy', 'cupy', or 'auto' (CuPy when it can run)."""
    if name == "numpy":
        return np
    if name == "cupy":
        return _cupy()
    if name == "auto":
        try:
            return _cupy()
        except RingsimError:
            return np
    raise RingsimError(f"unknown backend {echo(name)}; choose one of: {', '.join(BACKENDS)}")


def given_module(xp: Any) -> ModuleType:
    """The array module an API call was given as xp: numpy or cupy itself, or a backend name
    ('numpy', 'cupy', 'auto') as array_module reads it."""
    if isinstance(xp, str) and xp in BACKENDS:
        return array_module(xp)
    if xp is np or (isinstance(xp, ModuleType) and xp.__name__ == "cupy"):
        return xp
    raise RingsimError(f"xp must be an array module (numpy or cupy) or a backend name "
                       f"({', '.join(BACKENDS)}), got {echo(xp)}")


def module_of(array) -> ModuleType:
    """The array module an array belongs to (CuPy arrays → cupy, anything else → numpy)."""
    if type(array).__module__.split(".")[0] == "cupy":
        return importlib.import_module("cupy")
    return np


def to_numpy(array) -> np.ndarray:
    """A NumPy copy of an array of any backend."""
    return array.get() if hasattr(array, "get") and not isinstance(array, np.ndarray) else np.asarray(array)


def make_executor(plan: Plan, layout: Layout, xp: Any = None, dtype: Any = None, *,
                  backend: str | None = None, **options: Any) -> Executor:
    """The executor for a plan: by array module `xp` (numpy, cupy) or by `backend` name.

    backend='mpi' gives this rank's part of the plan over an mpi4py communicator
    (options: comm=, default COMM_WORLD, and timeout=); load() takes this rank's array and
    result() gives its sum. The other two hold every simulated GPU in this process.
    """
    if backend is None:
        backend = "cupy" if getattr(xp, "__name__", "") == "cupy" else "numpy"
    if backend == "numpy":
        return NumericExecutor(plan, layout, np if xp is None else xp, dtype)
    if backend == "cupy":
        from .gpu.executor import cupy_executor
        return cupy_executor(plan, layout, _cupy() if xp is None else xp, dtype, **options)
    if backend == "mpi":
        from ..mpi.collective import mpi_executor
        return mpi_executor(plan, layout, dtype, **options)
    raise RingsimError(f"unknown executor backend {echo(backend)}; choose one of: "
                       f"{', '.join(EXECUTOR_BACKENDS)}")
