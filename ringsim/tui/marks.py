"""Which cells the step just carried out sent from and received into, read off its transfers."""

from __future__ import annotations

import numpy as np

from ..core.plan import Step


def cell_peers(step: Step | None, gpus: int, segments: int | None = None
               ) -> tuple[list[list[list[int]]], list[list[list[int]]]]:
    """For every (GPU, segment): the participants it sent to and received from in `step` (a
    switch, numbered from G on, has no cells of its own: only its GPUs' sides are marked)."""
    segments = gpus if segments is None else segments
    sent_to = [[[] for _ in range(segments)] for _ in range(gpus)]
    came_from = [[[] for _ in range(segments)] for _ in range(gpus)]
    if step is not None:
        for t in step.transfers():
            for segment in range(t.first, t.last + 1):
                if t.src < gpus:
                    sent_to[t.src][segment].append(t.dst)
                if t.dst < gpus:
                    came_from[t.dst][segment].append(t.src)
    return sent_to, came_from


def cell_masks(step: Step | None, gpus: int, segments: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Boolean G×S masks of the cells that sent and that received in `step` (fast at any G)."""
    segments = gpus if segments is None else segments
    return (_mask(step, step.src if step else None, gpus, segments),
            _mask(step, step.dst if step else None, gpus, segments))


def _mask(step: Step | None, gpu: np.ndarray | None, gpus: int, segments: int) -> np.ndarray:
    if step is None or len(step) == 0:
        return np.zeros((gpus, segments), dtype=bool)
    # Each transfer covers segments first..last: +1 at first, −1 after last, then a running sum.
    edges = np.zeros((gpus, segments + 1), dtype=np.int64)
    mine = gpu < gpus  # a switch (participant G or above) has no cells
    np.add.at(edges, (gpu[mine], step.first[mine]), 1)
    np.add.at(edges, (gpu[mine], step.last[mine] + 1), -1)
    return np.cumsum(edges, axis=1)[:, :segments] > 0
