"""The lesson panel beside the simulator: a lesson's text, section by section, moving the simulation."""

from __future__ import annotations

from rich.markdown import Markdown
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import Static


class LessonPanel(VerticalScroll, can_focus=True):
    """Reads the course from ringsim.lessons; `]`/`[` move between sections, `}`/`{` between lessons.

    It only posts SectionShown; the App switches to the lesson's scenario and its stop."""

    BINDINGS = [
        Binding("right_square_bracket", "section(1)", "Next section", key_display="]"),
        Binding("left_square_bracket", "section(-1)", "Prev section", key_display="["),
        Binding("right_curly_bracket", "lesson(1)", "Next lesson", key_display="}"),
        Binding("left_curly_bracket", "lesson(-1)", "Prev lesson", key_display="{"),
    ]

    class SectionShown(Message):
        """The reader moved to a section: show its lesson's scenario at the section's stop."""

        def __init__(self, lesson, section) -> None:
            super().__init__()
            self.lesson = lesson
            self.section = section

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.lessons: list = []
        self.lesson_index = 0
        self.section_index = 0

    def compose(self) -> ComposeResult:
        yield Static(id="lesson-head")
        yield Static(id="lesson-text")

    @property
    def lesson(self):
        """The lesson shown."""
        return self.lessons[self.lesson_index]

    @property
    def section(self):
        """The section shown."""
        return self.lesson.sections()[self.section_index]

    def load(self, lessons: list, lesson_index: int = 0) -> None:
        """Take the course and show the first section of one lesson."""
        self.lessons = lessons
        self.show(lesson_index, 0)

    def show(self, lesson_index: int, section_index: int) -> None:
        """Show a section and tell the App (which moves the simulation to its stop)."""
        self.lesson_index, self.section_index = lesson_index, section_index
        lesson, section = self.lesson, self.section
        count = len(lesson.sections())
        self.border_title = f"Lesson {lesson.number} of {len(self.lessons)}"
        self.border_subtitle = f"section {section_index + 1} of {count} · [ ] sections · {{ }} lessons"
        where = f"simulation at step {section.stop}" if section.stop is not None else "no simulation stop"
        self.query_one("#lesson-head", Static).update(f"[b]{lesson.title}[/b]\n[dim]{where}[/dim]")
        text = section.text
        if section.questions:
            text += "\n\n" + "\n".join(f"> **Think:** {q.prompt}" for q in section.questions)
        self.query_one("#lesson-text", Static).update(Markdown(text))
        self.scroll_home(animate=False)
        self.post_message(self.SectionShown(lesson, section))

    def action_section(self, change: int) -> None:
        """Next or previous section, across lesson boundaries."""
        section = self.section_index + change
        if 0 <= section < len(self.lesson.sections()):
            self.show(self.lesson_index, section)
        elif change > 0 and self.lesson_index + 1 < len(self.lessons):
            self.show(self.lesson_index + 1, 0)
        elif change < 0 and self.lesson_index > 0:
            previous = self.lessons[self.lesson_index - 1]
            self.show(self.lesson_index - 1, len(previous.sections()) - 1)
        else:
            self.notify("That is the end of the course." if change > 0 else "That is the first section.",
                        severity="information")

    def action_lesson(self, change: int) -> None:
        """Next or previous lesson, from its first section."""
        index = self.lesson_index + change
        if 0 <= index < len(self.lessons):
            self.show(index, 0)
        else:
            self.notify(f"The course has lessons 1 to {len(self.lessons)}.", severity="information")
