"""The numeric executor: each GPU's segment buffers as real arrays of an array module.

All G·G segment buffers live in one array of shape (G·G, W): row g·G + j is GPU g's
segment j, W the widest segment (shorter segments keep a zero tail that only ever adds
zeros). A step compiles, once, into a few strided views: the ring's G transfers of one
iteration become about three slices, so a step costs a few array operations whatever G
is, and its time is that of the data it moves.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from .layout import Layout
from .order import arrival_order
from .plan import Plan, Step


@dataclass(frozen=True)
class Run:
    """Transfers whose source and destination rows both advance by a constant stride."""

    src: int
    src_stride: int
    dst: int
    dst_stride: int
    count: int
    width: int


def _runs(step: Step, gpus: int) -> list[Run]:
    """Group the step's transfers, in plan order, into runs expressible as strided views."""
    src = step.src * gpus + step.first
    dst = step.dst * gpus + step.first
    width = step.last - step.first + 1
    n = len(src)
    if n == 0:
        return []
    ds, dd, dw = np.diff(src), np.diff(dst), np.diff(width)
    # A stride change at position i (between transfers i and i+1) differs from i−1's.
    change = np.flatnonzero((ds[1:] != ds[:-1]) | (dd[1:] != dd[:-1]) | (dw[1:] != 0)) + 1
    runs = []
    i = 0
    while i < n:
        if i == n - 1 or dw[i] != 0:
            j = i
        else:
            k = np.searchsorted(change, i, side="right")
            j = int(change[k]) if k < len(change) else n - 1
        count, w = j - i + 1, int(width[i])
        s_stride = int(ds[i]) if count > 1 else 0
        d_stride = int(dd[i]) if count > 1 else 0
        if count > 1 and w > 1 and (s_stride not in (0, w) or d_stride != w):
            j, count, s_stride, d_stride = i, 1, 0, 0
        runs.append(Run(int(src[i]), s_stride, int(dst[i]), d_stride, count, w))
        i = j + 1
    return runs


def _rows(buf, start: int, stride: int, count: int, width: int):
    """A (count, width, W) view of rows start + i·stride + [0, width) of buf."""
    if count == 1 or stride == 0:
        return buf[start:start + width][None]
    if width == 1:
        stop = start + stride * (count - 1) + (1 if stride > 0 else -1)
        return buf[start:(stop if stop >= 0 else None):stride][:, None]
    return buf[start:start + count * width].reshape(count, width, buf.shape[1])


def _disjoint_targets(step: Step, gpus: int) -> bool:
    """True when no buffer receives twice and no buffer both sends and receives in the step."""
    d_lo = step.dst * gpus + step.first
    order = np.argsort(d_lo, kind="stable")
    d_lo = d_lo[order]
    d_hi = (step.dst * gpus + step.last)[order]
    if np.any(d_lo[1:] <= d_hi[:-1]):
        return False
    s_lo = step.src * gpus + step.first
    s_hi = step.src * gpus + step.last
    k = np.searchsorted(d_lo, s_hi, side="right") - 1
    hit = (k >= 0) & (d_hi[np.maximum(k, 0)] >= s_lo)
    return not np.any(hit)


