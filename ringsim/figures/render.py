"""A simulation's pictures: one step's SVG, or every step's, all drawn with one layout."""

from __future__ import annotations

from ..algorithms.geometry import lane_count, spec_of
from ..core.errors import RingsimError
from .draw import DETAILED_MAX_GPUS, Drawn, cell_width, detailed_size, draw_frame, heat_map_size
from .frames import Frame, check_simulation, frames, node_groups
from .layout import layout
from .theme import theme as find_theme


def need_drawsvg() -> None:
    """A one-line error when the figures extra is missing."""
    try:
        import drawsvg  # noqa: F401
    except ImportError:
        raise RingsimError("figures need drawsvg: pip install '.[figures]' from a clone of ringsim "
                           "(or pip install drawsvg)") from None


def drawn(sim, positions: list[int] | None = None, theme: str = "light",
          size: tuple[int, int] | None = None) -> list[Drawn]:
    """The frames at `positions` (default: all, 0 to the plan's length) drawn as SVG."""
    need_drawsvg()
    t = find_theme(theme)
    shown = frames(sim, positions)
    lay = None
    if sim.plan.gpus <= DETAILED_MAX_GPUS:
        lay = layout(sim.plan, shown[0].shape, shown[0].lanes, shown[0].nodes,
                     cell_width(sim.plan.gpus, sim.plan.segments))
    return [draw_frame(f, lay, t, size) for f in shown]


def natural_size(sim) -> tuple[float, float]:
    """Every frame's natural (width, height) in px, from the layout alone (nothing drawn)."""
    plan = sim.plan
    if plan.gpus > DETAILED_MAX_GPUS:
        return heat_map_size(plan.gpus, plan.segments)
    lay = layout(plan, spec_of(plan, sim.collective).shape, lane_count(plan, sim.collective),
                 node_groups(plan), cell_width(plan.gpus, plan.segments))
    return detailed_size(lay)


def figure_svg(sim, step: int | None = None, theme: str = "light",
               size: tuple[int, int] | None = None) -> str:
    """The SVG text of the picture after `step` steps (default: where the simulation is)."""
    check_simulation(sim)
    return drawn(sim, [sim.position if step is None else step], theme, size)[0].svg


def notebook_svg(sim) -> str | None:
    """The picture for Jupyter, or None (the text repr) without drawsvg or beyond what a figure shows."""
    try:
        return figure_svg(sim)
    except RingsimError:
        return None


def frame_at(sim, step: int) -> Frame:
    """What the picture after `step` steps shows, as data."""
    return frames(sim, [step])[0]
