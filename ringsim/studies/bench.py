"""Benchmarks, reported as ratios measured side by side in one run (never as timed tests).

Efficiency: useful bytes per second of a ring all-reduce (a reduce reads two segments and
writes one, 3 × segment bytes; a copy reads one and writes one, 2 ×) divided by NumPy's own
copy bandwidth (bytes read + written by np.copyto) on an array of the same total size.
Scale: the same total data spread over 1,024 GPUs, as a fraction of the 8-GPU efficiency,
and the peak memory of ringsim.allreduce as a multiple of the input. Budgets in seconds:
every algorithm's plan for 1,024 GPUs built in 0.5 s; `compare --time --gpus 1000000` and
`sweep --gpus 1024` each in 1 s as whole processes; `timeline` of the ring at G = 1,024 in
2 s and `overlap` of the 7B model with its bucket sweep in 1 s.
"""

from __future__ import annotations

import time
import tracemalloc

import numpy as np

from ..algorithms import ALGORITHMS, DEFAULT_ALGORITHM, closed_form, make_plan
from ..api import allreduce
from ..core.files import atomic_output, read_text
from ..core.layout import Layout
from ..execute.backend import make_executor
from ..core.plan import Plan

ERRORS_BYTES = 16 * 1024 * 1024  # what a failed run may print; a traceback is a few KB


def efficiency_algorithms(gpus: int = 8) -> tuple[str, ...]:
    """The registered algorithms measured at G GPUs beside the default (which numpy_cases
    measures at two scales), in registry order."""
    # Left out: those whose busiest GPU sends a whole gradient to each of the others, (G−1)·N
    # (the master, naive all-to-all). Every transfer of theirs is one whole-array add or copy,
    # which adds nothing new to measure.
    elements = 1 << 20
    whole = (gpus - 1) * elements
    return tuple(name for name in ALGORITHMS if name != DEFAULT_ALGORITHM
                 and closed_form(name, gpus, elements).busiest_sent.value < whole)


OTHER_ALGORITHMS = efficiency_algorithms()


def useful_bytes(plan: Plan, layout: Layout, itemsize: int) -> int:
    """Bytes a plan must read and write at the least: 3× per reduced element, 2× per copied one."""
    total = 0
    for step in plan.steps:
        factor = np.where(step.ops == 0, 3, 2)  # per transfer: a step may reduce and copy
        total += int((factor * layout.spans(step.first, step.last)).sum())
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
                 algorithm: str = DEFAULT_ALGORITHM) -> tuple[float, int]:
    """Best time of `repeats` runs of an algorithm's steps (the default algorithm's) over
    loaded buffers, and its useful bytes."""
    plan = make_plan(algorithm, gpus)
    layout = Layout(plan.segments, elements)
    rng = np.random.default_rng(0)
    gradients = rng.standard_normal((gpus, elements), dtype=np.float32).astype(dtype, copy=False)
    executor = make_executor(plan, layout, np, np.dtype(dtype))
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
    result = allreduce(arrays, DEFAULT_ALGORITHM, backend="numpy")
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
    # A quick run scales to 128 GPUs: setting up 1,024 (and tracing its memory) takes most of
    # a full run's time, and a quick run's ratios are not compared with the targets anyway.
    scale = 128 if quick else 1024
    cases = ((f"{DEFAULT_ALGORITHM}-efficiency", 8), (f"{DEFAULT_ALGORITHM}-scale", scale))
    for case, gpus in cases:
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
            record.update(ratio=efficiency[gpus] / efficiency[8], target=0.5,
                          meaning=f"efficiency at G={gpus:,} over efficiency at G=8")
        records.append(record)
    for name in OTHER_ALGORITHMS:
        elements = (1 << total_log2) // 8
        seconds, useful = ring_seconds(8, elements, algorithm=name)
        records.append({"case": f"{name}-efficiency", **base, "gpus": 8, "elements": elements,
                        "seconds": seconds, "useful_bytes_per_s": useful / seconds,
                        "copy_bytes_per_s": bandwidth, "ratio": useful / seconds / bandwidth,
                        "target": 0.7, "meaning": "useful bytes/s over np.copyto bytes/s"})
    records.extend(plan_cases(repeats=1 if quick else 3))
    elements = (1 << total_log2) // scale
    records.append({"case": f"{DEFAULT_ALGORITHM}-peak-memory", **base, "gpus": scale,
                    "elements": elements, "seconds": None,
                    "ratio": peak_memory_ratio(scale, elements), "target": 3.0,
                    "meaning": "peak bytes (input included) over input bytes; lower is better"})
    records.extend(cost_cases(quick))
    records.extend(timeline_cases(quick))
    from .figure_bench import figure_cases
    records.extend(figure_cases(quick))
    return records


