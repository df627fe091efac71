"""NCCL point-to-point (cupy.cuda.nccl) as the link between ranks whose buffers are on CUDA devices.

The ranks make one NCCL communicator, rank 0's unique id sent to the others over MPI (as
cupyx.distributed and mscclpp's python/benchmark/nccl_op.py do). A step's receives and
sends go in one ncclGroupStart/ncclGroupEnd on the current stream (send/recv need NCCL ≥
2.7), so all of them are in flight at once; the rank then polls a CUDA event with the same
bounded wait as MPI messages, so a dead peer is named instead of waited on forever.
Messages are raw bytes (NCCL_UINT8), like the MPI link's.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .watch import Watch

UNIQUE_ID_BYTES = 128  # NCCL_UNIQUE_ID_BYTES


def nccl_module(cupy: Any):
    """cupy.cuda.nccl when CuPy was built with an NCCL that has send/recv, else None."""
    try:
        from cupy.cuda import nccl
    except ImportError:
        return None
    if not getattr(nccl, "available", False) or nccl.get_version() < 2700:
        return None
    return nccl


class NcclLink:
    """A step's messages as grouped ncclSend/ncclRecv on the current CUDA stream."""

    def __init__(self, cupy: Any, nccl: Any, comm: Any, watch: Watch) -> None:
        self.cupy, self.nccl, self.watch = cupy, nccl, watch
        rank, size = comm.Get_rank(), comm.Get_size()
        uid = np.zeros(UNIQUE_ID_BYTES, np.int16)
        if rank == 0:
            uid[:] = nccl.get_unique_id()  # a tuple of signed chars
        watch.wait([comm.Ibcast(uid, root=0)], [-1], -1)
        self.comm = nccl.NcclCommunicator(size, tuple(int(v) for v in uid), rank)
        self.size = size

    def exchange(self, receives: list, sends: list, index: int) -> int:
        """Post every receive (src, array) and send (dst, array) in one group; wait, bounded."""
        nccl, stream = self.nccl, self.cupy.cuda.get_current_stream()
        nccl.groupStart()
        for src, array in receives:
            self.comm.recv(array.data.ptr, array.nbytes, nccl.NCCL_UINT8, src, stream.ptr)
        for dst, array in sends:
            self.comm.send(array.data.ptr, array.nbytes, nccl.NCCL_UINT8, dst, stream.ptr)
        nccl.groupEnd()
        done = self.cupy.cuda.Event(disable_timing=True)
        done.record(stream)
        peers = sorted({p for p, _ in receives} | {p for p, _ in sends})
        self.watch.wait_for(lambda: done.done, lambda: [] if done.done else peers, index)
        self.comm.check_async_error()
        # NCCL reports no received count: a receive completes only with exactly its bytes.
        return sum(array.nbytes for _, array in receives)
