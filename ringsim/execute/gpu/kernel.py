"""The fused step kernel: its CUDA source, the step table it reads, its launch shape, and the
RawKernels (Kernels) that CuPy compiles from the source.

A step whose targets are independent (no buffer row receives twice, none both sends and
receives: every ring step) runs as one kernel launch over the executor's (G·G, W) buffer.
`ringsim.execute.numeric.expand` lists the step as one (source row, destination row) pair per
segment moved, in the executor's row order; consecutive pairs whose rows advance by
constant strides form a run, and the step becomes a small int64 table, one line per run:

    TABLE[k] = (first, src, src_stride, dst, dst_stride)

Run k covers work rows first .. TABLE[k+1].first − 1; work row r of it is pair
i = r − first, which reads buffer row src + i·src_stride and writes buffer row
dst + i·dst_stride, all W columns. The grid's y dimension walks work rows and its x
dimension columns, both with grid-stride loops, so the lookup happens once per row and the
inner loop is a load, an add and a store. tests/gpu/emulation.py evaluates these exact
formulas with NumPy over every thread id of a launch.

Floating-point adds are written as inline PTX (`add.rn.f32`, `add.rn.f64`): CuPy compiles
every kernel with `-ftz=true` (cupy/cuda/compiler.py, appended after the caller's options,
so it cannot be turned off), which makes `a + b` on floats `add.ftz.f32` and flushes
subnormal inputs and results to zero (cupy issue 8382); NumPy keeps them. Inline PTX is
passed to the assembler untouched, and `add.rn.f32` without `.ftz` keeps subnormals
(PTX ISA, "add" for floating point). The second kernel, `ringsim_add`, is the same add over
flat contiguous arrays: the executors use it wherever they would call CuPy's own `add`.
tests/gpu/test_kernel_compiles.py compiles this source with nvcc under CuPy's options and
reads the PTX.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..numeric import expand, row_runs
from ...core.plan import Step

KERNEL_NAME = "ringsim_step"
ADD_KERNEL_NAME = "ringsim_add"
# What CuPy adds to a RawKernel's options besides include directories and -arch
# (assemble_cupy_compiler_options in cupy/_core/core.pyx; _compile_with_cache_cuda in
# cupy/cuda/compiler.py appends -ftz=true last).
CUPY_OPTIONS = ("--std=c++17", "-ftz=true")
TABLE_COLUMNS = 5
BLOCK = 256          # threads per block (x)
MAX_GRID_X = 2**31 - 1
MAX_GRID_Y = 65535

# dtype name → (C type of an element, expression adding a and b the way NumPy does).
# Integers add in the unsigned type of the same width, so overflow wraps as in NumPy
# (signed overflow is undefined in C++). float16 adds in float32 and rounds once to
# nearest-even, exactly what NumPy does; float32 has 24 ≥ 2·11+2 bits, so this double
# rounding equals one correctly rounded half-precision add. Float adds are inline PTX
# without .ftz (see the module docstring). No header is needed: the conversions and adds
# are single PTX instructions.
_INT = "({t})(({u})a + ({u})b)"
DTYPES: dict[str, tuple[str, str]] = {
    "int8": ("signed char", _INT.format(t="signed char", u="unsigned char")),
    "uint8": ("unsigned char", _INT.format(t="unsigned char", u="unsigned char")),
    "int16": ("short", _INT.format(t="short", u="unsigned short")),
    "uint16": ("unsigned short", _INT.format(t="unsigned short", u="unsigned short")),
    "int32": ("int", _INT.format(t="int", u="unsigned int")),
    "uint32": ("unsigned int", _INT.format(t="unsigned int", u="unsigned int")),
    "int64": ("long long", _INT.format(t="long long", u="unsigned long long")),
    "uint64": ("unsigned long long", _INT.format(t="unsigned long long", u="unsigned long long")),
    "float16": ("unsigned short", "f32_to_f16(add_f32(f16_to_f32(a), f16_to_f32(b)))"),
    "float32": ("float", "add_f32(a, b)"),
    "float64": ("double", "add_f64(a, b)"),
}

_TEMPLATE = r"""
typedef {ctype} T;

__device__ __forceinline__ float f16_to_f32(unsigned short h) {{
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
    return f;
}}

__device__ __forceinline__ unsigned short f32_to_f16(float f) {{
    unsigned short h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
    return h;
}}

