"""Validation of user-supplied sizes and arrays, shared by the API, the CLI and the front ends."""

from __future__ import annotations

import numbers
import re

from .errors import RingsimError

MAX_GPUS = 1_000_000
EXACT_FLOAT_LIMIT = 2 ** 53  # past this a float no longer holds every whole number
MAX_TIMED_ELEMENTS = 2 ** 62  # the time model's NumPy columns hold element counts as int64
MAX_COUNT_DIGITS = 40        # a count written with more digits is refused before it is built
_TOO_LARGE = 10 ** MAX_COUNT_DIGITS
_ECHO = 40                   # characters of a bad value echoed back in an error line


def echo(value: object) -> str:
    """repr(value), cut to a readable length for an error line."""
    try:
        text = repr(value)
    except ValueError:  # an int past the 4,300 digits Python agrees to write out
        text = f"<a {type(value).__name__} too long to write>"
    return text if len(text) <= _ECHO else text[:_ECHO - 1] + "…"


def check_count(value: object, what: str, *, minimum: int | None, maximum: int | None = None) -> int:
    """Return value as an int, or raise RingsimError naming `what` and the allowed range.

    Integers of any kind pass up to 40 digits, as on the command line; a float passes only
    when it is whole and small enough (at most 2**53) that no other whole number could have
    been meant.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise RingsimError(f"{what} must be a whole number, got {echo(value)}")
    if not isinstance(value, numbers.Integral):
        try:
            number = float(value)
        except OverflowError:  # a Fraction past the largest float
            raise RingsimError(f"{what} is too large (more than {MAX_COUNT_DIGITS} digits)") from None
        if not number.is_integer():
            raise RingsimError(f"{what} must be a whole number, got {echo(value)}")
        if abs(number) > EXACT_FLOAT_LIMIT:
            raise RingsimError(f"{what} must be a whole number given as an int: {number:g} is a "
                               f"float, which cannot hold every whole number above 2**53")
        value = number
    value = int(value)
    # Past 40 digits a count is a typo, not a machine, and the figures built from it would
    # overflow floats or the digits Python agrees to write in an error line.
    if not -_TOO_LARGE < value < _TOO_LARGE:
        raise RingsimError(f"{what} is too large (more than {MAX_COUNT_DIGITS} digits)")
    if minimum is None:  # the caller checks the range itself (it depends on other input)
        return value
    if value < minimum or (maximum is not None and value > maximum):
        bound = f"from {minimum} to {maximum:,}" if maximum is not None else f"at least {minimum}"
        raise RingsimError(f"{what} must be {bound}, got {value:,}")
    return value


_SCIENTIFIC = re.compile(r"([+-]?)([0-9]+)[eE]\+?([0-9]+)")


def parse_count(text: str, what: str, *, minimum: int | None, maximum: int | None = None) -> int:
    """A count as the command line writes it: digits (`1000000`, `1_000_000`) or `1e6`.

    Parsed with integers only, so nothing is rounded: `1e6` is exactly 1,000,000, and a
    number written with a decimal point (`4.0`, `1e16.0`) is refused, whatever its value.
    """
    stripped = text.strip()
    # int() would also read other scripts' digits (an Arabic-Indic four is 4), which the help
    # never offers: a count is written with 0-9 only.
    if not stripped.isascii():
        raise RingsimError(f"{what} must be written with the digits 0-9, got {echo(text)}")
    digits = stripped.lstrip("+-").replace("_", "").lstrip("0")
    if digits.isdigit() and len(digits) > MAX_COUNT_DIGITS:
        raise RingsimError(f"{what} is too large ({len(digits)} digits), got {echo(text)}")
    try:
        number = int(stripped)
    except ValueError:
        number = None
    if number is not None:
        return check_count(number, what, minimum=minimum, maximum=maximum)
    match = _SCIENTIFIC.fullmatch(stripped)
    if match:
        sign, mantissa, exponent = match.group(1), int(match.group(2)), int(match.group(3))
        if mantissa and len(str(mantissa)) + exponent > MAX_COUNT_DIGITS:
            raise RingsimError(f"{what} is too large, got {echo(text)}")
        number = (-1 if sign == "-" else 1) * mantissa * 10 ** exponent
        return check_count(number, what, minimum=minimum, maximum=maximum)
    if _looks_numeric(stripped):
        raise RingsimError(f"{what} must be a whole number written with digits only (8, "
                           f"1_000_000) or as 1e6, got {echo(text)}")
    raise RingsimError(f"expected a whole number, got {echo(text)}")  # argparse names the option


def count_arg(what: str, *, minimum: int | None, maximum: int | None = None,
              stated: tuple[int, int] | None = None):
    """An argparse type for a count: digits or 1e6, parsed exactly (parse_count). `stated`:
    the range a refusal names, where a command's own range is narrower than the one checked
    here (its own check, later, says which command takes the rest)."""
    import argparse

    def parse(text: str) -> int:
        try:
            if stated is None:
                return parse_count(text, what, minimum=minimum, maximum=maximum)
            value = parse_count(text, what, minimum=None)
            if (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
                raise RingsimError(f"{what} must be from {stated[0]:,} to {stated[1]:,}, got {value:,}")
            return value
        except RingsimError as error:
            raise argparse.ArgumentTypeError(str(error)) from None
    return parse


def _looks_numeric(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def check_gpus(gpus: object) -> int:
    """G: a whole number of GPUs, at least 1."""
    return check_count(gpus, "the number of GPUs", minimum=1, maximum=MAX_GPUS)


def check_elements(elements: object) -> int:
    """N: a whole number of elements per GPU, at least 0."""
    return check_count(elements, "the number of elements per GPU", minimum=0)


def check_timed_elements(elements: object) -> int:
    """N for the time model: at most 2**62 elements per GPU (its columns are int64)."""
    n = check_elements(elements)
    if n > MAX_TIMED_ELEMENTS:
        raise RingsimError(f"the time model prices at most 2**62 (about 4.6·10^18) elements per "
                           f"GPU, got {n:.3g}")
    return n


def as_numeric_array(value: object, what: str):
    """`value` as an array of numbers (NumPy or CuPy arrays pass through, never copied).

    Refuses, naming `what`: masked arrays with masked entries, ragged or nested lists, np.matrix (its rows stay 2-D when
    flattened), and arrays of strings, objects or booleans (a sum of those means nothing).
    """
    import numpy as np
    if isinstance(value, np.ma.MaskedArray):
        # Executors add the data underneath: a masked entry would be summed as if unmasked.
        if np.ma.is_masked(value):
            raise RingsimError(f"{what} is a masked array with masked entries, whose values would "
                               "be summed as if present: pass a.filled(0) to count them as 0")
        value = np.ma.getdata(value)  # nothing masked: the plain array underneath
    if isinstance(value, np.matrix):
        raise RingsimError(f"{what} must be an ndarray, not np.matrix (np.asarray(m) gives one)")
    if not (hasattr(value, "dtype") and hasattr(value, "shape")):
        try:
            value = np.asarray(value)
        except (ValueError, TypeError):
            raise RingsimError(f"{what} must be a regular array of numbers (every row as long as "
                               f"the others), got a ragged {type(value).__name__}") from None
    kind = getattr(value.dtype, "kind", "?")
    if kind not in ("i", "u", "f", "c"):
        raise RingsimError(f"{what} must be numeric (integer, unsigned, float or complex), "
                           f"got {value.dtype}")
    return value
