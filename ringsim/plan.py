"""Plans: an algorithm as pure data — ordered steps of transfers, no gradient arrays.

A transfer moves segments first..last (0-based, inclusive) of GPU `src` into the same
segments of GPU `dst`, either adding them ("reduce") or replacing them ("copy").
All transfers of a step happen at once: every send reads the state before the step.
Each step keeps its transfers as small read-only integer columns, so a ring plan for
1,000 GPUs (two million transfers) is built in milliseconds.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator, Literal, NamedTuple

import numpy as np

from .errors import RingsimError
from .naming import gpu_name, subscript

Op = Literal["reduce", "copy"]
OPS = ("reduce", "copy")


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


def _column(values) -> np.ndarray:
    col = np.array(values, dtype=np.int64).reshape(-1)
    col.flags.writeable = False
    return col


@dataclass(frozen=True, eq=False)
class Step:
    """One iteration: a phase name, its 1-based iteration number, and its transfers."""

    phase: str
    iteration: int
    iterations: int
    op: str
    src: np.ndarray
    dst: np.ndarray
    first: np.ndarray
    last: np.ndarray

    @classmethod
    def build(cls, phase: str, iteration: int, iterations: int, op: str,
              src, dst, first, last=None) -> "Step":
        """A step from columns (scalars broadcast); `last` defaults to `first`."""
        if op not in OPS:
            raise RingsimError(f"unknown transfer op {op!r}; expected one of {', '.join(OPS)}")
        src_c, dst_c, first_c = np.broadcast_arrays(_column(src), _column(dst), _column(first))
        last_c = first_c if last is None else np.broadcast_to(_column(last), first_c.shape)
        return cls(phase, iteration, iterations, op,
                   _column(src_c), _column(dst_c), _column(first_c), _column(last_c))

    def __len__(self) -> int:
        return len(self.src)

    def transfers(self) -> Iterator[Transfer]:
        """The step's transfers, in plan order."""
        for s, d, f, l in zip(self.src.tolist(), self.dst.tolist(),
                              self.first.tolist(), self.last.tolist()):
            yield Transfer(s, d, f, l, self.op)


@dataclass(frozen=True, eq=False)
class Plan:
    """A schedule for an all-reduce of G GPUs' gradients split into G segments each."""

    algorithm: str
    gpus: int
    steps: tuple[Step, ...]
    options: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        for index, step in enumerate(self.steps):
            _validate_step(self.gpus, index, step)

    def __len__(self) -> int:
        return len(self.steps)

    def phases(self) -> list[str]:
        """Phase names in order of first appearance."""
        seen: dict[str, None] = {}
        for step in self.steps:
            seen.setdefault(step.phase)
        return list(seen)

    def __str__(self) -> str:
        lines = [f"{self.algorithm} plan for {self.gpus} GPUs: {len(self.steps)} steps"]
        for number, step in enumerate(self.steps, 1):
            lines.append(f"step {number}: {step.phase} {step.iteration}/{step.iterations} ({step.op})")
            lines.extend(f"  {t}" for t in step.transfers())
        return "\n".join(lines)


def _validate_step(gpus: int, index: int, step: Step) -> None:
    """Refuse a step that no executor could run unambiguously."""
    where = f"step {index + 1} ({step.phase} {step.iteration})"
    if len(step) == 0:
        return
    lowest = min(step.src.min(), step.dst.min(), step.first.min())
    highest = max(step.src.max(), step.dst.max(), step.last.max())
    if lowest < 0 or highest >= gpus:
        raise RingsimError(f"{where}: a GPU or segment is outside 1..{gpus}")
    if np.any(step.src == step.dst):
        raise RingsimError(f"{where}: a GPU sends to itself")
    if np.any(step.last < step.first):
        raise RingsimError(f"{where}: a transfer has an empty segment range")
    if np.bincount(step.dst, minlength=gpus).max() <= 1:
        return  # every GPU receives at most once: nothing can overlap
    # Transfers into one GPU must name the same segment range or disjoint ones, so that
    # "what arrives in a buffer during a step" is well defined.
    order = np.lexsort((step.last, step.first, step.dst))
    dst, first, last = step.dst[order], step.first[order], step.last[order]
    same_dst = dst[1:] == dst[:-1]
    identical = same_dst & (first[1:] == first[:-1]) & (last[1:] == last[:-1])
    overlapping = same_dst & ~identical & (first[1:] <= last[:-1])
    if np.any(overlapping):
        raise RingsimError(f"{where}: transfers into one GPU overlap only partly")
    if step.op == "copy" and np.any(identical):
        raise RingsimError(f"{where}: two copies land in the same buffer")
