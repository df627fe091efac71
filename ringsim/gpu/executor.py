"""Executors that run a plan on CuPy arrays: one fused kernel per step, or streams per GPU.

With one device (D = 1) every simulated GPU's buffers share that device, so a step whose
targets are disjoint (every ring step) is one launch of the fused kernel; steps with several
arrivals per buffer (master, naive) run through NumericExecutor's vectorised path, which
adds in `arrival_order` exactly as NumPy does. With D ≥ 2 each simulated GPU lives on device
g mod D and transfers are real device-to-device copies (ringsim.gpu.multidevice).
"""

from __future__ import annotations

import os
from typing import Any, Callable

import numpy as np

from ..errors import RingsimError
from ..layout import Layout
from ..numeric import NumericExecutor
from ..plan import Plan, Step
from . import kernel

# launch(grid, block, buf, table, runs, W, rows, reduce): runs the fused kernel's arithmetic.
Launch = Callable[..., None]

D1_NOTE = ("all simulated GPUs share one device: the speed measured is that device's memory, "
           "not an interconnect")


class FusedExecutor(NumericExecutor):
    """NumericExecutor whose disjoint-target steps run as one fused kernel launch each."""

    def __init__(self, plan: Plan, layout: Layout, xp: Any, dtype: Any,
                 launch: Launch | None = None) -> None:
        super().__init__(plan, layout, xp, dtype)
        self.fused_dtype = kernel.supported(self.buf.dtype)
        self._launch = launch if launch is not None else _raw_kernel_launch(xp, self.buf.dtype)
        self.fused_steps: set[int] = set()  # indices of the steps that compiled to the kernel
        self._index = {id(step): index for index, step in enumerate(plan.steps)}
        self.devices = 1
        self.note = D1_NOTE

    def _compile(self, step: Step) -> Callable[[], None]:
        g, width = self.plan.gpus, self.layout.width
        if not (self.fused_dtype and width and kernel.fusable(step, g)):
            return super()._compile(step)
        self.fused_steps.add(self._index[id(step)])
        table, rows = kernel.step_table(step, g)
        device_table = self.xp.asarray(table)  # uploaded once per step, reused every run
        grid, block = kernel.launch_shape(width, rows)
        launch, buf = self._launch, self.buf
        runs, reduce = np.int32(len(table)), np.int32(step.op == "reduce")
        w, r = np.int64(width), np.int64(rows)

        def fused() -> None:
            launch(grid, block, buf, device_table, runs, w, r, reduce)
        return fused


_KERNELS: dict[str, Any] = {}


def _raw_kernel_launch(xp: Any, dtype: Any) -> Launch:
    """A launcher for cupy.RawKernel of the dtype's source (compiled lazily, cached)."""
    def launch(grid, block, buf, table, runs, width, rows, reduce) -> None:
        name = kernel.dtype_name(dtype)
        raw = _KERNELS.get(name)
        if raw is None:
            raw = _KERNELS[name] = xp.RawKernel(kernel.source(dtype), kernel.KERNEL_NAME)
        raw(grid, block, (buf, table, runs, width, rows, reduce))
    return launch


def visible_devices(xp: Any) -> int:
    """D: CUDA devices ringsim places simulated GPUs on (RINGSIM_DEVICES may lower it)."""
    count = int(xp.cuda.runtime.getDeviceCount())
    limit = os.environ.get("RINGSIM_DEVICES", "").strip()
    if limit:
        try:
            wanted = int(limit)
        except ValueError:
            raise RingsimError(f"RINGSIM_DEVICES must be a whole number, got {limit!r}") from None
        if wanted < 1:
            raise RingsimError(f"RINGSIM_DEVICES must be at least 1, got {wanted}")
        count = min(count, wanted)
    return count


def cupy_executor(plan: Plan, layout: Layout, xp: Any, dtype: Any, *, devices: int | None = None,
                  mode: str | None = None):
    """The CuPy executor for a plan: fused kernels on one device, streams across D ≥ 2.

    `devices` (default: every visible device, see `visible_devices`) and `mode` ('fused' or
    'streams'; default: fused when D = 1) let tests run the streams executor on one device.
    """
    d = visible_devices(xp) if devices is None else devices
    mode = mode or ("fused" if d == 1 else "streams")
    if mode == "fused":
        if d != 1:
            raise RingsimError("the fused executor runs on one device; use mode='streams' for D ≥ 2")
        return FusedExecutor(plan, layout, xp, dtype)
    if mode == "streams":
        from .multidevice import StreamExecutor
        return StreamExecutor(plan, layout, xp, dtype, devices=d)
    raise RingsimError(f"unknown CuPy executor mode {mode!r}; choose 'fused' or 'streams'")
