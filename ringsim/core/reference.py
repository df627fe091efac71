"""The reference every result is held to: the element-wise sum in the input dtype."""

from __future__ import annotations

import numpy as np


def reference_sum(gradients, xp=np):
    """Sum of the rows of a (G, N) array in its own dtype, GPU by GPU (integers wrap)."""
    total = gradients[0].copy()
    for row in gradients[1:]:
        xp.add(total, row, out=total)
    return total


def tolerance(gradients, xp=np):
    """Largest honest difference between two orders of float summation, element-wise.

    Each order is within (G−1)·u·Σ|x| of the exact sum (u = eps/2), so two orders differ by
    at most (G−1)·eps·Σ|x|; integer dtypes wrap identically in any order, so theirs is 0.
    """
    dtype = gradients.dtype
    if not xp.issubdtype(dtype, xp.inexact):
        return 0
    eps = float(np.finfo(dtype).eps)
    magnitude = xp.abs(gradients.astype(np.float64 if dtype.kind == "f" else np.complex128)).sum(axis=0)
    return (len(gradients) - 1) * eps * magnitude


def gpus_off_the_sum(values, gradients, xp=np) -> list[int]:
    """The 0-based GPUs whose row of a (G, N) result differs from the reference sum.

    Integers must match exactly; floats within `tolerance` (NaN matches NaN).
    """
    expected = reference_sum(gradients, xp)
    if not xp.issubdtype(gradients.dtype, xp.inexact):
        ok = (values == expected).all(axis=1)
    else:
        same = (values == expected) | (xp.isnan(values) & xp.isnan(expected))
        gap = xp.abs(values.astype(np.complex128) - expected.astype(np.complex128))
        ok = (same | (gap <= tolerance(gradients, xp))).all(axis=1)
    return [int(g) for g in np.flatnonzero(np.asarray(ok.get() if hasattr(ok, "get") else ok) == 0)]


def bitwise_strays(values) -> list[int]:
    """The 0-based GPUs whose (G, N) result row differs from GPU1's in any bit (NaN payloads, signed zeros)."""
    if values.shape[0] < 2 or values.shape[1] == 0:
        return []
    raw = values.reshape(values.shape[0], -1).view(f"u{values.dtype.itemsize}") \
        if values.dtype.itemsize in (1, 2, 4, 8) else values.view("u1")
    differ = (raw != raw[:1]).any(axis=1)
    differ = differ.get() if hasattr(differ, "get") else differ
    return [int(g) for g in np.flatnonzero(np.asarray(differ))]
