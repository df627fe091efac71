"""A NumPy emulation of the fused kernel (ringsim/execute/gpu/kernel.py), thread by thread.

It evaluates the kernel's own index formulas, with the kernel's own loops, over every
(blockIdx, threadIdx) of the launch grid, gathers every element each thread reads and
writes, checks no two threads write one element and no thread reads what another writes,
then applies the updates. Keep it in step with kernel._TEMPLATE line for line.
"""

from __future__ import annotations

import numpy as np

from ringsim.execute.gpu.kernel import TABLE_COLUMNS


def emulate(grid, block, buf, table, runs, W, rows, reduce) -> int:
    """Carry out one launch of ringsim_step on a NumPy (rows, W) buffer, in place; returns
    the number of elements written."""
    flat = buf.reshape(-1)
    table = np.asarray(table, dtype=np.int64).reshape(-1)
    runs, W, rows, reduce = int(runs), int(W), int(rows), int(reduce)
    grid_x, grid_y = grid
    (block_x,) = block
    # c = blockIdx.x * blockDim.x + threadIdx.x for every x-thread of the grid.
    thread_x = (np.arange(grid_x, dtype=np.int64)[:, None] * block_x
                + np.arange(block_x, dtype=np.int64)[None, :]).reshape(-1)
    stride = grid_x * block_x
    reads, writes = [], []
    for block_y in range(grid_y):                 # blockIdx.y
        r = block_y
        while r < rows:                           # for (r = blockIdx.y; r < rows; r += gridDim.y)
            lo, hi = 0, runs - 1
            while lo < hi:
                mid = (lo + hi + 1) // 2
                if table[mid * TABLE_COLUMNS] <= r:
                    lo = mid
                else:
                    hi = mid - 1
            run = table[lo * TABLE_COLUMNS:(lo + 1) * TABLE_COLUMNS]
            i = r - run[0]
            s = (run[1] + i * run[2]) * W
            d = (run[3] + i * run[4]) * W
            c = thread_x.copy()
            live = c < W
            while live.any():                     # for (c = ...; c < W; c += stride)
                reads.append(s + c[live])
                writes.append(d + c[live])
                c = c + stride
                live = c < W
            r += grid_y
    if not writes:
        return 0
    src, dst = np.concatenate(reads), np.concatenate(writes)
    assert len(np.unique(dst)) == len(dst), "two threads write one element"
    assert not np.isin(src, dst).any(), "a thread reads an element another thread writes"
    assert src.min() >= 0 and dst.min() >= 0 and max(src.max(), dst.max()) < flat.size
    flat[dst] = np.add(flat[dst], flat[src]) if reduce else flat[src]
    return len(dst)



def emulate_add(a, b, out) -> None:
    """ringsim_add on NumPy arrays: the launcher's checks, then the kernel's one add per
    element. Its float adds are PTX add.rn (IEEE round to nearest, subnormals kept), which is
    what NumPy's add does; float16 adds in float32 and rounds once, as NumPy does too."""
    for x in (a, b, out):
        assert x.shape == out.shape and x.dtype == out.dtype and x.flags.c_contiguous
    np.add(a, b, out=out)
