"""ringsim: watch GPUs synchronise gradients — naive all-to-all, a single master, the ring, trees and more.

The core imports only NumPy; the TUI (Textual), CuPy and MPI load only when asked for.
"""

from .algorithms import ALGORITHMS, closed_form, make_plan
from .api import AllReduceResult, CollectiveResult, all_gather, allreduce, reduce_scatter
from .core.errors import RingsimError
from .core.layout import Layout
from .execute.ledger import Ledger, measure
from .execute.numeric import NumericExecutor
from .core.plan import Plan, Step, Transfer
from .sim.simulation import Simulation, demo_gradients
from .execute.symbolic import SymbolicState, check, run_symbolic

__version__ = "0.1.0"

__all__ = [
    "ALGORITHMS", "AllReduceResult", "Layout", "Ledger", "NumericExecutor", "Plan",
    "RingsimError", "Simulation", "Step", "SymbolicState", "Transfer", "allreduce", "check",
    "closed_form", "demo_gradients", "make_plan", "measure", "run_symbolic",
    "CollectiveResult", "all_gather", "reduce_scatter",
]
