"""The walkthrough's names: GPU1..GPUG, GPU k's segments named with letter k and a subscript."""

from __future__ import annotations

from string import ascii_lowercase

_SUBSCRIPTS = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")


def subscript(number: int) -> str:
    """The number written in Unicode subscript digits: 12 → '₁₂'."""
    return str(number).translate(_SUBSCRIPTS)


def gpu_name(gpu: int) -> str:
    """Name of the 0-based GPU as users see it: 0 → 'GPU1'."""
    return f"GPU{gpu + 1}"


def participant_name(index: int, gpus: int, switches: int = 1) -> str:
    """A plan's participant as users see it: 'GPU3' for a GPU, 'the switch' (or 'switch 2' of several) after them."""
    if index < gpus:
        return gpu_name(index)
    return "the switch" if switches <= 1 else f"switch {index - gpus + 1}"


def letter(gpu: int) -> str:
    """Letter of the 0-based GPU's gradient: a..z, then 'g27', 'g28', … (stays unambiguous)."""
    return ascii_lowercase[gpu] if gpu < 26 else f"g{gpu + 1}"


def term(gpu: int, segment: int) -> str:
    """One original segment: GPU 0's segment 0 → 'a₁'."""
    return letter(gpu) + subscript(segment + 1)


def sum_label(contributors: tuple[int, ...], segment: int, *, max_terms: int = 0) -> str:
    """Label of a buffer holding the sum of these GPUs' segment, in the given order.

    With max_terms > 0, longer sums are shortened to 'a₁+b₁+…+h₁' so that cells stay readable.
    """
    if not contributors:
        return "0"
    terms = [term(g, segment) for g in contributors]
    if max_terms and len(terms) > max_terms:
        terms = terms[:2] + ["…"] + terms[-1:]
    return "+".join(terms)
