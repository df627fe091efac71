"""Placement on D devices and the streams schedule, checked on the CPU (no CUDA needed).

The schedule (ringsim.execute.gpu.placement.Scheduler) is what the streams executor issues. Here
it is (1) run in issue order with NumPy, one (G, W) buffer per simulated GPU, and compared
bit for bit with NumericExecutor, and (2) checked for races: every two operations of
different streams that touch the same buffer rows, one of them writing, must be ordered by
the streams' events (vector clocks over Wait/Record), the earlier-issued one first.
"""

from __future__ import annotations

import numpy as np
import pytest

from ringsim import Layout, NumericExecutor, make_plan
from ringsim.execute.gpu.placement import (Add, Copy, Fetch, Partial, Record, Rows, Scheduler, Stage,
                                   Wait, crossing, device_of, peer_pairs, placement,
                                   segment_blocks)

from .test_kernel_emulation import gradients, same_bits, sizes


def test_segment_blocks_round_trip_every_layout():
    for gpus in (1, 3, 4, 7):
        for elements in sizes(gpus):
            layout = Layout(gpus, elements)
            data = np.arange(gpus * elements, dtype=np.int64).reshape(gpus, elements)
            buffers = split(data, layout)
            assert np.array_equal(joined(buffers, layout), data)
            for j in range(gpus):  # segment j holds its elements, then a zero tail
                seg = data[:, layout.offset(j):layout.offset(j + 1)]
                assert np.array_equal(np.stack([b[j, :layout.size(j)] for b in buffers]), seg)
                assert not any(b[j, layout.size(j):].any() for b in buffers)


def test_simulated_gpu_g_lives_on_device_g_mod_d():
    assert placement(8, 3).tolist() == [0, 1, 2, 0, 1, 2, 0, 1]
    assert placement(5, 1).tolist() == [0] * 5
    assert [device_of(g, 2) for g in range(4)] == [0, 1, 0, 1]


def test_which_ring_transfers_cross_devices():
    step = make_plan("ring", 4).steps[0]            # 1→2, 2→3, 3→4, 4→1 (0-based 0→1 …)
    assert crossing(step, 1).tolist() == [False] * 4
    assert crossing(step, 2).tolist() == [True] * 4
    assert crossing(step, 3).tolist() == [True, True, True, False]   # GPU4 and GPU1: device 0
    assert crossing(step, 4).tolist() == [True] * 4


def test_peer_pairs_are_the_device_pairs_the_plan_uses():
    assert peer_pairs(make_plan("ring", 4), 3) == [(0, 1), (1, 2), (2, 0)]
    assert peer_pairs(make_plan("master", 4), 2) == [(0, 1), (1, 0)]
    assert peer_pairs(make_plan("ring", 6), 1) == []
    assert peer_pairs(make_plan("naive", 3), 3) == [(a, b) for a in range(3) for b in range(3) if a != b]


# --- running the schedule with NumPy ---------------------------------------------------
def split(data: np.ndarray, layout: Layout) -> list[np.ndarray]:
    """Each GPU's (G, W) segment buffers, laid out as the streams executor loads them."""
    out = []
    for row in data:
        buf = np.zeros((layout.segments, layout.width), dtype=data.dtype)
        for rows, width, flat in segment_blocks(layout.segments, layout.elements):
            buf[rows, :width] = row[flat].reshape(-1, width)
        out.append(buf)
    return out


def joined(buffers, layout: Layout) -> np.ndarray:
    """The (G, N) gradients back from per-GPU buffers."""
    out = np.empty((layout.segments, layout.elements), dtype=buffers[0].dtype)
    for k, buf in enumerate(buffers):
        for rows, width, flat in segment_blocks(layout.segments, layout.elements):
            out[k, flat] = buf[rows, :width].reshape(-1)
    return out


def interpret(ops, buffers, width, dtype) -> None:
    """Carry out the operations in issue order on NumPy buffers."""
    staged, partials = {}, {}

    def value(x):
        if isinstance(x, Rows):
            return buffers[x.gpu][x.first:x.last + 1]
        return staged[x.key] if isinstance(x, Stage) else partials[x.key]

    for op in ops:
        if isinstance(op, Fetch):
            staged[op.key] = buffers[op.src][op.first:op.last + 1].copy()
        elif isinstance(op, Copy):
            value(op.target)[...] = value(op.source)
        elif isinstance(op, Add):
            if isinstance(op.out, Partial) and op.out.key not in partials:
                partials[op.out.key] = value(op.a) + value(op.b)
            else:
                np.add(value(op.a), value(op.b), out=value(op.out))


