"""Running a lesson in the terminal: text, the simulator's state at each stop, questions."""

from __future__ import annotations

from typing import Callable, TextIO

from ..core.textout import ascii_form, can_encode
from ..core.width import output_width, table, wrap as fit
from ..sim.simulation import Simulation
from .model import Lesson, Question, Section
from .narrow import fitted
from .text import plain, plural, wrap
from .vocabulary import title_text

RULE = "─"
GRID_MAX_GPUS = 8  # wider grids do not fit a terminal; past it, one line of counts
WIDTH = 80         # the most common terminal: every line the runner draws fits in it


def width_for(out: TextIO) -> int:
    """The columns the runner fills on `out`: WIDTH, or a narrower terminal's width."""
    limit = output_width(out)
    return WIDTH if limit is None else min(WIDTH, limit)


def state_lines(sim: Simulation, max_terms: int = 4, width: int = WIDTH) -> list[str]:
    """What every GPU holds now, one row per GPU, segment by segment ('GPU1  a₁ │ d₄+a₄').

    When the labels would not fit `width` columns, each cell shows how many GPUs' copies it
    has summed, ✓ when it holds the complete sum.
    """
    if sim.symbolic is None:
        return []
    g = sim.plan.gpus
    segs = sim.plan.segments  # S: a tree's chunks, a ring's G
    if g > GRID_MAX_GPUS or segs > GRID_MAX_GPUS:
        complete = [sum(sim.symbolic.is_complete(gpu, j) for j in range(segs)) for gpu in range(g)]
        return [f"  complete segments per GPU (of {segs}): " + ", ".join(map(str, complete))]
    labels = [[sim.symbolic.label(gpu, j, max_terms=max_terms) for j in range(segs)] for gpu in range(g)]
    rows = _grid(labels, g)
    if max(map(len, rows)) <= width:
        return rows
    counts = [["✓" if sim.symbolic.is_complete(gpu, j) else str(len(sim.symbolic.contributors(gpu, j)))
               for j in range(segs)] for gpu in range(g)]
    return [f"  (copies summed in each segment, ✓ = the complete sum of all {g})"] + _grid(counts, g)


def _grid(cells: list[list[str]], g: int) -> list[str]:
    widths = [max(len(row[j]) for row in cells) for j in range(len(cells[0]))]
    name = len(f"GPU{g}")
    return [f"  GPU{gpu + 1:<{name - 3}}  " + " │ ".join(f"{cell:<{w}}" for cell, w in zip(row, widths))
            .rstrip() for gpu, row in enumerate(cells)]


def meter(sim: Simulation) -> str:
    """Total and busiest-GPU traffic so far: the two numbers the course follows at every stop."""
    from ..core.formula import format_number as n
    ledger = sim.ledger()
    busiest = ledger.busiest()
    return (f"  moved so far: {n(ledger.total)} in all · busiest GPU{busiest + 1}: "
            f"sent {n(ledger.sent[busiest])}, received {n(ledger.received[busiest])}")


def listing(lessons) -> list[str]:
    """One line per lesson: number, title, scenario, how many parts and questions.

    Takes loaded lessons or their outlines (`ringsim.lessons.outline_lessons`): both have
    number, title, scenario, parts and question_count.
    """
    rows = [(str(l.number), l.title, f"{l.scenario.algorithm}, G={l.scenario.gpus}, "
             f"N={l.scenario.elements}, {plural(l.parts, 'part')}, "
             f"{plural(l.question_count, 'question')}") for l in lessons]
    return table(rows, head=0, keys=2, left=(1,), free=True, minimum=(3,), rule="")


def shown(text: str, out: TextIO) -> str:
    """`text` as `out` will show it: its ASCII forms where `out` cannot encode it ('→' is '->'),
    so that lines are filled to the width they will really take."""
    return text if can_encode(out, text) else ascii_form(text)


def markdown_printer(out: TextIO, rich: bool) -> Callable[[str], None]:
    """How section text reaches the reader: Rich Markdown on a terminal, plain text otherwise."""
    # A narrow terminal gets the code blocks (tables, lines of figures) laid out to its width.
    width = width_for(out)
    if not rich:
        return lambda text: print(plain(fitted(shown(text, out), width), width), file=out, flush=True)
    from rich.console import Console
    from rich.markdown import Markdown
    console = Console(file=out, highlight=False, emoji=False, markup=False)
    return lambda text: console.print(Markdown(fitted(text, width), code_theme="ansi_dark",
                                               hyperlinks=False))


