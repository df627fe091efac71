"""The simulator's view state: what the keys chose, in one frozen value, and the figures the
engine answers for it.

The App never changes a ViewState in place: each key sets a new one (dataclasses.replace) on
the App's `state` reactive, and Textual calls the App's watcher, which brings the Simulation,
the autoplay timer and the clock up to date and sends state and figures to the screen.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..sim.scenario import Scenario
from ..timeline import Timeline
from .clock import Reading
from .sweeps import SweepView
from .training import MODEL_NAMES, TrainingStep

SPEEDS = (2.0, 1.0, 0.5, 0.25, 0.1)  # autoplay: seconds per iteration, slow to fast
SLOW_FACTORS = (0.5, 0.25)  # key s: the selected GPU at half, then quarter, then full speed


@dataclass(frozen=True)
class ViewState:
    """The scenario, the steps done, and how the simulator shows them."""

    scenario: Scenario = Scenario()
    position: int = 0            # steps done (n, p, r, autoplay, the lesson's stops)
    playing: bool = False        # autoplay (space)
    speed: int = 1               # autoplay's delay, as an index into SPEEDS (+ -)
    values: bool = False         # the cells show numbers instead of labels (v)
    present: bool = False        # presentation mode (P)
    topology: str = "flat"       # the clock's topology preset (t)
    slow: tuple[tuple[int, float], ...] = ()  # (0-based GPU, speed factor) in GPU order (s)
    selected: int | None = None  # the 0-based GPU that s slows; None until < > or s is used
    pane: str | None = None      # in the counters' place: "timeline" (T) or "overlap" (o)
    model: str = MODEL_NAMES[0]  # the training step's model preset (O)
    plot: str | None = None      # the sweep plot beside: "time" or "busbw" (w W); None: closed
    lesson: bool = False         # the lesson panel beside (l); it and the plot take turns

    @property
    def delay(self) -> float:
        """Autoplay's seconds per iteration."""
        return SPEEDS[self.speed]

    def slower(self, gpu: int) -> ViewState:
        """GPU `gpu` selected and one notch slower (SLOW_FACTORS), then at full speed again."""
        slow = dict(self.slow)
        cycle = (None, *SLOW_FACTORS)
        after = cycle[(cycle.index(slow.pop(gpu, None)) + 1) % len(cycle)]
        if after is not None:
            slow[gpu] = after
        return replace(self, slow=tuple(sorted(slow.items())), selected=gpu)


@dataclass(frozen=True)
class Figures:
    """What the engine answers for a ViewState: the clock at its position, the GPUs that held the
    step up (none where all were loaded alike), and the open panes' contents (None where the pane is closed)."""

    reading: Reading
    bottlenecks: tuple[int, ...]
    timeline: Timeline | None = None
    training: TrainingStep | None = None
    sweep: SweepView | None = None
