"""Text for any terminal: ASCII forms (a1, *, ->) where the output cannot encode a₁, · or →.

ringsim writes Unicode (subscripts, ·, →, −). Where a stream's encoding cannot hold a
character (PYTHONIOENCODING=ascii, an old Windows console), the "ringsim-ascii" codec
error handler writes its ASCII form instead of raising UnicodeEncodeError: a₁ → a1,
2·(G−1) → 2*(G-1), G² → G^2, → → ->. `prepare_streams` installs it on stdout and stderr.
"""

from __future__ import annotations

import codecs
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
    "▼": "v", "′": "'", "≡": "==", "⇒": "=>",
}
_SUPERSCRIPTS = dict(zip("⁰¹²³⁴⁵⁶⁷⁸⁹", "0123456789"))


def ascii_form(text: str) -> str:
    """The ASCII form of `text`: the table above, superscripts as ^digits, subscripts and
    other compatibility characters by Unicode decomposition, '?' for what has none."""
    out: list[str] = []
    superscript = False
    for char in text:
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
    return ascii_form(error.object[error.start:error.end]), error.end


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
