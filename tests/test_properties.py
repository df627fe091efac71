"""Every algorithm equals the element-wise sum, for any G, N and numeric dtype."""

import numpy as np
from hypothesis import given, strategies as st

import ringsim
from ringsim import Layout, allreduce, check, closed_form, make_plan, measure
from ringsim.core.reference import reference_sum, tolerance

from strategies import gradients, scenarios


@st.composite
def cases(draw):
    algorithm, g, n, master = draw(scenarios())
    return algorithm, master, draw(gradients(g, n))


@given(cases())
def test_allreduce_equals_the_elementwise_sum(case):
    algorithm, master, x = case
    arrays = [row.copy() for row in x]
    before = [a.copy() for a in arrays]
    result = allreduce(arrays, algorithm, master=master)
    # User arrays are never modified.
    assert all(np.array_equal(a, b, equal_nan=True) for a, b in zip(arrays, before))
    outputs = np.stack(result.outputs) if result.outputs else np.empty((0,))
    # All GPUs end bitwise identical.
    assert all(o.tobytes() == outputs[0].tobytes() for o in outputs)
    expected = reference_sum(x) if len(x[0]) else x[0]
    if x.dtype.kind in "iu":
        assert np.array_equal(outputs[0], expected)  # integers wrap the same way in any order
    else:
        with np.errstate(invalid="ignore", over="ignore"):
            diff = np.abs(outputs[0].astype(np.float64) - expected.astype(np.float64))
            bound = tolerance(x) if len(x[0]) else 0
            finite = np.isfinite(expected) & np.isfinite(outputs[0])
        assert np.all(diff[finite] <= np.broadcast_to(bound, diff.shape)[finite])
        assert np.array_equal(np.isfinite(outputs[0]), np.isfinite(expected)) or x.dtype == np.float16


@given(scenarios(), st.sampled_from(["float16", "float32", "float64"]))
def test_integer_valued_floats_sum_exactly(scenario, dtype):
    algorithm, g, n, master = scenario
    x = np.random.default_rng(g * 1000 + n).integers(-64, 64, (g, n)).astype(dtype)
    out = allreduce(list(x), algorithm, master=master).outputs
    assert all(np.array_equal(o, x.sum(axis=0, dtype=np.float64).astype(dtype)) for o in out)


@given(scenarios())
def test_symbolic_checker_passes_and_ledger_equals_closed_forms(scenario):
    algorithm, g, n, master = scenario
    plan = make_plan(algorithm, g, master=master)
    assert check(plan) == []
    ledger = measure(plan, Layout(plan.segments, n))
    form = closed_form(algorithm, g, n)
    assert ledger.total == form.total.value
    assert ledger.steps == form.steps.value
    assert ledger.messages == form.messages.value
    # Every element leaves one participant and reaches another: a GPU, or a switch (nvls).
    assert ledger.sent.sum() + ledger.switch_sent.sum() == ledger.total
    assert ledger.received.sum() + ledger.switch_received.sum() == ledger.total
    # Exact for every G and N, G dividing N or not (segments then differ by one element).
    assert ledger.sent.max() == form.busiest_sent
    assert ledger.received.max() == form.busiest_received
    if algorithm == "ring" and n % g == 0:
        assert set(ledger.sent.tolist()) <= {form.busiest_sent.value}
    if algorithm == "master" and g > 2 and n > 0:
        hub = (master or 1) - 1
        assert ledger.busiest() == hub
        assert set(ledger.links()) == {(k, hub) for k in range(g) if k != hub} | \
            {(hub, k) for k in range(g) if k != hub}


@given(scenarios(max_gpus=10, max_elements=40))
def test_simulation_and_api_agree_bitwise(scenario):
    algorithm, g, n, master = scenario
    x = np.random.default_rng(n).standard_normal((g, n)).astype(np.float32)
    sim = ringsim.Simulation.create(algorithm, g, n, master=master, gradients=x)
    sim.run()
    assert sim.correct()
    api = np.stack(allreduce(list(x), algorithm, master=master).outputs)
    assert api.tobytes() == sim.values().tobytes()
    # Random floats make every order of addition visible: all GPUs must still agree bit for bit.
    assert all(row.tobytes() == api[0].tobytes() for row in api)


def test_the_flood_and_the_master_end_bitwise_identical_on_every_gpu():
    x = np.random.default_rng(7).standard_normal((9, 1000)).astype(np.float32)
    for algorithm, master in (("naive", None), ("master", 5)):
        out = np.stack(allreduce(list(x), algorithm, master=master).outputs)
        assert len({row.tobytes() for row in out}) == 1
