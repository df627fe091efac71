"""Whether CuPy can build and run ringsim's kernels on this machine, and if not, why (one line).

CuPy finds a CUDA device with nothing but a driver, yet compiling any kernel needs NVRTC and
the CUDA headers (CuPy ≥ 14 looks for them with cuda-pathfinder, from the `ctk` extra's
wheels or a local toolkit; without them every compile raises "Failed to find CUDA headers").
So before the first executor runs, one tiny launch of ringsim's own `ringsim_add` tells.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...core.errors import first_line
from .kernel import Kernels

_checked: dict[int, str | None] = {}


def kernel_problem(xp: Any) -> str | None:
    """None when `xp` (CuPy) compiles and launches ringsim's add kernel on the current
    device; otherwise the reason, one line. Checked once per array module."""
    key = id(xp)
    if key not in _checked:
        try:
            a = xp.asarray(np.arange(3, dtype=np.float32))
            out = xp.empty_like(a)
            Kernels(xp, np.float32).add(a, a, out)
            xp.asnumpy(out)  # waits for the launch, so a failed launch shows here
            _checked[key] = None
        except Exception as exc:  # NVRTC, the headers, the driver: each fails its own way
            _checked[key] = f"CuPy cannot compile or run CUDA kernels: {first_line(exc)}"
    return _checked[key]
