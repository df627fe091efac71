"""Benchmarks of issue 12, each against its budget in the same run as ringsim bench's others:
`timeline` of the ring at G = 1,024 (2 s) and `overlap` of the 7B model with its sweep (1 s)."""

from __future__ import annotations

import time


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
    plan = make_plan("ring", gpus)
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
        {"case": "timeline-ring", "backend": "model", "dtype": "float32", "gpus": gpus,
         "elements": elements, "seconds": timeline_seconds, "cpu_seconds": timeline_cpu, "ratio": timeline_seconds / 2.0,
         "target": 1.0, "meaning": f"timeline of the ring ({plan.transfer_count():,} transfers, "
                                   "dgx-h100) and its critical path, seconds over a 2 s budget" + lower},
        {"case": "overlap-7b", "backend": "model", "dtype": "float32", "gpus": 64,
         "elements": net.params, "seconds": overlap_seconds, "cpu_seconds": overlap_cpu, "ratio": overlap_seconds / 1.0,
         "target": 1.0, "meaning": f"overlap of Llama 2 7B's {len(net.layers)} layers and a "
                                   f"{len(SWEEP_MB)}-size bucket sweep, seconds over a 1 s budget" + lower},
    ]
