"""What a timeline run would cost, estimated from the plan's columns before anything large is built.

Both passes keep one ready time per (GPU, segment) cell, and the step-by-step pass expands
each step's transfers into one row per segment they cover ("touches"); steps whose
transfers share a port are walked one transfer at a time in Python. The figures below
were measured on one core (ring of 1,024 GPUs: 2.1 million touches in 1.3 s; naive at 300
GPUs: 27 million touches, every transfer walked, in 6 s) and are kept on the safe side.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..algorithms.spec import AlgorithmSpec, Shape
from ..core.errors import RingsimError
from ..core.naming import plural
from ..core.units import format_seconds

MAX_BYTES = 2 << 30        # working memory a timeline may take
MAX_SECONDS = 30.0         # estimated time a timeline command may take, every re-run counted
MAX_FAULTS = 64            # each fault's cost is one more run of the whole timeline
EVENT_TOUCHES = 100_000    # above, the event engine's dependency lists grow as touches × writers

# Measured costs (one core), rounded up.
BYTES_PER_CELL = 16        # a ready time (float64) and who wrote it (int64)
BYTES_PER_TOUCH = 64       # the expanded rows of the largest step, several int64 columns
BYTES_PER_TRANSFER = 160   # the plan's columns, the timeline's columns, the trace of causes
SECONDS_PER_TOUCH = 2e-7
SECONDS_PER_WALKED = 6e-5  # a transfer of a step whose transfers share a port
SECONDS_PER_TRANSFER = 1e-6


def gib(size: float) -> str:
    """Bytes as GiB with one decimal, readable at any size."""
    return f"{size / 2**30:,.1f} GiB"


@dataclass(frozen=True)
class Work:
    """One timeline run's size: transfers, segment touches, cells, and the estimated bytes and seconds."""

    transfers: int
    touches: int
    cells: int
    bytes: int
    seconds: float

    def times(self, runs: int) -> "Work":
        """The same work done `runs` times (memory is reused, time adds up)."""
        return Work(self.transfers, self.touches, self.cells, self.bytes, self.seconds * runs)


def estimate(gpus: int, segments: int, widths: np.ndarray, step: np.ndarray,
             shared: int) -> Work:
    """The work of one run: widths are each transfer's segment count, step its step number,
    `shared` the number of transfers in steps whose transfers share a port."""
    n = len(widths)
    touches = int(widths.sum()) if n else 0
    peak = int(np.bincount(step, weights=widths).max()) if n else 0
    cells = gpus * segments
    memory = cells * BYTES_PER_CELL + peak * BYTES_PER_TOUCH + n * BYTES_PER_TRANSFER
    seconds = touches * SECONDS_PER_TOUCH + shared * SECONDS_PER_WALKED + n * SECONDS_PER_TRANSFER
    return Work(n, touches, cells, memory, seconds)


def check(work: Work, what: str, detail: str | None = None, least: bool = False) -> None:
    """Refuse, in one line naming what it would need, work past MAX_BYTES or MAX_SECONDS
    (`least`: the figures are the least the work could take, `detail` says what they count)."""
    if work.bytes <= MAX_BYTES and work.seconds <= MAX_SECONDS:
        return
    if detail is None:
        detail = (f"{work.transfers:,} transfers covering {work.touches:,} segments, "
                  f"{work.cells:,} GPU segments kept")
    raise RingsimError(
        f"{what} would take {'at least' if least else 'about'} {gib(work.bytes)} and "
        f"{format_seconds(work.seconds)} ({detail}); the limits are {gib(MAX_BYTES)} and "
        f"{format_seconds(MAX_SECONDS)}: use fewer GPUs or compare --time for the lockstep total")


# On any topology, a step whose transfers all use distinct ports holds at most this many per
# GPU: every transfer leaves a GPU's out port or arrives at a GPU's in port (a switch's
# transfers do one of the two), and a GPU has one of each per level (two levels at most). A
# step with more transfers shares a port, and the budget walks every transfer of it one at a
# time. `distinct_per_gpu` gives the smaller figure of one run.
DISTINCT_PER_GPU = 4


def distinct_per_gpu(topology, gpus: int, spec: AlgorithmSpec) -> int:
    """The most transfers per GPU a step of this run can hold with no port serving two of
    them: G GPUs on the topology, the plan of the algorithm `spec` describes.

    Without a switch every transfer leaves a GPU's out port on its level, and a GPU has one
    out port per level the run uses (across only where it fills more than one node). A
    switch has a port facing each GPU, so its transfers to the GPUs leave from ports of
    their own: twice as many."""
    levels = 2 if topology.nodes(gpus) > 1 else 1
    return levels * (2 if spec.shape is Shape.SWITCH else 1)


def check_counts(transfers: int, steps: int, gpus: int, what: str, runs: int = 1,
                 per_gpu: int = DISTINCT_PER_GPU) -> None:
    """Refuse, before the plan is built, work that is past the limits at the least it could
    take, from counts the closed forms give: a plan's transfers and steps, and G; `per_gpu`
    is `distinct_per_gpu` of the run's topology and plan, where the caller knows them.

    Every transfer covers a segment at least, every GPU keeps one at least, the busiest step
    holds the average at least, and transfers past per_gpu·G in a step queue on shared ports
    (the pigeonhole principle), so this never refuses what `estimate` allows.
    """
    # The bound that holds on any topology first: a plan refused on every topology is refused
    # with the same figures on each. The run's own ports then refuse plans that only they
    # show too large (each GPU sending to both neighbours on one level, say).
    for capacity in sorted({DISTINCT_PER_GPU, min(per_gpu, DISTINCT_PER_GPU)}, reverse=True):
        _check_least(transfers, steps, gpus, capacity, what, runs)


def _check_least(transfers: int, steps: int, gpus: int, per_gpu: int, what: str, runs: int) -> None:
    """check_counts with transfers past per_gpu·G in a step counted as queued."""
    shared = max(0, transfers - steps * per_gpu * gpus)
    peak = -(-transfers // steps) if steps else 0
    least = Work(transfers, transfers, gpus,
                 gpus * BYTES_PER_CELL + peak * BYTES_PER_TOUCH + transfers * BYTES_PER_TRANSFER,
                 # summed in the order `estimate` sums, so that rounding keeps this the lesser
                 transfers * SECONDS_PER_TOUCH + shared * SECONDS_PER_WALKED
                 + transfers * SECONDS_PER_TRANSFER)
    check(least.times(runs), what, f"{transfers:,} transfers in {plural(steps, 'step')}, "
          f"{shared:,} of them queued on shared ports", least=True)


MAX_TRACE_BYTES = 256 << 20  # Perfetto loads files of this size; past it a trace is unreadable anyway
TRACE_BYTES_PER_TRANSFER = 700  # a send, a receive and a reduce event (measured: 650 at 1,000 GPUs)
TRACE_BYTES_PER_GPU = 400       # its process and track names


def check_trace(transfers: int, gpus: int) -> None:
    """Refuse a trace file larger than MAX_TRACE_BYTES, before the timeline runs."""
    size = transfers * TRACE_BYTES_PER_TRANSFER + gpus * TRACE_BYTES_PER_GPU
    if size > MAX_TRACE_BYTES:
        raise RingsimError(f"--trace would write about {gib(size)} ({transfers:,} "
                           f"transfers); at most {gib(MAX_TRACE_BYTES)}: use fewer GPUs")
