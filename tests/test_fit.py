"""The robust line fit: Theil–Sen's slope and intercept, bounded in memory for any input."""

import numpy as np

from ringsim.core.fit import MAX_POINTS, theil_sen


def test_a_line_with_a_few_slow_outliers_keeps_its_slope():
    x = np.arange(1.0, 21.0)
    y = 5.0 + 2.0 * x
    y[[3, 11]] *= 10  # two slow runs
    intercept, slope = theil_sen(x, y)
    assert slope == 2.0 and intercept == 5.0


def test_a_huge_input_is_fitted_on_an_even_subset_in_bounded_memory():
    # 100,000 points would make 5·10^9 pairs (40 GB of indices); the fit sees MAX_POINTS of them.
    n = 100_000
    x = np.arange(n, dtype=float)[::-1]  # unsorted on purpose: the subset is spread by x
    y = 3.0 + 0.5 * x
    intercept, slope = theil_sen(x, y)
    assert slope == 0.5 and intercept == 3.0
    assert MAX_POINTS * (MAX_POINTS - 1) // 2 * 8 * 2 < 100 * 2**20  # the pairs' indices: < 100 MB
