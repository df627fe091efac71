"""Stepping back replays from the start; the labels after each step are kept, so a replay
does not compute them again (the naive flood at G = 64 spends most of a step on them)."""

from ringsim import Simulation
from ringsim.execute.symbolic import SymbolicState


def test_stepping_back_and_forth_computes_each_steps_labels_once(monkeypatch):
    applied = []
    apply = SymbolicState.apply

    def counted(state, step):
        applied.append(step)
        apply(state, step)
    monkeypatch.setattr(SymbolicState, "apply", counted)
    sim = Simulation.create("ring", 4, 8)
    for _ in range(3):
        sim.goto(3)
        sim.goto(1)
    assert len(applied) == 3  # steps 1, 2 and 3, each once
    fresh = Simulation.create("ring", 4, 8)
    monkeypatch.setattr(SymbolicState, "apply", apply)
    fresh.goto(1)
    assert sim.symbolic.held == fresh.symbolic.held and sim.sentences() == fresh.sentences()
    sim.goto(3)
    fresh.goto(3)
    assert sim.symbolic.held == fresh.symbolic.held
