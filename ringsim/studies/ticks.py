"""Log-axis ticks at round values (1 µs, 10 µs, 100 µs, …) and their labels, for every sweep plot."""

from __future__ import annotations

import math
import re

from ..core.units import format_bandwidth, format_seconds


def decade_ticks(values: list[float], most: int = 8) -> list[float]:
    """Powers of ten from the one at or below the smallest value to the one at or above the
    largest, every k-th when there would be more than `most`, so the labels span the data."""
    positive = [v for v in values if v > 0]
    if not positive:
        return []
    low, high = math.floor(math.log10(min(positive)) + 1e-9), math.ceil(math.log10(max(positive)) - 1e-9)
    high = max(high, low + 1)
    step = max(1, math.ceil((high - low + 1) / most))
    top = low + step * math.ceil((high - low) / step)  # the last tick at or above the data
    return [10.0 ** k for k in range(low, top + 1, step)]


def tick_label(value: float, metric: str) -> str:
    """'10 µs', '1 ms', '100 GB/s': a round value's label, without trailing zeros."""
    text = format_seconds(value) if metric == "time" else format_bandwidth(value)
    return re.sub(r"\.0+(?= )", "", text)
