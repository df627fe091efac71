"""How much memory a run needs, checked against what the machine has before anything is allocated.

The estimates are upper bounds read from what each part allocates: the executor's
(G·S, W) buffer array and the index tables it compiles per step (numeric.py), the
Simulation's inputs, copies and correctness check, train's data set. A run that needs
more than the limit is refused in one line that says how much it would need and what to
use instead. The limit is half the memory available now (the smaller of the system's
MemAvailable and the cgroup's room, or the free memory of the CUDA device for CuPy), or
RINGSIM_MEMORY_LIMIT (bytes, or 500MB, 2G, 1GiB) when it is set.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from ..core.checks import echo
from ..core.errors import RingsimError
from ..core.layout import Layout
from ..core.plan import Plan, Step

LIMIT_VARIABLE = "RINGSIM_MEMORY_LIMIT"
FALLBACK_AVAILABLE = 4 << 30  # when the system does not say, assume a small machine


def format_bytes(count: int) -> str:
    """'1.5 GB'-style size (powers of 1,000), exact integers below 1 kB."""
    if count < 1000:
        return f"{count} bytes"
    for unit in ("kB", "MB", "GB", "TB", "PB", "EB"):
        count /= 1000
        if count < 1000 or unit == "EB":
            return f"{count:,.1f} {unit}"
    raise AssertionError("unreachable")


def _read_int(path: str) -> int | None:
    try:
        with open(path, encoding="ascii", errors="replace") as f:
            text = f.read().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def _host_available() -> int:
    """Bytes the host can still give this process: MemAvailable, capped by the cgroup's room."""
    available = None
    try:
        with open("/proc/meminfo", encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    available = int(line.split()[1]) * 1024
                    break
    except (OSError, ValueError, IndexError):
        pass
    if available is None:
        try:
            available = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        except (ValueError, OSError, AttributeError):
            available = FALLBACK_AVAILABLE
    for limit_path, usage_path in (("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"),
                                   ("/sys/fs/cgroup/memory/memory.limit_in_bytes",
                                    "/sys/fs/cgroup/memory/memory.usage_in_bytes")):
        limit, usage = _read_int(limit_path), _read_int(usage_path)
        if limit is not None and usage is not None and limit < 1 << 60:
            available = min(available, max(limit - usage, 0))
    return available


def available_bytes(xp: Any = np) -> int:
    """Bytes free now where xp's arrays live: host memory for NumPy, the device's for CuPy."""
    if getattr(xp, "__name__", "") == "cupy":
        try:
            return int(xp.cuda.runtime.memGetInfo()[0])
        except Exception:  # CUDA reports failures as its own exception types
            return FALLBACK_AVAILABLE
    return _host_available()


def parse_size(text: str) -> int:
    """'2G', '500MB', '1GiB', '1000000' → bytes (K, M, G, T: powers of 1,000; KiB…: of 1,024)."""
    value = text.strip().upper().removesuffix("B")
    binary = value.endswith("I")
    value = value.removesuffix("I")
    unit = value[-1:] if value[-1:] in "KMGT" and value[-1:] else ""
    number = value[:-1] if unit else value
    # 0-9 only (str.isdigit also takes ², which int() refuses), and no more digits than a
    # memory has: past 4,300, int() raises ValueError
    if not (number.isascii() and number.isdigit()) or len(number) > 30 or (binary and not unit):
        raise RingsimError(f"{LIMIT_VARIABLE} must be a size in bytes like 2G or 500MB, got "
                           f"{echo(text)}")
    power = "_KMGT".index(unit) if unit else 0
    return int(number) * (1024 if binary else 1000) ** power


def memory_limit(xp: Any = np) -> int:
    """The most a run may allocate: RINGSIM_MEMORY_LIMIT, or half of what is available now."""
    setting = os.environ.get(LIMIT_VARIABLE)
    if setting:
        return parse_size(setting)
    return available_bytes(xp) // 2


def check_memory(needed: int, what: str, *, instead: str, xp: Any = np) -> None:
    """Refuse (RingsimError) when `needed` bytes exceed memory_limit(xp).

    The message names `what` needs the memory, how much, the limit, and `instead`: what
    to use for the answer without allocating it.
    """
    limit = memory_limit(xp)
    if needed > limit:
        source = f"{LIMIT_VARIABLE}" if os.environ.get(LIMIT_VARIABLE) else \
            "half of the memory available now"
        raise RingsimError(f"{what} would need about {format_bytes(needed)} of memory, more than "
                           f"the {format_bytes(limit)} ringsim allows itself ({source}); {instead}")


# --- estimates ----------------------------------------------------------------------------
_INDEX_BYTES_TRANSIENT = 96  # int64 index arrays numeric.expand/_compile build per segment moved
_INDEX_BYTES_KEPT = 16       # what a compiled general step keeps per segment moved
_PER_STEP_BYTES = 8192       # a compiled step's views and closures
_LEDGER_BYTES = 64           # ledger columns and their temporaries, per transfer
_BASELINE_BYTES = 1 << 20    # small objects every run makes


def _moves(step: Step) -> int:
    """Segment buffers the step moves (a transfer of segments first..last moves last−first+1)."""
    if len(step) == 0:
        return 0
    spans = step.last - step.first
    return len(step) + (int(spans.sum()) if spans.any() else 0)


def _general(step: Step, gpus: int, segments: int) -> bool:
    """Whether the executor gathers this step through index tables (numeric._compile_general):
    some buffer gets several arrivals, or a buffer both sends and receives. Compares the
    step's own columns (memory as the step, never G·S: the estimate must not be the allocation)."""
    if len(step) == 0:
        return False
    if len(np.unique(step.dst)) < len(step.dst):
        return True
    if np.array_equal(step.first, step.last):  # one segment each: compare (GPU, segment) buffers
        received, sent = step.dst * segments + step.first, step.src * segments + step.first
    else:  # ranges: any GPU that both sends and receives counts (an upper bound)
        received, sent = step.dst, step.src
    return bool(np.isin(sent, received).any())


def executor_bytes(plan: Plan, layout: Layout, itemsize: int) -> int:
    """Upper bound of what the numeric executor allocates for a plan: buffers and indexes."""
    gpus, width = plan.participants, layout.width  # a plan's switches own buffers too
    segments = plan.segments
    buffers = gpus * segments * width * itemsize
    moves = [_moves(step) for step in plan.steps]
    general = [_general(step, gpus, segments) for step in plan.steps]
    kept = _INDEX_BYTES_KEPT * sum(m for m, g in zip(moves, general) if g)
    transient = _INDEX_BYTES_TRANSIENT * max(moves, default=0)
    # A general step gathers every arriving buffer and a running sum (≤ 2 × the buffers);
    # a strided copy NumPy stages through a temporary is at most one GPU's worth of rows.
    gathered = 2 * buffers if any(general) else segments * width * itemsize
    return buffers + kept + transient + gathered


def _bookkeeping_bytes(plan: Plan) -> int:
    """Python objects per compiled step, and the ledger's int64 columns per transfer."""
    transfers = sum(len(step) for step in plan.steps)
    return _BASELINE_BYTES + _PER_STEP_BYTES * len(plan.steps) + _LEDGER_BYTES * transfers


def simulation_bytes(plan: Plan, layout: Layout, itemsize: int, *, symbolic: bool = True) -> int:
    """Upper bound for a Simulation: the executor, the inputs, a copy of the values, the
    correctness check's float64/complex128 temporaries (reference.gpus_off_the_sum), the
    ledger and, when kept, the symbolic labels (each buffer's tuple of up to G contributors)."""
    gpus = plan.gpus
    segments = plan.segments
    cells = gpus * layout.elements
    labels = 16 * gpus * segments * (gpus + 4) if symbolic else 0
    return (executor_bytes(plan, layout, itemsize) + cells * (2 * itemsize + 48) + labels
            + _bookkeeping_bytes(plan))


def allreduce_bytes(plan: Plan, layout: Layout, itemsize: int) -> int:
    """Upper bound for ringsim.allreduce: the executor, and the (G, N) result with the
    reordering copy NumPy makes of it when G does not divide N (NumericExecutor.result)."""
    cells = plan.gpus * layout.elements
    return executor_bytes(plan, layout, itemsize) + 2 * cells * itemsize + _bookkeeping_bytes(plan)


def train_bytes(plan: Plan, samples: int, features: int, batch: int) -> int:
    """Upper bound for ringsim.training.train: the data set (float64), a batch's shards, the model
    replicas and the executor that syncs F+1 parameters."""
    n = features + 1
    data = samples * features * 8 + 6 * samples * 8
    shards = 2 * batch * features * 8
    replicas = 4 * plan.gpus * n * 8
    layout = Layout(plan.segments, n)
    return data + shards + replicas + executor_bytes(plan, layout, 8)
