"""The sweep panel (key w): ringsim.studies.sweep's time (or busbw, key W) per algorithm over message
sizes, log-log, drawn by plotext through textual-plotext; the scenario's size marked.

textual-plotext is imported when the panel is first shown, so a TUI without it (it comes with
the `plot` extra) still runs and the panel says how to get it."""

from __future__ import annotations

import math

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static

from ...core.units import approx_bytes, format_bandwidth, format_bytes, format_seconds
from ...algorithms import ALGORITHMS
from ...algorithms.timing import unavailable
from ...cost.model import algbw_of, busbw_of
from ...studies.ticks import decade_ticks, tick_label
from ..sweeps import SweepView

# One colour per algorithm (registry order), the same in the plot and in the legend under it.
COLOURS = [(255, 159, 28), (46, 204, 113), (231, 76, 60), (52, 152, 219), (155, 89, 182),
           (241, 196, 15), (26, 188, 156), (236, 112, 160), (149, 165, 166), (160, 82, 45),
           (128, 128, 255), (173, 216, 230)]  # the last for the ring as NCCL's channels
MARK = (255, 255, 255)  # the scenario's size
NCCL = (118, 185, 0)  # NCCL's own model's line, apart from the textbook algorithms'
INSTALL = "No plot: install textual-plotext (pip install '.[plot]' from a clone of ringsim)."


def _hex(rgb: tuple[int, int, int]) -> str:
    return "#%02x%02x%02x" % rgb


def decades(values: list[float]) -> list[float]:
    """Log-axis ticks: the powers of ten from the one at or below the smallest value to the
    one at or above the largest, so every curve has a label below and above it."""
    return decade_ticks(values, most=6)


def series(view: SweepView, metric: str) -> dict[str, list[tuple[float, float]]]:
    """(bytes, seconds or busbw) per algorithm name, the engine's figures, zeros left out."""
    out = {}
    for name in view.sweep.columns:  # the algorithms, and the ring as NCCL's channels
        points = []
        for p in view.sweep.points:
            y = p.estimates[name].seconds if metric == "time" else p.busbw(name, view.sweep.gpus)
            if y:
                points.append((float(p.nbytes), float(y)))
        out[name] = points
    return out


def nccl_series(view: SweepView, metric: str) -> list[tuple[float, float]]:
    """(bytes, seconds or busbw) of NCCL's own model's pick at each size ([] where it has none)."""
    sw = view.sweep
    return [(float(p.nbytes), float(c.seconds if metric == "time" else sw.nccl_busbw(i)))
            for i, (p, c) in enumerate(zip(sw.points, sw.nccl)) if c is not None]


