"""The gradient each rank makes for a run of `ringsim mpi` (the story, --bench and --calibrate)."""

from __future__ import annotations

import numpy as np


def rank_data(seed: int, rank: int, elements: int, dtype: str) -> np.ndarray:
    """This rank's gradient: floats ~ N(0, 1); integers over the dtype's whole range (sums wrap)."""
    rng = np.random.default_rng([seed, rank])
    kind = np.dtype(dtype)
    if kind.kind == "i":
        info = np.iinfo(kind)
        return rng.integers(info.min, info.max, size=elements, dtype=kind, endpoint=True)
    return rng.standard_normal(elements, dtype=kind)
