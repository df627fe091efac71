"""The pictures the README and docs show, and the one function that draws them all again
(`ringsim figure --all docs/figures`); tests/test_figures_docs.py holds the committed files to it."""

from __future__ import annotations

from pathlib import Path

from ..algorithms import ALGORITHMS, make_plan
from ..core.files import make_folder
from ..algorithms.collectives import ALL_REDUCE
from ..sim.scenario import shown_elements
from ..sim.simulation import Simulation
from .output import check_target, render, write_bytes

SEED_GPUS = 4      # the walkthrough's example: four GPUs, segments a₁…d₄
ALGORITHM_GPUS = 8  # each algorithm's figure: enough GPUs to show its shape
ALGORITHM_STEP = 2  # the second step: sums already partly built


def algorithm_step(steps: int) -> int:
    """The step an algorithm's picture shows: the second, or naive's only one (as the captions say)."""
    return min(ALGORITHM_STEP, steps)


def seed() -> Simulation:
    """The walkthrough's example: ring all-reduce of 4 GPUs."""
    return Simulation(ALL_REDUCE.plan(SEED_GPUS, "ring"), 8)


def entries() -> list[tuple[str, Simulation, int | None]]:
    """(file name, simulation, step) of every picture; step None: every step, animated."""
    out: list[tuple[str, Simulation, int | None]] = [
        ("ring-4.gif", seed(), None), ("ring-4.html", seed(), None), ("ring-4.svg", seed(), 1)]
    for name in ALGORITHMS:
        plan = make_plan(name, ALGORITHM_GPUS)
        sim = Simulation(plan, shown_elements(plan.segments))  # as `figure` draws it: no segment empty
        out.append((f"{name}.svg", sim, algorithm_step(len(sim.plan))))
    return out


def pictures() -> dict[str, bytes]:
    """Every picture's file name and bytes, as `write_all` writes them."""
    return {name: render(sim, Path(name).suffix, step) for name, sim, step in entries()}


def write_all(folder: str | Path) -> list[Path]:
    """Draw every picture into `folder` (created if missing); returns the paths written."""
    folder = make_folder(folder)
    written = []
    for name, data in pictures().items():
        target = check_target(folder / name)
        write_bytes(target, data)
        written.append(target)
    return written
