"""What one segment cell shows: its text, its transfer note and its state."""

from __future__ import annotations

from typing import NamedTuple


class CellView(NamedTuple):
    """A segment buffer as drawn: 'a₁+b₁' (or numbers), '← GPU1 +', complete/sending/receiving."""

    text: str
    note: str
    complete: bool
    sending: bool
    receiving: bool

    @property
    def state(self) -> str:
        """The cell's style name: complete, sending, receiving, exchanging or plain."""
        if self.sending and self.receiving:
            return "exchanging"
        if self.sending:
            return "sending"
        if self.receiving:
            return "receiving"
        return "complete" if self.complete else "plain"
