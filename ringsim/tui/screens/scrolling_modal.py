"""A modal screen of one scrolling box whose edge names the scrolling keys only where it scrolls."""

from __future__ import annotations

from textual.containers import VerticalScroll
from textual.screen import ModalScreen

MORE = "↓ pgdn end: more"


class ScrollingModal(ModalScreen[None]):
    """The box `#{BOX}` says `CLOSE` in its bottom edge, and "↓ pgdn end: more" before it
    while it holds more than the terminal shows (measured after each layout)."""

    BOX = ""
    CLOSE = ""

    def on_resize(self, event) -> None:
        """Say again, after the new layout, whether more is below."""
        self.call_after_refresh(self._say_more)

    def _say_more(self) -> None:
        box = self.query_one(f"#{self.BOX}", VerticalScroll)
        box.border_subtitle = f"{MORE} · {self.CLOSE}" if box.max_scroll_y > 0 else self.CLOSE
