"""Plans: an algorithm as pure data — ordered steps of transfers, no gradient arrays.

Every GPU's gradient is split into S segments (`Plan.segments`; the walkthrough's ring has S = G,
a pipelined tree S = chunks, K rings S = K·G). A transfer moves segments first..last
(0-based, inclusive) of GPU `src` into the same segments of GPU `dst`, either adding them
("reduce") or replacing them ("copy"); the op is a column like src and dst, so one step
can reduce up a tree while it copies down. All transfers of a step happen at once: every
send reads the state before the step. Each step keeps its transfers as small read-only
integer columns, so a ring plan for 1,000 GPUs (two million transfers) is built in
milliseconds.

A plan may also name switches (`Plan.switches`, W of them): participants G … G+W−1 that
hold no gradient, only a buffer of their own that starts empty. A switch that reduces
what the GPUs push and sends the sum back (NVLink SHARP, InfiniBand SHARP) is then one
more src or dst in the columns; results, checks and per-GPU counts read the GPUs only.
"""

from __future__ import annotations

import functools
import numbers
from dataclasses import dataclass, field
from typing import Iterator, Literal, NamedTuple

import numpy as np

from .errors import RingsimError
from .naming import participant_name, plural, subscript

Op = Literal["reduce", "copy"]
OPS = ("reduce", "copy")  # the op column stores the index into this tuple
REDUCE, COPY = 0, 1


_CODE_ARRAYS = {name: np.array([code], dtype=np.int8) for code, name in enumerate(OPS)}


class Transfer(NamedTuple):
    """One send: segments first..last of GPU src into GPU dst (0-based), reduce or copy."""

    src: int
    dst: int
    first: int
    last: int
    op: str

    def __str__(self) -> str:
        return self.text()

    def text(self, gpus: int | None = None, switches: int = 0) -> str:
        """'GPU1 → GPU2 seg₁ +='; participants from `gpus` on are named as switches."""
        segs = subscript(self.first + 1)
        if self.last != self.first:
            segs += "…" + subscript(self.last + 1)
        arrow = "+=" if self.op == "reduce" else ":="
        limit = max(self.src, self.dst) + 1 if gpus is None else gpus
        src, dst = (participant_name(x, limit, switches) for x in (self.src, self.dst))
        return f"{src} → {dst} seg{segs} {arrow}"


def _column(values, dtype=np.int64) -> np.ndarray:
    col = np.array(values, dtype=dtype).reshape(-1)
    col.flags.writeable = False
    return col


_INT64 = np.iinfo(np.int64)


def _flat(values, what: str = "a column") -> np.ndarray:
    """An int64 column of the values; a 1-D int64 array is itself (steps may share a column).

    Whole numbers only: a float is taken when it is whole (4.0), never truncated (0.7 is
    refused, not GPU 0), and NaN, None, text or a number past int64 are refused."""
    if isinstance(values, np.ndarray) and values.dtype == np.int64:
        return values if values.ndim == 1 else values.reshape(-1)
    try:
        raw = np.asarray(values)
    except (ValueError, TypeError):
        raise RingsimError(f"{what} must be whole numbers in a flat list, got a ragged "
                           f"{type(values).__name__}") from None
    kind = raw.dtype.kind
    if kind == "O":  # Python ints past int64, None, mixed objects: check each value
        if not all(isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in raw.flat):
            bad = next(v for v in raw.flat if not isinstance(v, numbers.Integral) or isinstance(v, bool))
            raise RingsimError(f"{what} must hold whole numbers, got {str(bad)[:20]}")
        if raw.size and not _INT64.min <= min(raw.flat) <= max(raw.flat) <= _INT64.max:
            raise RingsimError(f"{what} holds a number past 64-bit integers")
        raw = raw.astype(np.int64)
    elif kind == "u":
        if raw.size and int(raw.max()) > _INT64.max:
            raise RingsimError(f"{what} holds a number past 64-bit integers")
    elif kind == "f":
        with np.errstate(invalid="ignore"):
            fine = np.isfinite(raw) & (raw == np.round(raw)) & (np.abs(raw) <= 2**53)
        if not fine.all():
            raise RingsimError(f"{what} must hold whole numbers (a float is taken only when whole "
                               f"and at most 2**53, as 4.0), got {raw[~fine].flat[0]!r}")
    elif kind != "i":
        raise RingsimError(f"{what} must hold whole numbers, got {raw.dtype} values")
    col = raw.astype(np.int64, copy=False)
    return col if col.ndim == 1 else col.reshape(-1)


