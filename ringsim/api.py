"""ringsim.allreduce, reduce_scatter and all_gather: collectives over arrays on simulated GPUs.

reduce_scatter and all_gather run the ring halves of algorithms/collectives.py through the same
executor as allreduce. GPU g's shard is segment g of the layout (core/layout.py): N elements
split into G segments, the first N mod G one element longer.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Set
from dataclasses import dataclass
from typing import Sequence


from .algorithms import DEFAULT_ALGORITHM, make_plan, named_with_options, plan_closed_form
from .algorithms.collectives import ALL_GATHER, REDUCE_SCATTER
from .execute.backend import array_module, make_executor, module_of
from .core.checks import as_numeric_array
from .core.errors import RingsimError
from .core.formula import ClosedForm
from .core.layout import Layout
from .core.naming import plural
from .execute.ledger import Ledger, measure
from .execute.memory import allreduce_bytes, check_memory
from .core.plan import Plan


@dataclass(frozen=True, eq=False)
class _Result:
    """Each GPU's output and what the run moved: its plan, ledger and closed forms."""

    outputs: list
    plan: Plan
    ledger: Ledger
    closed_form: ClosedForm


class AllReduceResult(_Result):
    """Each GPU's output (the summed array, in the input's shape) and what the run moved."""

    def __repr__(self) -> str:
        """One line, not the arrays: '<AllReduceResult of ring · 8 GPUs · 1,000 float32 elements …>'."""
        first = self.outputs[0]
        return _one_line(self, plural(first.size, f"{first.dtype} element") + " per GPU")


def _one_line(result, data: str) -> str:
    """'<AllReduceResult of tree (4 chunks) · 8 GPUs · {data} · 14,000 elements moved in 9 steps>'."""
    plan, ledger = result.plan, result.ledger
    name = named_with_options(plan.algorithm, plan)
    return (f"<{type(result).__name__} of {name} · {plural(plan.gpus, 'GPU')} · {data} · "
            f"{plural(ledger.total, 'element')} moved in {plural(ledger.steps, 'step')}>")


def _rows(arrays: Sequence):
    """Validate the per-GPU arrays; return them as flat views (never copies) and their shape."""
    if isinstance(arrays, (Mapping, Set, str, bytes)) or hasattr(arrays, "dtype") and \
            getattr(arrays, "ndim", 1) == 0:
        raise RingsimError(f"arrays must be a list or tuple with one array per GPU, "
                           f"got a {type(arrays).__name__}")
    try:
        items = list(arrays)
    except TypeError:
        raise RingsimError("arrays must be a sequence with one array per GPU") from None
    if not items:
        raise RingsimError("arrays must hold at least one array (one per GPU)")
    items = [as_numeric_array(a, f"GPU{number}'s array") for number, a in enumerate(items, 1)]
    shape, dtype = tuple(items[0].shape), items[0].dtype
    for number, a in enumerate(items, 1):
        if tuple(a.shape) != shape:
            raise RingsimError(f"every GPU's array must have the same shape: GPU1 has {shape}, "
                               f"GPU{number} has {tuple(a.shape)}")
        if a.dtype != dtype:
            raise RingsimError(f"every GPU's array must have the same dtype: GPU1 has {dtype}, "
                               f"GPU{number} has {a.dtype}")
    return [a.reshape(-1) for a in items], shape, dtype


def allreduce(arrays: Sequence, algorithm: str = DEFAULT_ALGORITHM, *, master: int | None = None,
              backend: str | None = None, **options) -> AllReduceResult:
    """Sum one array per simulated GPU with `algorithm`; every output holds the element-wise sum.

    The arrays are copied, never modified. `backend` is 'numpy', 'cupy' or 'auto'; by default
    the arrays' own module is used. `master` is the 1-based master GPU of the master algorithm;
    other options as the algorithm takes them (chunks=, channels=, ring_order=, nodes=).
    Every GPU ends bitwise identical. Float sums of different algorithms (or G, or channel
    counts) may differ in the last bits: each adds in its own order (order.py states the
    rule), and every float addition rounds. NCCL's maintainers: "Ring, by nature, has a worse
    precision than say Tree, because of the order in which it performs the sums" (NVIDIA/nccl
    issue #1055). ringsim.studies.numerics.measure (`ringsim compare --numerics`) measures each
    algorithm's error against the exact sum; all stay within (G−1)·u·Σ|x|.
    """
    rows, shape, dtype = _rows(arrays)
    xp = array_module(backend) if backend is not None else module_of(rows[0])
    plan = make_plan(algorithm, len(rows), master=master, **options)
    layout = Layout(plan.segments, math.prod(shape))
    check_memory(allreduce_bytes(plan, layout, dtype.itemsize),
                 f"an all-reduce of {plan.gpus:,} arrays of {layout.elements:,} {dtype} elements",
                 instead=f"ringsim.closed_form({algorithm!r}, {plan.gpus}, {layout.elements}) gives "
                         f"the counts without allocating", xp=xp)
    executor = make_executor(plan, layout, xp, dtype)
    executor.load(rows)  # copies GPU by GPU: the inputs are read, never written
    executor.run()
    summed = executor.result()
    outputs = [summed[g].reshape(shape) for g in range(plan.gpus)]
    return AllReduceResult(outputs, plan, measure(plan, layout),
                           plan_closed_form(plan, layout.elements))


