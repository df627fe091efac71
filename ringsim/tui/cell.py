"""What one segment cell shows: its text, its transfer note and its state."""

from __future__ import annotations

from typing import NamedTuple

from .sums import short_sum


class CellView(NamedTuple):
    """A segment buffer as drawn: 'a₁+b₁' (or numbers), '← GPU1 +', complete/sending/receiving,
    and the sum's terms ('a₁', 'b₁'; none for numbers), which the panel shortens to its width."""

    text: str
    note: str
    complete: bool
    sending: bool
    receiving: bool
    terms: tuple[str, ...] = ()
    max_terms: int = 0  # a sum of more terms shows its first two and its last at most

    def label(self, room: int) -> str:
        """The text in `room` columns: a sum in its longest form that fits (`short_sum`),
        numbers as they are (the panel cuts them)."""
        if not self.terms:
            return self.text
        return short_sum(self.terms, room, complete=self.complete, max_terms=self.max_terms)

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
