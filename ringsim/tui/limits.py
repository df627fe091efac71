"""The limits of the TUI's view (the engine itself takes far more)."""

from __future__ import annotations

from ..core.errors import RingsimError

MIN_GPUS = 1
MAX_GPUS = 64       # the heat map stays readable up to here; the engine goes far beyond
MAX_ELEMENTS = 4096  # a cell cannot show more numbers usefully
DETAIL_MAX_GPUS = 8  # up to here every GPU is a panel of cells; beyond, a heat map
MIN_SIZE = (80, 24)  # the smallest terminal the view fits (columns, rows)
MIN_SIZE_PRESENT = (100, 30)  # the same in presentation mode's large cells


def check_view_limits(gpus: int, elements: int) -> None:
    """Refuse a G or N the view cannot show, in one line (the engine itself takes more)."""
    if not MIN_GPUS <= gpus <= MAX_GPUS:
        raise RingsimError(f"the TUI shows {MIN_GPUS} to {MAX_GPUS} GPUs, got {gpus} "
                           f"(`ringsim walk` and `ringsim compare` take more)")
    if not 0 <= elements <= MAX_ELEMENTS:
        raise RingsimError(f"the TUI shows 0 to {MAX_ELEMENTS:,} elements per GPU, got {elements:,}")


def more_elements(n: int) -> int:
    """The next N up: one at a time to 16 (uneven segments are worth seeing), then doubling."""
    return n + 1 if n < 16 else n * 2


def fewer_elements(n: int) -> int:
    """The next N down: halving to 16, then one at a time (may go below 0: the caller refuses)."""
    return n - 1 if n <= 16 else n // 2
