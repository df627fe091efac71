"""The simulation: one plan run over real arrays and symbolic labels, stepped forward and back."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..algorithms import DEFAULT_ALGORITHM, make_plan, named_with_options
from ..algorithms.collectives import ALL_REDUCE, Collective
from ..core.checks import as_numeric_array, check_count, check_elements, check_gpus
from ..core.errors import RingsimError
from ..core.formula import ClosedForm
from ..core.layout import Layout
from ..core.naming import plural
from ..execute.ledger import Ledger, measure
from ..execute.memory import check_memory, simulation_bytes
from .narrate import sentences
from ..execute.backend import given_module, make_executor
from ..core.plan import Plan, Step

SYMBOLIC_MAX_GPUS = 128  # labels grow with G; past this only numbers and the ledger are kept
# Labels after each step are kept for stepping back and forth (a step builds new rows and never
# changes old ones, so keeping them costs one list per GPU per step): up to this many row
# entries over the whole plan, 32 MB of references.
HELD_CACHE_ENTRIES = 1 << 22


def demo_gradients(gpus: int, elements: int, xp: Any = np, seed: int = 0):
    """Small integer gradients (0..9) so that sums stay readable."""
    gpus, elements, xp = check_gpus(gpus), check_elements(elements), given_module(xp)
    seed = check_count(seed, "the seed", minimum=0, maximum=2**63 - 1)
    check_memory(gpus * elements * np.dtype(np.int64).itemsize, f"demo gradients of {gpus:,} GPUs "
                 f"with {elements:,} elements each", instead="pass fewer GPUs or elements", xp=xp)
    rng = np.random.default_rng(seed)
    return xp.asarray(rng.integers(0, 10, size=(gpus, elements), dtype=np.int64))


class Simulation:
    """A plan of a collective (the all-reduce unless told) executed step by step; it can go
    back, reset and run to the end, and is checked against the collective's goal."""

    def __init__(self, plan: Plan, elements: int, gradients=None, *, xp: Any = np,
                 symbolic: bool | None = None, collective: Collective = ALL_REDUCE) -> None:
        if not isinstance(plan, Plan):
            raise RingsimError(f"expected a Plan (ringsim.make_plan gives one), got "
                               f"{type(plan).__name__}; Simulation.create('ring', 8, 64) builds "
                               "the plan for you")
        self.plan = plan
        self.collective = collective
        self.layout = Layout(plan.segments, check_elements(elements))
        self.xp = xp = given_module(xp)
        if gradients is not None:
            gradients = as_numeric_array(gradients, "gradients")
            if tuple(gradients.shape) != (plan.gpus, self.layout.elements):
                raise RingsimError(f"gradients must have shape ({plan.gpus}, {self.layout.elements}), "
                                   f"got {tuple(gradients.shape)}")
        itemsize = np.dtype(np.int64 if gradients is None else gradients.dtype).itemsize
        g, n = plan.gpus, self.layout.elements
        self.symbolic_enabled = plan.gpus <= SYMBOLIC_MAX_GPUS if symbolic is None else symbolic
        check_memory(simulation_bytes(plan, self.layout, itemsize, symbolic=self.symbolic_enabled),
                     f"a simulation of {g:,} GPUs with {n:,} elements each",
                     instead=f"`ringsim compare --gpus {g} --elements {n}` (or ringsim.closed_form) "
                             f"gives the counts without allocating", xp=xp)
        if gradients is None:
            gradients = demo_gradients(g, n, xp)
        self.inputs = collective.start_values(gradients, self.layout)
        self._numeric = make_executor(plan, self.layout, xp, gradients.dtype)
        self._sentences: dict[int, list[str]] = {}
        self._ledgers: dict[int, Ledger] = {}
        self._problems: dict[int, list[str]] = {}  # a position's state never changes
        self._held: dict[int, list] = {}  # the labels after each step, when the plan is small
        self._keep_held = plan.participants * plan.segments * len(plan) <= HELD_CACHE_ENTRIES
        self.reset()

    @classmethod
    def create(cls, algorithm: str = DEFAULT_ALGORITHM, gpus: int = 4, elements: int = 8, *,
               xp: Any = np, gradients=None, **options) -> "Simulation":
        """A simulation of a named algorithm, its options as make_plan takes them (master= is
        the 1-based master GPU; chunks=, channels=, ring_order=, nodes=)."""
        return cls(make_plan(algorithm, gpus, **options), elements, gradients, xp=xp)

    # --- moving -----------------------------------------------------------------------
    def reset(self) -> None:
        """Back to the start: every GPU holds only its own gradient (all-gather: its shard)."""
        self.position = 0
        self._numeric.load(self.inputs)
        self.symbolic = self.collective.initial_state(self.plan.gpus, self.plan.segments,
                                                      self.plan.switches) \
            if self.symbolic_enabled else None

    def step(self) -> Step | None:
        """Carry out the next step and return it (None at the end)."""
        if self.done:
            return None
        step = self.plan.steps[self.position]
        if self.symbolic is not None:
            if self.position not in self._sentences:
                self._sentences[self.position] = sentences(step, self.symbolic, self.layout)
            kept = self._held.get(self.position + 1)
            if kept is not None:  # replaying after a step back: the labels are known
                self.symbolic.held = kept
            else:
                self.symbolic.apply(step)
                if self._keep_held:
                    self._held[self.position + 1] = self.symbolic.held
        self._numeric.apply(self.position)
        self.position += 1
        return step

    def back(self) -> Step | None:
        """Undo the last step (by replaying from the start) and return it (None at the start)."""
        if self.position == 0:
            return None
        undone = self.plan.steps[self.position - 1]
        self.goto(self.position - 1)
        return undone

    def goto(self, position: int) -> None:
        """Move to the state after `position` steps (0: the start)."""
        position = check_count(position, "the step", minimum=0, maximum=len(self.plan))
        if position < self.position:
            self.reset()
        while self.position < position:
            self.step()

    def run(self) -> None:
        """Carry out every remaining step."""
        self.goto(len(self.plan))

    # --- reading ----------------------------------------------------------------------
    @property
    def done(self) -> bool:
        """True when every step has been carried out."""
        return self.position >= len(self.plan)

    @property
    def current(self) -> Step | None:
        """The step carried out last (None at the start)."""
        return self.plan.steps[self.position - 1] if self.position else None

    @property
    def title(self) -> str:
        """The plan's title and the scenario: 'Ring all-reduce · 4 GPUs · 8 elements per GPU'."""
        return (f"{self.collective.run_title(self.plan)} · {plural(self.plan.gpus, 'GPU')} · "
                f"{plural(self.layout.elements, 'element')} per GPU")

    @property
    def banner(self) -> str:
        """Where the run is: 'Start', 'Reduce-scatter · iteration 2 of 3', 'Done: …'."""
        if self.done and self.position:
            words = self.collective.goal_text if self.correct() else self.collective.missed_text
            return f"Done: {words[0].lower()}{words[1:]}"
        if self.position == 0:
            return f"Start: {self.collective.start_text}" if len(self.plan) else \
                "Nothing to do: a single GPU already holds the sum"
        return phase_text(self.current)

    def sentences(self, index: int | None = None) -> list[str]:
        """The step's sentences ('GPU1 sends a₁ to GPU2, …') for step `index` (default: the last)."""
        if index is None:
            index = self.position - 1
            if index < 0:  # nothing has run yet
                return []
        elif not self.plan.steps:
            raise RingsimError("the plan has no steps, so no step has sentences")
        else:
            index = check_count(index, "the step index", minimum=0, maximum=len(self.plan.steps) - 1)
        if self.symbolic is None:
            return []
        if index not in self._sentences:
            saved = self.position
            self.goto(index)
            self.step()
            self.goto(saved)
        return self._sentences[index]

    def values(self):
        """Every GPU's flat gradient buffer now, as a (G, N) array of the backend."""
        return self._numeric.gradients()

    def ledger(self) -> Ledger:
        """What has moved so far."""
        if self.position not in self._ledgers:
            self._ledgers[self.position] = measure(self.plan, self.layout, self.position)
        return self._ledgers[self.position]

    def run_ledger(self):
        """The whole run's ledger, however far the run has got (measured once)."""
        end = len(self.plan.steps)
        if end not in self._ledgers:
            self._ledgers[end] = measure(self.plan, self.layout, end)
        return self._ledgers[end]

    def busiest_gpu(self) -> int:
        """The 0-based GPU the whole run's ledger names busiest: the one whose figures the
        closed form's busiest counts give, however far the run has got."""
        return self.run_ledger().busiest()

    def closed_form(self) -> ClosedForm:
        """The exact closed-form figures for this plan at this G and N."""
        return self.collective.plan_closed_form(self.plan, self.layout.elements)

    def problems(self) -> list[str]:
        """What is wrong where, now: buffers that miss (or do not yet meet) the goal, in words."""
        if self.position not in self._problems:
            c = self.collective
            found = c.state_problems(self.symbolic) if self.symbolic is not None else []
            found += c.value_problems(self.values(), self.inputs, self.layout, self.xp)
            self._problems[self.position] = found
        return self._problems[self.position]

    def __repr__(self) -> str:
        """One line: '<Simulation of ring · 4 GPUs · 8 elements per GPU · step 0 of 6>'."""
        name = named_with_options(self.plan.algorithm, self.plan)
        return (f"<Simulation of {name} · {plural(self.plan.gpus, 'GPU')} · "
                f"{plural(self.layout.elements, 'element')} per GPU · "
                f"step {self.position:,} of {len(self.plan):,}>")

    def _repr_svg_(self) -> str | None:
        """Jupyter shows the simulation as the picture of where it is (with the figures extra)."""
        from ..figures.render import notebook_svg  # drawn only when a notebook asks
        return notebook_svg(self)

    def correct(self) -> bool:
        """True when every GPU meets the goal, checked symbolically and numerically."""
        return not self.problems()


def phase_text(step: Step) -> str:
    """'Reduce-scatter · iteration 2 of 3' for a step."""
    return f"{step.phase} · iteration {step.iteration} of {step.iterations}"
