"""The CuPy backend on a real CUDA device: bitwise equal to NumPy, placement, fused kernel, bench.

Every test here needs CuPy and a visible device; elsewhere the `cupy` fixture skips with
the reason ringsim gives (e.g. "CuPy is not installed: pip install 'ringsim[gpu]'").
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from ringsim import Layout, NumericExecutor, Simulation, allreduce, make_plan
from ringsim.execute.gpu import kernel
from ringsim.core.reference import reference_sum

from .test_kernel_emulation import gradients, same_bits, sizes

pytestmark = pytest.mark.gpu

DTYPES = ["int32", "uint8", "float16", "float32", "float64"]
GPUS = [1, 2, 3, 4, 5, 8]


def numpy_result(algorithm, data, master=None):
    plan, layout = make_plan(algorithm, len(data), master=master), Layout(*data.shape)
    ex = NumericExecutor(plan, layout, np, data.dtype)
    ex.load(data)
    ex.run()
    return ex.gradients()


@pytest.mark.parametrize("algorithm", ["ring", "master", "naive"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_allreduce_on_cupy_is_bitwise_numpy(cupy, algorithm, dtype):
    for gpus in GPUS:
        for elements in sizes(gpus):
            data = gradients(gpus, elements, dtype, seed=gpus + elements)
            master = gpus if algorithm == "master" else None
            expected = numpy_result(algorithm, data, master)
            result = allreduce([cupy.asarray(row) for row in data], algorithm, master=master)
            got = np.stack([cupy.asnumpy(out) for out in result.outputs])
            assert same_bits(got, expected), (algorithm, gpus, elements, dtype)
            if dtype.startswith(("int", "uint")):  # integers wrap identically in any order
                assert same_bits(got, np.broadcast_to(reference_sum(data), got.shape))


def test_fused_kernel_equals_the_plain_step(cupy):
    """Each ring step through the RawKernel equals the same step through CuPy's strided path."""
    from ringsim.execute.gpu.executor import FusedExecutor
    for gpus in (2, 3, 8, 17):
        plan = make_plan("ring", gpus)
        for elements in sizes(gpus):
            for dtype in sorted(kernel.DTYPES):
                data = cupy.asarray(gradients(gpus, elements, dtype, seed=11))
                layout = Layout(gpus, elements)
                fused = FusedExecutor(plan, layout, cupy, data.dtype)
                plain = NumericExecutor(plan, layout, cupy, data.dtype)
                fused.load(data)
                plain.load(data)
                for index in range(len(plan.steps)):
                    fused.apply(index)
                    plain.apply(index)
                    assert same_bits(cupy.asnumpy(fused.buf), cupy.asnumpy(plain.buf))
                if elements:
                    assert fused.fused_steps == set(range(len(plan.steps)))


def test_float16_rounding_and_subnormals_match_numpy(cupy):
    from ringsim.execute.gpu.executor import FusedExecutor
    bits = np.arange(0, 1 << 16, dtype=np.uint16)
    values = bits.view(np.float16)
    values = values[np.isfinite(values)]
    rng = np.random.default_rng(5)
    data = np.stack([values, rng.permutation(values)])  # every finite half, against another
    plan, layout = make_plan("ring", 2), Layout(2, data.shape[1])
    fused = FusedExecutor(plan, layout, cupy, data.dtype)
    fused.load(cupy.asarray(data))
    fused.run()
    with np.errstate(over="ignore"):
        expected = numpy_result("ring", data)
    got = cupy.asnumpy(fused.gradients())
    finite = np.isfinite(expected[0])  # NaN payloads may differ between CPU and GPU
    assert same_bits(got[:, finite], expected[:, finite])


def test_simulation_steps_back_and_forth_on_cupy(cupy):
    for algorithm in ("ring", "master", "naive"):
        gpu = Simulation.create(algorithm, 5, 13, xp=cupy)
        cpu = Simulation.create(algorithm, 5, 13)
        while not gpu.done:
            gpu.step()
            cpu.step()
            assert np.array_equal(cupy.asnumpy(gpu.values()), cpu.values())
        assert gpu.correct() and gpu.banner == "Done: every GPU holds the sum"
        gpu.back()
        gpu.goto(1)
        cpu.goto(1)
        assert np.array_equal(cupy.asnumpy(gpu.values()), cpu.values())


def test_inputs_are_never_modified(cupy):
    arrays = [cupy.arange(10, dtype=cupy.float32) * (g + 1) for g in range(4)]
    before = [a.copy() for a in arrays]
    allreduce(arrays)
    assert all(bool((a == b).all()) for a, b in zip(arrays, before))


def test_streams_executor_on_the_visible_devices(cupy):
    """The multi-device executor (streams, events, device-to-device copies), on D = 1 and,
    where there are two or more devices, across them with GPU g on device g mod D."""
    from ringsim.execute.gpu.executor import cupy_executor
    count = cupy.cuda.runtime.getDeviceCount()
    for devices in sorted({1, min(count, 2), count}):
        for algorithm in ("ring", "master", "naive"):
            for gpus in (1, 2, 3, 5):
                for elements in sizes(gpus):
                    for dtype in ("float32", "float16", "int32"):
                        data = gradients(gpus, elements, dtype, seed=21)
                        plan, layout = make_plan(algorithm, gpus), Layout(gpus, elements)
                        ex = cupy_executor(plan, layout, cupy, data.dtype, devices=devices,
                                           mode="streams")
                        assert [b.device.id for b in ex.buffers] == [g % devices for g in range(gpus)]
                        ex.load(cupy.asarray(data))
                        ex.run()
                        got = cupy.asnumpy(ex.gradients())
                        assert same_bits(got, numpy_result(algorithm, data)), \
                            (devices, algorithm, gpus, elements, dtype)


def test_the_default_executor_matches_the_device_count(cupy):
    from ringsim.execute.gpu.executor import FusedExecutor, cupy_executor
    from ringsim.execute.gpu.multidevice import StreamExecutor
    ex = cupy_executor(make_plan("ring", 4), Layout(4, 8), cupy, np.float32)
    count = cupy.cuda.runtime.getDeviceCount()
    assert isinstance(ex, FusedExecutor if count == 1 else StreamExecutor)
    assert ("not an interconnect" in ex.note) == (count == 1)


def test_walk_and_api_run_on_cupy(cupy):
    done = subprocess.run([sys.executable, "-m", "ringsim", "walk", "--backend", "cupy", "--json"],
                          capture_output=True, text=True, timeout=300, env=dict(os.environ))
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout.splitlines()[-1])
    assert summary["correct"] is True and summary["total_elements"] == 48
    result = allreduce([np.arange(6) + g for g in range(3)], backend="cupy")
    assert type(result.outputs[0]).__module__.startswith("cupy")
    assert cupy.asnumpy(result.outputs[2]).tolist() == [3, 6, 9, 12, 15, 18]


def test_bench_smoke(cupy):
    from ringsim.studies.gpu_bench import cupy_cases
    records = cupy_cases(quick=True)
    ring = records[0]
    for key in ("case", "backend", "gpus", "elements", "seconds", "ratio", "useful_bytes_per_s",
                "copy_bytes_per_s", "devices"):
        assert key in ring
    assert ring["backend"] == "cupy" and ring["gpus"] == 8 and ring["elements"] == 1 << 16
    assert ring["correct"] is True and ring["seconds"] > 0 and ring["ratio"] > 0
    for record in records[1:]:
        assert record["case"] == "ring-vs-nccl"
        assert record["busbw"] == pytest.approx(record["algbw"] * 2 * (record["gpus"] - 1) / record["gpus"])
