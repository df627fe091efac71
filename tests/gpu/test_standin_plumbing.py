"""ringsim's CuPy executors run against the CuPy stand-in (tests/gpu/standin.py) on the CPU:
devices, streams, events, pointers, peer access, the adds that keep float32 subnormals, the
in-place add's arguments and load()'s ordering. Plumbing only; a GPU run is docs/gpu.md's."""

from __future__ import annotations

import numpy as np
import pytest

from ringsim import Layout, NumericExecutor, make_plan
from ringsim.execute.gpu.executor import FusedExecutor, cupy_executor
from ringsim.execute.gpu.placement import Add, Scheduler, peer_pairs
from ringsim.execute.gpu.probe import kernel_problem

from .standin import Cupy, StandinError
from .test_kernel_emulation import gradients, same_bits, sizes


def numpy_result(algorithm, data):
    plan, layout = make_plan(algorithm, len(data)), Layout(*data.shape)
    ex = NumericExecutor(plan, layout, np, data.dtype)
    ex.load(data)
    ex.run()
    return ex.gradients()


def run_on(xp, algorithm, data, **options):
    plan, layout = make_plan(algorithm, len(data)), Layout(*data.shape)
    ex = cupy_executor(plan, layout, xp, data.dtype, **options)
    ex.load(xp.asarray(data))
    ex.run()
    return ex, xp.asnumpy(ex.gradients())


def subnormals(gpus: int, elements: int) -> np.ndarray:
    """float32 values whose sums are subnormal or use subnormal inputs, and signed zeros."""
    tiny, least = np.finfo(np.float32).tiny, np.finfo(np.float32).smallest_subnormal
    rng = np.random.default_rng(gpus)
    pool = np.array([least, -least, 3 * least, tiny / 2, -tiny / 4, tiny, -tiny * 0.75, 0.0, -0.0],
                    dtype=np.float32)
    return rng.choice(pool, size=(gpus, elements)).astype(np.float32)


@pytest.mark.parametrize("algorithm", ["ring", "master", "naive"])
def test_stream_executor_on_the_standin_equals_numpy(algorithm):
    for devices in (1, 2, 3):
        for gpus in (1, 2, 4, 5):
            for elements in sizes(gpus)[::2]:
                for dtype in ("float32", "int32", "float16", "complex64"):
                    data = gradients(gpus, elements, dtype, seed=elements)
                    xp = Cupy(devices=max(devices, 1))
                    ex, got = run_on(xp, algorithm, data, devices=devices, mode="streams")
                    assert [b._device for b in ex.buffers] == [g % devices for g in range(gpus)]
                    assert same_bits(got, numpy_result(algorithm, data)), (algorithm, devices, gpus, elements, dtype)


@pytest.mark.parametrize("algorithm", ["ring", "master", "naive"])
@pytest.mark.parametrize("mode", ["fused", "streams"])
def test_float32_subnormals_and_signed_zeros_survive_every_path(algorithm, mode):
    for gpus in (2, 3, 8):
        data = subnormals(gpus, 41)
        _, got = run_on(Cupy(devices=1), algorithm, data, devices=1, mode=mode)
        assert same_bits(got, numpy_result(algorithm, data)), (algorithm, mode, gpus)


def test_the_standin_flushes_like_cupys_add_so_the_test_above_can_fail():
    """Control: CuPy's own add path (NumericExecutor on the stand-in) loses the subnormals."""
    data = subnormals(3, 41)
    xp = Cupy()
    for algorithm in ("ring", "naive"):
        plan, layout = make_plan(algorithm, 3), Layout(3, 41)
        plain = NumericExecutor(plan, layout, xp, data.dtype)
        plain.load(xp.asarray(data))
        plain.run()
        assert not same_bits(xp.asnumpy(plain.gradients()), numpy_result(algorithm, data))


def test_stream_adds_in_place_pass_one_object_as_a_and_out():
    xp = Cupy(devices=2)
    data = gradients(4, 4000, "float32", seed=1)
    assert kernel_problem(xp) is None  # the one-time probe launch, before the log is read
    xp.log.clear()
    run_on(xp, "ring", data, devices=2, mode="streams")
    adds = [entry for entry in xp.log if entry[:2] == ("launch", "ringsim_add")]
    assert len(adds) == 4 * 3  # G adds per reduce-scatter step, G − 1 steps
    assert all(a == out and b != out for _, _, a, b, out in adds)
    for step in make_plan("ring", 4).steps[:3]:  # the op list says so too
        assert all(op.out == op.a for op in Scheduler(4).step(step) if isinstance(op, Add))


def test_cupys_add_path_is_in_place_without_a_copy_too():
    """complex64 has no kernel: CuPy's add, given the same object, does not copy `a` first;
    two views of the same rows (the old code) make the stand-in log CuPy's copy."""
    xp = Cupy(devices=2)
    run_on(xp, "ring", gradients(4, 400, "complex64", seed=2), devices=2, mode="streams")
    assert not [e for e in xp.log if e[0] == "overlap-copy"]
    buf = xp.zeros((4, 8), dtype=np.complex64)
    xp.add(buf[0:2], buf[2:4], out=buf[0:2])
    assert ("overlap-copy", "add") in xp.log


