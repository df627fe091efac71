"""What a loaded lesson is: its scenario, its sections (text at a stop) and its questions."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from ..sim.scenario import Scenario  # noqa: F401  (a lesson's scenario; re-exported)


_SUBSCRIPTS = str.maketrans("₀₁₂₃₄₅₆₇₈₉", "0123456789")
# "How many times longer?" is answered 5, 5x, 5×, 5.0, "5 times" or "5 times longer":
# the words after the number say "a ratio" and nothing more, so they are dropped.
_TIMES = re.compile(r"([\d.]+)(?:x|×|times?(?:longer|slower|faster|more|aslong|asmuch)?|fold)")
# "35 elements", "35 each" or "1,875,000,000 bytes" for 35 or 1,875,000,000: words that name
# what is counted, not a different number, so they are dropped after a number.
_COUNTED = re.compile(r"([\d.]+)(?:elements?|each|bytes?|b|messages?|steps?|transfers?|segments?"
                      r"|gpus?|pergpu|elementseach)")
# "1.875 GB" or "1.9 GB" (as a lesson prints it) for 1,875,000,000 bytes: a decimal prefix
# scales the number, and the reply counts as right where the answer rounds to its digits.
_SCALED = re.compile(r"([\d.]+)([kmgt])b?")
_SCALE = {"k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12}


def _normalise(text: str) -> str:
    """A reply reduced to what matters for comparing: no case, spaces, commas, brackets or 'GPU'.

    Subscripts may be typed as plain digits (a1 for a₁), and the terms of a sum in any
    order (a sum does not depend on it), so 'a4 + d4' matches 'd₄+a₄'.
    """
    text = text.strip().lower().rstrip(".").translate(_SUBSCRIPTS)
    text = re.sub(r"[\s,_()]", "", text).removeprefix("gpu")
    if "+" in text:
        text = "+".join(sorted(text.split("+")))
    if ratio := _TIMES.fullmatch(text):
        text = ratio[1]
    return text


@dataclass(frozen=True)
class Question:
    """A question whose answer the engine computed (never typed in the lesson file)."""

    prompt: str
    answer: str
    expression: str = ""
    line: int = 0
    why: str = ""

    def unreadable(self, reply: str) -> bool:
        """True for a reply with no digit to a question whose answer is a number ('abc' for
        '24'): a slip to point out, not an answer to mark wrong."""
        wants_number = re.fullmatch(r"[\d.]+[a-zµ]*", _normalise(self.answer)) is not None
        return wants_number and bool(reply.strip()) and not re.search(r"\d", reply)

    def check(self, reply: str) -> bool:
        """True when the learner's reply matches the answer (ignoring case, spaces, commas, 'GPU')."""
        given, wanted = _normalise(reply), _normalise(self.answer)
        if given == wanted:
            return True
        # A reply may leave out the answer's unit: '50' for '50 MiB', '1.9' for '1.9 GB'.
        number = re.fullmatch(r"([\d.]+)[a-zµ]+", wanted)
        if number and given == number[1]:
            return True
        try:
            target = float(wanted)
        except ValueError:
            return False
        if counted := _COUNTED.fullmatch(given):
            given = counted[1]
        if scaled := _SCALED.fullmatch(given):
            digits = scaled[1].replace(".", "").lstrip("0")
            value = float(scaled[1]) * _SCALE[scaled[2]]
            # as many significant digits as the reply gives (at least two: "2 GB" is no answer)
            return len(digits) >= 2 and float(f"{target:.{len(digits)}g}") == float(f"{value:.{len(digits)}g}")
        try:
            return float(given) == target
        except ValueError:
            return False

    def explain(self) -> str:
        """Why the answer is what it is: the expression the engine evaluated, in words."""
        return self.why or f"The engine evaluated {self.expression}: {self.answer}."


@dataclass(frozen=True)
class Section:
    """Text to read at one stop: `stop` is the simulation position (steps done), or None."""

    stop: int | None
    text: str
    questions: list[Question] = field(default_factory=list)
    line: int = 0


@dataclass(frozen=True, eq=False)
class Lesson:
    """One lesson file, loaded and checked: every placeholder filled, every answer computed."""

    number: int
    title: str
    path: Path
    scenario: Scenario
    stops: list[int]
    _sections: list[Section] = field(repr=False, default_factory=list)

    def sections(self) -> list[Section]:
        """The lesson's sections in reading order (placeholders already filled from the engine)."""
        return list(self._sections)

    @property
    def questions(self) -> list[Question]:
        """Every question of the lesson, in order."""
        return [q for s in self._sections for q in s.questions]

    @property
    def parts(self) -> int:
        """How many sections the reader goes through (one Enter after each but the last)."""
        return len(self._sections)

    @property
    def question_count(self) -> int:
        """How many questions the lesson asks."""
        return sum(len(s.questions) for s in self._sections)


@dataclass(frozen=True)
class Outline:
    """What the course list shows of a lesson, read without computing its placeholders."""

    number: int
    title: str
    path: Path
    scenario: Scenario
    parts: int
    question_count: int
