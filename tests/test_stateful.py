"""Stepping forward, back, resetting and running never disagrees with a fresh run."""

import numpy as np
import pytest
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from ringsim import Simulation

from strategies import scenarios


class Stepping(RuleBasedStateMachine):
    """A simulation driven at random, compared after every move with one replayed from scratch."""

    @initialize(scenario=scenarios(max_gpus=7, max_elements=30), seed=st.integers(0, 2**16))
    def start(self, scenario, seed):
        algorithm, g, n, master = scenario
        self.args = (algorithm, g, n)
        self.master = master
        self.x = np.random.default_rng(seed).standard_normal((g, n)).astype(np.float32)
        self.sim = Simulation.create(algorithm, g, n, master=master, gradients=self.x.copy())
        self.expected_position = 0

    @rule()
    def step(self):
        stepped = self.sim.step()
        if self.expected_position < len(self.sim.plan):
            assert stepped is self.sim.plan.steps[self.expected_position]
            self.expected_position += 1
        else:
            assert stepped is None

    @rule()
    def back(self):
        undone = self.sim.back()
        if self.expected_position:
            self.expected_position -= 1
            assert undone is self.sim.plan.steps[self.expected_position]
        else:
            assert undone is None

    @rule()
    def reset(self):
        self.sim.reset()
        self.expected_position = 0

    @rule()
    def run(self):
        self.sim.run()
        self.expected_position = len(self.sim.plan)

    @invariant()
    def agrees_with_a_fresh_run(self):
        if not hasattr(self, "sim"):
            return
        assert self.sim.position == self.expected_position
        fresh = Simulation.create(*self.args, master=self.master, gradients=self.x.copy())
        for _ in range(self.expected_position):
            fresh.step()
        assert fresh.values().tobytes() == self.sim.values().tobytes()
        assert fresh.symbolic.held == self.sim.symbolic.held
        assert fresh.ledger().total == self.sim.ledger().total
        assert fresh.ledger().sent.tolist() == self.sim.ledger().sent.tolist()
        assert fresh.banner == self.sim.banner
        assert fresh.sentences() == self.sim.sentences()


TestStepping = pytest.mark.slow(Stepping.TestCase)