def plan_cases(gpus: int = 1024, repeats: int = 3) -> list[dict]:
    """Seconds to build (and validate) each algorithm's plan for 1,024 GPUs, best of `repeats`,
    against a 0.5 s budget."""
    records = []
    for name in ALGORITHMS:
        best = float("inf")
        for _ in range(repeats):
            start = time.perf_counter()
            plan = make_plan(name, gpus)
            best = min(best, time.perf_counter() - start)
            del plan
        records.append({"case": f"{name}-plan", "backend": "numpy", "dtype": "float32",
                        "gpus": gpus, "elements": 0, "seconds": best, "ratio": best,
                        "target": 0.5, "meaning": f"seconds to build the plan for {gpus:,} GPUs, "
                                                  "best of " f"{repeats}; lower is better"})
    return records


# Runs `python -m ringsim ARGS` and, on its way out, writes the process's own peak resident
# memory (VmHWM: the peak since exec, not the fork's copy of the caller, which wait4 would count).
_CHILD = """
import runpy, sys
sys.argv = ["ringsim", *sys.argv[2:]]
try:
    runpy.run_module("ringsim", run_name="__main__", alter_sys=True)
finally:
    try:
        peak = [l for l in open("/proc/self/status") if l.startswith("VmHWM:")][0].split()[1]
    except (OSError, IndexError):
        peak = ""
    from ringsim.core.files import write_text
    write_text(OUT, "peak memory", peak)
"""


def command_run(args: list[str]) -> dict:
    """Run `python -m ringsim ARGS` as its own process, as a user would: wall seconds, CPU
    seconds and peak resident memory in bytes (None where the system does not say)."""
    import os
    import subprocess
    import sys
    import tempfile
    package_root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH")) if p)
    with tempfile.TemporaryDirectory() as folder:
        peak_file, errors_file = os.path.join(folder, "peak"), os.path.join(folder, "errors")
        code = f"OUT = {peak_file!r}\n" + _CHILD
        before = os.times()
        start = time.perf_counter()
        with atomic_output(errors_file, "the errors of a benchmark run", binary=True) as errors:
            status = subprocess.run([sys.executable, "-c", code, "ringsim", *args], env=env,
                                    stdout=subprocess.DEVNULL, stderr=errors).returncode
        wall = time.perf_counter() - start
        after = os.times()
        if status != 0:
            lines = read_text(errors_file, "the errors of a benchmark run", ERRORS_BYTES,
                              lenient=True).strip().splitlines()
            raise RuntimeError(f"ringsim {' '.join(args)} failed: {lines[-1] if lines else status}")
        kib = read_text(peak_file, "peak memory", 64).strip()
    cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    return {"seconds": wall, "cpu_seconds": cpu, "max_rss": int(kib) * 1024 if kib else None}


