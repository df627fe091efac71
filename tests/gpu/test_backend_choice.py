"""Choosing a backend and the messages when CuPy cannot run, through the real code paths (CPU).

A fake `cupy` package on PYTHONPATH stands in for CuPy without a GPU: `import cupy` works
and `cupy.cuda.runtime.getDeviceCount()` raises like CUDA does. Everything else is ringsim
itself, run as the `ringsim` command in a subprocess.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ringsim.execute.backend import array_module

ROOT = Path(__file__).resolve().parents[2]
NO_DEVICE = "cudaErrorNoDevice: no CUDA-capable device is detected"


def fake_cupy(tmp: Path, body: str) -> Path:
    """A directory holding a package `cupy` whose cuda.runtime.getDeviceCount is `body`."""
    pkg = tmp / "cupy"
    (pkg / "cuda").mkdir(parents=True)
    (pkg / "__init__.py").write_text("from . import cuda\n")
    (pkg / "cuda" / "__init__.py").write_text("from . import runtime\n")
    (pkg / "cuda" / "runtime.py").write_text(
        "class CUDARuntimeError(RuntimeError):\n    pass\n\n"
        f"def getDeviceCount():\n    {body}\n")
    return tmp


def ringsim(*args: str, path: Path | None = None, code: str | None = None):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(path) if path else "", str(ROOT)) if p)
    command = [sys.executable, "-c", code] if code else [sys.executable, "-m", "ringsim", *args]
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=120, cwd=ROOT)


def test_cupy_without_a_device_says_cudas_reason_in_one_line(tmp_path):
    path = fake_cupy(tmp_path, f"raise CUDARuntimeError({NO_DEVICE + chr(10) + 'more detail'!r})")
    done = ringsim("walk", "--backend", "cupy", path=path)
    assert done.returncode == 2
    assert done.stderr == f"ringsim walk: error: CuPy cannot use a GPU: {NO_DEVICE}\n"
    assert done.stdout == ""


def test_cupy_with_zero_devices(tmp_path):
    done = ringsim("walk", "--backend", "cupy", path=fake_cupy(tmp_path, "return 0"))
    assert done.returncode == 2
    assert done.stderr == "ringsim walk: error: CuPy cannot use a GPU: no CUDA device is visible\n"


def test_broken_cupy_install_is_one_line_too(tmp_path):
    path = fake_cupy(tmp_path, "return 1")
    (path / "cupy" / "__init__.py").write_text("raise ImportError('libcudart.so.12: cannot open shared object file\\nmore')\n")
    done = ringsim("walk", "--backend", "cupy", path=path)
    assert done.returncode == 2
    assert done.stderr == ("ringsim walk: error: CuPy cannot be imported: "
                           "libcudart.so.12: cannot open shared object file\n")


@pytest.mark.skipif(importlib.util.find_spec("cupy") is not None, reason="CuPy is installed here")
def test_cupy_not_installed():
    done = ringsim("walk", "--backend", "cupy")
    assert done.returncode == 2
    assert done.stderr == ("ringsim walk: error: CuPy is not installed: in your ringsim clone, "
                           "pip install '.[gpu]' (CUDA 12; '.[gpu-cuda13]' for CUDA 13)\n")
    assert "Traceback" not in done.stderr


@pytest.mark.skipif(importlib.util.find_spec("cupy") is not None, reason="CuPy is installed here")
def test_auto_is_numpy_without_cupy():
    assert array_module("auto") is np


def test_auto_falls_back_to_numpy_when_cupy_has_no_device(tmp_path):
    path = fake_cupy(tmp_path, f"raise CUDARuntimeError({NO_DEVICE!r})")
    done = ringsim("walk", "--backend", "auto", "--json", path=path)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout.splitlines()[-1])
    assert summary["correct"] is True and summary["total_elements"] == 48
    probe = ("import numpy, ringsim.execute.backend as b; print(b.array_module('auto') is numpy)")
    assert ringsim(path=path, code=probe).stdout.strip() == "True"


def test_import_ringsim_imports_neither_cupy_nor_nccl(tmp_path):
    """With an importable (fake) CuPy on the path, importing ringsim and ringsim.execute.gpu loads none of it."""
    path = fake_cupy(tmp_path, "return 1")
    code = ("import sys, ringsim, ringsim.execute.gpu, ringsim.execute.gpu.kernel, ringsim.execute.gpu.placement, "
            "ringsim.execute.gpu.executor, ringsim.execute.gpu.multidevice, ringsim.studies.gpu_bench, ringsim.execute.gpu.probe, "
            "ringsim.studies.gpu_selfcheck\n"
            "print(sorted(m for m in sys.modules if m == 'cupy' or m.startswith('cupy.')))")
    done = ringsim(path=path, code=code)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_unknown_backend_is_refused():
    done = ringsim("walk", "--backend", "tpu")
    assert done.returncode == 2 and "invalid choice: 'tpu'" in done.stderr


def test_ringsim_devices_limits_the_devices_used(tmp_path):
    path = fake_cupy(tmp_path, "return 4")
    code = ("import cupy, os\nfrom ringsim.execute.gpu.executor import visible_devices\n"
            "from ringsim.core.errors import RingsimError\n"
            "for value in ('', '2', '9', 'x', '0'):\n"
            "    os.environ['RINGSIM_DEVICES'] = value\n"
            "    try:\n        print(visible_devices(cupy))\n"
            "    except RingsimError as error:\n        print(error)\n")
    done = ringsim(path=path, code=code)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["4", "2", "4", "RINGSIM_DEVICES must be a whole number, got 'x'",
                                        "RINGSIM_DEVICES must be at least 1, got 0"]
