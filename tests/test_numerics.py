"""The numerics view: each algorithm's float error against an exact sum, and why sums differ."""

import json
import math
from fractions import Fraction

import numpy as np
import pytest

from ringsim.algorithms import ALGORITHMS
from ringsim.cli import main
from ringsim.core.errors import RingsimError
from ringsim.studies.numerics import (QUOTE, dtype_of, exact_sum, measure, random_gradients,
                              reduce_with, textbook_bound, unit_roundoff)

ml_dtypes = pytest.importorskip("ml_dtypes")  # in the test extra; bfloat16 needs it
DTYPES = ["float32", "bfloat16"]


def run(argv, capsys):
    status = main(argv)
    out = capsys.readouterr()
    return status, out.out, out.err


def test_the_exact_reference_is_exact():
    # Naive float64 accumulation loses the 1 entirely; the exact sum keeps it.
    x = np.array([[1e16], [1.0], [-1e16]], dtype=np.float64)
    assert float(np.sum(x[:, 0].tolist()[:2]) + x[2, 0]) == 0.0
    assert exact_sum(x)[0] == 1.0
    # Against rational arithmetic (independent of float rounding) on random float32 gradients.
    g = random_gradients(7, 50, "float32", seed=3)
    exact = [sum((Fraction(float(v)) for v in column), Fraction(0)) for column in g.T]
    assert exact_sum(g).tolist() == [float(f) for f in exact]


