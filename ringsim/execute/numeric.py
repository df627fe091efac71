"""The numeric executor: each GPU's segment buffers as real arrays of an array module.

All S·G segment buffers (S segments per GPU) live in one array of shape (S·G, W), W the
widest segment (shorter segments keep a zero tail that only ever adds zeros). GPU g's
segment j is row ((j − g) mod S)·G + g: buffers are stored by diagonal, so (for the
walkthrough's S = G) the G transfers of one ring iteration — GPU k's segment k+c to GPU k+1 —
read one contiguous block of rows and write the next. A plan's switches (core/plan.py) own
rows like GPUs G … G+W−1 (G counts them too in the formula), which start at zero and are
never read as a result. A step compiles, once, into a few strided views, so it costs a few array
operations whatever G is, and its time is that of the data it moves.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from ..core.layout import Layout
from ..core.naming import plural
from ..core.order import reductions
from ..core.plan import COPY, Plan, Step

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
    """Runs a plan on real arrays of module `xp` (numpy, cupy): an Executor (execute/base.py)."""

    def __init__(self, plan: Plan, layout: Layout, xp: Any, dtype: Any) -> None:
        self.plan, self.layout, self.xp = plan, layout, xp
        self.segments = plan.segments
        self.participants = plan.participants  # GPUs, then switches
        self.buf = xp.zeros((self.segments * self.participants, layout.width), dtype=dtype)
        self._compiled: dict[int, Callable[[], None]] = {}
        self._reordered = False  # True once result() has put the buffers in result order

    def __repr__(self) -> str:
        """One line, not the buffers: '<NumericExecutor of ring · 8 GPUs · … per GPU · numpy>'."""
        return (f"<{type(self).__name__} of {self.plan.algorithm} · {plural(self.plan.gpus, 'GPU')} · "
                f"{plural(self.layout.elements, f'{self.buf.dtype} element')} per GPU · "
                f"{getattr(self.xp, '__name__', type(self.buf).__module__)}>")

    def _row(self, gpu, segment):
        return buffer_row(self.participants, gpu, segment, self.segments)

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
        self._reordered = False
        for gpu, row in enumerate(gradients):
            at = 0
            for segments, w in self._parts():
                rows = xp.asarray(self._row(gpu, segments))
                self.buf[rows, :w] = xp.asarray(row[at:at + len(segments) * w]).reshape(len(segments), w)
                at += len(segments) * w

    def gradients(self):
        """A copy of every GPU's flat gradient as a (G, N) array."""
        self._check_order()
        g, xp = self.plan.gpus, self.xp
        out = xp.empty((g, self.layout.elements), dtype=self.buf.dtype)
        for gpu in range(g):
            at = 0
            for segments, w in self._parts():
                rows = xp.asarray(self._row(gpu, segments))
                out[gpu, at:at + len(segments) * w] = self.buf[rows, :w].reshape(-1)
                at += len(segments) * w
        return out

    def result(self):
        """The (G, N) result without a full second copy (when S = G): reorders the buffers in place.

        When S = G and G divides N the result is a view of the buffers, which the next load()
        overwrites; steps can run again only after that load().
        """
        g, w, xp = self.plan.gpus, self.layout.width, self.xp
        if self.segments != g or self.participants != g:
            return self.gradients()
        self._check_order()
        self._reordered = True
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

    def _check_order(self) -> None:
        """Refuse to read or step buffers that result() has reordered, until the next load()."""
        if self._reordered:
            raise RuntimeError("result() reordered this executor's buffers; load() inputs to run again")

    # --- executing steps --------------------------------------------------------------
    def apply(self, index: int) -> None:
        """Carry out step `index` of the plan on the buffers."""
        self._check_order()
        action = self._compiled.get(index)
        if action is None:
            # Steps compile in order: each reads which buffers hold identical bits after the last.
            for earlier in range(len(self._compiled), index + 1):
                self._compiled[earlier] = self._compile(self.plan.steps[earlier])
            action = self._compiled[index]
        # IEEE arithmetic, as a plain sum of the inputs has it: past the largest float is inf,
        # inf - inf is NaN; NumPy would warn on stderr for each, which is not ringsim's to say.
        with np.errstate(over="ignore", invalid="ignore"):
            action()

    def run(self) -> None:
        """Carry out every step of the plan in order."""
        for index in range(len(self.plan.steps)):
            self.apply(index)

    # Which buffers hold the same bits: a class id per (GPU, segment), tracked as steps compile.
    # A copy passes its class on; a sum gets a new class, and targets whose sums would add the
    # same classes in the same order share one computation. Adding is commutative except for
    # NaN payloads, and NumPy's vector and scalar loops may pass operands in either order, so
    # a sum two GPUs both need is computed once and copied: every GPU ends bit for bit alike.
    def _classes(self) -> np.ndarray:
        if not hasattr(self, "_class"):
            g, s = self.participants, self.segments
            self._class = np.arange(g * s, dtype=np.int64).reshape(g, s)
            self._next_class = g * s
        return self._class

    def _fresh(self, count: int) -> np.ndarray:
        self._classes()
        ids = np.arange(self._next_class, self._next_class + count, dtype=np.int64)
        self._next_class += count
        return ids

    def _compile(self, step: Step) -> Callable[[], None]:
        classes = self._classes()
        src_gpu, dst_gpu, src, dst = expand(step, self.participants, self.segments)
        widths = (step.last - step.first + 1)
        segment = np.repeat(step.first, widths) + np.arange(int(widths.sum())) - \
            np.repeat(np.cumsum(widths) - widths, widths)
        is_copy = np.repeat(step.ops == COPY, widths)
        independent = len(np.unique(dst)) == len(dst) and not np.isin(src, dst).any()
        reduce = ~is_copy
        if independent and reduce.any():
            keys = np.stack([classes[src_gpu[reduce], segment[reduce]],
                             classes[dst_gpu[reduce], segment[reduce]]], axis=1)
            independent = len(np.unique(keys, axis=0)) == len(keys)
        if not independent:
            return self._compile_general(step)
        after = classes.copy()
        after[dst_gpu[is_copy], segment[is_copy]] = classes[src_gpu[is_copy], segment[is_copy]]
        after[dst_gpu[reduce], segment[reduce]] = self._fresh(int(reduce.sum()))
        self._class = after
        # No buffer is both read and written, each written once: reduce and copy transfers
        # may run one after the other, each as a few strided array operations.
        actions = [self._compile_strided(op, src[mask], dst[mask])
                   for op, mask in (("reduce", reduce), ("copy", is_copy)) if mask.any()]
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
        if buf.shape[1] * buf.itemsize >= _ROW_COPY_BYTES:
            # NumPy stages an operand through a temporary when the two views' address
            # ranges overlap (a bounds-only test); with segments this large, run those
            # runs segment by segment instead. Disjoint runs stay one large operation.
            pairs = [piece for r, (d, s) in zip(row_runs(src, dst), pairs)
                     for piece in (_split(d, s) if _bounds_overlap(r) else [(d, s)])]
        if op == "reduce":
            def reduce() -> None:
                for d, s in pairs:
                    xp.add(s, d, out=d)  # received + own, as order.arrival_order says ("d₄+a₄")
            return reduce

        def copy() -> None:
            for d, s in pairs:
                d[...] = s
        return copy

    def _compile_direct(self, groups) -> Callable[[], None] | None:
        """Row-by-row in-place execution of a general step (see `_direct_plan`), or None."""
        work = _direct_plan(groups)
        if work is None:
            return None
        buf, xp = self.buf, self.xp
        row = lambda r: buf[r:r + 1]  # noqa: E731
        ops = []
        for src, dst in work:
            out = row(dst[0])
            if len(src) == 1:
                ops.append((None, [row(src[0])], out, [row(t) for t in dst[1:]]))
                continue
            # Adding into dst[0] first would lose its value if it is a later addend.
            temp = xp.empty_like(out) if dst[0] in src[2:] else None
            ops.append((temp, [row(r) for r in src], out, [row(t) for t in dst[1:]]))

        def run() -> None:
            for temp, sources, out, others in ops:
                if len(sources) == 1:
                    out[...] = sources[0]
                else:
                    acc = out if temp is None else temp
                    xp.add(sources[0], sources[1], out=acc)
                    for more in sources[2:]:
                        xp.add(acc, more, out=acc)
                    if temp is not None:
                        out[...] = temp
                for other in others:
                    other[...] = out
        return run

    def _compile_general(self, step: Step) -> Callable[[], None]:
        """Several arrivals per buffer, or buffers that both send and receive.

        Everything is gathered from the state before the step and written back at the end;
        each buffer's arrivals are added in the order `order.reductions` gives, and a sum
        that several buffers need (the naive flood, a swap) is computed once for all of them.
        """
        buf, xp = self.buf, self.xp
        classes = self._classes()
        after = classes.copy()
        orders, copies = reductions(step)
        by_length: dict[int, tuple[list, list, list]] = defaultdict(lambda: ([], [], []))
        for (dst, first, last), order in [*orders.items(), *((k, [s]) for k, s in copies.items())]:
            dsts, segs, gpus = by_length[len(order)]
            width = last - first + 1
            dsts.append(np.full(width, dst))
            segs.append(np.arange(first, last + 1))
            gpus.append(np.repeat(np.array(order, dtype=np.int64)[:, None], width, axis=1))
        groups = []
        for length, (dsts, segs, gpus) in by_length.items():
            d, j, o = np.concatenate(dsts), np.concatenate(segs), np.concatenate(gpus, axis=1)
            if length == 1:  # copies: the same bits, the same class
                after[d, j] = classes[o[0], j]
                groups.append((xp.asarray(self._row(o, j)), xp.asarray(self._row(d, j)), None))
                continue
            keys = classes[o, j].T                               # (targets, length)
            _, first_use, use = np.unique(keys, axis=0, return_index=True, return_inverse=True)
            use = use.reshape(-1)
            after[d, j] = self._fresh(len(first_use))[use]
            table = self._row(o[:, first_use], j[first_use])     # (length, sums)
            groups.append((xp.asarray(table), xp.asarray(self._row(d, j)), xp.asarray(use)))
        self._class = after
        direct = self._compile_direct(groups)
        if direct is not None:
            return direct

        def run() -> None:
            results = []
            for table, target, use in groups:
                acc = buf[table[0]]
                if len(table) > 1:
                    acc = acc + buf[table[1]]
                for column in table[2:]:
                    xp.add(acc, buf[column], out=acc)
                results.append((target, acc if use is None else acc[use]))
            for target, acc in results:  # write only after every read: sends see the old state
                buf[target] = acc
        return run


_DIRECT_MAX_ROWS = 1 << 14  # past this many row operations a step gathers instead


def _direct_plan(groups) -> list[tuple[list[int], list[int]]] | None:
    """The step as (source rows, target rows) computations when they can run in place, else None.

    In place is safe when no computation writes a row another one reads: then each sum is
    added straight into its first target (through a temporary only when that target is
    also a later addend) and copied to the others, with no gather of the whole step.
    """
    work = []
    for table, target, use in groups:
        table, target = np.asarray(table), np.asarray(target)
        if use is None:
            work += [([int(s)], [int(t)]) for s, t in zip(table[0].tolist(), target.tolist())]
        else:
            use = np.asarray(use)
            for u in range(table.shape[1]):
                work.append((table[:, u].tolist(), target[use == u].tolist()))
    if sum(len(src) + len(dst) for src, dst in work) > _DIRECT_MAX_ROWS:
        return None
    readers: dict[int, int] = defaultdict(int)
    for src, _ in work:
        for row in set(src):
            readers[row] += 1
    for src, dst in work:
        if any(readers.get(row, 0) > (row in src) for row in dst):
            return None  # another computation reads a row this one writes
    return work
