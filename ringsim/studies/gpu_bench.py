"""The CuPy benchmark: the ring against the device's own copy bandwidth, and against NCCL.

Every figure is a ratio of two rates measured in the same run with CUDA events: the ring's
useful bytes per second (3 × segment bytes per reduced segment, 2 × per copied one, over
the plan's steps) over the bandwidth of a device-to-device copy (cudaMemcpyAsync through
CuPy) of an array of the same size, bytes read + written. With one device every simulated
GPU shares it, so this measures device memory, not an interconnect; with D ≥ 2 devices the
ring's transfers cross devices and NCCL's allReduce runs on the same buffers for
comparison (algbw and busbw as nccl-tests defines them).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ..algorithms import make_plan
from ..core.layout import Layout
from ..execute.backend import array_module, make_executor
from .bench import useful_bytes

TARGET = 0.7  # the ring's useful bytes/s over the device's copy bytes/s (one H200, G=8, N=2^26)


def _elapsed(xp: Any, start, end) -> float:
    """Seconds between two recorded events, once the later one has happened."""
    end.synchronize()
    return xp.cuda.get_elapsed_time(start, end) / 1000.0


def run_seconds(xp: Any, executor, gradients, repeats: int) -> float:
    """Best time of `repeats` runs of every step, from freshly loaded buffers, by CUDA events."""
    streams = getattr(executor, "streams", None)
    best = float("inf")
    for _ in range(repeats):
        executor.load(gradients)
        if streams is None:  # the fused executor works on the current stream
            start, end = xp.cuda.Event(), xp.cuda.Event()
            start.record()
            executor.run()
            end.record()
        else:
            first = executor.device[0]
            with xp.cuda.Device(first):
                start, end = xp.cuda.Event(), xp.cuda.Event()
                start.record(streams[0])
            for stream in streams[1:]:
                stream.wait_event(start)
            executor.run()
            for k, stream in enumerate(streams[1:], 1):
                with xp.cuda.Device(executor.device[k]):
                    done = xp.cuda.Event(disable_timing=True)
                    done.record(stream)
                streams[0].wait_event(done)
            with xp.cuda.Device(first):
                end.record(streams[0])
        best = min(best, _elapsed(xp, start, end))
    return best


def copy_bandwidth(xp: Any, elements: int, dtype, repeats: int) -> float:
    """Bytes (read + written) per second of a device-to-device copy of `elements` elements."""
    src = xp.ones(elements, dtype=dtype)
    dst = xp.empty_like(src)
    dst.data.copy_from_device_async(src.data, src.nbytes)  # warm-up
    best = float("inf")
    for _ in range(repeats):
        start, end = xp.cuda.Event(), xp.cuda.Event()
        start.record()
        dst.data.copy_from_device_async(src.data, src.nbytes)
        end.record()
        best = min(best, _elapsed(xp, start, end))
    return 2 * src.nbytes / best


def _gradients(xp: Any, gpus: int, elements: int, dtype):
    rng = xp.random.default_rng(0)
    return rng.standard_normal((gpus, elements), dtype=np.float32).astype(dtype, copy=False)


def _correct(xp: Any, executor, gradients) -> bool:
    """The run's result against the element-wise sum (float sums in another order: a tolerance)."""
    result = executor.gradients()
    expected = gradients.sum(axis=0)
    scale = xp.abs(gradients).sum(axis=0) * (len(gradients) - 1) * float(np.finfo(gradients.dtype).eps)
    return bool(xp.all(xp.abs(result - expected[None]) <= scale[None]))


