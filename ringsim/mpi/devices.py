"""Where a rank's buffer lives and how its messages travel: host memory, or a CUDA device.

A CuPy input stays on its device. Messages go through NCCL's send/recv when CuPy has
NCCL ≥ 2.7 (ringsim.mpi.nccl), else straight from device memory when the MPI library is
CUDA-aware (mpi4py passes CuPy arrays by __cuda_array_interface__, see mpi4py's
demo/cuda-aware-mpi/use_cupy.py); otherwise the rank stages them through host memory.
Awareness is not queryable through mpi4py, so it is read from the library's own build line
(MPICH `--with-cuda`, Open MPI's CUDA build) or forced with RINGSIM_MPI_CUDA_AWARE=1/0.
"""

from __future__ import annotations

import os
import zlib
from typing import Any

import numpy as np

HOST = "host memory (NumPy)"
NCCL = "NCCL send/recv between devices (cupy.cuda.nccl)"
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


def placement(x) -> tuple[Any, bool]:
    """(array module, on a device?) for a rank's flat input; a CuPy input's device becomes current."""
    if isinstance(x, np.ndarray) or type(x).__module__.split(".")[0] != "cupy":
        return np, False
    import cupy  # the input is a CuPy array, so CuPy is installed
    x.device.use()  # kernels, NCCL and staging copies on the input's own device
    return cupy, True


def device_transport(cupy: Any, comm: Any, MPI: Any, watch: Any) -> str:
    """How device buffers travel, decided the same way on every rank (a collective).

    NCCL when every rank has it and no two ranks share a device (NCCL refuses that);
    else CUDA-aware MPI when every rank's library is; else staging through host memory.
    """
    from .nccl import nccl_module
    use_nccl = os.environ.get("RINGSIM_MPI_NCCL", "1") != "0" and nccl_module(cupy) is not None
    mine = np.array([zlib.crc32(MPI.Get_processor_name().encode()), cupy.cuda.Device().id,
                     use_nccl, cuda_aware(MPI)], np.int64)
    table = np.empty((comm.Get_size(), 4), np.int64)
    watch.wait([comm.Iallgather(mine, table)], [-1], -1)
    distinct = len({(int(a), int(b)) for a, b in table[:, :2]}) == len(table)
    if table[:, 2].all() and distinct:
        return NCCL
    if table[:, 3].all():
        return CUDA_AWARE
    return STAGED
