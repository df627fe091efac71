"""The legend under the GPU panels: the marks of a cell, in the longest wording that fits."""

from __future__ import annotations

from rich.cells import cell_len
from textual.content import Content
from textual.widgets import Static

# Longest first. The shorter ones drop spacing, then the `v` hint, so that a narrow column
# (the sweep plot or a lesson beside the simulator) never cuts a mark's meaning in half.
WORDINGS = (
    "→ sent to   ← received from (+ added, = replaced)   ⇄ both   ✓ complete sum   v: numbers",
    "→ sent ← received (+ added, = replaced) ⇄ both ✓ complete sum v: numbers",
    "→ sent ← received (+ added, = replaced) ⇄ both ✓ complete sum",
)
EDGE = WORDINGS[1]  # short terminals: in the transfer box's bottom edge, no row of its own


class Legend(Static):
    """The marks' legend, worded to fit the width it is given."""

    def __init__(self, **kwargs) -> None:
        super().__init__(Content(WORDINGS[0]), **kwargs)

    def on_resize(self) -> None:
        width = self.content_region.width
        words = next((w for w in WORDINGS if cell_len(w) <= width), WORDINGS[-1])
        if str(self.content) != words:
            self.update(Content(words))
