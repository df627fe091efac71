"""What the sweep panel (key w) plots: ringsim.studies.sweep over message sizes for the current G and
topology, and the point at the scenario's own message size; the TUI computes nothing itself."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from ..cost.model import CostModel
from ..cost.nccl import NcclChoice
from ..studies.sweep import Point, Sweep, sweep
from ..core.units import itemsize
from .clock import DTYPE

ITEMSIZE = itemsize(DTYPE)
# 4 B to 4 GiB per GPU, ×4 each time: from the TUI's own sizes (N ≤ 4,096 float32s) up to
# the gradients of a large model, 16 points for a smooth log-log line.
SIZES = tuple(ITEMSIZE * 4 ** k for k in range(16))


@dataclass(frozen=True)
class SweepView:
    """The sweep for G on a topology, and the point at the scenario's size (None at N = 0)."""

    sweep: Sweep
    here: Point | None
    here_nccl: NcclChoice | None = None  # NCCL's own model's pick at the scenario's size


@lru_cache(maxsize=32)
def _sweep(gpus: int, topology: str) -> Sweep:
    return sweep(gpus, list(SIZES), CostModel.of(topology, DTYPE))


@lru_cache(maxsize=64)
def _point(gpus: int, topology: str, nbytes: int) -> tuple[Point, NcclChoice | None]:
    one = sweep(gpus, [nbytes], CostModel.of(topology, DTYPE))
    return one.points[0], (one.nccl[0] if one.nccl else None)


def sweep_view(gpus: int, topology: str, elements: int) -> SweepView:
    """The sweep panel's data (cached per G and topology; the current size per N)."""
    here, nccl = _point(gpus, topology, elements * ITEMSIZE) if elements else (None, None)
    return SweepView(_sweep(gpus, topology), here, nccl)
