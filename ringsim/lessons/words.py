"""What every group of lesson words shares: the Entry a word is, the lessons' machine, the
limits on what a word may run and how small numbers are written.

The vocabulary and the topic modules (cost_words, training_words, faults, buckets, sharding,
protocols) all build on this module, and none of them on another: each topic module hands
its words to the vocabulary.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ..algorithms import OPTION_ORDER
from ..core.errors import RingsimError

# The options that name a scenario: its algorithm, G, N and every algorithm's own options
# (each accepted only with an algorithm that takes it)
SCENARIO_OPTIONS = ("algorithm", "gpus", "elements") + OPTION_ORDER
TRAIN_MAX_EPOCHS = 50  # lessons load eagerly: keep a training placeholder to a second or so
TRAIN_MAX_GPUS = 256   # `ringsim train`'s default batch: every GPU needs a sample of it
SIMULATE_MAX_CELLS = 1_000_000  # G·N of another scenario that is simulated for its labels


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
    """'G = 4, N = 8 float32, flat: α = 5 µs, 100 GB/s, γ = 0' (adds free; or the
    topology's name)."""
    topology, alpha, gbps = model_key(a)
    g, n = a.scenario.gpus, a.scenario.elements
    head = f"G = {g:,}, N = {n:,} float32"
    if topology == "flat":
        return head + f", flat: α = {alpha:g} µs, {gbps:g} GB/s, γ = 0"
    return head + f", {topology}"


def machine_flags(a) -> list[str]:
    """The command-line flags that give `ringsim timeline`, `sweep` or `overlap` the figure's machine."""
    # The command line's flat preset adds at a finite reduce bandwidth where the lessons' flat
    # machine adds for free, so a lesson that names a command must name the flags that close
    # the gap, or learners who run it get other numbers. Each flag is read off the two models.
    from math import isclose
    from ..cost.model import CostModel
    from .costs import model_of
    topology, _, _ = model_key(a)
    ours, cli = model_of(*model_key(a)).topology, CostModel.of(topology).topology
    flags = [] if topology == "flat" else ["--topology", topology]
    for key, level in ours.levels.items():
        theirs = cli.level(key)
        name = f"{key}=" if len(ours.levels) > 1 else ""  # a level is named only where there are two
        if not isclose(level.alpha, theirs.alpha, rel_tol=1e-9, abs_tol=0):
            flags += ["--alpha", f"{name}{level.alpha * 1e6:g}us"]
        if not isclose(level.bandwidth, theirs.bandwidth, rel_tol=1e-9):
            flags += ["--bandwidth", f"{name}{level.bandwidth / 1e9:g}GB/s"]
    if not isclose(ours.reduce_bandwidth, cli.reduce_bandwidth, rel_tol=1e-9):
        flags += ["--reduce-bandwidth", "inf" if ours.reduce_bandwidth == float("inf")
                  else f"{ours.reduce_bandwidth / 1e9:g}GB/s"]
    return flags


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
