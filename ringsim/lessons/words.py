"""What every group of lesson words shares: the Entry a word is, the lessons' machine, the
training limits and how small numbers are written.

The vocabulary and the topic modules (faults, buckets, sharding) all build on this module,
and none of them on another: each topic module hands its words to the vocabulary.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ..core.errors import RingsimError

TRAIN_MAX_EPOCHS = 50  # lessons load eagerly: keep a training placeholder to a second or so
TRAIN_MAX_GPUS = 256   # `ringsim train`'s default batch: every GPU needs a sample of it


@dataclass(frozen=True)
class Entry:
    """A vocabulary word: how to compute it, which options it takes, one line of help, and why."""

    fn: Callable
    options: tuple[str, ...]
    help: str
    why: Callable | None = None


def model_key(a) -> tuple:
    """The machine a figure names: (topology, α in µs, link GB/s); flat, 5 µs, 100 GB/s by default."""
    return (a.options.get("topology", "flat"), a.options.get("alpha_us", 5.0), a.options.get("gbps", 100.0))


def model_line(a) -> str:
    """'G = 4, N = 8 float32, flat: α = 5 µs, 100 GB/s links' (or the topology's name)."""
    topology, alpha, gbps = model_key(a)
    g, n = a.scenario.gpus, a.scenario.elements
    head = f"G = {g:,}, N = {n:,} float32"
    if topology == "flat":
        return head + f", flat: α = {alpha:g} µs, {gbps:g} GB/s links"
    return head + f", {topology}"


def check_training(epochs: int, gpus: int) -> None:
    """Refuse a training placeholder too long or too wide for a lesson to load."""
    if not 1 <= epochs <= TRAIN_MAX_EPOCHS:
        raise RingsimError(f"epochs must be from 1 to {TRAIN_MAX_EPOCHS} in a lesson, got {epochs}")
    if gpus > TRAIN_MAX_GPUS:
        raise RingsimError(f"the training demo splits a batch of {TRAIN_MAX_GPUS} over the GPUs: "
                           f"gpus must be at most {TRAIN_MAX_GPUS}, got {gpus:,}")


def small_number(value: float) -> str:
    """A difference or an error in scientific notation: '0', '1.19e-07'."""
    return "0" if value == 0 else f"{value:.2e}"


def ratio(value: float) -> str:
    """A ratio to two decimals without trailing zeros: 2.0 → '2', 1.4999 → '1.5'."""
    return f"{value:.2f}".rstrip("0").rstrip(".")
