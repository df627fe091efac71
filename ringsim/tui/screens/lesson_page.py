"""One lesson section at the terminal's full width, over the simulator (key f in the lesson
panel): for the tables and figures that are wider than the panel beside the GPUs."""

from __future__ import annotations

from rich.markdown import Markdown
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.content import Content
from textual.widgets import Static

from .scrolling_modal import ScrollingModal


class LessonPage(ScrollingModal):
    """A section's heading, text and open question, wrapped to the terminal; escape, f or q
    closes it (the question is answered in the panel, which keeps the answer field)."""

    BINDINGS = [Binding("escape,f,q", "close", "Close")]
    BOX, CLOSE = "lesson-page", "escape or f to close"

    def __init__(self, title: str, heading: Text, body: str, question: Text | None = None) -> None:
        super().__init__()
        self.title_text, self.heading, self.body, self.question = title, heading, body, question

    def compose(self) -> ComposeResult:
        """The section in one scrolling box, its lesson's title on the border."""
        with VerticalScroll(id="lesson-page") as box:
            # Content, not markup: a lesson's title shows its brackets as written.
            box.border_title = Content(self.title_text)
            box.border_subtitle = self.CLOSE
            yield Static(self.heading, id="lesson-page-head")
            yield Static(Markdown(self.body))
            if self.question is not None and self.question.plain:
                yield Static(Text.assemble(self.question, ("  (answer it in the lesson panel: "
                                                           "escape, then Enter)", "dim")),
                             id="lesson-page-question")

    def action_close(self) -> None:
        """Back to the simulator and the lesson panel."""
        self.dismiss()
