"""The lesson panel beside the simulator: a lesson's text, section by section, moving the
simulation; its questions are answered (or revealed) in an Input, as in `ringsim lesson`."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.content import Content
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.widgets import Button, Input, Static

from .lesson_markdown import LessonMarkdown


def split_heading(text: str) -> tuple[str, str]:
    """A section's first Markdown heading line ('# Why GPUs must talk') and the text after it;
    ('', text) when it does not start with a heading. The panel shows the heading once, in its
    head line, instead of as Rich's boxed title several rows tall."""
    first, _, rest = text.lstrip("\n").partition("\n")
    if first.startswith("#"):
        return first.lstrip("#").strip(), rest.lstrip("\n")
    return "", text


def full_stop(text: object) -> str:
    """The text as a sentence: a full stop added only when it does not end with one already."""
    text = str(text).rstrip()
    return text if text.endswith((".", "!", "?", "…")) else text + "."


class LessonPanel(Vertical, can_focus=True):
    """Reads the course from ringsim.lessons; `]`/`[` move between sections, `}`/`{` between lessons.

    It only posts SectionShown; the App switches to the lesson's scenario and its stop. A
    section's questions are asked one at a time: Enter moves into the answer field, where
    Enter checks the reply (a wrong one gets the reason) or, left empty, shows the answer."""

    # Only Answer in the footer (80 columns hold it and the simulator's keys); the border
    # names ] [ } {, and the help screen lists them all.
    SECTIONS = Binding.Group("sections")
    LESSONS = Binding.Group("lessons")
    SCROLL = Binding.Group("scroll")
    BINDINGS = [
        Binding("right_square_bracket", "section(1)", "Next section", key_display="]", show=False,
                group=SECTIONS, tooltip="next section: the simulator moves to its stop"),
        Binding("left_square_bracket", "section(-1)", "Prev section", key_display="[", show=False,
                group=SECTIONS, tooltip="previous"),
        Binding("right_curly_bracket", "lesson(1)", "Next lesson", key_display="}", show=False,
                group=LESSONS, tooltip="next lesson"),
        Binding("left_curly_bracket", "lesson(-1)", "Prev lesson", key_display="{", show=False,
                group=LESSONS, tooltip="previous lesson"),
        Binding("enter", "answer", "Answer",
                tooltip="answer: type, then Enter (empty: show the answer)"),
        Binding("escape", "leave", "Leave the answer field",
                tooltip="leave the answer field: the simulator's keys work again"),
        Binding("f", "full_width", "Full width", show=False,
                tooltip="the section at the terminal's full width (tables wider than the panel)"),
        # The text scrolls above the question; the panel has the keys, so it passes them on.
        Binding("down", "scroll('down')", "Scroll down", show=False, group=SCROLL,
                tooltip="scroll the lesson's text"),
        Binding("up", "scroll('up')", "Scroll up", show=False, group=SCROLL),
        Binding("pagedown", "scroll('page_down')", "Page down", show=False, group=SCROLL),
        Binding("pageup", "scroll('page_up')", "Page up", show=False, group=SCROLL),
        Binding("home", "scroll('home')", "Top", show=False, group=SCROLL),
        Binding("end", "scroll('end')", "Bottom", show=False, group=SCROLL),
    ]

    class SectionShown(Message):
        """The reader moved to a section: show its lesson's scenario at the section's stop."""

        def __init__(self, lesson, section) -> None:
            super().__init__()
            self.lesson = lesson
            self.section = section

    class FullWidth(Message):
        """The reader asked for the section at the terminal's full width (key f): its parts
        (title, head line, Markdown text) and the question being asked."""

        def __init__(self, parts: tuple[str, Text, str], question: Text) -> None:
            super().__init__()
            self.parts = parts
            self.question = question

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.lessons: list = []
        self.lesson_index = 0
        self.section_index = 0
        self.question_index = 0  # the section's question being asked (past the last: none)
        self.right = 0
        self.asked = 0

    def compose(self) -> ComposeResult:
        """Lay out the lesson text above its question, answer field and reply."""
        with VerticalScroll(id="lesson-body", can_focus=False):
            yield Static(id="lesson-head")
            yield Static(id="lesson-text")
        # The question, its answer field and the reply below the text, outside its scrolling:
        # a short terminal shows the question while the text above it scrolls.
        with Vertical(id="lesson-ask"):
            yield Static(id="lesson-question")
            with Horizontal(id="lesson-answer"):
                yield Input(placeholder="answer, then Enter (empty: show it)", compact=True,
                            id="lesson-input")
                yield Button("Show", compact=True, id="lesson-show")
            yield Static(id="lesson-reply")

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
        title, head, body = self.parts()
        # Content, not markup: a title's or a key's brackets show as written.
        self.border_title = Content(title)
        self.border_subtitle = Content(f"section {section_index + 1} of {count} · [ ] sections · {{ }} lessons")
        self.query_one("#lesson-head", Static).update(head)
        self.query_one("#lesson-text", Static).update(LessonMarkdown(body))
        self.query_one("#lesson-reply", Static).update("")
        self._replied = False
        self.ask(0)
        self.query_one("#lesson-body").scroll_home(animate=False)
        self.post_message(self.SectionShown(lesson, section))

    def place(self) -> tuple[int, int]:
        """The lesson and the section shown: a notice about them goes when the reader moves on."""
        return self.lesson_index, self.section_index

    def parts(self) -> tuple[str, Text, str]:
        """The section shown: its lesson's title, its head line and its Markdown text."""
        lesson, section = self.lesson, self.section
        where = f"step {section.stop}" if section.stop is not None else "no simulation stop"
        heading, body = split_heading(section.text)
        # Text, not markup: a heading's brackets are shown as written.
        head = Text.assemble((heading or lesson.title, "bold"), (f" · {where}", "dim"))
        return f"Lesson {lesson.number} of {len(self.lessons)}: {lesson.title}", head, body

    @property
    def question(self):
        """The question being asked, or None when the section has no more."""
        questions = self.section.questions
        return questions[self.question_index] if self.question_index < len(questions) else None

    def question_text(self) -> Text:
        """'Question 1 of 2: …' for the question being asked; empty when none is."""
        question, count = self.question, len(self.section.questions)
        if question is None:
            return Text()
        return Text.assemble((f"Question{f' {self.question_index + 1} of {count}' if count > 1 else ''}: ",
                              "bold"), question.prompt)

    def ask(self, index: int) -> None:
        """Show the section's question `index` with the answer field (none left: hide it)."""
        self.question_index = index
        question = self.question
        self.query_one("#lesson-question", Static).update(self.question_text())
        self.query_one("#lesson-answer").set_class(question is not None, "-asking")
        self._show_ask()
        self.query_one("#lesson-input", Input).value = ""

    _replied = False  # a reply is shown below the question

    def _show_ask(self) -> None:
        """The bottom area only while it holds a question or a reply (else the text has the room)."""
        self.query_one("#lesson-ask").set_class(self.question is not None or self._replied, "-shown")
        self.query_one("#lesson-reply").display = self._replied

    def reply(self, text: str) -> str:
        """Check a reply to the question asked (empty: show the answer); then ask the next."""
        question = self.question
        if question is None:
            return ""
        # Text, not markup: an answer or an expression such as held[3][1] is shown as written.
        slip = question.unreadable(text)  # a slip, not an answer: the question stays open
        if slip:
            verdict = Text("The answer is a number: type it, or Enter with nothing to see it.")
        elif not text.strip():
            verdict = Text(f"Answer: {full_stop(question.answer)}")
        else:
            self.asked += 1
            if question.check(text):
                self.right += 1
                verdict = Text.assemble(("Right:", "green"), f" {full_stop(question.answer)}")
            else:
                verdict = Text.assemble(("Not quite:", "yellow"), f" {full_stop(question.explain())}")
        self.query_one("#lesson-reply", Static).update(verdict)
        self._replied = True
        if slip:
            self._show_ask()  # the same question, its field cleared for the number
            self.query_one("#lesson-input", Input).value = ""
        else:
            self.ask(self.question_index + 1)
            if self.question is None:
                self.focus()
        return verdict.plain

    def action_scroll(self, how: str) -> None:
        """Scroll the lesson's text (the question below it stays in view)."""
        getattr(self.query_one("#lesson-body"), f"scroll_{how}")(animate=False)

    def action_full_width(self) -> None:
        """Show the section at the terminal's full width, over the simulator (the App opens
        the page: a widget holds no screen)."""
        self.post_message(self.FullWidth(self.parts(), self.question_text()))

    def action_answer(self) -> None:
        """Move into the answer field (when a question is asked)."""
        if self.question is None:
            self.app.notify("This section asks no question: ] goes on.", about=self.place)
            return
        self.query_one("#lesson-input", Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        """Take the typed answer."""
        event.stop()
        self.reply(event.value)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        """Show the answer (the Show button is an empty reply)."""
        event.stop()
        self.reply("")

    def action_leave(self) -> None:
        """Out of the answer field: the keys go to the panel (] [ } {) and the simulator again."""
        self.focus()

    def check_action(self, action: str, parameters: tuple) -> bool | None:
        """Offer `leave` only while the answer field has the focus."""
        # While typing an answer the footer shows how to stop; otherwise `leave` is hidden.
        if action == "leave":
            return isinstance(self.app.focused, Input)
        return True

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
            self.app.notify("That is the end of the course." if change > 0
                            else "That is the first section.", about=self.place)

    def action_lesson(self, change: int) -> None:
        """Next or previous lesson, from its first section."""
        index = self.lesson_index + change
        if 0 <= index < len(self.lessons):
            self.show(index, 0)
        else:
            self.notify(f"The course has lessons 1 to {len(self.lessons)}.", severity="information")
