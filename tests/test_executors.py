"""The Executor protocol and its factory: one place above the executors chooses NumPy, CuPy or MPI."""

from __future__ import annotations

import numpy as np
import pytest

from gpu.standin import Cupy
from ringsim import Layout, NumericExecutor, make_plan
from ringsim.core.errors import RingsimError
from ringsim.execute.backend import make_executor, to_numpy
from ringsim.execute.base import Executor
from ringsim.execute.gpu.executor import FusedExecutor
from ringsim.execute.gpu.multidevice import StreamExecutor
from ringsim.mpi.executor import MPIExecutor

PROTOCOL = ("load", "apply", "run", "result")


def test_numpy_by_module_and_by_name_run_the_plan():
    plan = make_plan("ring", 3)
    layout = Layout(3, 7)
    data = np.arange(21, dtype=np.int64).reshape(3, 7)
    for executor in (make_executor(plan, layout, np, data.dtype),
                     make_executor(plan, layout, dtype=data.dtype, backend="numpy")):
        assert isinstance(executor, NumericExecutor)
        executor.load(data)
        executor.run()
        assert (executor.gradients() == data.sum(axis=0)).all()


def test_unknown_backend_is_one_clear_error():
    with pytest.raises(RingsimError, match="unknown executor backend 'tpu'; choose one of: numpy, cupy, mpi"):
        make_executor(make_plan("ring", 2), Layout(2, 4), dtype=np.float32, backend="tpu")


def test_numeric_module_no_longer_reaches_up_into_gpu():
    import ringsim.execute.numeric
    assert not hasattr(ringsim.execute.numeric, "make_executor")
    source = open(ringsim.execute.numeric.__file__).read()
    assert "from .gpu" not in source


@pytest.mark.parametrize("cls", [NumericExecutor, FusedExecutor, StreamExecutor, MPIExecutor])
def test_every_executor_class_has_the_protocol_methods(cls):
    assert issubclass(cls, Executor)
    assert all(callable(getattr(cls, name)) for name in PROTOCOL)


@pytest.mark.parametrize("backend, xp, options", [
    ("numpy", np, {}),
    ("cupy", Cupy(), {"devices": 1, "mode": "fused"}),     # the stand-in: CuPy's plumbing on NumPy
    ("cupy", Cupy(devices=2), {"devices": 2, "mode": "streams"}),
])
def test_the_factory_builds_a_protocol_instance_that_runs_a_plan(backend, xp, options):
    plan, layout = make_plan("ring", 3), Layout(3, 7)
    data = np.arange(21, dtype=np.int64).reshape(3, 7)
    executor = make_executor(plan, layout, xp, data.dtype, backend=backend, **options)
    assert isinstance(executor, Executor)
    for _ in range(2):  # a second load starts the same executor again
        executor.load(xp.asarray(data))
        executor.apply(0)
        for index in range(1, len(plan.steps)):
            executor.apply(index)
        assert (to_numpy(executor.result()) == data.sum(axis=0)).all()


def test_numpy_result_reorders_the_buffers_until_the_next_load():
    plan, layout = make_plan("ring", 4), Layout(4, 8)
    data = np.arange(32, dtype=np.int64).reshape(4, 8)
    executor = make_executor(plan, layout, np, data.dtype)
    executor.load(data)
    executor.run()
    assert (executor.result() == data.sum(axis=0)).all()
    with pytest.raises(RuntimeError, match="load"):
        executor.apply(0)
    executor.load(data)
    executor.run()
    assert (executor.result() == data.sum(axis=0)).all()
