"""The `cupy` fixture: CuPy that can compile and run ringsim's kernels, or a skip saying why."""

from __future__ import annotations

from typing import Any, Callable

import pytest

from ringsim.execute.backend import array_module
from ringsim.core.errors import RingsimError


def cupy_or_reason(load: Callable[[str], Any] = array_module) -> tuple[Any, str | None]:
    """(cupy, None) when a CUDA device is usable and kernels compile; else (None, the reason):
    ringsim's one line for a missing CuPy or device, or why a tiny kernel would not build."""
    try:
        xp = load("cupy")
    except RingsimError as error:
        return None, str(error)
    from ringsim.execute.gpu.probe import kernel_problem
    problem = kernel_problem(xp)
    return (None, problem) if problem else (xp, None)


@pytest.fixture(scope="session")
def cupy():
    """The cupy module (checked once per session); otherwise skip with the reason."""
    xp, reason = cupy_or_reason()
    if xp is None:
        pytest.skip(reason)
    return xp
