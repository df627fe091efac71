"""One lesson section at the terminal's full width, over the simulator (key f in the lesson
panel): for the tables and figures that are wider than the panel beside the GPUs."""

from __future__ import annotations

from rich.markdown import Markdown
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static


class LessonPage(ModalScreen[None]):
    """A section's heading and text, wrapped to the terminal; escape, f or q closes it."""

    BINDINGS = [Binding("escape,f,q", "close", "Close")]

    def __init__(self, title: str, heading: Text, body: str) -> None:
        super().__init__()
        self.title_text, self.heading, self.body = title, heading, body

    def compose(self) -> ComposeResult:
        """The section in one scrolling box, its lesson's title on the border."""
        with VerticalScroll(id="lesson-page") as box:
            # Content, not markup: a lesson's title shows its brackets as written.
            box.border_title = Content(self.title_text)
            box.border_subtitle = "↓ pgdn end: more · escape or f to close"
            yield Static(self.heading, id="lesson-page-head")
            yield Static(Markdown(self.body))

    def action_close(self) -> None:
        """Back to the simulator and the lesson panel."""
        self.dismiss()
