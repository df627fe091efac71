"""A straight line through measurements that a few slow outliers cannot tip: Theil–Sen.

The slope is the median of the slopes between every two points (Sen, "Estimates of the
regression coefficient based on Kendall's tau", JASA 1968); the intercept the median of what
the slope leaves. Timings on a shared machine have slow outliers (another process ran), which
can tip a least-squares line, even to a negative slope. Times never fall as messages grow, so
both are kept at 0 or above.
"""

from __future__ import annotations

import numpy as np


def theil_sen(x, y) -> tuple[float, float]:
    """(intercept, slope), both at least 0, of y ≈ intercept + slope·x."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    i, j = np.triu_indices(len(x), 1)
    apart = x[j] != x[i]
    slopes = (y[j] - y[i])[apart] / (x[j] - x[i])[apart]
    slope = max(float(np.median(slopes)), 0.0) if slopes.size else 0.0
    intercept = max(float(np.median(y - slope * x)), 0.0) if len(x) else 0.0
    return intercept, slope
