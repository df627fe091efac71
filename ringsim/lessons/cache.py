"""A small bounded cache of engine results, shared by every lesson loaded in one process, and
the ledgers and simulations of scenarios that every lesson's words read through it."""

from __future__ import annotations

from collections import OrderedDict

from ..core.layout import Layout
from ..execute.ledger import Ledger, measure
from ..sim.scenario import Scenario
from ..sim.simulation import Simulation


class Cache(OrderedDict):
    """Keeps the `size` most recently stored or used results (a TUI session may load many scenarios)."""

    def __init__(self, size: int) -> None:
        super().__init__()
        self.size = size

    def __setitem__(self, key, value) -> None:
        super().__setitem__(key, value)
        self.move_to_end(key)
        while len(self) > self.size:
            self.popitem(last=False)

    def get_or(self, key, make):
        """The stored result for `key`, or `make()` stored."""
        if key in self:
            self.move_to_end(key)
            return self[key]
        value = self[key] = make()
        return value


_LEDGERS, _SIMULATIONS = Cache(256), Cache(8)


def ledger_cached(scenario: Scenario, position: int) -> bool:
    """Whether the ledger of the scenario's first `position` steps is already made."""
    return (scenario, position) in _LEDGERS


def ledger_of(scenario: Scenario, position: int) -> Ledger:
    """The ledger of the scenario's first `position` steps."""
    def make():
        plan = scenario.plan()
        return measure(plan, Layout(plan.segments, scenario.elements), position)
    return _LEDGERS.get_or((scenario, position), make)


def simulation_cached(scenario: Scenario) -> bool:
    """Whether the scenario's simulation is already made."""
    return scenario in _SIMULATIONS


def simulation_of(scenario: Scenario) -> Simulation:
    """The scenario's simulation, made once and shared."""
    return _SIMULATIONS.get_or(scenario, scenario.simulation)
