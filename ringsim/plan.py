"""Plans: an algorithm as pure data — ordered steps of transfers, no gradient arrays.

Every GPU's gradient is split into S segments (`Plan.segments`; the seed's ring has S = G,
a pipelined tree S = chunks, K rings S = K·G). A transfer moves segments first..last
(0-based, inclusive) of GPU `src` into the same segments of GPU `dst`, either adding them
("reduce") or replacing them ("copy"); the op is a column like src and dst, so one step
can reduce up a tree while it copies down. All transfers of a step happen at once: every
send reads the state before the step. Each step keeps its transfers as small read-only
integer columns, so a ring plan for 1,000 GPUs (two million transfers) is built in
milliseconds.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass, field
from typing import Iterator, Literal, NamedTuple

import numpy as np

from .errors import RingsimError
from .naming import gpu_name, subscript

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
        segs = subscript(self.first + 1)
        if self.last != self.first:
            segs += "…" + subscript(self.last + 1)
        arrow = "+=" if self.op == "reduce" else ":="
        return f"{gpu_name(self.src)} → {gpu_name(self.dst)} seg{segs} {arrow}"


def _column(values, dtype=np.int64) -> np.ndarray:
    col = np.array(values, dtype=dtype).reshape(-1)
    col.flags.writeable = False
    return col


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


def _op_codes(op) -> np.ndarray:
    """'reduce'/'copy' (or a sequence of them, or of codes 0/1) as a column of codes."""
    if isinstance(op, str) and op in OPS:
        return _CODE_ARRAYS[op]
    if isinstance(op, np.ndarray) and op.dtype == np.int8 and ((op == REDUCE) | (op == COPY)).all():
        return op.reshape(-1)
    values = [op] if isinstance(op, (str, numbers.Integral)) else list(np.asarray(op).reshape(-1))
    codes = []
    for value in values:
        if isinstance(value, (str, np.str_)):
            if value not in OPS:
                raise RingsimError(f"unknown transfer op {value!r}; expected one of {', '.join(OPS)}")
            codes.append(OPS.index(value))
        elif int(value) in (REDUCE, COPY):
            codes.append(int(value))
        else:
            raise RingsimError(f"unknown transfer op {value!r}; expected one of {', '.join(OPS)}")
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
        parts = [np.asarray(v, dtype=np.int64).reshape(-1) for v in (src, dst, first)]
        shape = np.broadcast_shapes(*(p.shape for p in parts), codes.shape)
        own = _given if handed_over else _owned
        src_c, dst_c, first_c = (own(p, shape) for p in parts)
        last_c = first_c if last is None else own(np.asarray(last, dtype=np.int64).reshape(-1), shape)
        ops_c = np.full(shape, codes[0], dtype=np.int8) if len(codes) == 1 else _owned(codes, shape)
        ops_c.flags.writeable = False
        return cls(phase, iteration, iterations, src_c, dst_c, first_c, last_c, ops_c, tuple(route), swap)

    def __len__(self) -> int:
        return len(self.src)

    @property
    def op(self) -> str:
        """The op shared by every transfer ('reduce' or 'copy'); RingsimError when the step mixes them.

        Kept for code written when a step had one op; new code reads `Transfer.op`.
        """
        if len(self.ops) == 0 or bool((self.ops == self.ops[0]).all()):
            return OPS[int(self.ops[0])] if len(self.ops) else "copy"
        raise RingsimError(f"{self.phase} {self.iteration} mixes reduce and copy transfers; "
                           "read each transfer's op (Step.transfers())")

    @property
    def mixed(self) -> bool:
        """True when the step holds both reduce and copy transfers."""
        return len(self.ops) > 0 and not bool((self.ops == self.ops[0]).all())

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
    """A schedule for an all-reduce of G GPUs' gradients, each split into S segments (S = G by default)."""

    algorithm: str
    gpus: int
    steps: tuple[Step, ...]
    options: dict = field(default_factory=dict)
    segments: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "gpus", _count(self.gpus, "a plan's number of GPUs", 1))
        segments = self.gpus if self.segments is None else self.segments
        object.__setattr__(self, "segments", _count(segments, "a plan's number of segments", 1))
        if not isinstance(self.steps, tuple) or not all(isinstance(s, Step) for s in self.steps):
            raise RingsimError("a plan's steps must be a tuple of Step")
        for index, step in enumerate(self.steps):
            _validate_step(self.gpus, self.segments, index, step)

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

    def __str__(self) -> str:
        lines = [f"{self.algorithm} plan for {self.gpus} GPUs, {self.segments} segments each: "
                 f"{len(self.steps)} steps"]
        for number, step in enumerate(self.steps, 1):
            ops = "mixed" if step.mixed else step.op
            lines.append(f"step {number}: {step.phase} {step.iteration}/{step.iterations} ({ops})")
            lines.extend(f"  {t}" for t in step.transfers())
        return "\n".join(lines)


def _validate_step(gpus: int, segments: int, index: int, step: Step) -> None:
    """Refuse a step that no executor could run unambiguously."""
    where = f"step {index + 1} ({step.phase} {step.iteration})"
    if len(step) == 0:
        return
    if min(step.src.min(), step.dst.min()) < 0 or max(step.src.max(), step.dst.max()) >= gpus:
        raise RingsimError(f"{where}: a GPU is outside GPU1..GPU{gpus}")
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