// Round-to-nearest adds that keep subnormals although CuPy compiles with -ftz=true.
__device__ __forceinline__ float add_f32(float a, float b) {{
    float r;
    asm("add.rn.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
    return r;
}}

__device__ __forceinline__ double add_f64(double a, double b) {{
    double r;
    asm("add.rn.f64 %0, %1, %2;" : "=d"(r) : "d"(a), "d"(b));
    return r;
}}

__device__ __forceinline__ T add(T a, T b) {{
    return {add};
}}

// One step of a plan: table lines (first, src, src_stride, dst, dst_stride), one per run.
extern "C" __global__ void {name}(T* buf, const long long* table, const int runs,
                                  const long long W, const long long rows, const int reduce) {{
    for (long long r = blockIdx.y; r < rows; r += gridDim.y) {{
        // The run holding work row r: the last k with table[k].first <= r.
        int lo = 0, hi = runs - 1;
        while (lo < hi) {{
            int mid = (lo + hi + 1) / 2;
            if (table[mid * 5] <= r) lo = mid; else hi = mid - 1;
        }}
        const long long* run = table + lo * 5;
        const long long i = r - run[0];
        const long long s = (run[1] + i * run[2]) * W;
        const long long d = (run[3] + i * run[4]) * W;
        const long long stride = (long long)gridDim.x * blockDim.x;
        for (long long c = (long long)blockIdx.x * blockDim.x + threadIdx.x; c < W; c += stride) {{
            buf[d + c] = reduce ? add(buf[d + c], buf[s + c]) : buf[s + c];
        }}
    }}
}}

// out = a + b over n contiguous elements (out may be a: each element is read, then written,
// by one thread).
extern "C" __global__ void {add_name}(const T* a, const T* b, T* out, const long long n) {{
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {{
        out[i] = add(a[i], b[i]);
    }}
}}
"""


def dtype_name(dtype) -> str:
    """NumPy's name for a dtype ('float32')."""
    return np.dtype(dtype).name


def supported(dtype) -> bool:
    """True when the fused kernel has an instantiation for this dtype."""
    return dtype_name(dtype) in DTYPES


def source(dtype) -> str:
    """The CUDA source the RawKernel compiles for one dtype."""
    ctype, add = DTYPES[dtype_name(dtype)]
    return _TEMPLATE.format(ctype=ctype, add=add, name=KERNEL_NAME, add_name=ADD_KERNEL_NAME)


def uniform_op(step: Step) -> str | None:
    """The op ('reduce' or 'copy') every transfer of the step performs; None if they differ."""
    ops = {t.op for t in step.transfers()}
    return ops.pop() if len(ops) == 1 else None


def _independent(src: np.ndarray, dst: np.ndarray) -> bool:
    """True when no row is written twice and no row written is also read."""
    return len(np.unique(dst)) == len(dst) and not np.isin(src, dst).any()


def fusable(step: Step, gpus: int) -> bool:
    """True when the step can run as one fused launch: every destination row receives once
    and no row is both read and written, so the order of element updates cannot matter."""
    if not len(step):
        return False
    _, _, src, dst = expand(step, gpus)
    return _independent(src, dst)


def step_table(step: Step, gpus: int) -> tuple[np.ndarray, int]:
    """The step's int64 run table (runs × 5) and its number of work rows (segments moved)."""
    _, _, src, dst = expand(step, gpus)
    runs = row_runs(src, dst)
    table = np.zeros((len(runs), TABLE_COLUMNS), dtype=np.int64)
    rows = 0
    for k, run in enumerate(runs):
        table[k] = (rows, run.src, run.src_stride, run.dst, run.dst_stride)
        rows += run.count
    return table, rows


def launch_shape(width: int, rows: int, *, block: int = BLOCK, max_x: int = MAX_GRID_X,
                 max_y: int = MAX_GRID_Y) -> tuple[tuple[int, int], tuple[int]]:
    """(grid, block) for a step of `rows` work rows of `width` columns: one x-thread per column
    (capped; the kernel loops), one y-block per row (capped at CUDA's 65,535; it loops)."""
    grid_x = max(1, min(-(-width // block), max_x))
    grid_y = max(1, min(rows, max_y))
    return (grid_x, grid_y), (block,)


def add_launch_shape(elements: int, *, block: int = BLOCK, max_x: int = MAX_GRID_Y
                     ) -> tuple[tuple[int], tuple[int]]:
    """(grid, block) for ringsim_add over `elements` elements: one thread per element, at
    most 65,535 blocks (the kernel's grid-stride loop covers the rest)."""
    return (max(1, min(-(-elements // block), max_x)),), (block,)


_KERNELS: dict[tuple[int, str, str], Any] = {}


class Kernels:
    """The dtype's two RawKernels from `source`: the fused step and ringsim_add.

    Compiled at first use (CuPy caches the binary per device) and shared by every executor
    of that array module and dtype.
    """

    def __init__(self, xp: Any, dtype: Any) -> None:
        self.xp, self.dtype = xp, np.dtype(dtype)

    def _kernel(self, name: str):
        key = (id(self.xp), self.dtype.name, name)
        raw = _KERNELS.get(key)
        if raw is None:
            raw = _KERNELS[key] = self.xp.RawKernel(source(self.dtype), name)
        return raw

    def step(self, grid, block, buf, table, runs, width, rows, reduce) -> None:
        """One launch of the fused step kernel on the current device and stream."""
        self._kernel(KERNEL_NAME)(grid, block, (buf, table, runs, width, rows, reduce))

    def add(self, a, b, out) -> None:
        """out = a + b on the current stream: same shape and dtype, C-contiguous; out may be a."""
        for x in (a, b, out):
            if x.shape != out.shape or x.dtype != self.dtype or not x.flags.c_contiguous:
                raise ValueError("ringsim_add takes C-contiguous arrays of one shape and dtype")
        if out.size:
            grid, block = add_launch_shape(out.size)
            self._kernel(ADD_KERNEL_NAME)(grid, block, (a, b, out, np.int64(out.size)))
