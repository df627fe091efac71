"""Finding, loading and checking lesson files: the course's folder, each file read
(read.py) and its placeholders and answers computed, every problem kept.

Every problem is reported as 'file:line: reason'. load_lessons() raises the first one;
check_lessons() collects them all for `ringsim lesson --check`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path

from ..core.errors import RingsimError
from ..core.files import check_path_text
from ..core.textout import clip
from .budget import MAX_LESSON_FILES, Budget, OverBudget
from .model import Lesson, Outline, Question, Scenario, Section
from .placeholders import PLACEHOLDER, Context, parse
from .read import Draft, read_lesson
from .text import clean, plural

LESSON_FILE = re.compile(r"^(\d+)[-_ .].*\.md$|^(\d+)\.md$")
MAX_REASON = 300  # an error line stays one readable line whatever the file holds


def default_directory() -> Path:
    """The shipped course: ringsim/_lessons in an installed wheel, <repo>/lessons in a checkout."""
    package = Path(__file__).resolve().parent.parent
    shipped = package / "_lessons"
    return shipped if shipped.is_dir() else package.parent / "lessons"


@dataclass
class Problem:
    """One thing wrong with a lesson file, where it is."""

    path: Path
    line: int
    reason: str

    def __str__(self) -> str:
        reason = clean(self.reason)
        if len(reason) > MAX_REASON:
            reason = reason[:MAX_REASON - 1] + "…"
        return f"{clean(str(self.path))}:{self.line}: {reason}"


class _Refused(Exception):
    """A problem that stops reading the rest of a file."""


class CheckStopped(RingsimError):
    """The whole check's work budget ran out at `problem`: nothing after it is checked."""

    def __init__(self, problem: Problem) -> None:
        super().__init__(str(problem))
        self.problem = problem


def lesson_number(path: Path) -> int:
    """The lesson number a file's name starts with (01-intro.md is lesson 1)."""
    return int(re.match(r"\d+", path.name).group())


def lesson_files(directory: Path) -> list[Path]:
    """The lesson files of a folder: Markdown files whose name starts with a number."""
    return sorted((p for p in directory.iterdir() if p.is_file() and LESSON_FILE.match(p.name)),
                  key=lambda p: (lesson_number(p), p.name))


def _folder_files(directory: str | Path | None) -> list[Path]:
    """The lesson files of a folder (the shipped course by default); an error when there are none."""
    folder = default_directory() if directory is None else \
        Path(check_path_text(directory, "the lessons folder"))
    if not folder.is_dir():
        if folder.exists():
            # one lesson file given where its folder is wanted: say how to run it
            raise RingsimError(f"{clean(str(folder))} is not a folder: give the folder that holds "
                               "the lesson files")
        raise RingsimError(f"{clean(str(folder))}: no such lessons folder")
    files = lesson_files(folder)
    if not files:
        # a lesson's name on a folder, a FIFO or a device: say so, rather than "no files"
        odd = next((p for p in folder.iterdir() if LESSON_FILE.match(p.name)), None)
        if odd is not None:
            raise RingsimError(f"{clean(str(folder))}: {clean(odd.name)} is not a regular file; a "
                               "lesson is a Markdown file (names like 01-intro.md)")
        raise RingsimError(f"{clean(str(folder))}: no lesson files (expected names like 01-intro.md)")
    if len(files) > MAX_LESSON_FILES:
        raise RingsimError(f"{clean(str(folder))}: {len(files):,} lesson files; a course has at "
                           f"most {MAX_LESSON_FILES} (split it into folders of fewer lessons)")
    return files


