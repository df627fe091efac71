"""What a terminal too small for the view shows instead of a broken layout."""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Static


class TooSmall(Static):
    """'The terminal is 60×20; ringsim needs at least 80×24.'"""

    def show(self, width: int, height: int, need_width: int, need_height: int,
             present: bool = False) -> None:
        """Say how large the terminal is and how large it must be; in presentation mode, that
        P leaves it (the ordinary view may fit where the larger one does not)."""
        if present:
            text = (f"The terminal is {width}×{height}; presentation mode (P) needs at least "
                    f"{need_width}×{need_height}.\n\nPress P to leave it, enlarge the window (or make "
                    f"the font smaller), or press q to quit.")
        else:
            text = (f"The terminal is {width}×{height}; ringsim needs at least "
                    f"{need_width}×{need_height}.\n\nEnlarge the window (or make the font smaller), "
                    f"or press q to quit.")
        self.update(Content(text))
