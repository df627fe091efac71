"""Text for any terminal: ASCII forms (a1, *, ->) where the output cannot encode a₁, · or →.

ringsim writes Unicode (subscripts, ·, →, −). Where a stream's encoding cannot hold a
character (PYTHONIOENCODING=ascii, an old Windows console), the "ringsim-ascii" codec
error handler writes its ASCII form instead of raising UnicodeEncodeError: a₁ → a1,
2·(G−1) → 2*(G-1), G² → G^2, → → ->. `prepare_streams` installs it on stdout and stderr.
"""

from __future__ import annotations

import codecs
import re
import sys
import unicodedata

HANDLER = "ringsim-ascii"

ASCII_FORMS = {
    "·": "*", "×": "x", "−": "-", "–": "-", "—": "--", "→": "->", "←": "<-", "↔": "<->",
    "…": "...", "≤": "<=", "≥": ">=", "≠": "!=", "≈": "~", "±": "+/-", "√": "sqrt",
    "⌊": "floor(", "⌋": ")", "⌈": "ceil(", "⌉": ")", "Σ": "sum", "α": "alpha", "β": "beta",
    "γ": "gamma", "μ": "u", "µ": "u", "│": "|", "─": "-", "┼": "+", "═": "=", "║": "|",
    "▶": ">", "◀": "<", "•": "*", "✓": "ok", "✔": "ok", "✗": "x", "✘": "x", "█": "#",
    "‘": "'", "’": "'", "“": '"', "”": '"', "\u00a0": " ",
    "Ψ": "Psi", "÷": "/", "§": "S", "∞": "inf", "┌": "+", "┐": "+", "└": "+", "┘": "+",
    "┬": "+", "┴": "+", "├": "+", "┤": "+", "▒": ":", "░": ".", "▸": ">", "●": "*", "▲": "^",
    "▼": "v", "′": "'", "≡": "==", "⇒": "=>", "⏸": "||", "‖": "||",
}
_SUPERSCRIPTS = dict(zip("⁰¹²³⁴⁵⁶⁷⁸⁹", "0123456789"))


_SUBSCRIPT_DIGITS = frozenset("₀₁₂₃₄₅₆₇₈₉")


def ascii_form(text: str, before: str = "") -> str:
    """The ASCII form of `text`: the table above, superscripts as ^digits, subscripts and
    other compatibility characters by Unicode decomposition, '?' for what has none. A
    subscript right after a digit gets a '_' (g27₂₇ → g27_27, where g2727 would be two
    readings); `before` is the character the text follows, where it is part of a longer one."""
    out: list[str] = []
    superscript = False
    previous = before[-1:]
    for char in text:
        if char in _SUBSCRIPT_DIGITS and previous.isascii() and previous.isdigit():
            out.append("_")
        previous = char
        if char in _SUPERSCRIPTS:
            out.append(("" if superscript else "^") + _SUPERSCRIPTS[char])
            superscript = True
            continue
        superscript = False
        if char.isascii():
            out.append(char)
        elif char in ASCII_FORMS:
            out.append(ASCII_FORMS[char])
        else:
            plain = unicodedata.normalize("NFKD", char).encode("ascii", "ignore").decode()
            out.append(plain or "?")
    return "".join(out)


def _handler(error: UnicodeError):
    if not isinstance(error, UnicodeEncodeError):
        raise error
    before = error.object[error.start - 1:error.start]
    return ascii_form(error.object[error.start:error.end], before), error.end


codecs.register_error(HANDLER, _handler)

_PROBE = "a₁·→−…"


def can_encode(stream, text: str = _PROBE) -> bool:
    """True when `stream`'s encoding holds every character of `text` (assumed for streams
    that do not name an encoding)."""
    encoding = getattr(stream, "encoding", None)
    if not encoding:
        return True
    try:
        text.encode(encoding)
    except (UnicodeEncodeError, LookupError):
        return False
    return True


def prepare_streams() -> None:
    """Make stdout and stderr write ASCII forms instead of failing where they cannot encode."""
    for stream in (sys.stdout, sys.stderr):
        if stream is not None and hasattr(stream, "reconfigure") and not can_encode(stream):
            try:
                stream.reconfigure(errors=HANDLER)
            except (ValueError, OSError):  # a closed or detached stream: nothing to write to
                pass


def json_ensure_ascii(stream=None) -> bool:
    """`ensure_ascii` for json.dumps: escape non-ASCII only where the stream cannot encode it,
    so that JSON stays valid and its strings unchanged on any terminal."""
    return not can_encode(sys.stdout if stream is None else stream)


# ESC [ … final byte (CSI), ESC ] … BEL or ESC \ (OSC), ESC P/X/^/_ … ESC \ (DCS and friends),
# then any other two-byte ESC sequence: what a terminal would act on instead of printing.
_ESCAPES = re.compile(r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]"
                      r"|\x9d[^\x07\x9c]*[\x07\x9c]?"
                      r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"
                      r"|\x1b[PX^_][^\x1b]*(?:\x1b\\)?"
                      r"|\x1b[@-Z\\-_]?")
# C0 controls but tab and newline, DEL, C1 controls, zero-width spaces and direction marks,
# and the bidirectional overrides and isolates that can make a line read differently from
# what it holds (CVE-2021-42574).
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069]")
_LINE_BREAKS = re.compile("[\t\n\r\x0b\x0c\x85\u2028\u2029]+")


def escaped(text: object) -> str:
    """Text a user gave (a file name) for a message: as written, or, where it holds escape
    sequences or control characters, with them spelled out (\\x1b), so that the message names
    what was given and nothing reaches the terminal raw."""
    text = str(text)
    if printable(text) == text:
        return text
    spelled = text.encode("unicode_escape", "backslashreplace").decode("ascii")
    return spelled.replace("\\\\", "\\")  # a plain backslash stays one


def printable(text: str, *, lines: bool = False) -> str:
    """Text from a file (or any outside source) made safe for a terminal: escape sequences and
    control characters removed, so a name cannot clear the screen, retitle the window or
    rewrite a line. One line by default (line breaks and tabs become one space); with
    lines=True newlines and tabs stay and '\\r\\n' line ends become '\\n'."""
    text = str(text)
    if text.isprintable():  # no control, format or line-break character: nothing to remove
        return text
    if not lines:
        text = _LINE_BREAKS.sub(" ", text)
    else:
        text = text.replace("\r\n", "\n")
    return _CONTROLS.sub("", _ESCAPES.sub("", text))


def clip(value: object, width: int = 60) -> str:
    """A value echoed in an error line, cut to about `width` characters ('999…999 (100,000 characters)')."""
    text = printable(value if isinstance(value, str) else repr(value), lines=True)
    if len(text) <= width:
        return text
    keep = max(width // 2 - 2, 4)
    return f"{text[:keep]}…{text[-keep:]} ({len(text):,} characters)"
