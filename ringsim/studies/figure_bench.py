"""Benchmarks of the figures: the slowest picture of any algorithm at G = 16 (SVG and PNG)
against a 0.5 s budget, and the 4-GPU animated GIF's size against 1 MB."""

from __future__ import annotations

import time

from ..algorithms import ALGORITHMS
from ..sim.simulation import Simulation

FIGURE_GPUS = 16
SECONDS_BUDGET = 0.5
GIF_BUDGET = 1_000_000  # bytes


def _slowest(suffix: str, repeats: int) -> tuple[float, float, str]:
    """The slowest algorithm's best wall and CPU time to draw its middle step at G = 16, from a
    fresh simulation to the file's bytes."""
    from ..figures.output import render
    worst, worst_cpu, which = 0.0, 0.0, ""
    for name in ALGORITHMS:
        best, best_cpu = float("inf"), float("inf")
        for _ in range(repeats):
            start, cpu = time.perf_counter(), time.process_time()
            sim = Simulation.create(name, FIGURE_GPUS)
            render(sim, suffix, (len(sim.plan) + 1) // 2)
            best = min(best, time.perf_counter() - start)
            best_cpu = min(best_cpu, time.process_time() - cpu)
        if best_cpu > worst_cpu:
            worst, worst_cpu, which = best, best_cpu, name
    return worst, worst_cpu, which


def figure_cases(quick: bool = False) -> list[dict]:
    """Seconds over the budget for the slowest SVG and PNG at G = 16, and the G = 4 GIF's bytes
    over 1 MB (lower is better); one note instead when the figures extra is missing."""
    base = {"backend": "numpy", "dtype": "int64", "elements": 8}
    try:
        import drawsvg  # noqa: F401
        import resvg_py  # noqa: F401
        import PIL  # noqa: F401
    except ImportError:
        return [{"case": "figures", **base, "gpus": FIGURE_GPUS, "seconds": None, "ratio": 0.0,
                 "note": "not measured: pip install '.[figures]'"}]
    from ..figures.gallery import seed
    from ..figures.output import render
    repeats = 1 if quick else 3
    records = []
    for suffix in (".svg", ".png"):
        seconds, cpu, name = _slowest(suffix, repeats)
        # The process's own CPU time: on a shared machine the wall clock also counts others' work.
        records.append({"case": f"figure{suffix}", **base, "gpus": FIGURE_GPUS, "seconds": seconds,
                        "cpu_seconds": cpu, "ratio": cpu / SECONDS_BUDGET, "target": 1.0,
                        "meaning": f"the slowest algorithm's {suffix} ({name}, its middle step, "
                                   f"best of {repeats}): CPU seconds over a {SECONDS_BUDGET} s "
                                   "budget; lower is better"})
    start = time.perf_counter()
    size = len(render(seed(), ".gif"))
    seconds = time.perf_counter() - start
    records.append({"case": "figure-gif", **base, "gpus": 4, "seconds": seconds,
                    "ratio": size / GIF_BUDGET, "target": 1.0,
                    "meaning": f"the 4-GPU animation's {size:,} bytes over 1 MB; lower is better"})
    return records
