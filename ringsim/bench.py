"""Benchmarks, reported as ratios measured side by side in one run (never as timed tests).

Efficiency: useful bytes per second of a ring all-reduce (a reduce reads two segments and
writes one, 3 × segment bytes; a copy reads one and writes one, 2 ×) divided by NumPy's own
copy bandwidth (bytes read + written by np.copyto) on an array of the same total size.
Scale: the same total data spread over 1,024 GPUs, as a fraction of the 8-GPU efficiency,
and the peak memory of ringsim.allreduce as a multiple of the input.
"""

from __future__ import annotations

import time
import tracemalloc

import numpy as np

from .algorithms import ALGORITHMS, make_plan
from .api import allreduce
from .layout import Layout
from .ledger import transfer_elements
from .numeric import NumericExecutor
from .plan import Plan

NEW_ALGORITHMS = ("tree", "double-tree", "recursive-doubling", "halving-doubling",
                  "bidirectional-ring", "hierarchical")


def useful_bytes(plan: Plan, layout: Layout, itemsize: int) -> int:
    """Bytes a plan must read and write at the least: 3× per reduced element, 2× per copied one."""
    total = 0
    for step in plan.steps:
        factor = np.where(step.ops == 0, 3, 2)  # per transfer: a step may reduce and copy
        total += int((factor * transfer_elements(step, layout)).sum())
    return total * itemsize


def copy_bandwidth(total_elements: int, dtype=np.float32, repeats: int = 3) -> float:
    """NumPy's copy bandwidth in bytes (read + written) per second, best of `repeats`."""
    src = np.ones(total_elements, dtype=dtype)
    dst = np.empty_like(src)
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        np.copyto(dst, src)
        best = min(best, time.perf_counter() - start)
    return 2 * src.nbytes / best


def ring_seconds(gpus: int, elements: int, dtype=np.float32, repeats: int = 3,
                 algorithm: str = "ring") -> tuple[float, int]:
    """Best time of `repeats` runs of an algorithm's steps (the ring's by default) over loaded
    buffers, and its useful bytes."""
    plan = make_plan(algorithm, gpus)
    layout = Layout(plan.segments, elements)
    rng = np.random.default_rng(0)
    gradients = rng.standard_normal((gpus, elements), dtype=np.float32).astype(dtype, copy=False)
    executor = NumericExecutor(plan, layout, np, np.dtype(dtype))
    best = float("inf")
    for _ in range(repeats):
        executor.load(gradients)
        start = time.perf_counter()
        executor.run()
        best = min(best, time.perf_counter() - start)
    return best, useful_bytes(plan, layout, np.dtype(dtype).itemsize)


def peak_memory_ratio(gpus: int, elements: int, dtype=np.float32) -> float:
    """Peak memory of ringsim.allreduce, input included, as a multiple of the input's size."""
    arrays = [np.full(elements, g, dtype=dtype) for g in range(gpus)]
    input_bytes = sum(a.nbytes for a in arrays)
    tracemalloc.start()
    tracemalloc.reset_peak()
    result = allreduce(arrays, "ring", backend="numpy")
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    del result
    return (input_bytes + peak) / input_bytes


def numpy_cases(quick: bool = False) -> list[dict]:
    """The CPU benchmark: efficiency at G=8 and the same data at G=1,024, as ratios."""
    total_log2 = 20 if quick else 27
    base = {"backend": "numpy", "dtype": "float32"}
    bandwidth = copy_bandwidth(1 << total_log2)
    records = []
    efficiency = {}
    for case, gpus in (("ring-efficiency", 8), ("ring-scale", 1024)):
        elements = (1 << total_log2) // gpus
        seconds, useful = ring_seconds(gpus, elements)
        efficiency[gpus] = useful / seconds / bandwidth
        record = {"case": case, **base, "gpus": gpus, "elements": elements, "seconds": seconds,
                  "useful_bytes_per_s": useful / seconds, "copy_bytes_per_s": bandwidth,
                  "efficiency": efficiency[gpus]}
        if gpus == 8:
            record.update(ratio=efficiency[8], target=0.8,
                          meaning="useful bytes/s over np.copyto bytes/s")
        else:
            record.update(ratio=efficiency[1024] / efficiency[8], target=0.5,
                          meaning="efficiency at G=1,024 over efficiency at G=8")
        records.append(record)
    for name in NEW_ALGORITHMS:
        elements = (1 << total_log2) // 8
        seconds, useful = ring_seconds(8, elements, algorithm=name)
        records.append({"case": f"{name}-efficiency", **base, "gpus": 8, "elements": elements,
                        "seconds": seconds, "useful_bytes_per_s": useful / seconds,
                        "copy_bytes_per_s": bandwidth, "ratio": useful / seconds / bandwidth,
                        "target": 0.7, "meaning": "useful bytes/s over np.copyto bytes/s"})
    for name in ALGORITHMS:
        start = time.perf_counter()
        make_plan(name, 1024)
        records.append({"case": f"{name}-plan", **base, "gpus": 1024, "elements": 0,
                        "seconds": time.perf_counter() - start,
                        "ratio": time.perf_counter() - start, "target": 0.5,
                        "meaning": "seconds to build the plan for 1,024 GPUs; lower is better"})
    elements = (1 << total_log2) // 1024
    records.append({"case": "ring-peak-memory", **base, "gpus": 1024, "elements": elements,
                    "seconds": None, "ratio": peak_memory_ratio(1024, elements), "target": 3.0,
                    "meaning": "peak bytes (input included) over input bytes; lower is better"})
    records.extend(cost_cases())
    from .timeline.bench import timeline_cases  # issue 12: timeline and overlap budgets
    records.extend(timeline_cases(quick))
    return records


def cost_cases() -> list[dict]:
    """The closed forms at scale, each against a 1 s budget: compare --time at G=1,000,000 and
    sweep at G=1,024 over 24 sizes (1KiB..8GiB), every algorithm; compare's peak memory."""
    from .compare import compare
    from .cost import CostModel
    from .sweep import parse_sizes, sweep
    from .topology import load
    model = CostModel(load("dgx-h100"), 4)
    base = {"backend": "model", "dtype": "float32", "target": 1.0}
    tracemalloc.start()
    start = time.perf_counter()
    compare(1_000_000, 7_000_000_000, model)
    compare_seconds = time.perf_counter() - start
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    sizes = parse_sizes("1KiB..8GiB")
    start = time.perf_counter()
    sweep(1024, sizes, model)
    sweep_seconds = time.perf_counter() - start
    lower = "; lower is better"
    return [
        {"case": "compare-time-1M", **base, "gpus": 1_000_000, "elements": 7_000_000_000,
         "seconds": compare_seconds, "ratio": compare_seconds,
         "meaning": "compare --time --gpus 1000000 --elements 7000000000 (dgx-h100), seconds "
                    "over a 1 s budget" + lower},
        {"case": "compare-memory-1M", **base, "gpus": 1_000_000, "elements": 7_000_000_000,
         "seconds": None, "ratio": peak / 200e6,
         "meaning": f"peak memory {peak / 1e6:.0f} MB over a 200 MB budget" + lower},
        {"case": "sweep-1024", **base, "gpus": 1024, "elements": sizes[-1] // 4,
         "seconds": sweep_seconds, "ratio": sweep_seconds,
         "meaning": f"sweep --gpus 1024 over {len(sizes)} sizes, every timed algorithm, seconds "
                    "over a 1 s budget" + lower},
    ]