def _owned(values: np.ndarray, shape: tuple) -> np.ndarray:
    """A read-only copy of the column, broadcast to `shape` (the caller's array stays its own)."""
    col = np.array(np.broadcast_to(values, shape)) if values.shape != shape else values.copy()
    col.flags.writeable = False
    return col


def _given(values: np.ndarray, shape: tuple) -> np.ndarray:
    """A column handed over by a plan builder: made read-only, copied only to broadcast."""
    if values.shape != shape:
        return _owned(values, shape)
    values.flags.writeable = False
    return values


@functools.lru_cache(maxsize=32)
def _op_column(code: int, length: int) -> np.ndarray:
    """A read-only column of one op code; steps of one length and op share it (columns never change)."""
    col = np.full(length, code, dtype=np.int8)
    col.flags.writeable = False
    return col


def _op_codes(op) -> np.ndarray:
    """'reduce'/'copy' (or a sequence of them, or of codes 0/1) as a column of codes."""
    if isinstance(op, str) and op in OPS:
        return _CODE_ARRAYS[op]
    if isinstance(op, np.ndarray) and op.dtype == np.int8 and ((op == REDUCE) | (op == COPY)).all():
        return op.reshape(-1)
    if isinstance(op, (str, numbers.Integral)) or op is None:
        values = [op]
    else:
        try:
            values = list(np.asarray(op, dtype=object).reshape(-1))
        except (ValueError, TypeError):
            raise RingsimError("a step's ops must be 'reduce' or 'copy', one or a flat list") from None
    codes = []
    for value in values:
        if isinstance(value, (str, np.str_)) and value in OPS:
            codes.append(OPS.index(value))
        elif isinstance(value, numbers.Integral) and not isinstance(value, bool) \
                and int(value) in (REDUCE, COPY):  # 0.5 or 7 is no op, never rounded to one
            codes.append(int(value))
        else:
            raise RingsimError(f"unknown transfer op {str(value)[:20]!r}; expected one of "
                               f"{', '.join(OPS)}")
    return _column(codes, np.int8)


