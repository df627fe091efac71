"""A tiny discrete-event engine: a heap of (time, counter, callback), as SimPy's core does.

SimPy's `Environment.schedule` pushes (now + delay, priority, next(eid), event) on a heap
and `step` pops the earliest and runs its callbacks (simpy/simpy src/simpy/core.py). The
counter breaks ties in the order events were scheduled, so a run is deterministic. As in
SimPy, an error raised by a callback stops the run: a failed event is never silently
ignored. ringsim needs no processes or priorities, so an event is just a callback.
"""

from __future__ import annotations

import heapq
import itertools
import math
from typing import Callable

from ..core.errors import RingsimError


class Engine:
    """A clock and a heap of scheduled callbacks, run in (time, scheduling order)."""

    def __init__(self) -> None:
        self.now = 0.0
        self._queue: list[tuple[float, int, Callable[[], None]]] = []
        self._ids = itertools.count()
        self.processed = 0

    def at(self, time: float, callback: Callable[[], None]) -> None:
        """Run `callback` at absolute `time` (not before now)."""
        if not time >= self.now or math.isnan(time):  # NaN fails both comparisons
            raise RingsimError(f"cannot schedule an event at {time!r}, before now ({self.now!r})")
        heapq.heappush(self._queue, (time, next(self._ids), callback))

    def after(self, delay: float, callback: Callable[[], None]) -> None:
        """Run `callback` `delay` seconds from now."""
        self.at(self.now + delay, callback)

    def step(self) -> bool:
        """Process the next event; False when none is left."""
        if not self._queue:
            return False
        self.now, _, callback = heapq.heappop(self._queue)
        self.processed += 1
        callback()
        return True

    def run(self, until: float | None = None) -> float:
        """Process events until none is left (or the next one lies after `until`); the clock."""
        while self._queue and (until is None or self._queue[0][0] <= until):
            self.step()
        if until is not None and until > self.now:
            self.now = until
        return self.now