def cost_cases(quick: bool = False) -> list[dict]:
    """Budgets of whole commands, each run as its own process as a user runs it (Python's
    start-up included): `compare --time --gpus 1000000` (every algorithm, default flat
    topology) in 1 s and 200 MB, the same on dgx-h100 (two levels) in 1 s, `sweep --gpus 1024`
    (24 sizes, 1KiB..8GiB, every algorithm) in 1 s and `predict` on dgx-h100 for 1,000,000
    GPUs (8B..8GiB) in 1 s. Quick runs take smaller sizes."""
    gpus, sweep_gpus, sizes = (10_000, 64, "1KiB..64KiB") if quick else (1_000_000, 1024, "1KiB..8GiB")
    predict_sizes = "8B..64KiB" if quick else "8B..8GiB"
    from .sweep import parse_sizes
    repeats = 1 if quick else 3  # the best of three: other processes' load only adds time

    def best(args: list[str]) -> dict:
        return min((command_run(args) for _ in range(repeats)), key=lambda run: run["seconds"])

    def record(case: str, gpus: int, elements: int, args: list[str], what: str, run: dict) -> dict:
        # One record shape for every whole-process budget: the fastest run over 1 s.
        return {"case": case, "backend": "model", "dtype": "float32", "target": 1.0, "gpus": gpus,
                "elements": elements, "seconds": run["seconds"], "ratio": run["seconds"],
                "cpu_seconds": run["cpu_seconds"],
                "meaning": f"ringsim {' '.join(args)} ({what}), seconds of the whole process "
                           f"(best of {repeats}) over a 1 s budget; lower is better"}

    compare_args = ["compare", "--time", "--gpus", str(gpus)]
    compare = best(compare_args)
    records = [record("compare-time-1M", gpus, 8, compare_args, "flat, every algorithm", compare)]
    if compare["max_rss"] is not None:
        records.append({"case": "compare-memory-1M", "backend": "model", "dtype": "float32",
                        "target": 1.0, "gpus": gpus, "elements": 8, "seconds": None,
                        "ratio": compare["max_rss"] / 200e6, "max_rss": compare["max_rss"],
                        "meaning": f"ringsim {' '.join(compare_args)}: peak resident memory "
                                   f"{compare['max_rss'] / 1e6:.0f} MB over a 200 MB budget; "
                                   "lower is better"})
    others = [
        ("compare-time-1M-dgx-h100", gpus, 8,
         ["compare", "--time", "--topology", "dgx-h100", "--gpus", str(gpus)],
         "two levels: the ring family priced per node period"),
        ("sweep-1024", sweep_gpus, parse_sizes(sizes)[-1] // 4,
         ["sweep", "--gpus", str(sweep_gpus), "--sizes", sizes],
         f"{len(parse_sizes(sizes))} sizes, every algorithm"),
        ("predict-1M", gpus, parse_sizes(predict_sizes)[-1] // 4,
         ["predict", "--topology", "dgx-h100", "--gpus", str(gpus), "--sizes", predict_sizes],
         f"NCCL's model, {len(parse_sizes(predict_sizes))} sizes"),
    ]
    records.extend(record(case, g, n, args, what, best(args)) for case, g, n, args, what in others)
    return records


def timeline_cases(quick: bool = False) -> list[dict]:
    """Seconds over a budget (lower is better) for the timeline and overlap commands' work."""
    from ..algorithms import make_plan
    from ..cost.model import CostModel
    from ..training.models import llama_7b
    from ..training.overlap import SWEEP_MB, simulate as overlap, sweep
    from ..cost.topology import load
    from ..timeline.model import simulate
    gpus = 128 if quick else 1024
    elements = 1 << 24
    model = CostModel(load("dgx-h100"), 4)
    plan = make_plan(DEFAULT_ALGORITHM, gpus)
    start, cpu = time.perf_counter(), time.process_time()
    timeline = simulate(plan, elements, model)
    timeline.critical_path()
    timeline_seconds, timeline_cpu = time.perf_counter() - start, time.process_time() - cpu
    net = llama_7b()
    start, cpu = time.perf_counter(), time.process_time()
    overlap(net, 64, model)
    sweep(net, 64, model, SWEEP_MB)
    overlap_seconds, overlap_cpu = time.perf_counter() - start, time.process_time() - cpu
    lower = "; lower is better (cpu_seconds: the same without other processes' share)"
    return [
        {"case": f"timeline-{DEFAULT_ALGORITHM}", "backend": "model", "dtype": "float32", "gpus": gpus,
         "elements": elements, "seconds": timeline_seconds, "cpu_seconds": timeline_cpu, "ratio": timeline_seconds / 2.0,
         "target": 1.0, "meaning": f"timeline of the ring ({plan.transfer_count():,} transfers, "
                                   "dgx-h100) and its critical path, seconds over a 2 s budget" + lower},
        {"case": "overlap-7b", "backend": "model", "dtype": "float32", "gpus": 64,
         "elements": net.params, "seconds": overlap_seconds, "cpu_seconds": overlap_cpu, "ratio": overlap_seconds / 1.0,
         "target": 1.0, "meaning": f"overlap of Llama 2 7B's {len(net.layers)} layers and a "
                                   f"{len(SWEEP_MB)}-size bucket sweep, seconds over a 1 s budget" + lower},
    ]