def bf16_round(values64):
    """Round float64 values (exactly representable in float32) to bfloat16, nearest-even:
    written from the format (the top 16 bits of a float32), not from ml_dtypes."""
    bits = np.asarray(values64, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    return (rounded << 16).astype(np.uint32).view(np.float32).astype(np.float64)


def test_bfloat16_adds_round_the_exact_sum_to_nearest_even():
    a = random_gradients(1, 4000, "bfloat16", seed=1)[0]
    b = random_gradients(1, 4000, "bfloat16", seed=2)[0]
    exact = a.astype(np.float64) + b.astype(np.float64)  # exact: 8-bit significands, close exponents
    assert np.array_equal((a + b).astype(np.float64), bf16_round(exact))


def test_unit_roundoff_and_dtypes():
    assert unit_roundoff("float32") == 2.0 ** -24 == np.finfo(np.float32).eps / 2
    assert unit_roundoff("bfloat16") == 2.0 ** -8 == float(ml_dtypes.finfo(ml_dtypes.bfloat16).eps) / 2
    with pytest.raises(RingsimError, match="float types only"):
        dtype_of("int32")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("gpus", [2, 3, 5, 8, 13])
def test_every_algorithm_stays_within_the_textbook_bound(dtype, gpus):
    g = random_gradients(gpus, 300, dtype, seed=gpus)
    exact = exact_sum(g)
    # Higham 2002 §4.2: any order of G−1 rounded additions, |error| ≤ γ_{G−1}·Σ|x|.
    u = 2.0 ** -{"float32": 24, "bfloat16": 8}[dtype]
    gamma = (gpus - 1) * u / (1 - (gpus - 1) * u)
    bound = gamma * np.abs(g.astype(np.float64)).sum(axis=0)
    assert np.allclose(textbook_bound(g, dtype), bound, rtol=1e-15, atol=0)
    for name in ALGORITHMS:
        result = reduce_with(name, g)
        assert result.dtype == g.dtype
        assert (np.abs(result.astype(np.float64) - exact) <= bound).all(), name


def test_measure_reports_errors_and_bit_differences():
    m = measure(8, 2000, seed=5)
    assert m.algorithms == tuple(ALGORITHMS) and m.dtypes == ("float32", "bfloat16")
    for dtype in m.dtypes:
        g = random_gradients(8, 2000, dtype, seed=5)
        exact = exact_sum(g)
        ring = reduce_with("ring", g)
        for name in m.algorithms:
            e = m.error(name, dtype)
            result = reduce_with(name, g)
            error = np.abs(result.astype(np.float64) - exact)
            assert e.max_error == error.max() and math.isclose(e.mean_error, error.mean())
            assert 0 < e.bound_used <= 1
            bits = np.uint16 if dtype == "bfloat16" else np.uint32
            assert e.differs == int((result.view(bits) != ring.view(bits)).sum())
        assert m.error("ring", dtype).differs == 0
        assert m.error("tree", dtype).differs > 0  # another order: other last bits
    # The ring adds one value at a time to a growing sum: on average less precise than a tree.
    assert m.error("ring", "float32").mean_error > m.error("recursive-doubling", "float32").mean_error


@pytest.mark.parametrize("dtype, big", [("float32", 2.0 ** 24), ("bfloat16", 256.0)])
def test_ring_and_tree_add_in_different_orders(dtype, big):
    # One element, G = 4: a = big, b = c = 1, d = −big; the exact sum is 2.
    g = np.array([[big], [1.0], [1.0], [-big]]).astype(dtype_of(dtype))
    add = lambda x, y: (np.asarray([x]).astype(g.dtype) + np.asarray([y]).astype(g.dtype))[0]
    # Ring (Patarasuk & Yuan 2009): the partial sum travels GPU1 → GPU2 → GPU3 → GPU4, each
    # GPU adding its own value to what arrives: ((a + b) + c) + d. big + 1 is a tie that
    # rounds to even (big), so both 1s are lost: 0.
    ring = add(add(add(g[0, 0], g[1, 0]), g[2, 0]), g[3, 0])
    # Binary tree: GPU3 adds its children GPU2 and GPU4 to its own value, in GPU order, then
    # the root GPU1 adds what arrives to its own: ((b + c) + d) + a = 2, exact.
    tree = add(add(add(g[1, 0], g[2, 0]), g[3, 0]), g[0, 0])
    assert float(ring) == 0.0 and float(tree) == 2.0 == exact_sum(g)[0]
    assert float(reduce_with("ring", g)[0]) == float(ring)
    assert float(reduce_with("tree", g)[0]) == float(tree)


def test_limits_are_one_line_errors():
    with pytest.raises(RingsimError, match="at most 2,097,152 values"):
        measure(8, 10**9)
    with pytest.raises(RingsimError, match="from 1 to 256"):
        measure(2000, 10)


def test_compare_numerics_text(capsys):
    status, out, err = run(["compare", "--numerics", "--gpus", "5", "--elements", "3000",
                            "--seed", "2"], capsys)
    assert status == 0 and err == ""
    assert out.startswith("Float error of each algorithm's sum · 5 GPUs · 3,000 random elements "
                          "per GPU (standard normal, seed 2)\n")
    m = measure(5, 3000, seed=2)
    for name, spec in ALGORITHMS.items():
        row = next(line for line in out.splitlines() if line.startswith(spec.title + "  "))
        e32, e16 = m.error(name, "float32"), m.error(name, "bfloat16")
        assert row.split()[-6:] == [f"{e32.max_error:.3g}", f"{e32.mean_error:.3g}",
                                    f"{e32.differs:,}", f"{e16.max_error:.3g}",
                                    f"{e16.mean_error:.3g}", f"{e16.differs:,}"]
    assert "float32: every error is within the textbook bound" in out
    assert "bfloat16: every error is within the textbook bound" in out
    assert QUOTE in out and "because each adds the G contributions in its own order" in out


def test_compare_numerics_json(capsys):
    status, out, _ = run(["compare", "--numerics", "--json", "-g", "4", "-n", "500"], capsys)
    rows = [json.loads(line) for line in out.splitlines()]
    assert status == 0 and [r["algorithm"] for r in rows] == list(ALGORITHMS)
    m = measure(4, 500)
    for r in rows:
        assert r["gpus"] == 4 and r["elements"] == 500 and r["seed"] == 0
        for dtype in DTYPES:
            e = m.error(r["algorithm"], dtype)
            assert r[dtype] == {"max_error": e.max_error, "mean_error": e.mean_error,
                                "bound_used": e.bound_used, "differs_from_ring": e.differs}


@pytest.mark.parametrize("argv, message", [
    (["--numerics", "--time"], "--numerics measures rounding, not time"),
    (["--numerics", "--topology", "dgx-h100"], "--numerics measures rounding, not time"),
    (["--seed", "3"], "--seed sets the gradients of --numerics"),
    (["--numerics", "-n", "1e9"], "the numerics view sums at most 2,097,152 values"),
])
def test_compare_numerics_bad_input(capsys, argv, message):
    status, out, err = run(["compare", *argv], capsys)
    assert status == 2 and out == "" and message in err and err.count("\n") == 1


def test_walk_values_with_floats_notes_the_order(capsys):
    status, out, _ = run(["walk", "--values", "--dtype", "float32", "-g", "4", "-n", "8"], capsys)
    assert status == 0
    assert "The gradients are random float32 numbers with two decimals." in out
    note = out.strip().splitlines()[-1]
    assert note.startswith("Float sums (float32): every GPU holds the same bits, but the order of "
                           "additions sets the last ones.")
    assert QUOTE in note and "`ringsim compare --numerics`" in note
    _, out, _ = run(["walk", "--values", "--dtype", "float32", "-g", "4", "-n", "8", "--json"],
                    capsys)
    lines = [json.loads(line) for line in out.splitlines()]
    summary, last = lines[-1], lines[-2]
    values = np.array(last["values"], dtype=np.float32)
    assert (values == values[0]).all()  # every GPU the same bits
    g = np.round(np.random.default_rng(0).standard_normal((4, 8)), 2).astype(np.float32)
    assert summary["numerics"]["max_error"] == float(np.abs(values[0] - exact_sum(g)).max())
    assert set(summary["numerics"]["differs"]) == set(ALGORITHMS) - {"ring"}
    assert summary["numerics"]["differs"]["tree"] == int((reduce_with("tree", g) != values[0]).sum())
