"""Ranks whose buffers live on CUDA devices (CuPy): run only where CuPy sees a device."""

from __future__ import annotations

import pytest

from ringsim.execute.backend import array_module
from ringsim.core.errors import RingsimError

from .conftest import json_lines, ringsim

pytestmark = [pytest.mark.gpu, pytest.mark.mpi]


@pytest.fixture(scope="module")
def cupy():
    try:
        return array_module("cupy")
    except RingsimError as error:
        pytest.skip(str(error))


@pytest.mark.parametrize("algorithm", ["ring", "naive"])
def test_device_buffers_give_the_same_bits_and_say_how_messages_travel(mpiexec, cupy, algorithm):
    count = int(cupy.cuda.runtime.getDeviceCount())
    run = ringsim("mpi", "-n", "2", "-a", algorithm, "--backend", "cupy", "--dtype", "float32",
                  "--elements", "4099", "--json", timeout=180)
    assert run.returncode == 0, run.stderr
    summary = json_lines(run.stdout)[-1]
    assert summary["correct"] and summary["bitwise_equal_to_ringsim"]
    assert "this rank's buffer on CUDA device 0 of " + str(count) in summary["transport"]
    assert summary["transport"].startswith(("NCCL", "CUDA-aware MPI", "host staging"))
