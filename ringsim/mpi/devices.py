"""Where a rank's buffer lives and how its messages travel: host memory, or a CUDA device.

A CuPy input stays on its device. Messages go straight from device memory when the MPI
library is CUDA-aware (mpi4py passes CuPy arrays by __cuda_array_interface__, see mpi4py's
demo/cuda-aware-mpi/use_cupy.py); otherwise the rank stages them through host memory.
Awareness is not queryable through mpi4py, so it is read from the library's own build line
(MPICH `--with-cuda`, Open MPI's CUDA build) or forced with RINGSIM_MPI_CUDA_AWARE=1/0.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

HOST = "host memory (NumPy)"
CUDA_AWARE = "CUDA-aware MPI, straight from device memory"
STAGED = "host staging: device → host → MPI → host → device"


def cuda_aware(MPI: Any) -> bool:
    """True when the MPI library can send from CUDA device memory."""
    forced = os.environ.get("RINGSIM_MPI_CUDA_AWARE", "").strip()
    if forced in ("0", "1"):
        return forced == "1"
    text = MPI.Get_library_version().lower()
    if "open mpi" in text:
        return os.environ.get("OMPI_MCA_opal_cuda_support", "").lower() in ("1", "true")
    return "--with-cuda" in text and os.environ.get("MPIR_CVAR_ENABLE_GPU", "1") != "0"


def local_device(comm: Any, MPI: Any, devices: int) -> int:
    """Device local_rank mod D: ranks on one node spread over its D devices."""
    node = comm.Split_type(MPI.COMM_TYPE_SHARED)
    try:
        return node.Get_rank() % devices
    finally:
        node.Free()


def placement(x, comm: Any, MPI: Any) -> tuple[Any, str, bool]:
    """(array module, transport in words, stage through host?) for a rank's flat input."""
    if isinstance(x, np.ndarray) or type(x).__module__.split(".")[0] != "cupy":
        return np, HOST, False
    import cupy  # the input is a CuPy array, so CuPy is installed
    if cuda_aware(MPI):
        return cupy, CUDA_AWARE, False
    return cupy, STAGED, True
