"""ringsim.allreduce: sum arrays across simulated GPUs with a chosen algorithm."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from .algorithms import make_plan
from .backend import array_module, module_of
from .errors import RingsimError
from .formula import ClosedForm
from .ledger import Ledger, measure
from .executors import make_executor
from .layout import Layout
from .plan import Plan
from .algorithms import closed_form, plan_options


@dataclass(frozen=True, eq=False)
class AllReduceResult:
    """Each GPU's output (the summed array, in the input's shape) and what the run moved."""

    outputs: list
    plan: Plan
    ledger: Ledger
    closed_form: ClosedForm


def _rows(arrays: Sequence):
    """Validate the per-GPU arrays; return them as flat views (never copies) and their shape."""
    try:
        items = list(arrays)
    except TypeError:
        raise RingsimError("arrays must be a sequence with one array per GPU") from None
    if not items:
        raise RingsimError("arrays must hold at least one array (one per GPU)")
    items = [a if hasattr(a, "dtype") and hasattr(a, "shape") else np.asarray(a) for a in items]
    shape, dtype = tuple(items[0].shape), items[0].dtype
    for number, a in enumerate(items, 1):
        if tuple(a.shape) != shape:
            raise RingsimError(f"every GPU's array must have the same shape: GPU1 has {shape}, "
                               f"GPU{number} has {tuple(a.shape)}")
        if a.dtype != dtype:
            raise RingsimError(f"every GPU's array must have the same dtype: GPU1 has {dtype}, "
                               f"GPU{number} has {a.dtype}")
    if dtype.kind not in "iufc":
        raise RingsimError(f"arrays must be numeric (integer, unsigned, float or complex), got {dtype}")
    return [a.reshape(-1) for a in items], shape, dtype


def allreduce(arrays: Sequence, algorithm: str = "ring", *, master: int | None = None,
              backend: str | None = None, **options) -> AllReduceResult:
    """Sum one array per simulated GPU with `algorithm`; every output holds the element-wise sum.

    The arrays are copied, never modified. `backend` is 'numpy', 'cupy' or 'auto'; by default
    the arrays' own module is used. `master` is the 1-based master GPU of the master algorithm;
    other options as the algorithm takes them (chunks=, channels=, ring_order=, nodes=).
    Every GPU ends bitwise identical. Float sums of different algorithms (or G) may differ
    in the last bits: each adds in its own order (order.py states the rule).
    """
    rows, shape, dtype = _rows(arrays)
    xp = array_module(backend) if backend is not None else module_of(rows[0])
    plan = make_plan(algorithm, len(rows), master=master, **options)
    layout = Layout(plan.segments, int(np.prod(shape, dtype=np.int64)))
    executor = make_executor(plan, layout, xp, dtype)
    executor.load(rows)  # copies GPU by GPU: the inputs are read, never written
    executor.run()
    summed = executor.unload()
    outputs = [summed[g].reshape(shape) for g in range(plan.gpus)]
    return AllReduceResult(outputs, plan, measure(plan, layout),
                           closed_form(algorithm, plan.gpus, layout.elements, **plan_options(plan)))
