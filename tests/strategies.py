"""Hypothesis strategies for ringsim's tests, in one place."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from ringsim import ALGORITHMS

INT_DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
FLOAT_DTYPES = ["float16", "float32", "float64"]
DTYPES = INT_DTYPES + FLOAT_DTYPES

algorithms = st.sampled_from(sorted(ALGORITHMS))
gpus = st.integers(1, 16)
elements = st.one_of(st.integers(0, 20), st.integers(0, 200))  # small N (N < G) often


@st.composite
def scenarios(draw, max_gpus: int = 16, max_elements: int = 200):
    """(algorithm, G, N, master) with master a valid 1-based GPU or None."""
    algorithm = draw(algorithms)
    g = draw(st.integers(1, max_gpus))
    n = draw(st.integers(0, max_elements))
    master = draw(st.one_of(st.none(), st.integers(1, g))) if algorithm == "master" else None
    return algorithm, g, n, master


def _elements_for(dtype: np.dtype, integer_valued: bool):
    if dtype.kind in "iu":
        return None  # the whole range: sums wrap, as they do in NCCL
    if integer_valued:
        # Integer-valued floats whose every partial sum is exact in this dtype.
        bound = {2: 64, 4: 1 << 16, 8: 1 << 30}[dtype.itemsize]
        return st.integers(-bound, bound).map(float)
    bound = {2: 1024.0, 4: 2.0 ** 100, 8: 2.0 ** 1000}[dtype.itemsize]
    return st.floats(-bound, bound, allow_nan=False, allow_infinity=False, width=dtype.itemsize * 8)


@st.composite
def gradients(draw, g: int, n: int, dtype: str | None = None, integer_valued: bool | None = None):
    """A (G, N) array of gradients of a drawn (or given) numeric dtype."""
    dt = np.dtype(dtype or draw(st.sampled_from(DTYPES)))
    exact = draw(st.booleans()) if integer_valued is None else integer_valued
    return draw(hnp.arrays(dt, (g, n), elements=_elements_for(dt, exact)))
