"""Read a pasted log as clean lines: bounded in size and line length, control characters gone.

nccl-tests output and NCCL_DEBUG logs come from other machines and are pasted by people, so
the reader trusts nothing about them: it takes only a regular file or standard input (a FIFO
or a device could block or never end), reads at most MAX_BYTES, cuts every line at
MAX_LINE characters, refuses text that looks binary, and removes control characters and
terminal escape sequences so that no text from the file can move the cursor or recolour the
terminal when it is echoed back.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..core.errors import RingsimError
from ..core.files import Wording, read_lines
from ..core.textout import printable

# What a launcher puts before each line: mpirun's `[1,0]<stdout>:`, srun's `[0]`.
LAUNCHER_PREFIX = r"\[\d+(?:,\d+)?\](?:<std(?:out|err)>)?:?"
# The same at the start of a line, or srun --label's `0: `: what to strip before reading a line.
LINE_PREFIX = re.compile(rf"^\s*(?:{LAUNCHER_PREFIX}\s*|\d+:\s+)")
# NCCL's banner, in nccl-tests output and in NCCL_DEBUG=INFO logs alike.
NCCL_VERSION = re.compile(r"NCCL version (\d+\.\d+\.\d+)")

MAX_BYTES = 32 * 1024 * 1024  # a 1,000-rank NCCL_DEBUG=INFO log is a few MB
MAX_LINE = 16_384  # characters kept of one line; a 64-channel Trees line is about 2,000
# A whole number as a paste prints it, for a pattern: at most 18 digits, none beside (a size or
# a pid has fewer). A longer run matches no pattern, so it is never read: past 4,300 digits,
# Python's int() raises ValueError.
DIGITS = r"(?<!\d)\d{1,18}(?!\d)"


@dataclass(frozen=True)
class Text:
    """A file's lines, cleaned, with how many were cut at MAX_LINE."""

    name: str
    lines: tuple[str, ...]
    cut_lines: int


def clean(line: str) -> str:
    """The line without escape sequences or control characters (a tab becomes a space)."""
    return printable(line)


def shown(text: str, limit: int = 60) -> str:
    """Text from a file made safe to print in a message: cleaned and at most `limit` characters."""
    text = clean(str(text))
    return text if len(text) <= limit else text[:limit - 1] + "…"


# Diagnose's own words: a log may come from standard input, so a refused file suggests '-'.
WORDING = Wording(
    unreadable="cannot read {name}: {reason}",
    missing="no such file: {name}",
    folder="{name} is a folder; give the {what} file",
    special=("{name} is not a regular file (a pipe, FIFO or device could block or never end); "
             "save the {what} to a file or pipe it to '-'"),
    too_big=("{name} holds {mib:,.0f} MiB, more than {limit_mib} MiB; a {what} is far smaller: "
             "pass only that part"),
    grew="{name} holds more than {limit_mib} MiB; a {what} is far smaller: pass only that part",
)


def read_text(path: str, what: str, *, max_bytes: int = MAX_BYTES) -> Text:
    """The lines of `path` ('-' for standard input), checked and cleaned as the module says."""
    lines, cut = read_lines(path, what, max_bytes, MAX_LINE, stdin=True, wording=WORDING,
                            lenient=True)
    name = "standard input" if path == "-" else shown(path, 120)
    head = "\n".join(lines)[:65536]
    if _wide_text(head):
        raise RingsimError(f"{name} looks like UTF-16 or UTF-32 text without a byte-order mark: "
                           f"save the {what} as UTF-8")
    if "\x00" in head or _mostly_binary(head):
        raise RingsimError(f"{name} looks binary, not a {what} (text as the program printed it)")
    return Text(name, tuple(clean(line) for line in lines), cut)


def _wide_text(head: str) -> bool:
    """True when NULs fill every other character (or three in four) of text that is otherwise
    readable: ASCII written two or four bytes a character, with no mark to say so."""
    sample = head[:4096]
    nuls = sample.count("\x00")
    return len(sample) >= 16 and nuls * 2 >= len(sample) * 0.9 and not _mostly_binary(
        sample.replace("\x00", ""))


def _mostly_binary(head: str) -> bool:
    """True when more than a tenth of the characters are control characters other than whitespace."""
    if not head:
        return False
    odd = sum(1 for c in head if c < " " and c not in "\t\n\r\x1b")
    return odd * 10 > len(head)
