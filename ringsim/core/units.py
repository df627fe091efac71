"""Quantities with units, as people write them: 256MiB, 0.5us, 450GB/s, 400Gb/s, inf; and dtypes.

One small parser instead of a units library: ringsim needs bytes, seconds and bytes per
second only, and sizes must stay exact integers (1e16 elements times 8 bytes overflows
int64 and loses digits in a float). Decimal prefixes (k, M, G, T, P) are powers of 1000 and
binary ones (Ki, Mi, Gi, Ti, Pi) powers of 1024, as in IEC 80000-13; "B" is a byte and "b"
a bit, as NIC datasheets write 400 Gb/s. A size written with a bare prefix letter and no unit
(64K, 8G) is binary, as nccl-tests' -b/-e and GNU dd read it: 8G is 8 GiB, 8GB is 8·10^9 bytes.

Every quantity has a range, checked before any arithmetic (the exact reader would otherwise
expand `1e999999999` into a billion digits, and a float past 1e308 is infinite):
a written number has at most 40 significant digits and an exponent from −30 to +30;
sizes are from 0 to 10^30 bytes; durations from 0 to 1,000,000 s; bandwidths from
1 B/s to 10^18 B/s (an exabyte per second), or inf; parameter counts from 1 to 10^15.
"""

from __future__ import annotations

import math
import numbers
import re
from decimal import Decimal, InvalidOperation
from fractions import Fraction

from .checks import echo
from .errors import RingsimError

