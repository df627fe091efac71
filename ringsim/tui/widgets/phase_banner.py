"""The phase banner: the scenario, where the run is, and whether autoplay is on."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from ...simulation import Simulation


class PhaseBanner(Static):
    """'Ring all-reduce · 4 GPUs · …' over 'Reduce-scatter · iteration 2 of 3   time: step … · so far … · end …'."""

    def show(self, sim: Simulation, playing: bool = False, delay: float = 1.0, clock: str = "") -> None:
        """Show the simulation's title and banner; the class says start, running or done."""
        state = "-done" if sim.done and sim.position else "-start" if sim.position == 0 else "-running"
        for name in ("-done", "-start", "-running"):
            self.set_class(name == state, name)
        play = f"▶ playing · {delay:g} s per iteration" if playing else "■ paused"
        text = Text()
        text.append(sim.title, style="bold")
        text.append(f"   step {sim.position} of {len(sim.plan)} · {play}\n", style="dim")
        text.append(sim.banner, style="bold")
        if clock:
            text.append(f"   {clock}")
        self.update(text, layout=False)  # fixed height: no layout pass needed
