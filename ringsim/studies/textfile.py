"""Read a pasted log as clean lines: bounded in size and line length, control characters gone.

nccl-tests output and NCCL_DEBUG logs come from other machines and are pasted by people, so
the reader trusts nothing about them: it takes only a regular file or standard input (a FIFO
or a device could block or never end), reads at most MAX_BYTES, cuts every line at
MAX_LINE characters, refuses text that looks binary, and removes control characters and
terminal escape sequences so that no text from the file can move the cursor or recolour the
terminal when it is echoed back.
"""

from __future__ import annotations

import os
import re
import stat
import sys
from dataclasses import dataclass

from ..core.errors import RingsimError

MAX_BYTES = 32 * 1024 * 1024  # a 1,000-rank NCCL_DEBUG=INFO log is a few MB
MAX_LINE = 16_384  # characters kept of one line; a 64-channel Trees line is about 2,000
_ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b.")
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069]")


@dataclass(frozen=True)
class Text:
    """A file's lines, cleaned, with how many were cut at MAX_LINE."""

    name: str
    lines: tuple[str, ...]
    cut_lines: int


def clean(line: str) -> str:
    """The line without escape sequences or control characters (a tab becomes a space)."""
    return _CONTROLS.sub("", _ESCAPES.sub("", line.replace("\t", " ")))


def shown(text: str, limit: int = 60) -> str:
    """Text from a file made safe to print in a message: cleaned and at most `limit` characters."""
    text = clean(str(text))
    return text if len(text) <= limit else text[:limit - 1] + "…"


def read_text(path: str, what: str, *, max_bytes: int = MAX_BYTES) -> Text:
    """The lines of `path` ('-' for standard input), checked and cleaned as the module says."""
    if path == "-":
        stream = getattr(sys.stdin, "buffer", None)
        if stream is None:
            raise RingsimError(f"no standard input to read the {what} from")
        data = stream.read(max_bytes + 1)
        name = "standard input"
    else:
        data = _read_file(path, what, max_bytes)
        name = shown(path, 120)
    if len(data) > max_bytes:
        raise RingsimError(f"{name} holds more than {max_bytes // (1024 * 1024)} MiB; a {what} "
                           "is far smaller: pass only that part")
    if b"\x00" in data[:65536] or _mostly_binary(data[:65536]):
        raise RingsimError(f"{name} looks binary, not a {what} (text as the program printed it)")
    lines, cut = [], 0
    for raw in data.decode("utf-8", errors="replace").splitlines():
        if len(raw) > MAX_LINE:
            raw, cut = raw[:MAX_LINE], cut + 1
        lines.append(clean(raw))
    return Text(name, tuple(lines), cut)


def _read_file(path: str, what: str, max_bytes: int) -> bytes:
    """At most max_bytes + 1 bytes of a regular file; anything else refused before opening it."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise RingsimError(f"no such file: {shown(path)}") from None
    except OSError as exc:
        raise RingsimError(f"cannot read {shown(path)}: {exc.strerror or exc}") from None
    if stat.S_ISDIR(info.st_mode):
        raise RingsimError(f"{shown(path)} is a folder; give the {what} file")
    if not stat.S_ISREG(info.st_mode):
        raise RingsimError(f"{shown(path)} is not a regular file (a pipe, FIFO or device could "
                           f"block or never end); save the {what} to a file or pipe it to '-'")
    if info.st_size > max_bytes:
        raise RingsimError(f"{shown(path)} holds {info.st_size / (1024 * 1024):,.0f} MiB, more "
                           f"than {max_bytes // (1024 * 1024)} MiB; a {what} is far smaller: "
                           "pass only that part")
    try:
        # O_NONBLOCK: should the path be swapped for a FIFO after the check, open still returns
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as handle:
            return handle.read(max_bytes + 1)
    except OSError as exc:
        raise RingsimError(f"cannot read {shown(path)}: {exc.strerror or exc}") from None


def _mostly_binary(head: bytes) -> bool:
    """True when more than a tenth of the bytes are control bytes other than whitespace."""
    if not head:
        return False
    odd = sum(1 for b in head if b < 32 and b not in (9, 10, 13, 27))
    return odd * 10 > len(head)