def check_lessons(directory: str | Path | None = None, *, gpus: int | None = None,
                  elements: int | None = None) -> tuple[list[Lesson], list[Problem]]:
    """Load every lesson of a folder; return the good lessons and every problem found.

    gpus and elements, when given, replace every lesson's G and N (its text follows them).
    The whole check shares one work budget (ringsim.lessons.budget).
    """
    files = _folder_files(directory)
    lessons, problems, numbers = [], [], {}
    budget = Budget()
    for index, path in enumerate(files):
        found: list[Problem] = []
        try:
            lesson = load_lesson(path, found, budget=budget, gpus=gpus, elements=elements)
        except CheckStopped as stopped:
            # One line where the budget ran out, not one per figure left: the rest is unchecked.
            rest = len(files) - index - 1
            problems.extend(found)
            problems.append(replace(stopped.problem, reason=stopped.problem.reason + (
                f"; the check stops here, {plural(rest, 'lesson file')} after it unchecked"
                if rest else "; the check stops here")))
            break
        problems.extend(found)
        if lesson is None:
            continue
        if lesson.number in numbers:
            problems.append(Problem(path, 1, f"lesson number {lesson.number} is already used by "
                                             f"{clean(numbers[lesson.number].name)}"))
            continue
        numbers[lesson.number] = path
        lessons.append(lesson)
    return sorted(lessons, key=lambda l: l.number), problems


def load_numbered(number: int, directory: str | Path | None = None, *, gpus: int | None = None,
                  elements: int | None = None) -> Lesson:
    """Lesson `number` of a folder, loaded alone (a run on another G and N computes only it)."""
    every = _folder_files(directory)
    files = [p for p in every if lesson_number(p) == number]
    if not files:
        numbers = ", ".join(str(lesson_number(p)) for p in every)
        raise RingsimError(f"there is no lesson {number}; the lessons are {numbers}")
    if len(files) > 1:
        raise RingsimError(f"{clean(str(files[1]))}:1: lesson number {number} is already used by "
                           f"{clean(files[0].name)}")
    problems: list[Problem] = []
    try:
        lesson = load_lesson(files[0], problems, budget=Budget(), gpus=gpus, elements=elements)
    except CheckStopped as stopped:
        raise RingsimError(str(stopped.problem)) from None
    if lesson is None:
        raise RingsimError(str(problems[0]))
    return lesson


def load_lessons(directory: str | Path | None = None, *, gpus: int | None = None,
                 elements: int | None = None) -> list[Lesson]:
    """The lessons of a folder (the shipped course by default), sorted by number.

    gpus and elements, when given, run every lesson on that G and N instead of its own.
    Raises RingsimError 'file:line: reason' for the first malformed file.
    """
    lessons, problems = check_lessons(directory, gpus=gpus, elements=elements)
    if problems:
        raise RingsimError(str(problems[0]))
    return lessons


def load_lesson(path: Path, problems: list[Problem], *, budget: Budget | None = None,
                gpus: int | None = None, elements: int | None = None) -> Lesson | None:
    """One lesson file; problems found are appended (None when the file cannot be used).

    Everything read from the file is stripped of control characters before use, so no
    title or text can drive the reader's terminal.
    """
    def refuse(line: int, reason: str):
        problems.append(Problem(path, line, reason))
        raise _Refused
    try:
        title, scenario, stops, drafts = read_lesson(path, refuse, gpus, elements)
    except _Refused:
        return None
    number = lesson_number(path)
    sections = _fill(drafts, scenario, path, problems, budget)
    if sections is None:
        return None
    return Lesson(number, title, path, scenario, stops, sections)


