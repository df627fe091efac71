"""How error messages name the caller's inputs: keywords from Python, flags on the command line."""

from __future__ import annotations

import contextlib
import contextvars
from typing import Callable, Iterator

from .checks import echo


def flag(name: str) -> str:
    """An input as the command line's flag: ring_order is --ring-order."""
    return "--" + name.replace("_", "-")


def as_keyword(name: str, shown_flag: str | None, value: object) -> str:
    """An input as Python's keyword argument: `chunks`, or `nodes=3` with its value."""
    return name if value is None else f"{name}={echo(value)}"


def as_flag(name: str, shown_flag: str | None, value: object) -> str:
    """An input as the command line's flag: `--chunks`, or `--nodes 3` with its value."""
    shown = shown_flag or flag(name)
    return shown if value is None else f"{shown} {value}"


# How error messages name the caller's inputs. Python callers passed keyword arguments, so
# that is the default; the command line switches to its flags while it runs a command (one
# message text serves both: the name is filled in as the message is made).
_NAMING: contextvars.ContextVar[Callable[[str, str | None, object], str]] = \
    contextvars.ContextVar("ringsim_naming", default=as_keyword)


def argument(name: str, value: object = None, *, shown_flag: str | None = None) -> str:
    """Input `name` (the keyword, say ring_order) as the caller wrote it, with `value` if given:
    `ring_order` from Python, `--ring-order` on the command line (`shown_flag` where the flag
    is not the keyword written with dashes)."""
    return _NAMING.get()(name, shown_flag, value)


@contextlib.contextmanager
def naming(how: Callable[[str, str | None, object], str]) -> Iterator[None]:
    """Within the block, errors name the caller's inputs with `how` (as_flag, as_keyword)."""
    token = _NAMING.set(how)
    try:
        yield
    finally:
        _NAMING.reset(token)
