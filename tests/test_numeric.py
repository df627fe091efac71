"""The numeric executor's compiled steps against a plain, one-transfer-at-a-time reference."""

import numpy as np
import pytest
from hypothesis import example, given

from ringsim import Layout, make_plan
from ringsim.execute.numeric import NumericExecutor, row_runs, buffer_row, expand
from ringsim.core.order import arrival_order

from strategies import scenarios


def plain_run(plan, x):
    """The plan executed the slow, obvious way: per segment, per arrival, in arrival order."""
    g, n = x.shape
    layout = Layout(plan.segments, n)
    segs = [[x[k, layout.offset(j):layout.offset(j + 1)].copy() for j in range(plan.segments)]
            for k in range(g)]
    # A switch (NVLS) is a participant after the GPUs whose buffers start at zero.
    segs += [[np.zeros(layout.offset(j + 1) - layout.offset(j), x.dtype) for j in range(plan.segments)]
             for _ in range(plan.switches)]
    for step in plan.steps:
        before = [[s.copy() for s in row] for row in segs]
        arrivals, ops = {}, {}
        for t in step.transfers():
            for j in range(t.first, t.last + 1):
                arrivals.setdefault((t.dst, j), []).append(t.src)
                ops[(t.dst, j)] = t.op
        for (d, j), srcs in arrivals.items():
            if ops[(d, j)] == "copy":
                segs[d][j] = before[srcs[0]][j].copy()
            else:
                swap = len(srcs) == 1 and arrivals.get((srcs[0], j)) == [d]
                order = arrival_order(d, srcs, swap)
                acc = before[order[0]][j] + before[order[1]][j]
                for s in order[2:]:
                    acc = acc + before[s][j]
                segs[d][j] = acc
    return np.stack([np.concatenate(row) if row else np.zeros(0, x.dtype) for row in segs[:g]])


@given(scenarios(max_gpus=9, max_elements=50))
@example(("nvls", 2, 0, None))  # a switch participant, with nothing to send
@example(("nvls", 5, 13, None))
def test_compiled_steps_equal_the_plain_run_bitwise(scenario):
    algorithm, g, n, master = scenario
    x = np.random.default_rng(g + n).standard_normal((g, n)).astype(np.float32)
    plan = make_plan(algorithm, g, master=master)
    ex = NumericExecutor(plan, Layout(plan.segments, n), np, x.dtype)
    ex.load(x)
    ex.run()
    assert ex.gradients().tobytes() == plain_run(plan, x).tobytes()
    assert ex.result().tobytes() == plain_run(plan, x).tobytes()


def test_a_ring_step_is_a_few_contiguousrow_runs_whatever_g():
    for g in (4, 64, 1024):
        plan = make_plan("ring", g)
        for step in (plan.steps[0], plan.steps[g // 2], plan.steps[-1]):
            runs = row_runs(*expand(step, g)[2:])
            assert len(runs) <= 3
            assert all(r.src_stride in (0, 1) and r.dst_stride in (0, 1) for r in runs)
            assert sum(r.count for r in runs) == g


def test_buffer_rows_are_a_permutation():
    g = 7
    rows = {buffer_row(g, k, j) for k in range(g) for j in range(g)}
    assert rows == set(range(g * g))


@pytest.mark.parametrize("n", [0, 5, 12, 13])
def test_load_and_read_back_round_trip(n):
    g = 4
    x = np.arange(g * n, dtype=np.int64).reshape(g, n)
    ex = NumericExecutor(make_plan("ring", g), Layout(g, n), np, x.dtype)
    ex.load(x)
    assert np.array_equal(ex.gradients(), x)
    assert np.array_equal(ex.result(), x)
    with pytest.raises(RuntimeError):
        ex.apply(0)
