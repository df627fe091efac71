"""The kernels' exact source compiles to PTX with nvcc under CuPy's options (where nvcc is),
and its float adds keep subnormals although CuPy compiles with -ftz=true."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from ringsim.execute.gpu import kernel

NVCC = shutil.which("nvcc")
needs_nvcc = pytest.mark.skipif(NVCC is None, reason="nvcc is not on this machine (PTX checks need it)")
ARCH = "-arch=compute_90"  # the H200's; CuPy passes the device's own


def ptx_of(source: str, tmp_path, name: str) -> str:
    """PTX nvcc makes of `source` with the options CuPy adds to every RawKernel compile."""
    cu, ptx = tmp_path / f"{name}.cu", tmp_path / f"{name}.ptx"
    cu.write_text(source)
    done = subprocess.run([NVCC, "--ptx", *kernel.CUPY_OPTIONS, ARCH, "-o", str(ptx), str(cu)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return ptx.read_text()


def float_adds(ptx: str) -> list[str]:
    """The floating-point add instructions of a PTX text, e.g. ['add.rn.f32', 'add.ftz.f32']."""
    return re.findall(r"\badd(?:\.\w+)*\.f(?:16|32|64)\b", ptx)


@needs_nvcc
@pytest.mark.parametrize("dtype", sorted(kernel.DTYPES))
def test_kernel_source_compiles_with_nvcc_under_cupys_options(dtype, tmp_path):
    text = ptx_of(kernel.source(dtype), tmp_path, dtype)  # the very string the RawKernel compiles
    assert f".entry {kernel.KERNEL_NAME}(" in text and f".entry {kernel.ADD_KERNEL_NAME}(" in text
    assert ".ftz" not in text  # no instruction flushes subnormals, whatever -ftz says
    adds = float_adds(text)
    expected = {"float16": "add.rn.f32", "float32": "add.rn.f32", "float64": "add.rn.f64"}.get(dtype)
    if expected is None:
        assert adds == []
    else:  # both kernels add, only with the round-to-nearest, non-flushing instruction
        assert len(adds) >= 2 and set(adds) == {expected}, adds
    if dtype == "float16":  # rounded once, to nearest even, through float32
        assert "cvt.rn.f16.f32" in text and "cvt.f32.f16" in text


@needs_nvcc
def test_the_options_do_flush_a_plain_float_add(tmp_path):
    """The control: under CuPy's options a plain `a + b` becomes add.ftz.f32, so the check
    above would catch a kernel that wrote its float32 add that way."""
    plain = kernel.source("float32").replace("add_f32(a, b);", "a + b;")
    assert plain != kernel.source("float32")
    assert set(float_adds(ptx_of(plain, tmp_path, "plain"))) == {"add.ftz.f32"}


def test_every_numeric_dtype_but_complex_has_an_instantiation():
    assert set(kernel.DTYPES) == {f"{k}{b}" for k in ("int", "uint") for b in (8, 16, 32, 64)} | \
        {"float16", "float32", "float64"}
    assert not kernel.supported("complex64") and kernel.supported("float16")
    for dtype in kernel.DTYPES:
        src = kernel.source(dtype)
        assert f'extern "C" __global__ void {kernel.KERNEL_NAME}(' in src
        assert f'extern "C" __global__ void {kernel.ADD_KERNEL_NAME}(' in src


def test_add_launch_shape_caps_the_grid():
    assert kernel.add_launch_shape(0) == ((1,), (256,))
    assert kernel.add_launch_shape(257) == ((2,), (256,))
    assert kernel.add_launch_shape(10**12) == ((65535,), (256,))