def test_peer_access_only_for_the_pairs_the_plan_crosses():
    for algorithm, gpus, devices in (("ring", 4, 3), ("master", 4, 2), ("naive", 3, 3), ("ring", 6, 1)):
        xp = Cupy(devices=devices)
        plan = make_plan(algorithm, gpus)
        cupy_executor(plan, Layout(gpus, 12), xp, np.float32, devices=devices, mode="streams")
        enabled = {(dst, src) for kind, dst, src in (e for e in xp.log if e[0] == "enable-peer")}
        assert enabled == {(dst, src) for src, dst in peer_pairs(plan, devices)}
        # A second executor finds access already enabled (CUDA's error 704) and goes on.
        cupy_executor(plan, Layout(gpus, 12), xp, np.float32, devices=devices, mode="streams")
    assert peer_pairs(make_plan("ring", 4), 3) == [(0, 1), (1, 2), (2, 0)]


def test_no_peer_access_where_the_hardware_has_none():
    xp = Cupy(devices=2, peer=False)
    data = gradients(4, 30, "int32", seed=4)
    ex, got = run_on(xp, "ring", data, devices=2, mode="streams")
    assert ex.peer == {(0, 1): False, (1, 0): False} and same_bits(got, numpy_result("ring", data))


def test_load_waits_for_the_input_device_and_orders_a_non_contiguous_copy():
    """Inputs on device 3 (outside the 2 devices used), each row non-contiguous."""
    xp = Cupy(devices=4)
    data = gradients(4, 50, "float32", seed=5)
    with xp.cuda.Device(3):
        columns = xp.asarray(np.ascontiguousarray(data.T))  # (N, G) on device 3
    rows = [columns[:, g] for g in range(4)]
    assert not rows[0].flags.c_contiguous and rows[0].device.id == 3
    plan, layout = make_plan("ring", 4), Layout(4, 50)
    ex = cupy_executor(plan, layout, xp, data.dtype, devices=2, mode="streams")
    xp.log.clear()
    ex.load(rows)
    assert ("device-synchronize", 3) in xp.log
    assert not [e for e in xp.log if e[0] == "unordered-contiguous-copy"]
    ex.run()
    assert same_bits(xp.asnumpy(ex.gradients()), numpy_result("ring", data))
    with xp.cuda.Device(0):  # control: CuPy's own copy() of such a row is the unordered one
        rows[1].copy()
    assert ("unordered-contiguous-copy", 3, 0) in xp.log


def test_the_standin_refuses_what_cuda_refuses():
    xp = Cupy(devices=2)
    with xp.cuda.Device(1):
        on_one = xp.zeros(4, dtype=np.float32)
        stream = xp.cuda.Stream(non_blocking=True)
    with pytest.raises(StandinError, match="device 1 used on device 0"):
        on_one[...] = 1
    with pytest.raises(StandinError, match="stream of device 1 made current on device 0"):
        with stream:
            pass
    with pytest.raises(StandinError, match="a copy on a stream of device 1 issued on device 0"):
        xp.cuda.runtime.memcpyPeerAsync(on_one.data.ptr, 1, on_one.data.ptr, 1, 16, stream.ptr)
    with xp.cuda.Device(1), pytest.raises(StandinError, match="not inside one live device allocation"):
        xp.cuda.runtime.memcpyPeerAsync(on_one.data.ptr, 1, on_one.data.ptr + 8, 1, 16, stream.ptr)


def test_fused_executor_on_the_standin_uses_the_kernels():
    xp = Cupy()
    data = gradients(5, 33, "float16", seed=6)
    for algorithm in ("ring", "master", "naive"):
        ex, got = run_on(xp, algorithm, data, devices=1, mode="fused")
        assert isinstance(ex, FusedExecutor) and same_bits(got, numpy_result(algorithm, data))
    launched = {e[1] for e in xp.log if e[0] == "launch"}
    assert launched == {"ringsim_step", "ringsim_add"}


def test_fused_path_refuses_plans_whose_segments_are_not_the_gpus():
    """A plan with S != G (two rings: S = 2·G) runs through NumericExecutor's paths, never the kernels."""
    xp = Cupy()
    data = gradients(4, 24, "int32", seed=8)
    plan = make_plan("ring", 4, channels=2)
    layout = Layout(plan.segments, 24)
    ex = FusedExecutor(plan, layout, xp, data.dtype)
    ex.load(xp.asarray(data))
    ex.run()
    assert ex.fused_steps == set() and not [e for e in xp.log if e[0] == "launch"]
    square = FusedExecutor(make_plan("ring", 4), Layout(4, 24), xp, data.dtype)
    assert square.square and not ex.square
    reference = NumericExecutor(plan, layout, np, data.dtype)
    reference.load(data)
    reference.run()
    assert same_bits(xp.asnumpy(ex.gradients()), reference.gradients())