class NumericExecutor:
    """Runs a plan on real arrays of module `xp` (numpy, cupy): load, apply steps, read back."""

    def __init__(self, plan: Plan, layout: Layout, xp: Any, dtype: Any) -> None:
        self.plan, self.layout, self.xp = plan, layout, xp
        g = plan.gpus
        self.buf = xp.zeros((g * g, layout.width), dtype=dtype)
        self._compiled: dict[int, Callable[[], None]] = {}

    # --- moving data in and out -------------------------------------------------------
    def _parts(self):
        """(segment range, width) pairs covering every GPU's flat gradient, in order."""
        g, n = self.plan.gpus, self.layout.elements
        q, r = divmod(n, g)
        return [(segs, w) for segs, w in ((slice(0, r), q + 1), (slice(r, g), q)) if segs.stop > segs.start]

    def load(self, gradients) -> None:
        """Copy a (G, N) array of gradients into the segment buffers (the input is not kept)."""
        g = self.plan.gpus
        buf3 = self.buf.reshape(g, g, self.layout.width)
        buf3[...] = 0
        at = 0
        for segs, w in self._parts():
            count = segs.stop - segs.start
            buf3[:, segs, :w] = gradients[:, at:at + count * w].reshape(g, count, w)
            at += count * w

    def gradients(self):
        """Every GPU's flat gradient as a (G, N) array (a view when G divides N)."""
        g, n = self.plan.gpus, self.layout.elements
        buf3 = self.buf.reshape(g, g, self.layout.width)
        if n % g == 0:
            return buf3.reshape(g, n)
        out = self.xp.empty((g, n), dtype=self.buf.dtype)
        at = 0
        for segs, w in self._parts():
            count = segs.stop - segs.start
            out[:, at:at + count * w] = buf3[:, segs, :w].reshape(g, count * w)
            at += count * w
        return out

    # --- executing steps --------------------------------------------------------------
    def apply(self, index: int) -> None:
        """Carry out step `index` of the plan on the buffers."""
        action = self._compiled.get(index)
        if action is None:
            action = self._compiled[index] = self._compile(self.plan.steps[index])
        action()

    def run(self) -> None:
        """Carry out every step of the plan in order."""
        for index in range(len(self.plan.steps)):
            self.apply(index)

    def _compile(self, step: Step) -> Callable[[], None]:
        if len(step) and _disjoint_targets(step, self.plan.gpus):
            return self._compile_strided(step)
        return self._compile_general(step)

    def _compile_strided(self, step: Step) -> Callable[[], None]:
        """Independent transfers: each run is one in-place add or copy between two views."""
        buf, add = self.buf, self.xp.add
        pairs = [(_rows(buf, r.dst, r.dst_stride, r.count, r.width),
                  _rows(buf, r.src, r.src_stride, r.count, r.width))
                 for r in _runs(step, self.plan.gpus)]
        if step.op == "copy":
            def copy() -> None:
                for dst, src in pairs:
                    dst[...] = src
            return copy

        def reduce() -> None:
            for dst, src in pairs:
                add(dst, src, out=dst)
        return reduce

    def _compile_general(self, step: Step) -> Callable[[], None]:
        """Several arrivals per buffer, or buffers that both send and receive: fold in order."""
        g, buf, xp = self.plan.gpus, self.buf, self.xp
        arrivals: dict[tuple[int, int, int], list[int]] = defaultdict(list)
        for t in step.transfers():
            arrivals[(t.dst, t.first, t.last)].append(t.src)
        sources = {t.src for t in step.transfers()} & {t.dst for t in step.transfers()}
        rows = lambda arr, gpu, f, l: arr[gpu * g + f:gpu * g + l + 1]  # noqa: E731

        def run() -> None:
            # Sends read the state before the step: snapshot only when a sender also receives.
            before = buf.copy() if sources else buf
            for (dst, first, last), srcs in arrivals.items():
                target = rows(buf, dst, first, last)
                if step.op == "copy":
                    target[...] = rows(before, srcs[0], first, last)
                    continue
                order = arrival_order(dst, srcs)
                own = order.index(dst)
                if own <= 1:
                    # (x + own) and (own + x) are the same bits, so add in place from the start.
                    for s in order:
                        if s != dst:
                            xp.add(target, rows(before, s, first, last), out=target)
                    continue
                partial = rows(before, order[0], first, last) + rows(before, order[1], first, last)
                for s in order[2:own]:
                    xp.add(partial, rows(before, s, first, last), out=partial)
                xp.add(target, partial, out=target)
                for s in order[own + 1:]:
                    xp.add(target, rows(before, s, first, last), out=target)
        return run


def make_executor(plan: Plan, layout: Layout, xp: Any, dtype: Any):
    """The executor for an array module: NumPy's strided one, or CuPy's (ringsim.gpu) for cupy."""
    if getattr(xp, "__name__", "") == "cupy":
        from .gpu.executor import cupy_executor  # loads CuPy code only when CuPy is in use
        return cupy_executor(plan, layout, xp, dtype)
    return NumericExecutor(plan, layout, xp, dtype)
