"""The numeric executor: each GPU's segment buffers as real arrays of an array module.

All S·G segment buffers (S segments per GPU) live in one array of shape (S·G, W), W the
widest segment (shorter segments keep a zero tail that only ever adds zeros). GPU g's
segment j is row ((j − g) mod S)·G + g: buffers are stored by diagonal, so (for the
seed's S = G) the G transfers of one ring iteration — GPU k's segment k+c to GPU k+1 —
read one contiguous block of rows and write the next. A step compiles, once, into a few strided views, so it costs a few array
operations whatever G is, and its time is that of the data it moves.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from .layout import Layout
from .order import reductions
from .plan import COPY, Plan, Step

_ROW_COPY_BYTES = 1 << 18  # segments at least this large are copied one by one


def buffer_row(gpus: int, gpu, segment, segments: int | None = None):
    """Row of GPU `gpu`'s segment `segment` in the (S·G, W) buffer array (works on arrays; S = G by default)."""
    return ((segment - gpu) % (gpus if segments is None else segments)) * gpus + gpu


@dataclass(frozen=True)
class Run:
    """Segment copies whose source and destination rows both advance by a constant stride."""

    src: int
    src_stride: int
    dst: int
    dst_stride: int
    count: int


def expand(step: Step, gpus: int, segments: int | None = None
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The step as one entry per segment moved: (src GPU, dst GPU, src row, dst row), in plan order."""
    widths = step.last - step.first + 1
    owner = np.repeat(np.arange(len(step)), widths)
    segment = step.first[owner] + np.arange(int(widths.sum())) - np.repeat(np.cumsum(widths) - widths, widths)
    src, dst = step.src[owner], step.dst[owner]
    return src, dst, buffer_row(gpus, src, segment, segments), buffer_row(gpus, dst, segment, segments)


def row_runs(src: np.ndarray, dst: np.ndarray) -> list[Run]:
    """Group (src row, dst row) pairs, in order, into runs of constant strides."""
    n = len(src)
    if n == 0:
        return []
    ds, dd = np.diff(src), np.diff(dst)
    # Position i starts a new stride when stride i differs from stride i−1.
    change = np.flatnonzero((ds[1:] != ds[:-1]) | (dd[1:] != dd[:-1])) + 1
    runs = []
    i = 0
    while i < n:
        if i == n - 1:
            j = i
        else:
            k = np.searchsorted(change, i, side="right")
            j = int(change[k]) if k < len(change) else n - 1
        count = j - i + 1
        runs.append(Run(int(src[i]), int(ds[i]) if count > 1 else 0,
                        int(dst[i]), int(dd[i]) if count > 1 else 0, count))
        i = j + 1
    return runs


def _rows(buf, start: int, stride: int, count: int):
    """A (count, W) view of rows start + i·stride of buf (one row, broadcastable, for stride 0)."""
    if count == 1 or stride == 0:
        return buf[start:start + 1]
    stop = start + stride * (count - 1) + (1 if stride > 0 else -1)
    return buf[start:(stop if stop >= 0 else None):stride]


def _bounds_overlap(run: Run) -> bool:
    """True when the rows a run reads and the rows it writes span overlapping ranges."""
    s_end = run.src + run.src_stride * (run.count - 1)
    d_end = run.dst + run.dst_stride * (run.count - 1)
    return max(min(run.src, s_end), min(run.dst, d_end)) <= min(max(run.src, s_end), max(run.dst, d_end))


def _split(dst, src) -> list:
    """A run's views as one (1, W) pair per row (the source may be one broadcast row)."""
    return [(dst[i:i + 1], src[i:i + 1] if len(src) > 1 else src) for i in range(len(dst))]


class NumericExecutor:
    """Runs a plan on real arrays of module `xp` (numpy, cupy): load, apply steps, read back."""

    def __init__(self, plan: Plan, layout: Layout, xp: Any, dtype: Any) -> None:
        self.plan, self.layout, self.xp = plan, layout, xp
        self.segments = getattr(plan, "segments", plan.gpus)
        self.buf = xp.zeros((self.segments * plan.gpus, layout.width), dtype=dtype)
        self._compiled: dict[int, Callable[[], None]] = {}

    def _row(self, gpu, segment):
        return buffer_row(self.plan.gpus, gpu, segment, self.segments)

    # --- moving data in and out -------------------------------------------------------
    def _parts(self):
        """(segments, width) pairs covering a GPU's flat gradient in order: longer ones first."""
        s, n = self.segments, self.layout.elements
        q, r = divmod(n, s)
        return [(np.arange(a, b), w) for a, b, w in ((0, r, q + 1), (r, s, q)) if b > a]

    def load(self, gradients) -> None:
        """Copy each GPU's flat gradient (rows of a (G, N) array, or G 1-D arrays) into the buffers.

        GPU by GPU, so that no second full-size copy of the input is ever made.
        """
        xp = self.xp
        self.buf[...] = 0
        for gpu, row in enumerate(gradients):
            at = 0
            for segments, w in self._parts():
                rows = xp.asarray(self._row(gpu, segments))
                self.buf[rows, :w] = xp.asarray(row[at:at + len(segments) * w]).reshape(len(segments), w)
                at += len(segments) * w

    def gradients(self):
        """A copy of every GPU's flat gradient as a (G, N) array."""
        g, xp = self.plan.gpus, self.xp
        out = xp.empty((g, self.layout.elements), dtype=self.buf.dtype)
        for gpu in range(g):
            at = 0
            for segments, w in self._parts():
                rows = xp.asarray(self._row(gpu, segments))
                out[gpu, at:at + len(segments) * w] = self.buf[rows, :w].reshape(-1)
                at += len(segments) * w
        return out

    def unload(self):
        """The (G, N) result without a full second copy (when S = G): reorders the buffers in place.

        The executor cannot run steps afterwards. When S = G and G divides N the result is a view.
        """
        g, w, xp = self.plan.gpus, self.layout.width, self.xp
        self._compiled.clear()
        self.apply = self._unloaded  # type: ignore[method-assign]
        if self.segments != g:
            out = self.gradients()
            self.buf = None
            return out
        cells = self.buf.reshape(g, g, w)           # cells[d, gpu] = segment (d + gpu) mod G
        for d in range(g):                          # transpose, one block row at a time
            upper = cells[d, d + 1:].copy()
            cells[d, d + 1:] = cells[d + 1:, d]
            cells[d + 1:, d] = upper
        for gpu in range(1, g):                     # cells[gpu, d] → cells[gpu, segment]
            cells[gpu] = xp.roll(cells[gpu], gpu, axis=0)
        if self.layout.elements == g * w:
            return cells.reshape(g, g * w)
        out = xp.empty((g, self.layout.elements), dtype=self.buf.dtype)
        at = 0
        for segments, width in self._parts():
            block = cells[:, segments[0]:segments[-1] + 1, :width]
            out[:, at:at + block.shape[1] * width] = block.reshape(g, -1)
            at += block.shape[1] * width
        return out

    def _unloaded(self, index: int) -> None:
        raise RuntimeError("this executor's buffers were unloaded; make a new one to run steps")

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
        _, _, src, dst = expand(step, self.plan.gpus, self.segments)
        independent = len(np.unique(dst)) == len(dst) and not np.isin(src, dst).any()
        if not independent:
            return self._compile_general(step)
        # No buffer is both read and written, each written once: reduce and copy transfers
        # may run one after the other, each as a few strided array operations.
        widths = (step.last - step.first + 1)
        is_copy = np.repeat(step.ops == COPY, widths)
        actions = [self._compile_strided(op, src[mask], dst[mask])
                   for op, mask in (("reduce", ~is_copy), ("copy", is_copy)) if mask.any()]
        if len(actions) == 1:
            return actions[0]

        def both() -> None:
            for action in actions:
                action()
        return both

    def _compile_strided(self, op: str, src: np.ndarray, dst: np.ndarray) -> Callable[[], None]:
        """One arrival per buffer, senders not receiving: each run is one in-place add or copy."""
        buf, xp = self.buf, self.xp
        pairs = [(_rows(buf, r.dst, r.dst_stride, r.count), _rows(buf, r.src, r.src_stride, r.count))
                 for r in row_runs(src, dst)]
        if op == "reduce":
            def reduce() -> None:
                for d, s in pairs:
                    xp.add(s, d, out=d)  # received + own, as order.arrival_order says ("d₄+a₄")
            return reduce
        if buf.shape[1] * buf.itemsize >= _ROW_COPY_BYTES:
            # NumPy stages an assignment through a temporary when the two views' address
            # ranges overlap (a bounds-only test); with segments this large, copy those
            # runs segment by segment instead. Disjoint runs stay one large copy.
            pairs = [piece for r, (d, s) in zip(row_runs(src, dst), pairs)
                     for piece in (_split(d, s) if _bounds_overlap(r) else [(d, s)])]

        def copy() -> None:
            for d, s in pairs:
                d[...] = s
        return copy

    def _compile_general(self, step: Step) -> Callable[[], None]:
        """Several arrivals per buffer, or buffers that both send and receive.

        Everything is gathered from the state before the step and written back at the end;
        each buffer's arrivals are added in the order `order.reductions` gives, so every
        GPU that computes a sum (the naive flood, a swap) computes the same bits.
        """
        buf, xp = self.buf, self.xp
        orders, copies = reductions(step)
        by_length: dict[int, tuple[list, list]] = defaultdict(lambda: ([], []))
        for (dst, first, last), order in [*orders.items(), *((k, [s]) for k, s in copies.items())]:
            segments = np.arange(first, last + 1)
            targets, table = by_length[len(order)]
            targets.append(self._row(dst, segments))
            table.append(np.stack([self._row(gpu, segments) for gpu in order]))
        groups = [(xp.asarray(np.concatenate(targets)), xp.asarray(np.concatenate(table, axis=1)))
                  for targets, table in by_length.values()]

        def run() -> None:
            results = []
            for target, table in groups:
                acc = buf[table[0]]
                if len(table) > 1:
                    acc = acc + buf[table[1]]
                for column in table[2:]:
                    xp.add(acc, buf[column], out=acc)
                results.append((target, acc))
            for target, acc in results:  # write only after every read: sends see the old state
                buf[target] = acc
        return run