class SweepPanel(Vertical):
    """The plot, then a legend (the current algorithm marked ▸), the scenario's size and the crossovers."""

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.plot = None  # the PlotextPlot, once textual-plotext is imported

    def compose(self) -> ComposeResult:
        """Room for the install note (hidden once the plot is drawn) and the legend."""
        yield Static(id="plot-missing")
        yield Static(id="plot-legend")

    _shown: tuple = ()

    async def show(self, view: SweepView, metric: str, algorithm: str) -> None:
        """Plot the sweep (time or busbw) and list the algorithms, the size now and the crossovers."""
        shown = (view.sweep, view.here, metric, algorithm)  # cached engine objects: same means same
        if len(self._shown) == len(shown) and all(a is b for a, b in zip(self._shown, shown)):
            return  # stepping through the plan changes none of it
        self._shown = shown
        if self.plot is None:
            try:
                from textual_plotext import PlotextPlot
            except ImportError:
                self.query_one("#plot-missing", Static).update(Text(INSTALL))  # '.[plot]' as written
            else:
                self.plot = PlotextPlot(id="plot-area")
                await self.mount(self.plot, before=0)
                self.query_one("#plot-missing").display = False
        data = series(view, metric)
        if self.plot is not None:
            self._draw(view, metric, data)
        self.query_one("#plot-legend", Static).update(self._legend(view, metric, algorithm))

    def _draw(self, view: SweepView, metric: str, data: dict) -> None:
        plt = self.plot.plt
        plt.clear_data()
        plt.clear_figure()
        what = "time" if metric == "time" else "busbw"
        ys = [y for points in data.values() for _, y in points]
        if not ys:  # one GPU: nothing crosses a link, no busbw (and no log axis of nothing)
            plt.title(f"no all-reduce {what} to plot on {view.sweep.gpus} GPU")
            self.plot.refresh()
            return
        plt.xscale("log")
        plt.yscale("log")
        for index, (name, points) in enumerate(data.items()):
            if points:
                plt.plot([x for x, _ in points], [y for _, y in points], marker="braille",
                         color=COLOURS[index % len(COLOURS)])
        nccl = nccl_series(view, metric)
        if nccl:
            plt.plot([x for x, _ in nccl], [y for _, y in nccl], marker="braille", color=NCCL)
        if view.here is not None:
            plt.vline(float(view.here.nbytes), color=MARK)
        sizes = [p.nbytes for p in view.sweep.points]
        ticks = sizes[::max(1, math.ceil(len(sizes) / 4))]
        plt.xticks([float(n) for n in ticks], [format_bytes(n) for n in ticks])
        marks = decades(ys)
        # The axis spans the ticks (plotext takes a log axis's limits as powers of ten), so
        # the lowest curves sit above a label instead of below the last one.
        plt.ylim(math.log10(marks[0]), math.log10(marks[-1]))
        plt.yticks(marks, [tick_label(v, metric) for v in marks])
        plt.title(f"all-reduce {what} · {view.sweep.gpus} GPUs · {view.sweep.model.topology.name}")
        plt.xlabel("bytes per GPU")
        self.plot.refresh()

    @staticmethod
    def _legend(view: SweepView, metric: str, algorithm: str) -> Text:
        text = Text(no_wrap=True, overflow="ellipsis")
        columns = view.sweep.columns
        for index, name in enumerate(columns):
            mark = "▸" if name == algorithm else " "
            text.append(f"{mark}━━ ", _hex(COLOURS[index % len(COLOURS)]))
            star = "" if ALGORITHMS[view.sweep.algorithm(name)].nccl_name else "*"
            text.append(f"{name + star:<20}", "bold" if name == algorithm else "")
            if index % 2:
                text.append("\n")
        text.append("\n" if len(columns) % 2 else "")
        text.append(" * not in NCCL   ", "dim")
        if view.sweep.nccl:
            text.append("━━ ", _hex(NCCL))
            text.append("NCCL's model (rest: textbook)\n")
        else:
            text.append("all: textbook α-β-γ\n", "dim")
        # An algorithm this hardware cannot run (NVLS without a switch that adds) has no line;
        # say so, or a reader looks for it in vain.
        for name in ALGORITHMS:
            if name not in view.sweep.algorithms:
                why = unavailable(name, view.sweep.model, view.sweep.gpus)
                text.append(f" {name} not drawn: {why}\n", "dim")
        here = view.here
        if here is not None:
            gpus = view.sweep.gpus
            def value(name: str) -> str:
                if metric == "time":
                    return format_seconds(here.estimates[name].seconds)
                return format_bandwidth(here.busbw(name, gpus)) + " busbw"
            text.append(f"│ now {format_bytes(here.nbytes)} per GPU:", "bold")
            if algorithm in here.estimates:
                text.append(f" {algorithm} {value(algorithm)}")
            text.append(f"\n  fastest there: {here.best} {value(here.best)}\n")
            pick = view.here_nccl
            if pick is not None:
                shown = (format_seconds(pick.seconds) if metric == "time" else
                         format_bandwidth(busbw_of(algbw_of(here.nbytes, pick.seconds), gpus))
                         + " busbw")
                text.append(f"  NCCL's model there: {pick.algorithm}/{pick.protocol} "
                            f"×{pick.channels} {shown}\n")
        for c in view.sweep.crossovers:
            text.append(f"from {approx_bytes(c.nbytes)}: {c.after} beats {c.before}\n", "dim")
        if not view.sweep.crossovers and view.sweep.points:
            text.append(f"{view.sweep.points[0].best} is the fastest at every size\n", "dim")
        text.append("W: time ↔ busbw", "dim")
        return text