@pytest.mark.parametrize("algorithm", ["ring", "master", "naive"])
def test_schedule_run_in_order_equals_numeric_executor(algorithm):
    for gpus in (1, 2, 3, 4, 5, 8):
        plan = make_plan(algorithm, gpus)
        for elements in sizes(gpus):
            for dtype in ("float32", "float16", "int32", "uint8", "float64"):
                layout, data = Layout(gpus, elements), gradients(gpus, elements, dtype, seed=3)
                ref = NumericExecutor(plan, layout, np, data.dtype)
                ref.load(data)
                buffers, scheduler = split(data, layout), Scheduler(gpus)
                for index, step in enumerate(plan.steps):
                    ref.apply(index)
                    interpret(scheduler.step(step), buffers, layout.width, data.dtype)
                    assert same_bits(joined(buffers, layout), ref.gradients()), (algorithm, gpus, elements, dtype, index)


# --- the schedule has no races ---------------------------------------------------------
def accesses(op):
    """(gpu, first, last, writes) for each buffer region the operation touches."""
    if isinstance(op, Fetch):
        return [(op.src, op.first, op.last, False)]
    found = []
    if isinstance(op, (Copy, Add)):
        operands = [op.source] if isinstance(op, Copy) else [op.a, op.b]
        found += [(x.gpu, x.first, x.last, False) for x in operands if isinstance(x, Rows)]
        out = op.target if isinstance(op, Copy) else op.out
        if isinstance(out, Rows):
            found.append((out.gpu, out.first, out.last, True))
    return found


def check_ordered(ops, streams: int) -> int:
    """Assert every conflicting pair is ordered by stream order or events; returns pairs checked."""
    clock = [np.zeros(streams, dtype=np.int64) for _ in range(streams)]
    recorded: dict = {}
    touched = []  # (stream, tick, vector clock, gpu, first, last, writes)
    for op in ops:
        s = op.stream
        if isinstance(op, Wait):
            if op.event in recorded:
                np.maximum(clock[s], recorded[op.event], out=clock[s])
            continue
        clock[s][s] += 1
        if isinstance(op, Record):
            recorded[op.event] = clock[s].copy()
            continue
        for region in accesses(op):
            touched.append((s, int(clock[s][s]), clock[s].copy(), *region))
    checked = 0
    for i, (sa, ta, _, ga, fa, la, wa) in enumerate(touched):
        for sb, tb, vb, gb, fb, lb, wb in touched[i + 1:]:
            if sa == sb or ga != gb or not (wa or wb) or fb > la or fa > lb:
                continue
            checked += 1
            # The earlier-issued access happens before the later one: b has seen a's tick.
            assert vb[sa] >= ta, f"unordered: stream {sa} tick {ta} and stream {sb} tick {tb} on GPU{ga + 1}"
    return checked


@pytest.mark.parametrize("algorithm", ["ring", "master", "naive"])
def test_schedule_orders_every_conflicting_pair(algorithm):
    for gpus in (2, 3, 4, 7):
        plan, scheduler = make_plan(algorithm, gpus), Scheduler(gpus)
        ops = [op for step in plan.steps for op in scheduler.step(step)]
        assert check_ordered(ops, gpus) > 0


def test_race_check_catches_a_missing_wait():
    """The checker is real: drop the waits and the ring's schedule is reported as racy."""
    plan, scheduler = make_plan("ring", 4), Scheduler(4)
    ops = [op for step in plan.steps for op in scheduler.step(step) if not isinstance(op, Wait)]
    with pytest.raises(AssertionError, match="unordered"):
        check_ordered(ops, 4)


def test_ring_schedule_is_one_fetch_and_one_add_per_gpu_per_reduce_step():
    ops = Scheduler(4).step(make_plan("ring", 4).steps[0])
    kinds = [type(op).__name__ for op in ops]
    assert kinds.count("Fetch") == 4 and kinds.count("Add") == 4 and kinds.count("Copy") == 0
    assert kinds.count("Wait") == 4  # each writer waits for the GPU that read its buffer