class Runner:
    """Prints a lesson section by section; waits for Enter and asks questions when interactive.

    A question is asked in the section it is written in, before the next stop shows the
    board that answers it (predict, then reveal).
    """

    def __init__(self, lesson: Lesson, out: TextIO, inp: TextIO | None, xp=None,
                 rich: bool = False) -> None:
        self.lesson, self.out, self.inp = lesson, out, inp
        self.sim = lesson.scenario.simulation(xp)
        self.markdown = markdown_printer(out, rich)
        self.right = 0
        self.asked = 0
        self.shown: int | None = None  # the position whose board was printed last

    def say(self, text: str = "") -> None:
        """Print `text` (a blank line by default), wrapped to the output's width."""
        print(fit(text, stream=self.out), file=self.out, flush=True)

    def note(self, text: str) -> None:
        """A line of the runner's own ('Question: …', 'Why: …'), filled to 80 columns or the
        terminal's narrower width."""
        self.say(wrap(shown(text, self.out), width_for(self.out), "  "))

    def read(self, prompt: str) -> str | None:
        """A line from the learner, or None at end of input (then we stop waiting)."""
        if self.inp is None:
            return None
        self.out.write(prompt)
        self.out.flush()
        try:
            line = self.inp.readline()
        except (OSError, ValueError):  # stdin closed or unreadable: read no more
            line = ""
        if not line:
            self.inp = None
            self.say()
            return None
        return line.rstrip("\n")

    def run(self) -> int:
        """Run the whole lesson; returns 0 (also when the learner quits early with q)."""
        lesson = self.lesson
        self.say(f"Lesson {lesson.number} · {lesson.title}")
        self.say(f"Scenario: {title_text(lesson.scenario)}")
        sections = lesson.sections()
        for index, section in enumerate(sections):
            self.show(section)
            for question in section.questions:
                self.ask(question)
            if index + 1 < len(sections):
                reply = self.read("\n[Enter: continue · q: quit] ")
                if reply is not None and reply.strip().lower() in ("q", "quit"):
                    self.say("Stopped. Run it again any time.")
                    return 0
        if self.asked:
            self.say(f"\nEnd of lesson {lesson.number}: {self.right} of {self.asked} answers right.")
        else:
            self.say(f"\nEnd of lesson {lesson.number}.")
        return 0

    def show(self, section: Section) -> None:
        """Print one section: the board at its stop (once per stop), then its text."""
        self.say()
        # A lesson may stay at one stop for several sections (a recap after the last step):
        # the board is printed once, the later sections carry on below it.
        if section.stop is not None and section.stop != self.shown:
            self.shown = section.stop
            self.sim.goto(section.stop)
            where = f"after step {section.stop} of {len(self.sim.plan)}" if section.stop else "before step 1"
            self.say(f"{RULE * 3} {self.sim.banner} ({where}) {RULE * 3}")
            self.say("\n".join(state_lines(self.sim, width=width_for(self.out))))
            if section.stop:
                self.say(meter(self.sim))
            self.say()
        if section.text.strip():
            self.markdown(section.text)

    def ask(self, question: Question) -> None:
        """Ask `question`, read the learner's answer and say whether it is right, and why."""
        self.say()
        self.note(f"Question: {question.prompt}")
        if self.inp is None:
            self.say(f"Answer: {question.answer}")
            self.note(f"Why: {question.explain()}")
            return
        reply = self.read("Your answer (Enter to see it): ")
        while reply is not None and question.unreadable(reply):
            reply = self.read("The answer is a number: type it, or Enter to see it: ")
        if reply is None or not reply.strip():
            self.say(f"Answer: {question.answer}")
            self.note(f"Why: {question.explain()}")
            return
        self.asked += 1
        if question.check(reply):
            self.right += 1
            self.say(f"Right: {question.answer}.")
        else:
            self.say(f"Not quite: the engine says {question.answer}.")
            self.note(f"Why: {question.explain()}")


def run_lesson(lesson: Lesson, out: TextIO, inp: TextIO | None = None, xp=None, *,
               rich: bool = False) -> int:
    """Run a lesson (its simulation on array module xp, NumPy by default); with inp None it
    prints straight through, answers shown. rich=True renders the Markdown for a terminal."""
    return Runner(lesson, out, inp, xp, rich).run()


__all__ = ["listing", "markdown_printer", "meter", "run_lesson", "state_lines"]
