"""Validation of user-supplied sizes, shared by the API, the CLI and the front ends."""

from __future__ import annotations

import numbers

from .errors import RingsimError

MAX_GPUS = 1_000_000


def check_count(value: object, what: str, *, minimum: int, maximum: int | None = None) -> int:
    """Return value as an int, or raise RingsimError naming `what` and the allowed range."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        else:
            raise RingsimError(f"{what} must be a whole number, got {value!r}")
    value = int(value)
    if value < minimum or (maximum is not None and value > maximum):
        bound = f"from {minimum} to {maximum:,}" if maximum is not None else f"at least {minimum}"
        raise RingsimError(f"{what} must be {bound}, got {value}")
    return value


def check_gpus(gpus: object) -> int:
    """G: a whole number of GPUs, at least 1."""
    return check_count(gpus, "the number of GPUs", minimum=1, maximum=MAX_GPUS)


def check_elements(elements: object) -> int:
    """N: a whole number of elements per GPU, at least 0."""
    return check_count(elements, "the number of elements per GPU", minimum=0)
