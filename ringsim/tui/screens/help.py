"""The key help, a modal screen over the simulator (`?`)."""

from __future__ import annotations

from rich.table import Table
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static

KEYS = [
    ("→  n", "next iteration"),
    ("←  p", "back one iteration"),
    ("space", "play / pause (autoplay)"),
    ("+  -", "faster / slower autoplay"),
    ("r", "reset to the start"),
    ("a", "next algorithm: ring → master → naive"),
    ("g  G", "fewer / more GPUs (1 to 64; beyond 8 a heat map)"),
    ("e  E", "fewer / more elements per GPU (0 to 4,096)"),
    ("v", "labels (a₁+b₁) / numbers in the cells"),
    ("P", "presentation mode: large, high-contrast cells"),
    ("l", "lesson panel: read a lesson beside the simulator"),
    ("]  [", "(lesson panel) next / previous section: the simulator moves to its stop"),
    ("}  {", "(lesson panel) next / previous lesson"),
    ("?", "this help"),
    ("q", "quit"),
]


class HelpScreen(ModalScreen[None]):
    """Every key and what it does; any of escape, ? or q closes it."""

    BINDINGS = [Binding("escape,question_mark,q", "close", "Close")]

    def compose(self) -> ComposeResult:
        table = Table.grid(padding=(0, 2))
        table.add_column(style="bold yellow")
        table.add_column()
        for keys, what in KEYS:
            table.add_row(keys, what)
        with Vertical(id="help-box") as box:
            box.border_title = "ringsim keys"
            box.border_subtitle = "escape or ? to close"
            yield Static(table)

    def action_close(self) -> None:
        self.dismiss()
