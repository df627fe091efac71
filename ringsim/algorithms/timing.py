"""Closed-form times by algorithm name: each registered module's `seconds` hook, priced on a model.

The hooks follow the α-β-γ model of ringsim.cost (Thakur, Rabenseifner & Gropp, IJHPCA
2005, §2) and give the same time as pricing the algorithm's plan, without building it.
"""

from __future__ import annotations

from ..cost.model import CostModel, Estimate
from . import ALGORITHMS, algorithm


def timed_algorithms() -> list[str]:
    """Names of the registered algorithms that provide a closed-form time."""
    return [name for name, module in ALGORITHMS.items() if hasattr(module, "seconds")]


def estimate(name: str, gpus: int, elements: int, model: CostModel | None = None,
             **options) -> Estimate:
    """Algorithm `name`'s closed-form time for G GPUs of N elements (no plan is built)."""
    model = model or CostModel()
    hook = algorithm(name).seconds
    model.topology.check_gpus(gpus)
    return hook(gpus, elements, model, **options)