def outline_lessons(directory: str | Path | None = None, *, gpus: int | None = None,
                    elements: int | None = None) -> list[Outline]:
    """The course list: each lesson's title, scenario, parts and questions, sorted by number.

    Reads the files' structure (front matter, stops, questions) and computes no placeholder,
    so listing the course stays as quick as any simple command; `check_lessons` computes
    every figure. Raises RingsimError 'file:line: reason' for the first malformed file.
    """
    files = _folder_files(directory)
    outlines, numbers = [], {}
    for path in files:
        def refuse(line: int, reason: str, path=path):
            raise RingsimError(str(Problem(path, line, reason)))
        number = lesson_number(path)
        if number in numbers:
            refuse(1, f"lesson number {number} is already used by {clean(numbers[number].name)}")
        numbers[number] = path
        title, scenario, _, drafts = read_lesson(path, refuse, gpus, elements)
        parts = sum(1 for d in drafts if d.stop is not None or d.questions
                    or any(line.strip() for _, line in d.lines))
        outlines.append(Outline(number, title, path, scenario, parts,
                                sum(len(d.questions) for d in drafts)))
    return sorted(outlines, key=lambda o: o.number)




def _fill(drafts: list[Draft], scenario: Scenario, path: Path,
          problems: list[Problem], budget: Budget | None = None) -> list[Section] | None:
    """Evaluate every placeholder and answer; None (problems appended) if any fails."""
    context = Context(scenario, budget)
    count = len(problems)

    def resolve(text: str, number: int, position: int | None) -> str:
        if "{{" in text and "{{" in PLACEHOLDER.sub("", text):
            problems.append(Problem(path, number, "a placeholder is not closed with '}}'"))

        def one(match: re.Match) -> str:
            try:
                return context.evaluate(parse(match.group(1)), position)
            except OverBudget as error:
                raise CheckStopped(Problem(path, number, f"{{{{{clip(match.group(1).strip())}}}}}: "
                                                         f"{error}")) from None
            except RingsimError as error:
                problems.append(Problem(path, number, f"{{{{{clip(match.group(1).strip())}}}}}: {error}"))
                return match.group(0)
        return PLACEHOLDER.sub(one, text)

    sections = []
    for draft in drafts:
        text = "\n".join(resolve(line, number, draft.stop) for number, line in draft.lines)
        questions = [_question(q, resolve, context, draft.stop, path, problems)
                     for q in draft.questions]
        text = text.strip("\n")
        if not text.strip() and not questions and draft.stop is None:
            continue
        sections.append(Section(draft.stop, text, [q for q in questions if q], draft.line))
    return sections if len(problems) == count else None


def _question(block, resolve, context: Context, stop: int | None, path: Path,
              problems: list[Problem]) -> Question | None:
    """A ```question block: the prompt's lines, then 'answer: <engine expression>'."""
    start, lines = block
    prompt, answer = [], None
    for number, line in lines:
        key, colon, value = line.strip().partition(":")
        if colon and key.strip().lower() == "answer":
            if answer is not None:
                problems.append(Problem(path, number, "a question has one 'answer:' line"))
                return None
            answer = (number, value.strip())
        elif line.strip():
            prompt.append(resolve(line.strip(), number, stop))
    if not prompt:
        problems.append(Problem(path, start, "the question block has no question text"))
        return None
    if answer is None or not answer[1]:
        problems.append(Problem(path, start, "the question has no 'answer: <expression>' line "
                                             "(an engine expression such as sent[3])"))
        return None
    number, expression = answer
    expression = expression.strip().removeprefix("{{").removesuffix("}}").strip()
    arithmetic = expression.startswith("=") and re.search(r"\b[GN]\b", expression)
    if re.fullmatch(r"[-+\d.,\s]+", expression) or not (expression[:1].isalpha() or arithmetic):
        problems.append(Problem(path, number, f"answer {clip(expression)!r} is typed by hand: write an "
                                              f"engine expression such as sent[3] or ledger.total"))
        return None
    try:
        parsed = parse(expression)
        value = context.evaluate(parsed, stop)
        why = context.explain(parsed, stop, value)
    except OverBudget as error:
        raise CheckStopped(Problem(path, number, f"answer {clip(expression)!r}: {error}")) from None
    except RingsimError as error:
        problems.append(Problem(path, number, f"answer {clip(expression)!r}: {error}"))
        return None
    return Question(" ".join(prompt), value, expression, start, why)
