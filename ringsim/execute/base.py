"""The Executor protocol: what every executor (NumPy, CuPy, MPI) offers the code that runs a plan.

An executor's life is load → apply each step (or run them all) → result; a new load starts
it again with the same plan. In-process executors may offer more (gradients() reads the
buffers mid-run), but callers that need only a plan's result use these four methods.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable


@runtime_checkable
class Executor(Protocol):
    """Runs one plan on real buffers: load the inputs, carry out its steps, read the result."""

    def load(self, inputs: Any) -> None:
        """Copy the inputs into the buffers (the inputs are never written)."""

    def apply(self, index: int) -> None:
        """Carry out step `index` of the plan."""

    def run(self) -> None:
        """Carry out every step of the plan in order."""

    def result(self) -> Any:
        """Every GPU's buffers once the steps have run (for MPI, this rank's)."""