@dataclass(frozen=True, eq=False)
class Step:
    """One iteration: a phase name, its 1-based iteration number, and its transfers.

    Columns: src, dst, first, last (int64) and ops (int8: 0 reduce, 1 copy). `route` gives
    the words a sentence puts after what is sent, for reduce and for copy transfers
    ("up the tree", "down the tree"); `swap` names what a pair of GPUs sending to each
    other in this step exchange ("halves", "whole gradients").
    """

    phase: str
    iteration: int
    iterations: int
    src: np.ndarray
    dst: np.ndarray
    first: np.ndarray
    last: np.ndarray
    ops: np.ndarray
    route: tuple[str, str] = ("", "")
    swap: str = ""

    @classmethod
    def build(cls, phase: str, iteration: int, iterations: int, op,
              src, dst, first, last=None, *, route: tuple[str, str] = ("", ""),
              swap: str = "", handed_over: bool = False) -> "Step":
        """A step from columns (scalars broadcast); `op` is one op or a column; `last` defaults to `first`.

        `handed_over=True`: the caller gives its fresh int64 arrays away (a plan builder), so
        they are made read-only instead of copied.
        """
        codes = _op_codes(op)
        parts = [_flat(v, f"a step's {name} column") for v, name in
                 ((src, "src"), (dst, "dst"), (first, "first"))]
        ends = None if last is None else _flat(last, "a step's last column")
        shapes = {p.shape for p in parts}
        try:
            shape = shapes.pop() if len(shapes) == 1 and len(codes) == 1 and ends is None else \
                np.broadcast_shapes(*(p.shape for p in parts), codes.shape,
                                    *(() if ends is None else (ends.shape,)))
        except ValueError:
            lengths = ", ".join(str(len(p)) for p in (*parts, codes, *(() if ends is None else (ends,))))
            raise RingsimError(f"a step's columns (src, dst, first, op, last) must be one length "
                               f"or single values, got lengths {lengths}") from None
        own = _given if handed_over else _owned
        src_c, dst_c, first_c = (own(p, shape) for p in parts)
        last_c = first_c if last is None else own(ends, shape)
        ops_c = _op_column(int(codes[0]), shape[0]) if len(codes) == 1 else _owned(codes, shape)
        return cls(phase, iteration, iterations, src_c, dst_c, first_c, last_c, ops_c, tuple(route), swap)

    def __len__(self) -> int:
        return len(self.src)

    @property
    def reduces(self) -> np.ndarray:
        """Per transfer: True where it adds into the receiver's buffer, False where it copies."""
        return self.ops == REDUCE

    @property
    def mixed(self) -> bool:
        """True when the step holds both reduce and copy transfers."""
        return len(self.ops) > 0 and not bool((self.ops == self.ops[0]).all())

    def __repr__(self) -> str:
        """One line, not the columns: '<Step reduce-scatter 2 of 7 · 8 transfers · reduce>'."""
        return f"<Step {self.phase} {self.iteration} of {self.iterations} · " \
               f"{plural(len(self), 'transfer')}{'' if not len(self) else ' · ' + self.op_text()}>"

    def op_text(self) -> str:
        """What the step's transfers do: 'reduce', 'copy' or 'mixed' ('copy' for an empty step)."""
        return "mixed" if self.mixed else OPS[int(self.ops[0])] if len(self) else "copy"

    def transfers(self) -> Iterator[Transfer]:
        """The step's transfers, in plan order."""
        for s, d, f, l, o in zip(self.src.tolist(), self.dst.tolist(), self.first.tolist(),
                                 self.last.tolist(), self.ops.tolist()):
            yield Transfer(s, d, f, l, OPS[o])


def _count(value: object, what: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise RingsimError(f"{what} must be a whole number of at least {minimum}, got {value!r}")
    return int(value)


@dataclass(frozen=True, eq=False)
class Plan:
    """A schedule for an all-reduce of G GPUs' gradients, each split into S segments (S = G by default).

    `switches` (W, default 0): participants numbered G … G+W−1 after the GPUs, with no
    gradient of their own, whose S segment buffers start empty.
    """

    algorithm: str
    gpus: int
    steps: tuple[Step, ...]
    options: dict = field(default_factory=dict)
    segments: int | None = None
    switches: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "gpus", _count(self.gpus, "a plan's number of GPUs", 1))
        segments = self.gpus if self.segments is None else self.segments
        object.__setattr__(self, "segments", _count(segments, "a plan's number of segments", 1))
        object.__setattr__(self, "switches", _count(self.switches, "a plan's number of switches", 0))
        if not isinstance(self.steps, tuple) or not all(isinstance(s, Step) for s in self.steps):
            raise RingsimError("a plan's steps must be a tuple of Step")
        _validate_steps(self.participants, self.segments, self.steps)

    @property
    def participants(self) -> int:
        """GPUs and switches: the buffers' owners, G + W."""
        return self.gpus + self.switches

    def __len__(self) -> int:
        return len(self.steps)

    def phases(self) -> list[str]:
        """Phase names in order of first appearance."""
        seen: dict[str, None] = {}
        for step in self.steps:
            seen.setdefault(step.phase)
        return list(seen)

    def transfer_count(self) -> int:
        """Number of transfers in all steps."""
        return sum(len(s) for s in self.steps)

    def __repr__(self) -> str:
        """One line, not every step: '<Plan of ring · 64 GPUs · 126 steps · 8,064 transfers>'."""
        segments = "" if self.segments == self.gpus else f" · {plural(self.segments, 'segment')} each"
        switches = f" · {plural(self.switches, 'switch')}" if self.switches else ""
        return (f"<Plan of {self.algorithm} · {plural(self.gpus, 'GPU')}{segments}{switches} · "
                f"{plural(len(self.steps), 'step')} · {plural(self.transfer_count(), 'transfer')}>")

    def __str__(self) -> str:
        lines = [f"{self.algorithm} plan for {self.gpus} GPUs, {self.segments} segments each: "
                 f"{len(self.steps)} steps"]
        for number, step in enumerate(self.steps, 1):
            lines.append(f"step {number}: {step.phase} {step.iteration}/{step.iterations} "
                         f"({step.op_text()})")
            lines.extend(f"  {t.text(self.gpus, self.switches)}" for t in step.transfers())
        return "\n".join(lines)


