"""Benchmarks of the figures, side by side in one run: for every output kind (svg, png, pdf, gif,
html) at G = 4 and G = 16, the slowest algorithm's CPU time against a 0.5 s budget per picture
(an animation or a deck has a picture per step, so it is measured per step), and the 4-GPU
animated GIF's size against 1 MB."""

from __future__ import annotations

import time

from ..algorithms import ALGORITHMS
from ..sim.simulation import Simulation

FIGURE_GPUS = (4, 16)
SECONDS_BUDGET = 0.5  # per picture
GIF_BUDGET = 1_000_000  # bytes
STILL = (".svg", ".png")
ANIMATED = (".pdf", ".gif", ".html")


def _slowest(suffix: str, gpus: int, repeats: int, names=ALGORITHMS) -> tuple[float, float, str, int]:
    """The slowest of `names`' best wall and CPU time to draw at G = `gpus`, from a fresh
    simulation to the file's bytes: its middle step for a still picture, every step for an
    animation; and how many pictures that was."""
    from ..figures.output import render
    worst, worst_cpu, which, pictures = 0.0, 0.0, "", 1
    for name in names:
        best, best_cpu = float("inf"), float("inf")
        for _ in range(repeats):
            start, cpu = time.perf_counter(), time.process_time()
            sim = Simulation.create(name, gpus)
            step = (len(sim.plan) + 1) // 2 if suffix in STILL else None
            render(sim, suffix, step)
            best = min(best, time.perf_counter() - start)
            best_cpu = min(best_cpu, time.process_time() - cpu)
        count = 1 if suffix in STILL else len(sim.plan) + 1
        if best_cpu / count > worst_cpu / pictures:
            worst, worst_cpu, which, pictures = best, best_cpu, name, count
    return worst, worst_cpu, which, pictures


def figure_cases(quick: bool = False) -> list[dict]:
    """CPU seconds per picture over the budget for the slowest algorithm of every kind at G = 4
    and 16, and the G = 4 GIF's bytes over 1 MB (lower is better); one note instead when the
    figures extra is missing. A quick run skips the animations at G = 16 and draws those at
    G = 4 for the 4-GPU example's algorithm only."""
    base = {"backend": "numpy", "dtype": "int64", "elements": 8}
    try:
        import drawsvg  # noqa: F401
        import typst  # noqa: F401
        import PIL  # noqa: F401
    except ImportError:
        return [{"case": "figures", **base, "gpus": max(FIGURE_GPUS), "seconds": None, "ratio": 0.0,
                 "note": "not measured: pip install '.[figures]'"}]
    from ..figures.gallery import seed
    from ..figures.output import render
    render(seed(), ".png")  # the first picture finds the fonts, once per process: not counted
    records = []
    for gpus in FIGURE_GPUS:
        for suffix in STILL + ANIMATED:
            if quick and gpus > 4 and suffix in ANIMATED:
                continue
            repeats = 1 if quick or suffix in ANIMATED else 3
            names = [seed().plan.algorithm] if quick and suffix in ANIMATED else ALGORITHMS
            seconds, cpu, name, pictures = _slowest(suffix, gpus, repeats, names)
            what = "its middle step" if pictures == 1 else f"{pictures} pictures, {cpu:.2f} s in all"
            whose = "the slowest algorithm's" if len(names) > 1 else "the 4-GPU example's"
            # The process's own CPU time: on a shared machine the wall clock also counts others' work.
            records.append({"case": f"figure-{suffix[1:]}-{gpus}", **base, "gpus": gpus, "seconds": seconds,
                            "cpu_seconds": cpu, "pictures": pictures,
                            "ratio": cpu / pictures / SECONDS_BUDGET, "target": 1.0,
                            "meaning": f"{whose} {suffix} ({name}, {what}, best of "
                                       f"{repeats}): CPU seconds per picture over a {SECONDS_BUDGET} s "
                                       "budget; lower is better"})
    start = time.perf_counter()
    size = len(render(seed(), ".gif"))
    seconds = time.perf_counter() - start
    records.append({"case": "figure-gif-size", **base, "gpus": 4, "seconds": seconds,
                    "ratio": size / GIF_BUDGET, "target": 1.0,
                    "meaning": f"the 4-GPU animation's {size:,} bytes over 1 MB; lower is better"})
    return records
