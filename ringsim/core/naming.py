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
    if max_terms and len(contributors) > max_terms:
        # Name only the terms shown: a sum over a million GPUs keeps four of them.
        first, second, last = (term(g, segment) for g in (*contributors[:2], contributors[-1]))
        return f"{first}+{second}+…+{last}"
    return "+".join(term(g, segment) for g in contributors)


def plural(count: int, word: str) -> str:
    """'1 GPU', '4 GPUs', '1 segment', '2,000 elements': the count with its noun, ringsim's one plural."""
    return f"{count:,} {plural_word(count, word)}"


def article(count: int) -> str:
    """'a' or 'an' before a number said aloud: an 8, an 11, an 18,000; a 1, a 110, a 16."""
    digits = str(abs(count))
    # "eight…" and the "eleven"/"eighteen" that lead a group of three digits start with a vowel
    spoken_eleven = len(digits) % 3 == 2 and digits[:2] in ("11", "18")
    return "an" if digits[0] == "8" or spoken_eleven else "a"


def plural_word(count: int, word: str) -> str:
    """The noun alone, singular for 1: plural_word(3, 'segment') → 'segments'."""
    if count == 1:
        return word
    if word.endswith(("s", "x", "ch", "sh")):
        return word + "es"
    if word.endswith("y") and word[-2:-1] not in ("a", "e", "o", "u"):
        return word[:-1] + "ies"
    return word + "s"


def segment_range(letter_of: str, count: int) -> str:
    """'a₁…a₄' for four segments, 'a₁, a₂' for two, 'a₁' for one: the labels GPU1's segments carry."""
    if count == 2:
        return f"{letter_of}{subscript(1)}, {letter_of}{subscript(2)}"
    return f"{letter_of}{subscript(1)}" + (f"…{letter_of}{subscript(count)}" if count > 1 else "")
