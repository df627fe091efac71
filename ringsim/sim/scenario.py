"""A scenario: what to simulate — an algorithm, G GPUs, N elements each, and the algorithm's options."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ..algorithms import ALGORITHMS, DEFAULT_ALGORITHM, default_options, make_plan, option_names
from ..core.plan import Plan


SHOWN_ELEMENTS = 8  # N a view of the cells starts with, unless the plan has more segments


def shown_elements(segments: int) -> int:
    """N when the user gives none: 8, or one per segment of a plan with more (no segment empty)."""
    return max(SHOWN_ELEMENTS, segments)


@dataclass(frozen=True)
class Scenario:
    """Algorithm, G, N and the algorithm's options as users write them (GPUs 1-based)."""

    algorithm: str = DEFAULT_ALGORITHM
    gpus: int = 4
    elements: int = 8
    # (name, value) pairs, or a dict: kept sorted by name, without the options left at their
    # defaults (None or the default's value), so that scenarios with the same plan compare
    # equal however their options were written: `-a master` and `-a master --master 1` alike.
    options: tuple[tuple[str, object], ...] = ()

    def __post_init__(self) -> None:
        defaults = default_options(self.algorithm)
        options = tuple(sorted((k, v) for k, v in dict(self.options).items()
                               if v is not None and v != defaults.get(k)))
        object.__setattr__(self, "options", options)  # frozen: set once, here

    def option(self, name: str, default: object = None) -> object:
        """Option `name` as users write it, or `default` where the scenario leaves it at its default."""
        return dict(self.options).get(name, default)

    def plan(self) -> Plan:
        """The scenario's plan (no gradient arrays)."""
        return make_plan(self.algorithm, self.gpus, **dict(self.options))

    def simulation(self, xp: Any = None):
        """A fresh Simulation of the scenario, at the start, on array module xp (NumPy by default)."""
        from .simulation import Simulation
        return Simulation(self.plan(), self.elements, xp=np if xp is None else xp)

    def filled(self) -> "Scenario":
        """The scenario with N raised to its plan's segments where it has fewer (2G on the
        bidirectional ring), so that no segment is empty; N is never lowered. RingsimError
        where G cannot build the plan."""
        segments = self.plan().segments
        return self if self.elements >= segments else replace(self, elements=segments)

    def with_gpus(self, gpus: int) -> "Scenario":
        """The same scenario with G GPUs: the options the algorithm says still hold on G GPUs
        are kept (a master GPU that still exists), every other falls back to its default."""
        # Ring orders and node counts are written for one G (the TUI holds even the automatic
        # node count), so the spec keeps only what means the same at the new G.
        spec = ALGORITHMS[self.algorithm]
        kept = {k: v for k, v in self.options if spec.holds_on(gpus, k, v)}
        return replace(self, gpus=gpus, options=kept)

    def next_algorithm(self) -> "Scenario":
        """The same G and N with the next algorithm of the registry (ring → master → naive → ring),
        keeping the options it takes too."""
        names = list(ALGORITHMS)
        name = names[(names.index(self.algorithm) + 1) % len(names)]
        taken = option_names(name)
        return replace(self, algorithm=name, options={k: v for k, v in self.options if k in taken})
