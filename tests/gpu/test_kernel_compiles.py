"""The fused kernel's exact source compiles to PTX with nvcc for every dtype (where nvcc is)."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from ringsim.gpu import kernel

NVCC = shutil.which("nvcc")


@pytest.mark.skipif(NVCC is None, reason="nvcc is not on this machine")
@pytest.mark.parametrize("dtype", sorted(kernel.DTYPES))
def test_kernel_source_compiles_with_nvcc(dtype, tmp_path):
    cu = tmp_path / f"{dtype}.cu"
    cu.write_text(kernel.source(dtype))  # the very string the RawKernel compiles
    ptx = tmp_path / f"{dtype}.ptx"
    done = subprocess.run([NVCC, "--ptx", "-o", str(ptx), str(cu)], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    text = ptx.read_text()
    assert f".entry {kernel.KERNEL_NAME}(" in text
    if dtype == "float16":  # rounded once, to nearest even, through float32
        assert "cvt.rn.f16.f32" in text and "cvt.f32.f16" in text


def test_every_numeric_dtype_but_complex_has_an_instantiation():
    assert set(kernel.DTYPES) == {f"{k}{b}" for k in ("int", "uint") for b in (8, 16, 32, 64)} | \
        {"float16", "float32", "float64"}
    assert not kernel.supported("complex64") and kernel.supported("float16")
    for dtype in kernel.DTYPES:
        src = kernel.source(dtype)
        assert f'extern "C" __global__ void {kernel.KERNEL_NAME}(' in src
