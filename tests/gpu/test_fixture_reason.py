"""The GPU fixture's skip reasons, and the one-line error when kernels cannot compile (CPU)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ringsim import Layout, make_plan
from ringsim.core.errors import RingsimError
from ringsim.execute.gpu.executor import cupy_executor

from .conftest import cupy_or_reason
from .standin import HEADERS_MISSING, Cupy

ROOT = Path(__file__).resolve().parents[2]
CANNOT = "CuPy cannot compile or run CUDA kernels: " + HEADERS_MISSING


def test_reason_is_ringsims_line_when_cupy_cannot_load():
    def load(name):
        raise RingsimError("CuPy is not installed: pip install 'ringsim[gpu]'")
    assert cupy_or_reason(load) == (None, "CuPy is not installed: pip install 'ringsim[gpu]'")


def test_reason_is_the_compilers_line_when_a_kernel_cannot_build():
    assert cupy_or_reason(lambda name: Cupy(compile_error=HEADERS_MISSING)) == (None, CANNOT)


def test_no_reason_when_kernels_build():
    xp = Cupy()
    assert cupy_or_reason(lambda name: xp) == (xp, None)


def test_the_executor_refuses_in_one_line_when_kernels_cannot_build():
    xp = Cupy(compile_error=HEADERS_MISSING + "\nmore detail")
    with pytest.raises(RingsimError) as caught:
        cupy_executor(make_plan("ring", 2), Layout(2, 4), xp, np.float32)
    assert str(caught.value) == CANNOT + " (pip install '.[gpu]' from a clone of ringsim brings NVRTC and the CUDA headers)"


def test_gpu_tests_skip_with_the_compilers_reason(tmp_path):
    """pytest on a GPU test, with a `cupy` that finds a device but cannot compile: a skip."""
    (tmp_path / "cupy").mkdir()
    (tmp_path / "cupy" / "__init__.py").write_text(
        "import sys\n"
        f"sys.path.insert(0, {str(ROOT / 'tests')!r})\n"
        "from gpu.standin import Cupy, HEADERS_MISSING\n"
        "sys.modules[__name__] = Cupy(compile_error=HEADERS_MISSING)\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), str(ROOT)]))
    # -n 0: one process; the suite's own -n auto would start workers for this one test.
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider",
                           "-n", "0", "tests/gpu/test_cupy_backend.py", "-k", "inputs_are_never_modified"],
                          capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 skipped" in done.stdout and CANNOT in done.stdout, done.stdout
