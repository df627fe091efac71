"""The one error type users see: a clear, one-line message about their input."""


class RingsimError(ValueError):
    """Bad input or an impossible request, worded for the person who made it."""


class WriteError(RingsimError):
    """An output file that could not be finished: the disk is full, or the device failed.
    Not the input's fault, so the command line ends with status 1, as for a full stdout."""


def first_line(exc: BaseException) -> str:
    """An exception's message as one line (its type's name when it has none)."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
