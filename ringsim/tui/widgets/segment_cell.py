"""One segment buffer of one GPU: what it holds, and what moved in or out of it this iteration."""

from __future__ import annotations

from textual.widgets import Static


class SegmentCell(Static):
    """A cell: the label ('a₁+b₁', complete ones with ✓) or numbers, and a transfer note."""

    def __init__(self, gpu: int, segment: int) -> None:
        super().__init__("", id=f"cell-{gpu + 1}-{segment + 1}", classes="segment-cell")
        self.gpu = gpu
        self.segment = segment
        self.text = ""
        self.note = ""
        self._shown: tuple | None = None

    def show(self, text: str, note: str, *, complete: bool, sending: bool, receiving: bool) -> None:
        """Set what the cell shows; unchanged cells are not repainted (keeps stepping cheap)."""
        shown = (text, note, complete, sending, receiving)
        if shown == self._shown:
            return
        self._shown = shown
        self.text, self.note = text, note
        self.set_class(complete, "-complete")
        self.set_class(sending and not receiving, "-sending")
        self.set_class(receiving and not sending, "-receiving")
        self.set_class(sending and receiving, "-exchanging")
        self.update(f"{text}\n{note}" if note else text)
