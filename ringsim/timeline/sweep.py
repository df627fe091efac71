"""The timeline computed step by step with array operations: the same times as the events.

The engine (model.py) starts each transfer when the last of its waits ends; every wait is on
a transfer of an earlier step or earlier in its port's queue, so the same start times come
from one pass in plan order: start = max(its sender's segments ready, its out port free, its
in port free, both GPUs joined). When no port serves two transfers in a step, a whole step
is a few NumPy operations, so a ring of 1,024 GPUs (two million transfers) takes about a
second; steps that share a port are walked transfer by transfer in queue order.
tests/test_timeline.py holds this pass to the engine, time for time.
"""

from __future__ import annotations

import numpy as np

from ..cost.ports import PORTS_PER_GPU


def _expand(first: np.ndarray, last: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per covered segment: its transfer (row), its segment; and each transfer's first position."""
    widths = last - first + 1
    row = np.repeat(np.arange(len(first)), widths)
    starts = np.cumsum(widths) - widths
    segment = first[row] + np.arange(int(widths.sum())) - starts[row]
    return row, segment, starts


def run(gpus, segments, step, src, dst, first, last, out_key, in_key, wire, extra, joined, keys):
    """Start times, causes and reason codes (model.REASONS) of every transfer (ports numbered
    by `ports.port_keys`)."""
    n = len(src)
    start = np.zeros(n)
    cause = np.full(n, -1, np.int64)
    code = np.zeros(n, np.int8)
    ready = np.zeros(gpus * segments)           # when each GPU's segment was last written
    ready_by = np.full(gpus * segments, -1, np.int64)
    free = np.zeros(gpus * PORTS_PER_GPU)       # (gpu, level, direction) → when the port is free
    free_by = np.full(gpus * PORTS_PER_GPU, -1, np.int64)
    join = np.maximum(joined[src], joined[dst]) if n else np.zeros(0)
    cuts = np.concatenate([[0], np.flatnonzero(np.diff(step)) + 1, [n]]) if n else np.zeros(1, np.int64)
    bounds = list(zip(cuts[:-1].tolist(), cuts[1:].tolist()))
    # Per step, once for all: one segment per transfer? every port used once?
    widths = last - first + 1
    single = np.logical_and.reduceat(widths == 1, cuts[:-1]) if n else np.zeros(0, bool)
    distinct = ports_distinct(step, out_key, in_key, cuts, PORTS_PER_GPU * gpus) if n else np.zeros(0, bool)
    src_flat, dst_flat = src * segments + first, dst * segments + first
    for k, (a, b) in enumerate(bounds):
        if single[k]:  # one segment per transfer: no ranges to expand
            flat = src_flat[a:b]
            data, data_by = ready[flat], ready_by[flat]
            target, writer, rows = dst_flat[a:b], None, None
        else:
            rows, segment, firsts = _expand(first[a:b], last[a:b])
            flat = src[a:b][rows] * segments + segment
            data = np.maximum.reduceat(ready[flat], firsts)
            data_by = ready_by[flat[firsts + _argmax_reduceat(ready[flat], firsts)]]
            target, writer = dst[a:b][rows] * segments + segment, a + rows
        if distinct[k]:
            _step_at_once(a, b, data, data_by, out_key, in_key, free, free_by, join, wire, extra,
                          start, cause, code)
        else:
            order = np.lexsort((np.arange(b - a), src[a:b], keys[a:b]))
            for j in order.tolist():
                _one(a + j, float(data[j]), int(data_by[j]), out_key, in_key, free, free_by,
                     join, wire, extra, start, cause, code)
        end = start[a:b] + wire[a:b] + extra[a:b]
        if rows is None:
            # This step's writes: a segment's ready time is the latest arrival into it.
            np.maximum.at(ready, target, end)
            latest = end == ready[target]
            ready_by[target[latest]] = np.flatnonzero(latest) + a
        else:
            end = end[rows]
            np.maximum.at(ready, target, end)
            latest = end == ready[target]
            ready_by[target[latest]] = writer[latest]
    return start, cause, code


def ports_distinct(step, out_key, in_key, cuts, ports: int) -> np.ndarray:
    """For every step: True when no out port and no in port serves two of its transfers."""
    steps = len(cuts) - 1
    distinct = np.ones(steps, bool)
    number = np.repeat(np.arange(steps, dtype=np.int64), np.diff(cuts))
    for key in (out_key, in_key):
        combined = np.sort(number * ports + key)
        same = np.flatnonzero(combined[1:] == combined[:-1])
        distinct[combined[same] // ports] = False
    return distinct


def _argmax_reduceat(values: np.ndarray, firsts: np.ndarray) -> np.ndarray:
    """Offset of the first maximum within each group (groups start at `firsts`)."""
    if len(values) == len(firsts):
        return np.zeros(len(firsts), np.int64)
    top = np.repeat(np.maximum.reduceat(values, firsts), np.diff(np.r_[firsts, len(values)]))
    hit = np.flatnonzero(values == top)
    group = np.searchsorted(firsts, hit, side="right") - 1
    first_hit = hit[np.r_[True, group[1:] != group[:-1]]]
    return first_hit - firsts


def _step_at_once(a, b, data, data_by, out_key, in_key, free, free_by, join, wire, extra,
                  start, cause, code) -> None:
    """A step whose transfers use distinct ports: all of them at once."""
    o, i = out_key[a:b], in_key[a:b]
    # The engine's preference on ties: data, then the out port, the in port, the join.
    fo, fi, jn = free[o], free[i], join[a:b]
    begin = np.maximum(np.maximum(data, fo), np.maximum(fi, jn))
    which = np.where(data == begin, 0, np.where(fo == begin, 1, np.where(fi == begin, 2, 3)))
    by = np.choose(which, (data_by, free_by[o], free_by[i], np.full(b - a, -1)))
    start[a:b] = begin
    cause[a:b] = by
    code[a:b] = np.where(which == 3, 4, np.where(by >= 0, which + 1, 0))
    idx = np.arange(a, b)
    sent = begin + wire[a:b]
    free[o], free_by[o] = sent, idx
    free[i], free_by[i] = sent + extra[a:b], idx


def _one(t, data, data_by, out_key, in_key, free, free_by, join, wire, extra, start, cause, code) -> None:
    """One transfer of a step whose transfers share ports, in queue order."""
    o, i = int(out_key[t]), int(in_key[t])
    options = (data, free[o], free[i], join[t])
    which = int(np.argmax(options))
    start[t] = options[which]
    by = (data_by, int(free_by[o]), int(free_by[i]), -1)[which]
    cause[t] = by
    code[t] = 4 if which == 3 else (which + 1 if by >= 0 else 0)
    free[o], free_by[o] = start[t] + wire[t], t
    free[i], free_by[i] = start[t] + wire[t] + extra[t], t
