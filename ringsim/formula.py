"""Closed-form figures (the seed's formulas) to set beside what the ledger measures."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction


@dataclass(frozen=True)
class Formula:
    """A closed-form figure: its expression in G and N, and its value for this scenario."""

    text: str
    value: Fraction

    def __str__(self) -> str:
        value = format_number(self.value)
        return value if self.text == value else f"{self.text} = {value}"


def format_number(value) -> str:
    """Whole numbers with thousands separators; fractions to two decimals."""
    value = Fraction(value)
    if value.denominator == 1:
        return f"{value.numerator:,}"
    return f"{float(value):,.2f}"


@dataclass(frozen=True)
class ClosedForm:
    """The figures an algorithm's formulas give for G GPUs and N elements each."""

    total: Formula
    busiest_sent: Formula
    busiest_received: Formula
    steps: Formula
    messages: Formula
