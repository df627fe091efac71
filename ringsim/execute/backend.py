"""Choosing the array module that holds the simulated GPUs' buffers: NumPy or CuPy."""

from __future__ import annotations

import importlib
from types import ModuleType

import numpy as np

from ..core.errors import RingsimError

BACKENDS = ("auto", "numpy", "cupy")
# ringsim is installed from a clone (it is not on the package index), so the extra is '.[gpu]'.
INSTALL_CUPY = ("CuPy is not installed: in your ringsim clone, pip install '.[gpu]' "
                "(CUDA 12; '.[gpu-cuda13]' for CUDA 13)")


def _first_line(exc: BaseException) -> str:
    """An exception's message as one line (its type's name when it has none)."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _cupy() -> ModuleType:
    """CuPy with a usable CUDA device, or a RingsimError that says why not in one line."""
    try:
        cupy = importlib.import_module("cupy")
    except ModuleNotFoundError as exc:
        if exc.name != "cupy":  # CuPy is there but something it needs is not
            raise RingsimError(f"CuPy cannot be imported: {_first_line(exc)}") from None
        raise RingsimError(INSTALL_CUPY) from None
    except Exception as exc:  # a broken install (e.g. a CUDA library it links) fails its own way
        raise RingsimError(f"CuPy cannot be imported: {_first_line(exc)}") from None
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:  # CUDA reports its reason as an exception of its own kind
        raise RingsimError(f"CuPy cannot use a GPU: {_first_line(exc)}") from None
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
    raise RingsimError(f"unknown backend {name!r}; choose one of: {', '.join(BACKENDS)}")


def module_of(array) -> ModuleType:
    """The array module an array belongs to (CuPy arrays → cupy, anything else → numpy)."""
    if type(array).__module__.split(".")[0] == "cupy":
        return importlib.import_module("cupy")
    return np


def to_numpy(array) -> np.ndarray:
    """A NumPy copy of an array of any backend."""
    return array.get() if hasattr(array, "get") and not isinstance(array, np.ndarray) else np.asarray(array)
