"""ringsim.reduce_scatter and ringsim.all_gather: the all-reduce split in two, on simulated GPUs.

Both run the ring halves of ringsim/collectives.py through the same executor as
ringsim.allreduce. GPU g's shard is segment g of the layout (ringsim/layout.py): N
elements split into G segments, the first N mod G one element longer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from .api import _rows
from .backend import array_module, module_of
from .collectives import ALL_GATHER, REDUCE_SCATTER, closed_form, plan as collective_plan
from .errors import RingsimError
from .formula import ClosedForm
from .layout import Layout
from .ledger import Ledger, measure
from .executors import make_executor
from .plan import Plan


@dataclass(frozen=True, eq=False)
class CollectiveResult:
    """Each GPU's output and what the run moved (its plan, ledger and closed forms)."""

    outputs: list
    plan: Plan
    ledger: Ledger
    closed_form: ClosedForm


def _run(plan: Plan, layout: Layout, rows, xp, dtype):
    executor = make_executor(plan, layout, xp, dtype)
    executor.load(rows)  # copies GPU by GPU: the inputs are read, never written
    executor.run()
    return executor.unload()


def reduce_scatter(arrays: Sequence, algorithm: str = "ring", *, backend: str | None = None) -> CollectiveResult:
    """Sum one array per GPU and leave GPU g only segment g of the sum (flat, 1-D).

    Segment g holds ⌊N/G⌋ elements, one more for the first N mod G GPUs. The arrays are
    copied, never modified.
    """
    rows, shape, dtype = _rows(arrays)
    xp = array_module(backend) if backend is not None else module_of(rows[0])
    plan = collective_plan(REDUCE_SCATTER, len(rows), algorithm)
    layout = Layout(plan.segments, int(np.prod(shape, dtype=np.int64)))
    summed = _run(plan, layout, rows, xp, dtype)
    outputs = [summed[g, layout.offset(g):layout.offset(g + 1)].copy() for g in range(plan.gpus)]
    return CollectiveResult(outputs, plan, measure(plan, layout),
                            closed_form(REDUCE_SCATTER, plan.gpus, layout.elements))


def all_gather(arrays: Sequence, algorithm: str = "ring", *, backend: str | None = None) -> CollectiveResult:
    """Give every GPU every GPU's shard: one array per GPU, all of one shape; each output is
    the shards stacked, GPU1's first (shape (G, *shape), as np.stack). The inputs are never modified."""
    rows, shape, dtype = _rows(arrays)
    xp = array_module(backend) if backend is not None else module_of(rows[0])
    gpus = len(rows)
    plan = collective_plan(ALL_GATHER, gpus, algorithm)
    count = int(np.prod(shape, dtype=np.int64))
    layout = Layout(gpus, gpus * count)  # G equal segments: GPU g's shard is segment g
    need = gpus * gpus * count * np.dtype(dtype).itemsize
    if need > 8 << 30:
        raise RingsimError(f"an all-gather of {gpus} shards of {count:,} elements needs "
                           f"{need / 2**30:.1f} GiB of simulated buffers, more than 8 GiB")
    full = xp.zeros((gpus, gpus * count), dtype=dtype)
    for g, row in enumerate(rows):
        full[g, g * count:(g + 1) * count] = row
    gathered = _run(plan, layout, full, xp, dtype)
    outputs = [gathered[g].reshape((gpus, *shape)) for g in range(gpus)]
    return CollectiveResult(outputs, plan, measure(plan, layout),
                            closed_form(ALL_GATHER, gpus, layout.elements))
