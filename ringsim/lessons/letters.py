"""The letters a closed form writes for a scenario's numbers (G, N, C, K, M, L), and a formula
worked out with their values."""

from __future__ import annotations

import re

from ..algorithms import default_options
from ..core.formula import letter_pattern

# The letters a closed form writes for a scenario's numbers, and the functions it calls.
OPTION_LETTERS = {"chunks": "C", "channels": "K", "nodes": "M"}
_FUNCTIONS = {"min", "max", "lg", "log"}
_WORD = re.compile(r"[A-Za-z]+")


def letter_values(s, options: dict | None = None) -> dict[str, int]:
    """The value of each letter a closed form may write: G, N and its options' C, K, M (L = G/M)."""
    values = {"G": s.gpus, "N": s.elements}
    options = default_options(s.algorithm) if options is None else options
    for option, name in OPTION_LETTERS.items():
        if isinstance(options.get(option), int):
            values[name] = options[option]
    if "M" in values:
        values["L"] = s.gpus // values["M"]
    return values


def substitute(text: str, values: dict[str, int]) -> str | None:
    """A formula with its letters replaced by their values ('2·(G−1)·N' → '2·(4−1)·8'), or None.

    None when the text holds a name with no value here (H, p2) or words: it cannot be worked out.
    """
    if any(w not in values and w not in _FUNCTIONS for w in _WORD.findall(text)):
        return None
    for name, value in values.items():
        text = letter_pattern(name).sub(f"{value:,}", text)
    return text
