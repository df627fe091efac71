"""What the terminal a command writes to can do: whether there is one, and whether it can draw."""

from __future__ import annotations

import os


def is_terminal(stream) -> bool:
    """True for an open stream on a terminal (False for None, a closed stream, a pipe, a file)."""
    try:
        return stream is not None and stream.isatty()
    except (AttributeError, ValueError, OSError):  # closed, detached or not a stream
        return False


def dumb_terminal() -> bool:
    """True where TERM says the terminal cannot move its cursor (Emacs' shell, some IDE consoles).

    A full-screen view cannot be drawn there, and Rich takes such a screen to be 80×25 whatever
    its size, which disagrees with the size the terminal reports."""
    return os.environ.get("TERM", "").strip().lower() == "dumb"
