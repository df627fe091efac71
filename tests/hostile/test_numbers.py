"""Numbers at the edge of float: every written number is bounded before it is expanded, and
every quantity is refused outside its stated range, in one line with exit status 2."""

from __future__ import annotations

import pytest

from ringsim.core.errors import RingsimError
from ringsim.core.units import parse_bandwidth, parse_params, parse_seconds, parse_size

from .bounded import cli, refused

CASES = [
    # (command line, words the one error line must hold)
    (("compare", "--time", "--bandwidth", "1e-400B/s"), "exponents go from -30 to +30"),
    (("compare", "--time", "--bandwidth", "1e400GB/s"), "exponents go from -30 to +30"),
    (("compare", "--time", "--alpha", "1e400s"), "exponents go from -30 to +30"),
    (("compare", "--time", "--alpha", "1e999999999s"), "exponents go from -30 to +30"),
    (("compare", "--size", "1e99999999B"), "exponents go from -30 to +30"),
    (("timeline", "--delay", "3:1e999999999s"), "exponents go from -30 to +30"),
    (("compare", "--size", "1e20B"), "at most 2**62"),
    (("sweep", "--sizes", "1KiB..1e30B"), "at most 2**62"),
    (("sweep", "--sizes", "1KiB..2e30B"), "from 0 to 10^30 bytes"),
    (("zero", "--params", "1e400"), "exponents go from -30 to +30"),
    (("zero", "--params", "1e16"), "from 1 to 10^15"),
    (("overlap", "--layers", "1e400"), "exponents go from -30 to +30"),
    (("overlap", "--layers", "1e30"), "from 1 to 10^15"),
    (("overlap", "--tflops", "1e-300"), "from 0.001 to 1e+06"),
    (("overlap", "--tflops", "nan"), "TFLOP/s"),
    (("overlap", "--bucket-mb", "1e300"), "bucket size"),
    (("compare", "--time", "--bandwidth", "0.5B/s"), "from 1 to 10^18 B/s"),
    (("compare", "--time", "--alpha", "2e6s"), "from 0 to 1,000,000 s"),
    (("compare", "--time", "--reduce-bandwidth", "1" * 41 + "B/s"), "significant digits"),
    (("compare", "--time", "--elements", "1e39"), "at most 2**62"),
]


@pytest.mark.parametrize("args, words", CASES, ids=lambda v: " ".join(v)[:50] if isinstance(v, tuple) else None)
def test_each_number_past_its_range_is_one_line(args, words):
    ran = cli(*args)
    refused(ran, words)
    assert ran.out == ""  # refused before anything was printed


@pytest.mark.parametrize("parse, text", [
    (parse_size, "1e-31B"), (parse_size, "1e31B"), (parse_size, "9" * 41 + "B"),
    (parse_seconds, "1e-400s"), (parse_seconds, "1e+0000000000000031s"),
    (parse_bandwidth, "1e19B/s"), (parse_params, "1e1000000"), (parse_params, "1.5"),
    (parse_params, "nan"), (parse_params, "inf")])
def test_the_parsers_refuse_before_expanding(parse, text):
    with pytest.raises(RingsimError) as caught:
        parse(text)
    assert "\n" not in str(caught.value)


def test_numbers_inside_the_ranges_still_read_exactly():
    assert parse_size("1e30B") == 10**30 and parse_size("0.5KiB") == 512
    assert parse_seconds("1e-30s") == 1e-30 and parse_seconds("1e6s") == 1e6
    assert parse_bandwidth("1e18B/s") == 1e18 and parse_bandwidth("1B/s") == 1.0
    assert parse_params("1e15") == 10**15 and parse_params("1.3e9") == 1_300_000_000
    assert parse_params("7.5B") == 7_500_000_000


def test_huge_times_print_in_scientific_form():
    ran = cli("overlap", "--tflops", "0.001", "--layers", "1000000000000000", "--micro-batch", "1000")
    assert ran.status == 0, ran.err
    longest = max(len(word) for word in ran.out.split())
    assert longest < 30, longest  # not a 300-digit figure
    assert "e+" in ran.out


LONG = "x" * 5000

# A value as long as the command line allows is echoed cut, not whole: the error stays one
# readable line (under 300 characters) whatever was typed.
@pytest.mark.parametrize("args", [
    ("predict", "--sizes", "1" + LONG),
    ("predict", "--sizes", "1KiB" + " " * 5000 + "..1B"),
    ("figure", "--dimensions", LONG, "x.png"),
    ("sweep", "--alpha", "5" + LONG),
    ("sweep", "--alpha", "5" + " " * 5000),
    ("sweep", "--bandwidth", "5" + LONG),
    ("sweep", "--reduce-bandwidth", "5" + LONG),
    ("walk", "--size", "1" + LONG),
    ("zero", "--params", "1e6", "--gpu-memory", "1" + LONG),
    ("timeline", "--delay", "1:5" + LONG),
    ("timeline", "--slow-gpu", "1:" + LONG),
    ("timeline", "--slow-link", "1-2:" + LONG),
    ("overlap", "--layers", LONG),
    ("walk", "--ring-order", LONG),
    ("train", "--lr", "1" + LONG),
    ("mpi", "--timeout", "1" + LONG),
], ids=lambda v: " ".join(v)[:30])
def test_a_long_bad_value_is_echoed_cut(args):
    line = refused(cli(*args))
    assert len(line) < 300, (len(line), line[:300])


@pytest.mark.parametrize("parse, text", [
    (parse_size, "1" + LONG), (parse_seconds, "1" + LONG), (parse_seconds, "1" + " " * 5000),
    (parse_bandwidth, "1" + LONG), (parse_bandwidth, "0" + " " * 5000 + "B/s")])
def test_the_parsers_echo_a_long_value_cut(parse, text):
    with pytest.raises(RingsimError) as caught:
        parse(text)
    assert len(str(caught.value)) < 300, str(caught.value)[:300]
