"""The `cupy` fixture: CuPy with a visible CUDA device, or a skip that says why not."""

from __future__ import annotations

import pytest

from ringsim.backend import array_module
from ringsim.errors import RingsimError


@pytest.fixture(scope="session")
def cupy():
    """The cupy module when a CUDA device is usable; otherwise skip with ringsim's one-line reason."""
    try:
        return array_module("cupy")
    except RingsimError as error:
        pytest.skip(str(error))