PREFIXES = {"": 1, "k": 10**3, "K": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15,
            "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50}
BARE_PREFIXES = {"k": 2**10, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40, "P": 2**50,
                 "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50}
SECONDS = {"s": Fraction(1), "ms": Fraction(1, 10**3), "us": Fraction(1, 10**6),
           "µs": Fraction(1, 10**6), "μs": Fraction(1, 10**6), "ns": Fraction(1, 10**9)}
DTYPES = {"float64": 8, "float32": 4, "float16": 2, "bfloat16": 2, "float8": 1,
          "int64": 8, "int32": 4, "int16": 2, "int8": 1, "uint8": 1}

MAX_EXPONENT = 30       # a written exponent beyond ±30 is refused before it is expanded
MAX_DIGITS = 40         # significant digits a written number may have
LOWER_BARE = ("m", "g", "t", "p")  # bare lower-case letters read as their capitals (k is one)
MAX_BYTES = 10**30      # far past any memory, and still finite as a float
MAX_SECONDS = 10**6     # about 11.6 days: any latency or delay worth modelling
MIN_BANDWIDTH, MAX_BANDWIDTH = 1, 10**18  # 1 B/s to 1 EB/s (or inf: a free link)
MAX_PARAMS = 10**15     # a thousand times the largest models trained so far

_QUANTITY = re.compile(r"\s*([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([A-Za-zµμ/]*)\s*")
_NUMBER = re.compile(r"([0-9]*)\.?([0-9]*)(?:[eE]([+-]?[0-9]+))?")
_PREFIX = "|".join(sorted((re.escape(p) for p in PREFIXES if p), key=len, reverse=True))
_BYTES = re.compile(rf"({_PREFIX})?(B|b)?")
_RATE = re.compile(rf"({_PREFIX})?(B|b)(/s|ps)")


def _split(text: object, what: str, example: str) -> tuple[Fraction, str]:
    if not isinstance(text, str):
        raise RingsimError(f"{what} must be text such as {example}, got {echo(text)}")
    match = _QUANTITY.fullmatch(text)
    if not match:
        raise RingsimError(f"{what}: cannot read {text[:40]!r}; write it like {example}")
    return read_number(match.group(1), what, text), match.group(2)


def read_number(digits: str, what: str, text: object = None) -> Fraction:
    """An exact Fraction from plain digits with an optional point and exponent ('1.5e3'),
    refused before it is expanded when its exponent or its digits go past the stated range."""
    shown = echo(digits if text is None else text)
    parts = _NUMBER.fullmatch(digits)
    if not parts or not (parts.group(1) or parts.group(2)):
        raise RingsimError(f"{what}: cannot read {shown}")
    exponent_text = parts.group(3) or "0"
    if len(exponent_text.lstrip("+-").lstrip("0")) > 3 or abs(int(exponent_text)) > MAX_EXPONENT:
        raise RingsimError(f"{what}: the exponent of {shown} is out of range; exponents go from "
                           f"-{MAX_EXPONENT} to +{MAX_EXPONENT}")
    significant = (parts.group(1) + parts.group(2)).lstrip("0").rstrip("0")
    if len(significant) > MAX_DIGITS:
        raise RingsimError(f"{what}: {shown} has more than {MAX_DIGITS} significant digits")
    try:
        return Fraction(Decimal(digits))
    except (InvalidOperation, ValueError):  # pragma: no cover - the pattern admits only numbers
        raise RingsimError(f"{what}: cannot read {shown}") from None


def _within(value: Fraction, low: int, high: int, what: str, text: object, unit: str) -> None:
    if not low <= value <= high:
        def shown(bound: int) -> str:
            return f"{bound:,}" if bound < 10**7 else f"10^{len(str(bound)) - 1}"
        raise RingsimError(f"{what} must be from {shown(low)} to {shown(high)}"
                           f"{' ' + unit if unit else ''}, got {echo(text)}")


def parse_size(text: object, what: str = "size", counted: str = "sizes are counted",
               example: str = "256MiB, 1GB or 4096") -> int:
    """A whole number of bytes: '256MiB', '1GB', '4096', '64K' (KiB, as nccl-tests reads it); exact.

    Never in bits: nccl-tests' sizes and memory are counted in bytes, so '1kb' or '80Gb' is a
    slip for kB or GB, and reading it as bits would answer for an eighth of the size meant."""
    number, unit = _split(text, what, example)
    if unit in LOWER_BARE:
        # nccl-tests' parsesize takes k, m and g in either case (8g is 8 GiB); a lower-case
        # m or g with a unit (mB) is no size, so only the bare letter is read so.
        unit = unit.upper()
    match = _BYTES.fullmatch(unit)
    if not match:
        raise RingsimError(f"{what}: unknown unit {echo(unit)} in {echo(text)}; use B, KiB, MiB, GiB, "
                           "TiB, PiB, kB, MB, GB, TB, PB, or a bare K, M, G, T, P for KiB to "
                           "PiB as nccl-tests reads them")
    prefix, byte = match.group(1) or "", match.group(2)
    if byte == "b":
        number_text = str(text).strip()[:len(str(text).strip()) - len(unit)].strip()
        raise RingsimError(f"{what} {echo(text)} is in bits (b); {counted} in bytes: "
                           f"write {number_text}{prefix}B")
    # A bare letter (64K, 8G) is binary, as nccl-tests' -b/-e read it ("M=Mebibytes and
    # G=Gibibytes", src/common.cu) and as GNU dd does; with a unit (64kB, 8GB) it is decimal.
    value = number * (BARE_PREFIXES[prefix] if byte is None and prefix else PREFIXES[prefix])
    if value.denominator != 1:
        raise RingsimError(f"{what} {echo(text)} is not a whole number of bytes")
    _within(value, 0, MAX_BYTES, what, text, "bytes")
    return int(value)


def parse_memory(text: object, what: str = "memory") -> int:
    """Bytes of memory: '80GB', '141GB', '192GiB', 64G (GiB), as parse_size reads them."""
    return parse_size(text, what, "memory is counted", "80GB or 192GiB")


def parse_seconds(text: object, what: str = "latency", most: Fraction | None = None) -> float:
    """A duration in seconds: '0.5us', '5µs', '1.2ms', '0'; at most `most` where given."""
    number, unit = _split(text, what, "0.5us, 5µs or 1ms")
    if unit == "" and number != 0:
        raise RingsimError(f"{what} {echo(text)} needs a unit: s, ms, us (µs) or ns")
    if unit and unit not in SECONDS:
        raise RingsimError(f"{what}: unknown unit {echo(unit)} in {echo(text)}; use s, ms, us (µs) or ns")
    value = number * SECONDS.get(unit, 1)
    if most is not None and not 0 <= value <= most:  # a field's own bound, named before the general one
        raise RingsimError(f"{what} must be from 0 to {format_seconds(float(most), digits=0)}, got {echo(text)}")
    _within(value, 0, MAX_SECONDS, what, text, "s")
    return float(value)


def parse_bandwidth(text: object, what: str = "bandwidth") -> float:
    """Bytes per second: '450GB/s', '400Gb/s' (bits), '1TB/s', or 'inf' (free)."""
    if isinstance(text, str) and text.strip().lower() in ("inf", "infinity", "∞"):
        return math.inf
    number, unit = _split(text, what, "450GB/s, 400Gb/s or inf")
    match = _RATE.fullmatch(unit)
    if not match:
        raise RingsimError(f"{what}: unknown unit {echo(unit)} in {echo(text)}; use B/s with a prefix "
                           "(GB/s, GiB/s), b/s for bits (Gb/s), or inf")
    value = number * PREFIXES[match.group(1) or ""] / (8 if match.group(2) == "b" else 1)
    if value <= 0:
        raise RingsimError(f"{what} must be more than zero, got {echo(text)}")
    _within(value, MIN_BANDWIDTH, MAX_BANDWIDTH, what, text, "B/s (or inf)")
    return float(value)


def parse_params(text: str) -> int:
    """A parameter count: 125M, 7B, 7.5B, 1.3e9, 350000 (K, M, B, T are powers of 1,000)."""
    raw = str(text).strip().replace(",", "").replace("_", "")
    scale = {"K": 10**3, "M": 10**6, "B": 10**9, "G": 10**9, "T": 10**12}
    unit = raw[-1:].upper()
    number = raw[:-1] if unit in scale else raw
    if not _NUMBER.fullmatch(number) or not number.strip("."):
        raise RingsimError(f"a parameter count looks like 7B, 125M or 1.3e9, not {echo(text)}")
    value = read_number(number, "a parameter count", text) * scale.get(unit, 1)
    if value.denominator != 1 or value < 1:
        raise RingsimError(f"a parameter count must be a whole number, at least 1, not {echo(text)}")
    _within(value, 1, MAX_PARAMS, "a parameter count", text, "")
    return int(value)


def itemsize(dtype: object) -> int:
    """Bytes per element of a dtype name (float32, bfloat16, …)."""
    try:
        return DTYPES[dtype]  # type: ignore[index]
    except (KeyError, TypeError):
        raise RingsimError(f"unknown dtype {dtype!r}; choose one of: {', '.join(DTYPES)}") from None


def format_seconds(seconds: float, digits: int = 2) -> str:
    """A duration in the unit that reads best: ns, µs, ms or s (`digits` decimals in ms and µs)."""
    if seconds == 0:
        return "0 s"
    if seconds >= 1:
        if seconds >= 1e7:  # past about four months, digits stop helping: 2.52e+08 s
            return f"{seconds:.2e} s"
        return f"{seconds:,.2f} s" if seconds < 1e4 else f"{seconds:,.0f} s"
    for unit, scale in (("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:,.{digits}f} {unit}"
    return f"{seconds * 1e9:,.0f} ns" if seconds >= 1e-8 else f"{seconds * 1e9:,.2f} ns"


def format_bandwidth(rate: float | None) -> str:
    """Bytes per second in GB/s (powers of 1000, as nccl-tests prints them), or MB/s, kB/s."""
    if rate is None:
        return "—"
    if math.isinf(rate):
        return "inf"
    for unit, scale in (("TB/s", 1e12), ("GB/s", 1e9), ("MB/s", 1e6), ("kB/s", 1e3)):
        if rate >= scale:
            return f"{rate / scale:,.2f} {unit}"
    return f"{rate:,.2f} B/s"


def format_bytes(nbytes: int) -> str:
    """A size in the largest binary unit that divides it (1KiB, 8GiB), else in bytes."""
    for unit, scale in (("PiB", 2**50), ("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20),
                        ("KiB", 2**10)):
        if nbytes >= scale and nbytes % scale == 0:
            return f"{nbytes // scale:,}{unit}"
    return f"{nbytes:,}B"


def approx_bytes(nbytes: int) -> str:
    """'1.53 MiB': a size to three figures in the largest binary unit it reaches, for a size
    said beside its exact bytes."""
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if nbytes >= scale:
            return f"{nbytes / scale:,.2f} {unit}"
    return f"{nbytes} B"


# Numbers given from Python get the ranges that text read here gets, so a
# Level or Topology built in code cannot price what a topology file would refuse (a NaN or
# negative α or bandwidth turns every time into NaN or 0 without a word).
def check_seconds(value: object, what: str, most: float = MAX_SECONDS) -> float:
    """A duration in seconds given as a number: from 0 to `most` (MAX_SECONDS unless given)."""
    seconds = _number(value, what, "seconds", "parse_seconds")
    # A bound written exactly (10 ms as 1/100) holds the float its text reads as (0.01 is a
    # hair above 1/100); NaN fails every comparison.
    if not (0 <= seconds <= most or 0 <= seconds <= float(most)):
        raise RingsimError(f"{what} must be from 0 to {format_seconds(float(most), digits=0)}, "
                           f"got {echo(value)}")
    return float(seconds)


def check_bandwidth(value: object, what: str) -> float:
    """Bytes per second given as a number: from MIN_BANDWIDTH to MAX_BANDWIDTH, or inf (free)."""
    rate = _number(value, what, "bytes per second", "parse_bandwidth")
    if rate != math.inf and not MIN_BANDWIDTH <= rate <= MAX_BANDWIDTH:
        raise RingsimError(f"{what} must be from {MIN_BANDWIDTH} to 10^18 B/s (or inf: free), "
                           f"got {echo(value)}")
    return float(rate)


def _number(value: object, what: str, unit: str, reader: str):
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        hint = f" (ringsim.core.units.{reader} reads text with a unit)" if isinstance(value, str) else ""
        raise RingsimError(f"{what} must be a number of {unit}, got {echo(value)}{hint}")
    return value
