"""The one error type users see: a clear, one-line message about their input."""


class RingsimError(ValueError):
    """Bad input or an impossible request, worded for the person who made it."""
