"""Executors that run a plan on CuPy arrays: one fused kernel per step, or streams per GPU.

With one device (D = 1) every simulated GPU's buffers share that device, so a step whose
targets are disjoint (every ring step) is one launch of the fused kernel; steps with several
arrivals per buffer (master, naive) gather their arrivals and add them in `arrival_order`
exactly as NumPy does, with the kernel source's `ringsim_add` (CuPy's own `add` flushes
float32 subnormals to zero). With D ≥ 2 each simulated GPU lives on device g mod D and
transfers are real device-to-device copies (ringsim.execute.gpu.multidevice).

The fused kernel's rows are those of a plan with as many segments as GPUs; a plan with
S ≠ G segments runs through NumericExecutor's own paths (CuPy's add: see docs/gpu.md).
"""

from __future__ import annotations

import os
from collections import defaultdict
from typing import Any, Callable

import numpy as np

from ...core.checks import check_count, parse_count
from ...core.errors import RingsimError
from ...core.layout import Layout
from ..numeric import NumericExecutor, buffer_row
from ...core.plan import Plan, Step
from . import kernel
from .multidevice import StreamExecutor
from .placement import D1_NOTE, combine
from .probe import kernel_problem

# launch(grid, block, buf, table, runs, W, rows, reduce): runs the fused kernel's arithmetic.
Launch = Callable[..., None]
# add(a, b, out): out = a + b element-wise, out may be a.
Add = Callable[[Any, Any, Any], None]


class FusedExecutor(NumericExecutor):
    """NumericExecutor whose disjoint-target steps run as one fused kernel launch each."""

    def __init__(self, plan: Plan, layout: Layout, xp: Any, dtype: Any,
                 launch: Launch | None = None, add: Add | None = None) -> None:
        super().__init__(plan, layout, xp, dtype)
        self.fused_dtype = kernel.supported(self.buf.dtype)
        # The kernel's rows and the gathers below assume S = G segments (buffer_row's layout).
        self.square = plan.segments == plan.gpus and not plan.switches
        kernels = kernel.Kernels(xp, self.buf.dtype)
        self._launch = launch if launch is not None else kernels.step
        self._add = add if add is not None else kernels.add
        self.fused_steps: set[int] = set()  # indices of the steps that compiled to the kernel
        self._index = {id(step): index for index, step in enumerate(plan.steps)}
        self.devices = 1
        self.note = D1_NOTE

    def _compile(self, step: Step) -> Callable[[], None]:
        g, width = self.plan.gpus, self.layout.width
        op = kernel.uniform_op(step)
        if not (self.fused_dtype and self.square and width and op and kernel.fusable(step, g)):
            return super()._compile(step)
        self.fused_steps.add(self._index[id(step)])
        table, rows = kernel.step_table(step, g)
        device_table = self.xp.asarray(table)  # uploaded once per step, reused every run
        grid, block = kernel.launch_shape(width, rows)
        launch, buf = self._launch, self.buf
        runs, reduce = np.int32(len(table)), np.int32(op == "reduce")
        w, r = np.int64(width), np.int64(rows)

        def fused() -> None:
            launch(grid, block, buf, device_table, runs, w, r, reduce)
        return fused

    def _compile_general(self, step: Step) -> Callable[[], None]:
        """Several arrivals per buffer, or buffers that both send and receive: NumericExecutor's
        gather, fold in `arrival_order` and write-back, with ringsim_add for the adds."""
        if not (self.fused_dtype and self.square):
            return super()._compile_general(step)  # CuPy's add (no kernel for this dtype / S ≠ G)
        g, buf, xp, add = self.plan.gpus, self.buf, self.xp, self._add
        arrivals: dict[tuple[int, int, int], list[tuple[int, str]]] = defaultdict(list)
        for t in step.transfers():
            arrivals[(t.dst, t.first, t.last)].append((t.src, t.op))
        by_length: dict[int, tuple[list, list]] = defaultdict(lambda: ([], []))
        for (dst, first, last), sources in arrivals.items():
            segments = np.arange(first, last + 1)
            _, order = combine(dst, sources)
            targets, table = by_length[len(order)]
            targets.append(buffer_row(g, dst, segments))
            table.append(np.stack([buffer_row(g, gpu, segments) for gpu in order]))
        groups = [(xp.asarray(np.concatenate(targets)), xp.asarray(np.concatenate(table, axis=1)))
                  for targets, table in by_length.values()]

        def run() -> None:
            results = []
            for target, table in groups:
                acc = buf[table[0]]  # a gathered copy, so the adds may go into it in place
                for column in table[1:]:
                    add(acc, buf[column], acc)
                results.append((target, acc))
            for target, acc in results:  # write only after every read: sends see the old state
                buf[target] = acc
        return run


def visible_devices(xp: Any) -> int:
    """D: CUDA devices ringsim places simulated GPUs on (RINGSIM_DEVICES may lower it)."""
    count = int(xp.cuda.runtime.getDeviceCount())
    limit = os.environ.get("RINGSIM_DEVICES", "").strip()
    if limit:
        try:
            wanted = parse_count(limit, "RINGSIM_DEVICES", minimum=None)
        except RingsimError:
            raise RingsimError(f"RINGSIM_DEVICES must be a whole number, got {limit!r}") from None
        count = min(count, check_count(wanted, "RINGSIM_DEVICES", minimum=1))
    return count


def cupy_executor(plan: Plan, layout: Layout, xp: Any, dtype: Any, *, devices: int | None = None,
                  mode: str | None = None):
    """The CuPy executor for a plan: fused kernels on one device, streams across D ≥ 2.

    `devices` (default: every visible device, see `visible_devices`) and `mode` ('fused' or
    'streams'; default: fused when D = 1) let tests run the streams executor on one device.
    """
    problem = kernel_problem(xp)
    if problem:
        raise RingsimError(f"{problem} (pip install '.[gpu]' from a clone of ringsim brings NVRTC and the CUDA headers)")
    d = visible_devices(xp) if devices is None else devices
    mode = mode or ("fused" if d == 1 else "streams")
    if mode == "fused":
        if d != 1:
            raise RingsimError("the fused executor runs on one device; use mode='streams' for D ≥ 2")
        return FusedExecutor(plan, layout, xp, dtype)
    if mode == "streams":
        return StreamExecutor(plan, layout, xp, dtype, devices=d)
    raise RingsimError(f"unknown CuPy executor mode {mode!r}; choose 'fused' or 'streams'")
