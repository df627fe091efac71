"""The unit parser: sizes exact in bytes, durations, bandwidths (bits and bytes), dtypes."""

import math

import pytest

from ringsim.core.errors import RingsimError
from ringsim.core.units import (approx_bytes, format_bytes, format_seconds, itemsize,
                                parse_bandwidth, parse_seconds, parse_size)


@pytest.mark.parametrize("text, value", [
    ("256MiB", 256 * 2**20), ("1GiB", 2**30), ("1GB", 10**9), ("4096", 4096), ("1KiB", 1024),
    ("1.5KiB", 1536), ("2 MB", 2 * 10**6), ("1e3B", 1000),
    ("10000000000000000TiB", 10**16 * 2**40),
    # A bare letter is binary, as nccl-tests' -b 8 -e 8G and GNU dd read it.
    ("64K", 2**16), ("64k", 2**16), ("8M", 2**23), ("8G", 2**33), ("1.5K", 1536), ("2T", 2**41)])
def test_sizes_are_exact_bytes(text, value):
    assert parse_size(text) == value


@pytest.mark.parametrize("text, seconds", [
    ("0.5us", 0.5e-6), ("5µs", 5e-6), ("1.2ms", 1.2e-3), ("2s", 2.0), ("0", 0.0), ("300ns", 3e-7)])
def test_durations(text, seconds):
    assert parse_seconds(text) == pytest.approx(seconds, rel=1e-15)


@pytest.mark.parametrize("text, rate", [
    ("450GB/s", 450e9), ("400Gb/s", 50e9), ("1TB/s", 1e12), ("100Gbps", 12.5e9),
    ("1GiB/s", 2**30), ("inf", math.inf), ("INF", math.inf)])
def test_bandwidths(text, rate):
    assert parse_bandwidth(text) == rate


@pytest.mark.parametrize("parse, text, words", [
    (parse_size, "256MiBs", "unknown unit 'MiBs'"), (parse_size, "1.5B", "not a whole number"),
    (parse_size, "-1GB", "cannot read"), (parse_size, "lots", "cannot read"),
    # nccl-tests counts sizes in bytes: 1kb read as bits would answer for 125 B.
    (parse_size, "1kb", r"'1kb' is in bits \(b\); sizes are counted in bytes: write 1kB"),
    (parse_size, "8Gb", "write 8GB"),
    (parse_seconds, "5", "needs a unit"), (parse_seconds, "5GB", "unknown unit 'GB'"),
    (parse_bandwidth, "450GB", "unknown unit 'GB'"), (parse_bandwidth, "0GB/s", "more than zero"),
    (parse_bandwidth, 450, "must be text")])
def test_wrong_units_get_one_clear_line(parse, text, words):
    with pytest.raises(RingsimError, match=words) as caught:
        parse(text)
    assert "\n" not in str(caught.value)


def test_dtypes_and_formats():
    assert [itemsize(d) for d in ("float32", "bfloat16", "float16", "float64", "int32")] == \
        [4, 2, 2, 8, 4]
    with pytest.raises(RingsimError, match="unknown dtype 'float128'"):
        itemsize("float128")
    assert format_bytes(8 * 2**30) == "8GiB" and format_bytes(1000) == "1,000B"
    assert [approx_bytes(n) for n in (512, 2**10, 1_600_000, 3 * 2**30)] == \
        ["512 B", "1.00 KiB", "1.53 MiB", "3.00 GiB"]
    assert format_seconds(2.5e-6) == "2.50 µs" and format_seconds(0.0123) == "12.30 ms"


def test_an_nccl_tests_size_range_reads_as_nccl_tests_does():
    from ringsim.studies.sweep import parse_sizes
    # all_reduce_perf -b 8 -e 8G -f 2 ends at 8 GiB, and -b 64K starts at 65,536 bytes.
    sizes = parse_sizes("8..8G")
    assert sizes[0] == 8 and sizes[-1] == 8 * 2**30 and len(sizes) == 31
    assert parse_sizes("64K") == [65536]
