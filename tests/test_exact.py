"""Closed forms are exact for every G and N, and exact numbers print without losing digits."""

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from ringsim import ALGORITHMS, RingsimError, Layout, allreduce, closed_form, make_plan, measure
from ringsim.algorithms import transfers
from ringsim.core.formula import Formula, format_number


@st.composite
def uneven_scenarios(draw):
    algorithm = draw(st.sampled_from(sorted(ALGORITHMS)))
    g = draw(st.integers(1, 40))
    n = draw(st.one_of(st.integers(0, 300), st.integers(0, 3).map(lambda k: k * g + g - 1)))
    master = draw(st.integers(1, g)) if algorithm == "master" else None
    return algorithm, g, n, master


@settings(max_examples=150)
@given(uneven_scenarios())
def test_closed_forms_equal_the_ledger_exactly(scenario):
    algorithm, g, n, master = scenario
    plan = make_plan(algorithm, g, master=master)
    ledger = measure(plan, Layout(plan.segments, n))  # S segments: 2·G for the bidirectional ring
    form = closed_form(algorithm, g, n, master=master)
    assert form.total == ledger.total
    assert form.busiest_sent == int(ledger.sent.max())
    assert form.busiest_received == int(ledger.received.max())
    assert form.steps == len(plan.steps) == ledger.steps
    assert form.messages == ledger.messages
    assert form.busiest_sender == int(np.argmax(ledger.sent))
    assert form.busiest_receiver == int(np.argmax(ledger.received))
    assert transfers(algorithm, g, master=master) == sum(len(s) for s in plan.steps)


def ring_sent_from_the_seed_rule(g, n):
    """Each GPU's sent count, from the seed's rule read directly: in reduce-scatter iteration
    s GPU k sends segment (k−s) mod G (1-based k), in all-gather segment (k+1−s) mod G."""
    sizes = [n // g + (j < n % g) for j in range(g)]
    sent = [0] * g
    for k in range(1, g + 1):
        for s in range(1, g):
            sent[k - 1] += sizes[(k - s) % g] + sizes[(k + 1 - s) % g]
    return sent


@pytest.mark.parametrize("g, n, textbook, exact", [
    (5, 8, Fraction(64, 5), 14), (8, 14, Fraction(49, 2), 26), (4, 7, Fraction(21, 2), 11),
    (3, 5, Fraction(20, 3), 7)])
def test_the_ring_bound_when_g_does_not_divide_n(g, n, textbook, exact):
    form = closed_form("ring", g, n).busiest_sent
    assert max(ring_sent_from_the_seed_rule(g, n)) == exact == form.value
    assert form.textbook == textbook and form.uneven
    assert str(form).startswith("2·(G−1)·N/G = ") and str(form).endswith(f"= {exact}")
    assert form.note.startswith("segments differ by one element (G does not divide N): exactly ")


def test_even_ring_keeps_the_textbook_form():
    form = closed_form("ring", 4, 8).busiest_sent
    assert str(form) == "2·(G−1)·N/G = 12" and not form.uneven and form.note == ""


def test_closed_forms_at_a_million_gpus_are_python_ints():
    form = closed_form("naive", 1_000_000, 10**16)
    assert form.total.value == 1_000_000 * 999_999 * 10**16
    assert format_number(form.total) == f"{1_000_000 * 999_999 * 10**16:,}"
    ring = closed_form("ring", 1000, 10**16)
    assert ring.busiest_sent.value == 2 * 999 * 10**16 // 1000


def test_formula_compares_as_its_value():
    result = allreduce([np.ones(8)] * 4)
    assert result.closed_form.total == result.ledger.total
    assert result.ledger.total == result.closed_form.total
    assert result.closed_form.busiest_sent == np.int64(12)
    assert closed_form("ring", 4, 8).total < 49 and closed_form("ring", 4, 8).total >= 48
    assert hash(Formula("x", 3)) == hash(3) and int(Formula("x", 3)) == 3
    assert Formula("x", 3) != Formula("y", 3) and Formula("x", 3) != 4
    assert float(Formula("x", Fraction(1, 4))) == 0.25


@pytest.mark.parametrize("value, text", [
    (Fraction(2**64, 3), "6,148,914,691,236,517,205.33"),
    (Fraction(10**17 + 1, 2), "50,000,000,000,000,000.50"),
    (Fraction(2, 3), "0.67"), (Fraction(-1, 3), "-0.33"), (Fraction(64, 5), "12.80"),
    (10**20, "100,000,000,000,000,000,000"), (np.int64(-7), "-7")])
def test_format_number_is_exact(value, text):
    assert format_number(value) == text


@pytest.mark.parametrize("call, message", [
    (lambda: closed_form("ring", 0, 8), "the number of GPUs must be from 1"),
    (lambda: closed_form("ring", 4, -1), "elements per GPU must be at least 0"),
    (lambda: closed_form("ring", 4, 2.5), "elements per GPU must be a whole number"),
    (lambda: closed_form("ring", 4, 8, master=2), "only applies to the master algorithm"),
    (lambda: closed_form("master", 4, 8, master=5), "^master must be from 1 to 4, got 5$"),
])
def test_closed_form_validates_its_input(call, message):
    with pytest.raises(RingsimError, match=message):
        call()


def _evaluate(text, **names):
    """The value of a printed expression such as 2·(P−1)·N/P + N, in exact fractions."""
    values = {name: Fraction(value) for name, value in names.items()}
    return eval(text.replace("·", "*").replace("−", "-"), {"__builtins__": {}}, values)


@pytest.mark.parametrize("g", range(3, 13))
@pytest.mark.parametrize("n", [0, 1, 5, 8, 12, 24, 37])
def test_halving_doubling_busiest_gpu_matches_its_ledger(g, n):
    plan = make_plan("halving-doubling", g)
    ledger = measure(plan, Layout(plan.segments, n))
    p2 = 1 << (g.bit_length() - 1)
    rem = g - p2
    form = closed_form("halving-doubling", g, n)
    for figure, measured in ((form.busiest_sent, ledger.sent), (form.busiest_received, ledger.received)):
        assert figure.value == int(measured.max())
        # The printed expression evaluates to the textbook value it prints.
        textbook = figure.value if figure.textbook is None else figure.textbook
        assert _evaluate(figure.text.replace("p2", "P"), P=p2, N=n, G=g) == textbook
        # It is exact whenever the p2 segments are equal.
        assert not (n % p2 == 0 and figure.uneven)
        if rem:
            # Fold in N and hand back N around the power-of-two run's own busiest load.
            assert figure.text == "2·(p2−1)·N/p2 + N"
            assert figure.value == closed_form("halving-doubling", p2, n).busiest_sent.value + n
            assert not figure.uneven or figure.exact == "N + Σ of its kept ranges + N"