# Transfers checked at once by _validate_steps: big enough to amortise NumPy's per-call
# cost, small enough that the stacked temporaries stay a few MB.
_RUN_TRANSFERS = 1 << 17


def check_plan(plan: object) -> "Plan":
    """`plan` when it is a Plan; otherwise one RingsimError line naming what was given."""
    if not isinstance(plan, Plan):
        raise RingsimError(f"expected a Plan (ringsim.make_plan gives one), got {type(plan).__name__}")
    return plan


def _validate_steps(gpus: int, segments: int, steps: tuple[Step, ...]) -> None:
    """Refuse the first step that no executor could run unambiguously (`_validate_step`'s checks).

    Checking step by step costs a dozen NumPy calls per step, which dominates for plans of
    thousands of small steps (a ring on 1,024 GPUs has 2,046). Runs of consecutive steps
    with the same receivers (equal dst columns, as every ring step has) are checked at once
    as 2-D arrays. When a run may hold a fault, its steps are checked one by one, so the
    error names the first bad step and its first failed check exactly as before.
    """
    start = 0
    while start < len(steps):
        dst = steps[start].dst
        limit = start + max(1, _RUN_TRANSFERS // max(1, len(dst)))
        end = start + 1
        while end < min(limit, len(steps)) and _same(steps[end].dst, dst):
            end += 1
        run = steps[start:end]
        if not _run_valid(gpus, segments, run):
            for index in range(start, end):
                _validate_step(gpus, segments, index, steps[index])
        start = end


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    return a is b or (a.shape == b.shape and bool(np.array_equal(a, b)))


def _stacked(run: tuple[Step, ...], name: str) -> np.ndarray:
    """The run's column `name` as a (steps, transfers) array, or (1, transfers) when all steps share it."""
    first = getattr(run[0], name)
    if all(getattr(step, name) is first for step in run):
        return first[None, :]
    return np.stack([getattr(step, name) for step in run])


def _run_valid(gpus: int, segments: int, run: tuple[Step, ...]) -> bool:
    """True when every step of the run (all with the same dst column) passes `_validate_step`.

    False means "check step by step": it is returned for any fault, and also for receive
    patterns this batched test does not cover (receivers taking different numbers of
    transfers), where the per-step test decides.
    """
    dst = run[0].dst
    if len(dst) == 0:
        return True
    src, first = _stacked(run, "src"), _stacked(run, "first")
    shared_last = all(step.last is step.first for step in run)
    last = first if shared_last else _stacked(run, "last")
    if min(src.min(), dst.min()) < 0 or max(src.max(), dst.max()) >= gpus:
        return False
    if first.min() < 0 or last.max() >= segments:
        return False
    if np.any(src == dst) or (not shared_last and np.any(last < first)):
        return False
    received = np.bincount(dst)
    if received.max() <= 1:
        return True
    group = int(received.max())
    if np.any((received != 0) & (received != group)):
        return False  # receivers take different numbers of transfers: per step
    # Transfers into one GPU must name the same segment range or disjoint ones (see
    # _validate_step): gather each receiver's `group` transfers side by side, once for the run.
    ops = _stacked(run, "ops")
    if first.min() == first.max() and last.min() == last.max():  # one range for all (naive)
        return not np.any(ops == COPY)
    order = np.argsort(dst, kind="stable")
    if group == 2:  # a pair overlaps partly when neither holds the other's range and they meet
        one, two = order[0::2], order[1::2]
        f0, f1 = first[:, one], first[:, two]
        copy = (ops[:, one] == COPY) | (ops[:, two] == COPY)
        if shared_last:  # single segments: they meet only when they are the same
            return not np.any((f0 == f1) & copy)
        l0, l1 = last[:, one], last[:, two]
        identical = (f0 == f1) & (l0 == l1)
        meet = np.maximum(f0, f1) <= np.minimum(l0, l1)
        return not np.any((~identical & meet) | (identical & copy))
    shape = (-1, len(dst) // group, group)
    f = first[:, order].reshape(shape)
    l = f if shared_last else last[:, order].reshape(shape)
    f, l, o = np.broadcast_arrays(f, l, ops[:, order].reshape(shape))
    if np.all((f == f[..., :1]) & (l == l[..., :1])):  # one range per receiver: ops decide
        return not np.any(o == COPY)
    by_first = np.argsort(f, axis=2, kind="stable")  # as _validate_step's (dst, first) order
    f, l = np.take_along_axis(f, by_first, 2), np.take_along_axis(l, by_first, 2)
    o = np.take_along_axis(o, by_first, 2)
    identical = (f[..., 1:] == f[..., :-1]) & (l[..., 1:] == l[..., :-1])
    overlapping = ~identical & (f[..., 1:] <= l[..., :-1])
    copy = (o[..., 1:] == COPY) | (o[..., :-1] == COPY)
    return not np.any(overlapping | (identical & copy))


def _validate_step(gpus: int, segments: int, index: int, step: Step) -> None:
    """Refuse a step that no executor could run unambiguously."""
    where = f"step {index + 1} ({step.phase} {step.iteration})"
    if len(step) == 0:
        return
    if min(step.src.min(), step.dst.min()) < 0 or max(step.src.max(), step.dst.max()) >= gpus:
        raise RingsimError(f"{where}: a GPU is outside GPU1..GPU{gpus}")  # (GPUs and switches)
    if step.first.min() < 0 or step.last.max() >= segments:
        raise RingsimError(f"{where}: a segment is outside 1..{segments}")
    if np.any(step.src == step.dst):
        raise RingsimError(f"{where}: a GPU sends to itself")
    if np.any(step.last < step.first):
        raise RingsimError(f"{where}: a transfer has an empty segment range")
    if np.bincount(step.dst, minlength=gpus).max() <= 1:
        return  # every GPU receives at most once: nothing can overlap
    # Transfers into one GPU must name the same segment range or disjoint ones, so that
    # "what arrives in a buffer during a step" is well defined.
    # One int64 key (dst, first) sorts faster than a lexsort; equal keys with different
    # ends are partial overlaps, which the test below reports.
    order = np.argsort(step.dst * segments + step.first, kind="stable")
    dst, first, last, ops = step.dst[order], step.first[order], step.last[order], step.ops[order]
    same_dst = dst[1:] == dst[:-1]
    identical = same_dst & (first[1:] == first[:-1]) & (last[1:] == last[:-1])
    overlapping = same_dst & ~identical & (first[1:] <= last[:-1])
    if np.any(overlapping):
        raise RingsimError(f"{where}: transfers into one GPU overlap only partly")
    if np.any(identical & (ops[1:] == COPY) & (ops[:-1] == COPY)):
        raise RingsimError(f"{where}: two copies land in the same buffer")
    if np.any(identical & ((ops[1:] == COPY) | (ops[:-1] == COPY))):
        raise RingsimError(f"{where}: a copy and an add land in the same buffer")
