"""Quantities with units, as people write them: 256MiB, 0.5us, 450GB/s, 400Gb/s, inf; and dtypes.

One small parser instead of a units library: ringsim needs bytes, seconds and bytes per
second only, and sizes must stay exact integers (1e16 elements times 8 bytes overflows
int64 and loses digits in a float). Decimal prefixes (k, M, G, T, P) are powers of 1000 and
binary ones (Ki, Mi, Gi, Ti, Pi) powers of 1024, as in IEC 80000-13; "B" is a byte and "b"
a bit, as NIC datasheets write 400 Gb/s.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal, InvalidOperation
from fractions import Fraction

from .errors import RingsimError

PREFIXES = {"": 1, "k": 10**3, "K": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15,
            "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50}
SECONDS = {"s": Fraction(1), "ms": Fraction(1, 10**3), "us": Fraction(1, 10**6),
           "µs": Fraction(1, 10**6), "μs": Fraction(1, 10**6), "ns": Fraction(1, 10**9)}
DTYPES = {"float64": 8, "float32": 4, "float16": 2, "bfloat16": 2, "float8": 1,
          "int64": 8, "int32": 4, "int16": 2, "int8": 1, "uint8": 1}

_QUANTITY = re.compile(r"\s*([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([A-Za-zµμ/]*)\s*")
_PREFIX = "|".join(sorted((re.escape(p) for p in PREFIXES if p), key=len, reverse=True))
_BYTES = re.compile(rf"({_PREFIX})?(B|b)?")
_RATE = re.compile(rf"({_PREFIX})?(B|b)(/s|ps)")


def _split(text: object, what: str, example: str) -> tuple[Fraction, str]:
    if not isinstance(text, str):
        raise RingsimError(f"{what} must be text such as {example}, got {text!r}")
    match = _QUANTITY.fullmatch(text)
    if not match:
        raise RingsimError(f"{what}: cannot read {text[:40]!r}; write it like {example}")
    try:
        number = Fraction(Decimal(match.group(1)))
    except (InvalidOperation, ValueError):  # pragma: no cover - the pattern admits only numbers
        raise RingsimError(f"{what}: cannot read {text[:40]!r}; write it like {example}") from None
    return number, match.group(2)


def parse_size(text: object, what: str = "size") -> int:
    """A whole number of bytes: '256MiB', '1GB', '4096', '8Mb' (bits); exact, any size."""
    number, unit = _split(text, what, "256MiB, 1GB or 4096")
    match = _BYTES.fullmatch(unit)
    if not match:
        raise RingsimError(f"{what}: unknown unit {unit!r} in {text!r}; use B, KiB, MiB, GiB, "
                           "kB, MB, GB (or b for bits)")
    value = number * PREFIXES[match.group(1) or ""]
    if match.group(2) == "b":
        value /= 8
    if value.denominator != 1:
        raise RingsimError(f"{what} {text!r} is not a whole number of bytes")
    return int(value)


def parse_seconds(text: object, what: str = "latency") -> float:
    """A duration in seconds: '0.5us', '5µs', '1.2ms', '0'."""
    number, unit = _split(text, what, "0.5us, 5µs or 1ms")
    if unit == "" and number != 0:
        raise RingsimError(f"{what} {text!r} needs a unit: s, ms, us (µs) or ns")
    if unit and unit not in SECONDS:
        raise RingsimError(f"{what}: unknown unit {unit!r} in {text!r}; use s, ms, us (µs) or ns")
    return float(number * SECONDS.get(unit, 1))


def parse_bandwidth(text: object, what: str = "bandwidth") -> float:
    """Bytes per second: '450GB/s', '400Gb/s' (bits), '1TB/s', or 'inf' (free)."""
    if isinstance(text, str) and text.strip().lower() in ("inf", "infinity", "∞"):
        return math.inf
    number, unit = _split(text, what, "450GB/s, 400Gb/s or inf")
    match = _RATE.fullmatch(unit)
    if not match:
        raise RingsimError(f"{what}: unknown unit {unit!r} in {text!r}; use B/s with a prefix "
                           "(GB/s, GiB/s), b/s for bits (Gb/s), or inf")
    value = number * PREFIXES[match.group(1) or ""] / (8 if match.group(2) == "b" else 1)
    if value <= 0:
        raise RingsimError(f"{what} must be more than zero, got {text!r}")
    return float(value)


def parse_params(text: str) -> int:
    """A parameter count: 125M, 7B, 7.5B, 1.3e9, 350000 (K, M, B, T are powers of 1,000)."""
    raw = str(text).strip().replace(",", "").replace("_", "")
    scale = {"K": 10**3, "M": 10**6, "B": 10**9, "G": 10**9, "T": 10**12}
    unit = raw[-1:].upper()
    number = raw[:-1] if unit in scale else raw
    try:
        value = Fraction(number) if "e" not in number.lower() else Fraction(float(number))
    except (ValueError, ZeroDivisionError):
        raise RingsimError(f"a parameter count looks like 7B, 125M or 1.3e9, not {text!r}") from None
    value *= scale.get(unit, 1)
    if value.denominator != 1 or value < 1:
        raise RingsimError(f"a parameter count must be a whole number, at least 1, not {text!r}")
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
