"""A scenario: what to simulate — an algorithm, G GPUs, N elements each, and the master."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ..algorithms import ALGORITHMS, make_plan, option_names
from ..core.plan import Plan


@dataclass(frozen=True)
class Scenario:
    """Algorithm, G, N, (master algorithm only) the 1-based master GPU, and the algorithm's options."""

    algorithm: str = "ring"
    gpus: int = 4
    elements: int = 8
    master: int | None = None
    options: tuple[tuple[str, object], ...] = ()  # the algorithm's options, as (name, value) pairs

    def plan(self) -> Plan:
        """The scenario's plan (no gradient arrays)."""
        # The options may name the master too (plan_options gives it): theirs is the one used.
        return make_plan(self.algorithm, self.gpus, **{"master": self.master, **dict(self.options)})

    def simulation(self, xp: Any = None):
        """A fresh Simulation of the scenario, at the start, on array module xp (NumPy by default)."""
        from .simulation import Simulation
        return Simulation(self.plan(), self.elements, xp=np if xp is None else xp)

    def with_gpus(self, gpus: int) -> "Scenario":
        """The same scenario with G GPUs; a master past the new G falls back to GPU1."""
        master = self.master if self.master is not None and self.master <= gpus else None
        # Options tied to G (ring orders, nodes that no longer divide G) fall back to defaults.
        return replace(self, gpus=gpus, master=master, options=())

    def next_algorithm(self) -> "Scenario":
        """The same G and N with the next algorithm of the registry (ring → master → naive → ring)."""
        names = list(ALGORITHMS)
        name = names[(names.index(self.algorithm) + 1) % len(names)]
        master = self.master if "master" in option_names(name) else None
        return replace(self, algorithm=name, master=master, options=())