class CollectiveResult(_Result):
    """Each GPU's output and what the run moved (its plan, ledger and closed forms)."""

    def __repr__(self) -> str:
        """One line, not the arrays: '<CollectiveResult of ring-reduce-scatter · 8 GPUs · …>'."""
        # The elements each GPU gave: an all-gather's output stacks the G shards it was given,
        # a reduce-scatter's outputs are the G shards of that many.
        first = self.outputs[0]
        if self.plan.options.get("collective") == ALL_GATHER.name:
            given = first.size // self.plan.gpus
        else:
            given = sum(output.size for output in self.outputs)
        return _one_line(self, plural(given, f"{first.dtype} element") + " per GPU")


def _run(plan: Plan, layout: Layout, rows, xp, dtype):
    executor = make_executor(plan, layout, xp, dtype)
    executor.load(rows)  # copies GPU by GPU: the inputs are read, never written
    executor.run()
    return executor.result()


def reduce_scatter(arrays: Sequence, algorithm: str = REDUCE_SCATTER.algorithms[0], *,
                   backend: str | None = None) -> CollectiveResult:
    """Sum one array per GPU and leave GPU g only segment g of the sum (flat, 1-D).

    Segment g holds ⌊N/G⌋ elements, one more for the first N mod G GPUs. The arrays are
    copied, never modified.
    """
    rows, shape, dtype = _rows(arrays)
    xp = array_module(backend) if backend is not None else module_of(rows[0])
    plan = REDUCE_SCATTER.plan(len(rows), algorithm)
    layout = Layout(plan.segments, math.prod(shape))
    check_memory(allreduce_bytes(plan, layout, dtype.itemsize),
                 f"a reduce-scatter of {plan.gpus:,} arrays of {layout.elements:,} {dtype} elements",
                 instead=f"ringsim.algorithms.collectives.REDUCE_SCATTER.closed_form({plan.gpus}, "
                         f"{layout.elements}) gives the counts without allocating", xp=xp)
    summed = _run(plan, layout, rows, xp, dtype)
    outputs = [summed[g, layout.offset(g):layout.offset(g + 1)].copy() for g in range(plan.gpus)]
    return CollectiveResult(outputs, plan, measure(plan, layout),
                            REDUCE_SCATTER.plan_closed_form(plan, layout.elements))


def all_gather(arrays: Sequence, algorithm: str = ALL_GATHER.algorithms[0], *,
               backend: str | None = None) -> CollectiveResult:
    """Give every GPU every GPU's shard: one array per GPU, all of one shape; each output is
    the shards stacked, GPU1's first (shape (G, *shape), as np.stack). The inputs are never modified."""
    rows, shape, dtype = _rows(arrays)
    xp = array_module(backend) if backend is not None else module_of(rows[0])
    gpus = len(rows)
    plan = ALL_GATHER.plan(gpus, algorithm)
    count = math.prod(shape)
    layout = Layout(gpus, gpus * count)  # G equal segments: GPU g's shard is segment g
    # the G shards laid out in a (G, G·count) input, then the run's own buffers
    staged = gpus * gpus * count * dtype.itemsize
    check_memory(staged + allreduce_bytes(plan, layout, dtype.itemsize),
                 f"an all-gather of {gpus:,} shards of {count:,} {dtype} elements",
                 instead=f"ringsim.algorithms.collectives.ALL_GATHER.closed_form({gpus}, "
                         f"{layout.elements}) gives the counts without allocating", xp=xp)
    full = xp.zeros((gpus, gpus * count), dtype=dtype)
    for g, row in enumerate(rows):
        full[g, g * count:(g + 1) * count] = row
    gathered = _run(plan, layout, full, xp, dtype)
    outputs = [gathered[g].reshape((gpus, *shape)) for g in range(gpus)]
    return CollectiveResult(outputs, plan, measure(plan, layout),
                            ALL_GATHER.plan_closed_form(plan, layout.elements))
