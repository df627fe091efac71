"""The streams executor: simulated GPU g on device g mod D, its own stream, real copies.

Each simulated GPU holds its G segment buffers as one (G, W) CuPy array on its device.
A step runs the Scheduler's operations (ringsim.gpu.placement): fetches are
device-to-device copies (cudaMemcpyPeerAsync between devices, with peer access enabled
where the hardware allows; cudaMemcpyAsync within one), additions are CuPy element-wise
adds on the receiver's stream, and events order the streams. With D = 1 the same code runs
every stream on the one device, which is how it is tested on a single-GPU machine.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..layout import Layout
from ..plan import Plan
from .executor import D1_NOTE
from .placement import (Add, Copy, Fetch, Partial, Record, Rows, Scheduler, Stage, Wait, device_of,
                        segment_blocks)

_PEER_ALREADY_ENABLED = 704  # cudaErrorPeerAccessAlreadyEnabled


class StreamExecutor:
    """Runs a plan with one CuPy array, stream and pair of events per simulated GPU."""

    def __init__(self, plan: Plan, layout: Layout, xp: Any, dtype: Any, *, devices: int) -> None:
        self.plan, self.layout, self.xp, self.devices = plan, layout, xp, devices
        g, w = plan.gpus, layout.width
        self.dtype = np.dtype(dtype)
        self.device = [device_of(k, devices) for k in range(g)]
        self.peer = _enable_peer_access(xp, devices)
        self.buffers, self.streams, self.events = [], [], {}
        for k in range(g):
            with xp.cuda.Device(self.device[k]):
                self.streams.append(xp.cuda.Stream(non_blocking=True))
                with self.streams[k]:
                    self.buffers.append(xp.zeros((g, w), dtype=self.dtype))
                for kind in "EF":
                    self.events[(kind, k)] = xp.cuda.Event(disable_timing=True)
        self.scheduler = Scheduler(g)
        self.note = (f"{g} simulated GPUs on {devices} devices: transfers between devices are "
                     "device-to-device copies" if devices > 1 else D1_NOTE)

    # --- moving data in and out -------------------------------------------------------
    def load(self, gradients) -> None:
        """Copy each GPU's flat gradient (rows of a (G, N) array, or G 1-D arrays) onto its device."""
        xp = self.xp
        blocks = segment_blocks(self.plan.gpus, self.layout.elements)
        # The input may still be being written on a device's default stream, which our
        # non-blocking streams do not wait for: finish all work on every device first.
        for device in range(self.devices):
            xp.cuda.Device(device).synchronize()
        for k, row in enumerate(gradients):
            with xp.cuda.Device(self.device[k]), self.streams[k]:
                row = xp.asarray(row)  # a NumPy row is copied onto this device
                if row.device.id != self.device[k]:
                    row = row.copy()  # CuPy copies an array of another device onto this one
                buf = self.buffers[k]
                buf[...] = 0
                for rows, width, flat in blocks:
                    buf[rows, :width] = row[flat].reshape(-1, width)
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
            for rows, width, flat in segment_blocks(g, n):
                out[k, flat] = buf[rows, :width].reshape(-1)
        return out

    def unload(self):
        """The (G, N) result (a copy: the buffers live on several devices)."""
        return self.gradients()

    def synchronize(self) -> None:
        """Wait until every stream has finished its work."""
        for stream in self.streams:
            stream.synchronize()

    # --- executing steps --------------------------------------------------------------
    def apply(self, index: int) -> None:
        """Issue step `index` on the streams (asynchronously; reads synchronise)."""
        xp, w = self.xp, self.layout.width
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
                    if isinstance(op.out, Partial) and op.out.key not in partials:
                        partials[op.out.key] = value(op.a) + value(op.b)
                    else:
                        xp.add(value(op.a), value(op.b), out=value(op.out))

    def run(self) -> None:
        """Issue every step in order."""
        for index in range(len(self.plan.steps)):
            self.apply(index)


def _enable_peer_access(xp: Any, devices: int) -> dict[tuple[int, int], bool]:
    """Enable peer access between every pair of the D devices where the hardware allows it."""
    runtime, peer = xp.cuda.runtime, {}
    for a in range(devices):
        for b in range(devices):
            if a == b:
                continue
            peer[(a, b)] = bool(runtime.deviceCanAccessPeer(a, b))
            if peer[(a, b)]:
                with xp.cuda.Device(a):
                    try:
                        runtime.deviceEnablePeerAccess(b)
                    except runtime.CUDARuntimeError as error:
                        if getattr(error, "status", None) != _PEER_ALREADY_ENABLED:
                            raise
    return peer
