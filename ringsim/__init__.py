"""ringsim: watch GPUs synchronise gradients — naive all-to-all, a single master, the ring, trees and more.

The core imports only NumPy; the TUI (Textual), CuPy and MPI load only when asked for.
The names below load on first use, so the ringsim command starts (and can be stopped with
Ctrl-C cleanly) before NumPy and the algorithms load.
"""

from __future__ import annotations

import importlib

__version__ = "0.1.0"

# Each public name and the module it comes from.
_WHERE = {
    "ALGORITHMS": "algorithms", "closed_form": "algorithms", "make_plan": "algorithms",
    "AllReduceResult": "api", "CollectiveResult": "api", "all_gather": "api",
    "allreduce": "api", "reduce_scatter": "api",
    "RingsimError": "core.errors", "Layout": "core.layout",
    "Ledger": "execute.ledger", "measure": "execute.ledger",
    "NumericExecutor": "execute.numeric",
    "Plan": "core.plan", "Step": "core.plan", "Transfer": "core.plan",
    "Simulation": "sim.simulation", "demo_gradients": "sim.simulation",
    "SymbolicState": "execute.symbolic", "check": "execute.symbolic",
    "run_symbolic": "execute.symbolic",
}

__all__ = [
    "ALGORITHMS", "AllReduceResult", "Layout", "Ledger", "NumericExecutor", "Plan",
    "RingsimError", "Simulation", "Step", "SymbolicState", "Transfer", "allreduce", "check",
    "closed_form", "demo_gradients", "make_plan", "measure", "run_symbolic",
    "CollectiveResult", "all_gather", "reduce_scatter",
]


def __getattr__(name: str):
    """A public name (`ringsim.allreduce`) or a subpackage (`ringsim.cost`), loaded on first use."""
    if name in _WHERE:
        value = getattr(importlib.import_module(f".{_WHERE[name]}", __name__), name)
    elif not name.startswith("__"):
        try:
            value = importlib.import_module(f".{name}", __name__)
        except ModuleNotFoundError as error:
            if error.name != f"{__name__}.{name}":
                raise  # the subpackage exists but something it imports does not
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value  # found once: later uses skip this function
    return value


def __dir__() -> list[str]:
    """The public names with the module's own."""
    return sorted(set(globals()) | set(__all__))
