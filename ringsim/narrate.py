"""The seed's sentences for a step: 'GPU1 sends a₁ to GPU2, where it is added to b₁'."""

from __future__ import annotations

from .ledger import transfer_elements
from .layout import Layout
from .naming import gpu_name
from .plan import Step, Transfer
from .symbolic import SymbolicState


def held(state: SymbolicState, gpu: int, first: int, last: int, max_terms: int = 6,
         parens: bool = True) -> str:
    """What a GPU's segments first..last hold; sums in parentheses, as the seed writes them."""
    def one(segment: int) -> str:
        text = state.label(gpu, segment, max_terms=max_terms)
        return f"({text})" if parens and "+" in text else text
    if first == last:
        return one(first)
    return f"{one(first)}…{one(last)}"


def sentence(t: Transfer, state: SymbolicState, elements: int | None = None, max_terms: int = 6) -> str:
    """One transfer in the seed's words, labels read from the state before the step."""
    sent = held(state, t.src, t.first, t.last, max_terms)
    kept = held(state, t.dst, t.first, t.last, max_terms)
    many = t.first != t.last
    if t.op == "reduce":
        tail = f"where they are added to {kept}" if many else f"where it is added to {kept}"
    else:
        tail = f"where they replace {kept}" if many else f"where it replaces {kept}"
    text = f"{gpu_name(t.src)} sends {sent} to {gpu_name(t.dst)}, {tail}"
    if elements == 0:
        text += " (an empty segment: nothing moves)"
    return text


def sentences(step: Step, state: SymbolicState, layout: Layout, max_terms: int = 6) -> list[str]:
    """Every transfer of the step in the seed's words (state: before the step)."""
    counts = transfer_elements(step, layout).tolist()
    return [sentence(t, state, n, max_terms) for t, n in zip(step.transfers(), counts)]
