"""The fused kernel's indexing, emulated thread by thread with NumPy, equals the plan (CPU)."""

from __future__ import annotations

import numpy as np
import pytest

from ringsim import Layout, NumericExecutor, make_plan
from ringsim.execute.gpu import kernel
from ringsim.execute.gpu.executor import FusedExecutor

from .emulation import emulate, emulate_add

DTYPES = ["int32", "uint8", "float16", "float32", "float64", "int64"]


def gradients(gpus: int, elements: int, dtype: str, seed: int = 0) -> np.ndarray:
    """Values that exercise wrap-around (integers) and rounding (floats)."""
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return rng.integers(info.min, info.max, size=(gpus, elements), dtype=dt, endpoint=True)
    scale = 10.0 if dt == np.float16 else 1e3
    return (rng.standard_normal((gpus, elements)) * scale).astype(dt)


def sizes(gpus: int) -> list[int]:
    return sorted({0, 1, max(gpus - 1, 1), gpus, gpus + 1, 3 * gpus + 2, 37})


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


SHAPES = {"default": {}, "tiny": {"block": 2, "max_x": 2, "max_y": 3}}


@pytest.mark.parametrize("algorithm", ["ring", "master", "naive"])
@pytest.mark.parametrize("gpus", [1, 2, 3, 4, 5, 8, 13])
@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_emulated_kernel_equals_numeric_executor_step_by_step(algorithm, gpus, shape):
    plan = make_plan(algorithm, gpus, master=min(2, gpus) if algorithm == "master" else None)
    for elements in sizes(gpus):
        layout = Layout(gpus, elements)
        for dtype in DTYPES:
            data = gradients(gpus, elements, dtype, seed=gpus * 1000 + elements)
            ref = NumericExecutor(plan, layout, np, data.dtype)
            emu = NumericExecutor(plan, layout, np, data.dtype)
            ref.load(data)
            emu.load(data)
            for index, step in enumerate(plan.steps):
                ref.apply(index)
                if kernel.fusable(step, gpus) and layout.width:
                    table, rows = kernel.step_table(step, gpus)
                    grid, block = kernel.launch_shape(layout.width, rows, **SHAPES[shape])
                    written = emulate(grid, block, emu.buf, table, len(table), layout.width,
                                      rows, bool(step.reduces.all()))
                    # Every element of every transferred row, exactly once.
                    spans = (step.last - step.first + 1).sum()
                    assert written == spans * layout.width == rows * layout.width
                else:
                    emu.apply(index)  # multi-arrival steps take the vectorised path
                assert same_bits(emu.buf, ref.buf), (algorithm, gpus, elements, dtype, index)


def test_which_steps_fuse():
    """Every ring step fuses; the master's broadcast fuses; multi-arrival reduces do not."""
    for gpus in (2, 3, 8, 64):
        assert all(kernel.fusable(s, gpus) for s in make_plan("ring", gpus).steps)
    master = make_plan("master", 5, master=3).steps
    assert [kernel.fusable(s, 5) for s in master] == [False, True]
    assert not kernel.fusable(make_plan("naive", 4).steps[0], 4)


def test_ring_tables_are_a_few_runs_whatever_g():
    """The ring's G transfers per step compress to a few table rows, so a launch stays small."""
    for gpus in (4, 100, 1000):
        for step in make_plan("ring", gpus).steps:
            table, rows = kernel.step_table(step, gpus)
            assert rows == gpus and len(table) <= 3
            assert table[0, 0] == 0 and np.all(np.diff(table[:, 0]) > 0)


def test_launch_shape_caps_and_covers():
    assert kernel.launch_shape(2**23, 8) == ((2**15, 8), (256,))
    assert kernel.launch_shape(1, 10**6) == ((1, 65535), (256,))
    assert kernel.launch_shape(10**12, 1) == ((kernel.MAX_GRID_X, 1), (256,))


@pytest.mark.parametrize("algorithm", ["ring", "master", "naive"])
def test_fused_executor_with_the_emulated_launch_equals_numpy(algorithm):
    """The executor's own dispatch, tables and arguments, with the emulation as its launcher."""
    for gpus in (1, 2, 3, 6, 9):
        plan = make_plan(algorithm, gpus)
        for elements in sizes(gpus):
            for dtype in ("float32", "uint8", "float16"):
                layout, data = Layout(gpus, elements), gradients(gpus, elements, dtype, seed=7)
                fused = FusedExecutor(plan, layout, np, data.dtype, launch=emulate, add=emulate_add)
                ref = NumericExecutor(plan, layout, np, data.dtype)
                fused.load(data)
                ref.load(data)
                fused.run()
                ref.run()
                assert same_bits(fused.gradients(), ref.gradients())
                if algorithm == "ring" and elements:
                    assert fused.fused_steps == set(range(len(plan.steps)))
                assert not np.shares_memory(fused.gradients(), data)


def test_unsupported_dtype_takes_the_vectorised_path():
    plan, layout = make_plan("ring", 3), Layout(3, 7)
    data = (np.arange(21).reshape(3, 7) * (1 + 1j)).astype(np.complex64)
    calls = []
    fused = FusedExecutor(plan, layout, np, data.dtype, launch=lambda *a: calls.append(a))
    fused.load(data)
    fused.run()
    assert not calls and fused.fused_steps == set()
    assert np.array_equal(fused.gradients()[0], data.sum(axis=0))
