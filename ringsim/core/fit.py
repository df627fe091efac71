"""A straight line through measurements that a few slow outliers cannot tip: Theil–Sen.

The slope is the median of the slopes between every two points (Sen, "Estimates of the
regression coefficient based on Kendall's tau", JASA 1968); the intercept the median of what
the slope leaves. Timings on a shared machine have slow outliers (another process ran), which
can tip a least-squares line, even to a negative slope. Times never fall as messages grow, so
both are kept at 0 or above.
"""

from __future__ import annotations

import numpy as np


# Every pair of n points is n·(n−1)/2 slopes: 2,000 points make 2 million (16 MB), while
# 100,000 would make 5·10^9 (40 GB). Past this many, an evenly spaced subset by x is fitted,
# which keeps the estimator's robustness (it still sees the whole range of sizes).
MAX_POINTS = 2000


def theil_sen(x, y) -> tuple[float, float]:
    """(intercept, slope), both at least 0, of y ≈ intercept + slope·x."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if len(x) > MAX_POINTS:
        order = np.argsort(x, kind="stable")
        keep = order[np.linspace(0, len(x) - 1, MAX_POINTS).round().astype(np.int64)]
        x, y = x[keep], y[keep]
    i, j = np.triu_indices(len(x), 1)
    apart = x[j] != x[i]
    slopes = (y[j] - y[i])[apart] / (x[j] - x[i])[apart]
    slope = max(float(np.median(slopes)), 0.0) if slopes.size else 0.0
    intercept = max(float(np.median(y - slope * x)), 0.0) if len(x) else 0.0
    return intercept, slope
