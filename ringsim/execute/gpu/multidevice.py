"""The streams executor: simulated GPU g on device g mod D, its own stream, real copies.

Each simulated GPU holds its G segment buffers as one (G, W) CuPy array on its device.
A step runs the Scheduler's operations (ringsim.execute.gpu.placement): fetches are
device-to-device copies (cudaMemcpyPeerAsync between devices, with peer access enabled
for the device pairs the plan's transfers cross, where the hardware allows; cudaMemcpyAsync
within one), additions are the kernel source's `ringsim_add` on the receiver's stream (CuPy's
own `add` flushes float32 subnormals), and events order the streams. With D = 1 the same code
runs every stream on the one device, which is how it is tested on a single-GPU machine.
A GPU's buffer has one row per segment, so plans with S ≠ G segments run here unchanged.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...core.layout import Layout
from ...core.plan import Plan
from . import kernel
from .placement import (D1_NOTE, Add, Copy, Fetch, Partial, Record, Rows, Scheduler, Stage, Wait,
                        device_of, peer_pairs, segment_blocks)

_PEER_ALREADY_ENABLED = 704  # cudaErrorPeerAccessAlreadyEnabled


class StreamExecutor:
    """Runs a plan with one CuPy array, stream and pair of events per simulated GPU: an Executor."""

    def __init__(self, plan: Plan, layout: Layout, xp: Any, dtype: Any, *, devices: int) -> None:
        self.plan, self.layout, self.xp, self.devices = plan, layout, xp, devices
        g, w = plan.gpus, layout.width
        self.segments = plan.segments
        self.dtype = np.dtype(dtype)
        self.device = [device_of(k, devices) for k in range(g)]
        self.peer = _enable_peer_access(xp, peer_pairs(plan, devices))
        if kernel.supported(self.dtype):
            self.add = kernel.Kernels(xp, self.dtype).add
        else:  # no kernel for this dtype (complex, bool): CuPy's add, same object as a and out
            self.add = lambda a, b, out: xp.add(a, b, out=out)
        self.buffers, self.streams, self.events = [], [], {}
        for k in range(g):
            with xp.cuda.Device(self.device[k]):
                self.streams.append(xp.cuda.Stream(non_blocking=True))
                with self.streams[k]:
                    self.buffers.append(xp.zeros((self.segments, w), dtype=self.dtype))
                for kind in "EF":
                    self.events[(kind, k)] = xp.cuda.Event(disable_timing=True)
        self.scheduler = Scheduler(g)
        self.note = (f"{g} simulated GPUs on {devices} devices: transfers between devices are "
                     "device-to-device copies" if devices > 1 else D1_NOTE)

    # --- moving data in and out -------------------------------------------------------
    def load(self, gradients) -> None:
        """Copy each GPU's flat gradient (rows of a (G, N) array, or G 1-D arrays) onto its device."""
        xp = self.xp
        blocks = segment_blocks(self.segments, self.layout.elements)
        rows = list(gradients)
        # An input may still be being written on its own device's streams, which ours do not
        # wait for: finish the work on every device an input lives on (any device, not only
        # the D this executor uses), and on ours.
        sources = {row.device.id for row in rows if _is_device_array(xp, row)}
        for device in sorted(sources | set(range(self.devices))):
            xp.cuda.Device(device).synchronize()
        for k, row in enumerate(rows):
            if _is_device_array(xp, row) and row.device.id != self.device[k] \
                    and not row.flags.c_contiguous:
                # CuPy's copy() of a non-contiguous array from another device first makes it
                # contiguous there on that device's current stream, which our streams do not
                # wait for: do it ourselves and wait for it.
                with xp.cuda.Device(row.device.id):
                    row = xp.ascontiguousarray(row)
                    xp.cuda.get_current_stream().synchronize()
            with xp.cuda.Device(self.device[k]), self.streams[k]:
                row = xp.asarray(row)  # a NumPy row is copied onto this device
                if row.device.id != self.device[k]:
                    row = row.copy()  # CuPy copies a contiguous array of another device here
                buf = self.buffers[k]
                buf[...] = 0
                for segs, width, flat in blocks:
                    buf[segs, :width] = row[flat].reshape(-1, width)
        self.synchronize()
        self.scheduler.reset()

    def gradients(self):
        """A copy of every simulated GPU's flat gradient as a (G, N) array on the current device."""
        xp = self.xp
        g, n = self.plan.gpus, self.layout.elements
        self.synchronize()
        out = xp.empty((g, n), dtype=self.dtype)
        for k in range(g):
            buf = self.buffers[k]
            if buf.device.id != out.device.id:
                buf = buf.copy()  # onto the current device
            for rows, width, flat in segment_blocks(self.segments, n):
                out[k, flat] = buf[rows, :width].reshape(-1)
        return out

    def result(self):
        """The (G, N) result (a copy: the buffers live on several devices)."""
        return self.gradients()

    def synchronize(self) -> None:
        """Wait until every stream has finished its work."""
        for stream in self.streams:
            stream.synchronize()

    # --- executing steps --------------------------------------------------------------
    def apply(self, index: int) -> None:
        """Issue step `index` on the streams (asynchronously; reads synchronise)."""
        xp, w, add = self.xp, self.layout.width, self.add
        runtime = xp.cuda.runtime
        item = self.dtype.itemsize
        staged: dict[int, Any] = {}
        partials: dict[int, Any] = {}

        def value(operand):
            if isinstance(operand, Rows):
                return self.buffers[operand.gpu][operand.first:operand.last + 1]
            return staged[operand.key] if isinstance(operand, Stage) else partials[operand.key]

        for op in self.scheduler.step(self.plan.steps[index]):
            stream = self.streams[op.stream]
            with xp.cuda.Device(self.device[op.stream]), stream:
                if isinstance(op, Wait):
                    stream.wait_event(self.events[op.event])
                elif isinstance(op, Record):
                    self.events[op.event].record(stream)
                elif isinstance(op, Fetch):
                    # Allocated on this stream: CuPy's pool reuses it only in this stream's order.
                    stage = staged[op.key] = xp.empty((op.last - op.first + 1, w), dtype=self.dtype)
                    nbytes = stage.size * item
                    if nbytes == 0:
                        continue
                    src_ptr = self.buffers[op.src].data.ptr + op.first * w * item
                    src_dev, dst_dev = self.device[op.src], self.device[op.stream]
                    if src_dev != dst_dev:
                        runtime.memcpyPeerAsync(stage.data.ptr, dst_dev, src_ptr, src_dev,
                                                nbytes, stream.ptr)
                    else:
                        runtime.memcpyAsync(stage.data.ptr, src_ptr, nbytes,
                                            runtime.memcpyDeviceToDevice, stream.ptr)
                elif isinstance(op, Copy):
                    value(op.target)[...] = value(op.source)
                elif isinstance(op, Add):
                    a, b = value(op.a), value(op.b)
                    if type(op.out) is type(op.a) and op.out == op.a:
                        out = a  # in place: the same view object, so nothing copies a first
                    elif isinstance(op.out, Partial) and op.out.key not in partials:
                        out = partials[op.out.key] = xp.empty_like(a)
                    else:
                        out = value(op.out)
                    add(a, b, out)

    def run(self) -> None:
        """Issue every step in order."""
        for index in range(len(self.plan.steps)):
            self.apply(index)


def _is_device_array(xp: Any, array) -> bool:
    """True for an array of the array module (it has a device), False for NumPy and lists."""
    return isinstance(array, xp.ndarray)


def _enable_peer_access(xp: Any, pairs: list[tuple[int, int]]) -> dict[tuple[int, int], bool]:
    """Enable peer access for each (source, destination) device pair where the hardware allows.

    A fetch runs on the destination's stream and reads the source's memory, so the
    destination is the device that gets access to its peer (cudaDeviceEnablePeerAccess).
    """
    runtime, peer = xp.cuda.runtime, {}
    for src, dst in pairs:
        peer[(src, dst)] = bool(runtime.deviceCanAccessPeer(dst, src))
        if peer[(src, dst)]:
            with xp.cuda.Device(dst):
                try:
                    runtime.deviceEnablePeerAccess(src)
                except runtime.CUDARuntimeError as error:
                    if getattr(error, "status", None) != _PEER_ALREADY_ENABLED:
                        raise
    return peer
