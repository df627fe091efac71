"""The scenario the TUI shows (algorithm, G, N, master) and the limits of the view."""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..algorithms import ALGORITHMS
from ..errors import RingsimError

MIN_GPUS = 1
MAX_GPUS = 64       # the heat map stays readable up to here; the engine goes far beyond
MAX_ELEMENTS = 4096  # a cell cannot show more numbers usefully
DETAIL_MAX_GPUS = 8  # up to here every GPU is a panel of cells; beyond, a heat map


@dataclass(frozen=True)
class Scenario:
    """What to simulate: an algorithm, G GPUs, N elements per GPU and (master only) the master."""

    algorithm: str = "ring"
    gpus: int = 4
    elements: int = 8
    master: int | None = None  # 1-based, as users write it

    def with_gpus(self, gpus: int) -> "Scenario":
        """The same scenario with G GPUs; a master past the new G falls back to GPU1."""
        master = self.master if self.master is not None and self.master <= gpus else None
        return replace(self, gpus=gpus, master=master)

    def next_algorithm(self) -> "Scenario":
        """The same G and N with the next algorithm of the registry (ring → master → naive → ring)."""
        names = list(ALGORITHMS)
        name = names[(names.index(self.algorithm) + 1) % len(names)]
        return replace(self, algorithm=name, master=self.master if name == "master" else None)


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
