"""Closed-form figures (the textbook formulas, and the exact counts) to set beside the ledger."""

from __future__ import annotations

import numbers
import re
from dataclasses import dataclass
from fractions import Fraction

from .naming import gpu_name, plural_word


def letter_pattern(name: str) -> re.Pattern:
    """The pattern of a letter (or a class of letters, '[LM]') standing for a number in a
    closed form."""
    # A letter stands alone: not part of a word, nor of a subscripted name such as N₁.
    return re.compile(rf"(?<![A-Za-z]){name}(?![A-Za-z₀-₉])")


@dataclass(frozen=True, eq=False)
class Formula:
    """A closed-form figure: its textbook expression in G and N and its exact value here.

    `value` is exact (it equals what the ledger measures). Where the textbook expression
    is only a bound — the ring's 2·(G−1)·N/G when G does not divide N, so that segments
    differ by one element — `textbook` holds that expression's value and `exact` the
    expression that gives `value`. A Formula compares (==, <, …) and hashes as its value,
    so `result.closed_form.total == result.ledger.total` reads as it should.
    """

    text: str
    value: Fraction
    textbook: Fraction | None = None
    exact: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "value", Fraction(self.value))
        if self.textbook is not None:
            textbook = Fraction(self.textbook)
            object.__setattr__(self, "textbook", None if textbook == self.value else textbook)

    @property
    def uneven(self) -> bool:
        """True when the textbook expression differs from the exact value (uneven segments)."""
        return self.textbook is not None

    @property
    def note(self) -> str:
        """Why the textbook expression is not exact here ('' when it is)."""
        if self.textbook is None:
            return ""
        return (f"segments differ by one element (G does not divide N): exactly {self.exact} = "
                f"{format_number(self.value)}, not {self.text} = {format_number(self.textbook)}")

    def forms(self) -> tuple[str, ...]:
        """The figure written ever shorter, for a narrow column: whole, then the exact
        expression alone (where the textbook one is only a bound), then the value."""
        value = format_number(self.value)
        exact = (f"{self.exact} = {value}",) if self.textbook is not None else ()
        return tuple(dict.fromkeys((str(self), *exact, value)))

    def __str__(self) -> str:
        value = format_number(self.value)
        if self.textbook is not None:
            return (f"{self.text} = {format_number(self.textbook)}; "
                    f"exactly {self.exact} = {value}")
        return value if self.text == value else f"{self.text} = {value}"

    def __repr__(self) -> str:
        """One line, as it prints: '<Formula 2·(G−1)·N = 14,000>'."""
        return f"<Formula {self}>"

    # --- a Formula stands for its value in comparisons and arithmetic conversions --------
    def _other(self, other):
        if isinstance(other, Formula):
            return other.value
        if isinstance(other, numbers.Number):
            return other
        return NotImplemented

    def __eq__(self, other) -> bool:
        if isinstance(other, Formula):
            return (self.text, self.value, self.textbook, self.exact) == \
                (other.text, other.value, other.textbook, other.exact)
        other = self._other(other)
        return NotImplemented if other is NotImplemented else self.value == other

    def __hash__(self) -> int:
        return hash(self.value)  # equal numbers hash alike, as Python requires

    def __lt__(self, other):
        other = self._other(other)
        return NotImplemented if other is NotImplemented else self.value < other

    def __le__(self, other):
        other = self._other(other)
        return NotImplemented if other is NotImplemented else self.value <= other

    def __gt__(self, other):
        other = self._other(other)
        return NotImplemented if other is NotImplemented else self.value > other

    def __ge__(self, other):
        other = self._other(other)
        return NotImplemented if other is NotImplemented else self.value >= other

    def __int__(self) -> int:
        return int(self.value)

    def __float__(self) -> float:
        return float(self.value)

    def __bool__(self) -> bool:
        return bool(self.value)


def format_number(value, places: int = 2) -> str:
    """Whole numbers with thousands separators; fractions to `places` decimals, rounded half up.

    Computed with integers only, so no digit is lost however large the number
    (2**64/3 prints as 6,148,914,691,236,517,205.33).
    """
    if isinstance(value, Formula):
        value = value.value
    value = Fraction(value)
    if value.denominator == 1:
        return f"{value.numerator:,}"
    scale = 10 ** places
    scaled = abs(value) * scale
    rounded = (scaled.numerator * 2 + scaled.denominator) // (2 * scaled.denominator)
    whole, decimals = divmod(rounded, scale)
    sign = "-" if value < 0 and rounded else ""
    return f"{sign}{whole:,}.{decimals:0{places}d}" if places else f"{sign}{whole:,}"


@dataclass(frozen=True)
class ClosedForm:
    """The exact figures an algorithm's structure gives for G GPUs and N elements each.

    Every value equals what the ledger measures on the plan: total, the most any GPU
    sends, the most any GPU receives, steps and messages (transfers that move data).
    `busiest_sender` and `busiest_receiver` are the lowest 0-based GPUs that send and
    receive those most.
    """

    total: Formula
    busiest_sent: Formula
    busiest_received: Formula
    steps: Formula
    messages: Formula
    busiest_sender: int = 0
    busiest_receiver: int = 0

    def __repr__(self) -> str:
        """One line of values, not five formulas: '<ClosedForm · 14,000 elements in 112 messages · …>'."""
        sent, received = format_number(self.busiest_sent), format_number(self.busiest_received)
        if self.busiest_sender == self.busiest_receiver:
            busiest = f"busiest {gpu_name(self.busiest_sender)} sends {sent}, receives {received}"
        else:
            busiest = (f"{gpu_name(self.busiest_sender)} sends most ({sent}), "
                       f"{gpu_name(self.busiest_receiver)} receives most ({received})")
        def counted(figure: Formula, word: str) -> str:
            return f"{format_number(figure)} {plural_word(figure.value, word)}"
        return (f"<ClosedForm · {counted(self.total, 'element')} in "
                f"{counted(self.messages, 'message')} · {counted(self.steps, 'step')} · {busiest}>")
