"""The executor factory: one place above the executors chooses NumPy, CuPy or MPI."""

from __future__ import annotations

import numpy as np
import pytest

from ringsim import Layout, NumericExecutor, make_plan
from ringsim.core.errors import RingsimError
from ringsim.execute.factory import make_executor


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