def ring_case(xp: Any, gpus: int, elements: int, dtype, repeats: int, devices: int) -> dict:
    """The ring at G, N: seconds, useful bytes/s, the device's copy bytes/s and their ratio."""
    plan, layout = make_plan("ring", gpus), Layout(gpus, elements)
    executor = make_executor(plan, layout, xp, dtype, backend="cupy", devices=devices)
    gradients = _gradients(xp, gpus, elements, dtype)
    executor.load(gradients)
    executor.run()  # warm-up: compiles the kernel, uploads the step tables
    correct = _correct(xp, executor, gradients)
    seconds = run_seconds(xp, executor, gradients, repeats)
    useful = useful_bytes(plan, layout, np.dtype(dtype).itemsize) / seconds
    copy = copy_bandwidth(xp, gpus * elements, dtype, repeats)
    mode = "fused" if devices == 1 else "streams"
    return {"case": f"ring-{mode}", "backend": "cupy", "gpus": gpus, "elements": elements,
            "dtype": np.dtype(dtype).name, "devices": devices, "seconds": seconds,
            "useful_bytes_per_s": useful, "copy_bytes_per_s": copy, "ratio": useful / copy,
            "target": TARGET, "correct": correct, "note": executor.note,
            "meaning": "ring useful bytes/s over the device's copy bytes/s"}


def nccl_case(xp: Any, elements: int, dtype, repeats: int, devices: int) -> dict | None:
    """NCCL's allReduce over D devices on the buffers of ringsim's ring with G = D, and the ring."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # CuPy warns when NCCL is missing; we say so instead
        try:
            from cupy.cuda import nccl
        except ImportError:
            return None
    if not getattr(nccl, "available", True):
        return None
    plan, layout = make_plan("ring", devices), Layout(devices, elements)
    executor = make_executor(plan, layout, xp, dtype, backend="cupy", devices=devices)
    gradients = _gradients(xp, devices, elements, dtype)
    executor.load(gradients)
    executor.run()
    ring_seconds = run_seconds(xp, executor, gradients, repeats)
    kind = {"float16": nccl.NCCL_FLOAT16, "float32": nccl.NCCL_FLOAT32,
            "float64": nccl.NCCL_FLOAT64}[np.dtype(dtype).name]
    comms = nccl.NcclCommunicator.initAll(list(range(devices)))
    buffers, streams = executor.buffers, executor.streams
    count = buffers[0].size
    best = float("inf")
    for round_ in range(repeats + 1):  # round 0 warms NCCL up and is not counted
        starts, ends = [], []
        for k in range(devices):
            with xp.cuda.Device(k):
                starts.append(xp.cuda.Event())
                ends.append(xp.cuda.Event())
                starts[k].record(streams[k])
        nccl.groupStart()
        for k, comm in enumerate(comms):
            with xp.cuda.Device(k):  # in place, on ringsim's own buffers
                comm.allReduce(buffers[k].data.ptr, buffers[k].data.ptr, count, kind,
                               nccl.NCCL_SUM, streams[k].ptr)
        nccl.groupEnd()
        for k in range(devices):
            with xp.cuda.Device(k):
                ends[k].record(streams[k])
        seconds = max(_elapsed(xp, s, e) for s, e in zip(starts, ends))
        if round_:
            best = min(best, seconds)
    size = count * np.dtype(dtype).itemsize
    algbw = size / best
    busbw = algbw * 2 * (devices - 1) / devices
    ring_algbw = size / ring_seconds
    return {"case": "ring-vs-nccl", "backend": "cupy", "gpus": devices, "elements": elements,
            "dtype": np.dtype(dtype).name, "devices": devices, "seconds": best,
            "algbw": algbw, "busbw": busbw, "ring_seconds": ring_seconds,
            "ring_algbw": ring_algbw, "ratio": ring_algbw / algbw,
            "meaning": "ringsim ring algbw over NCCL allReduce algbw (busbw = algbw·2(n−1)/n)"}


def cupy_cases(quick: bool = False, xp: Any = None) -> list[dict]:
    """The GPU benchmark records: the ring vs the copy bandwidth, and vs NCCL where D ≥ 2.

    `xp` is CuPy (default: `array_module("cupy")`); benchmarks/gpu_check.py --standin passes
    its stand-in to test the plumbing."""
    from ..execute.gpu.executor import visible_devices
    xp = array_module("cupy") if xp is None else xp
    devices = visible_devices(xp)
    elements = 1 << (16 if quick else 26)
    repeats = 2 if quick else 5
    records = [ring_case(xp, 8, elements, np.float32, repeats, devices)]
    if devices >= 2:
        record = nccl_case(xp, elements, np.float32, repeats, devices)
        if record is None:
            records[0]["note"] += "; NCCL is not available to CuPy, so no NCCL comparison"
        else:
            records.append(record)
    return records
