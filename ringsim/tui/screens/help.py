"""The key help, a modal screen over the simulator (`?`), built from the bindings themselves.

As posting's help screen does: the screen is handed the bindings it shows, and every row
comes from a Binding (its keys as the App shows them, its tooltip as the text), so the help
cannot drift from the keys that really work."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import ScrollableContainer, VerticalScroll
from textual.widgets import Static

from ..widgets.lesson_panel import LessonPanel
from .scrolling_modal import ScrollingModal


# The scrolling keys every box of the simulator takes (Textual's ScrollableContainer), in the
# order a reader tries them; the lesson panel passes the same keys to its text.
SCROLL_ACTIONS = ("scroll_down", "scroll_up", "page_down", "page_up", "scroll_home", "scroll_end")
SCROLL_TEXT = ("scroll the box that has the keys (at the start, the GPU view); tab / shift+tab "
               "give them to the next box: this iteration, the counters, the lesson")


def scroll_row(app) -> tuple[str, str]:
    """('↓  ↑  pgdn  pgup  home  end', what they do), read off ScrollableContainer's bindings."""
    bindings = {b.action: b for b in Binding.make_bindings(ScrollableContainer.BINDINGS)}
    return "  ".join(app.get_key_display(bindings[a]) for a in SCROLL_ACTIONS), SCROLL_TEXT


def help_rows(app, bindings: list[BindingType]) -> list[tuple[str, str]]:
    """(keys, what they do) per action, or per group of bindings ('g  G', 'one GPU fewer / …')."""
    rows: dict[object, tuple[list[str], list[str]]] = {}
    for binding in Binding.make_bindings(bindings):
        keys, texts = rows.setdefault(binding.group or binding.action, ([], []))
        key = app.get_key_display(binding)
        if key not in keys:
            keys.append(key)
        text = binding.tooltip or binding.description
        if text not in texts:
            texts.append(text)
    return [("  ".join(keys), " / ".join(texts)) for keys, texts in rows.values()]


# The marks the view draws that no key or legend names.
MARKS = (("↑  ↓", "under each GPU: the elements it has sent and received so far (in the "
                  "counters, the busiest GPU's)"),)
KEYS_WIDTH = 13  # the key column wraps its longest rows (the scrolling keys) past this


class HelpScreen(ScrollingModal):
    """Every key of the simulator and of the lesson panel; escape, ? or q closes it."""

    BINDINGS = [Binding("escape,question_mark,q", "close", "Close")]
    BOX, CLOSE = "help-box", "escape or ? to close"

    def __init__(self, bindings: list[BindingType]) -> None:
        super().__init__()
        self.simulator_bindings = bindings  # shown above the lesson panel's keys

    def compose(self) -> ComposeResult:
        """Build the table of keys: the simulator's, scrolling, then the lesson panel's."""
        table = Table.grid(padding=(0, 2))
        table.add_column(style="bold yellow", max_width=KEYS_WIDTH)
        table.add_column(overflow="fold")
        # Text, not markup: keys such as [ and ] and tooltips with brackets show as written.
        for keys, what in help_rows(self.app, self.simulator_bindings):
            table.add_row(Text(keys), Text(what))
        table.add_row(*map(Text, scroll_row(self.app)))
        table.add_row("", Text("In the lesson panel (key l)", style="bold"))
        scrolling = {b.action for b in Binding.make_bindings(LessonPanel.BINDINGS)
                     if b.group is LessonPanel.SCROLL}
        lesson_keys = [b for b in Binding.make_bindings(LessonPanel.BINDINGS) if b.action not in scrolling]
        for keys, what in help_rows(self.app, lesson_keys):
            table.add_row(Text(keys), Text(what))
        table.add_row("", Text("On the screen", style="bold"))
        for marks, what in MARKS:
            table.add_row(Text(marks), Text(what))
        with VerticalScroll(id="help-box") as box:
            box.border_title = "ringsim keys"
            box.border_subtitle = self.CLOSE
            yield Static(table)

    def action_close(self) -> None:
        """Close the help screen."""
        self.dismiss()
