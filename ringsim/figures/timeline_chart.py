"""A timeline as a chart: one row per GPU (and per switch of the plan), a bar per transfer from
its start to its arrival (on its sender's row), the critical path outlined. Jupyter shows a
Timeline this way."""

from __future__ import annotations

import math

from ..algorithms import named_with_options
from ..core.errors import RingsimError
from ..core.units import format_seconds
from .draw import FONT
from .theme import theme as find_theme

MAX_BARS = 4096  # transfers one chart draws
MAX_ROWS = 64    # GPUs
ROW_H, LEFT, RIGHT, TOP, WIDTH = 18, 70, 30, 64, 900


def timeline_svg(timeline, theme: str = "light") -> str:
    """The SVG text of the chart; a RingsimError for a timeline too large to draw."""
    import drawsvg as draw
    t = find_theme(theme)
    gpus, rows, count = timeline.plan.gpus, timeline.plan.participants, len(timeline)
    if count > MAX_BARS or gpus > MAX_ROWS:
        raise RingsimError(f"a timeline chart draws at most {MAX_BARS:,} transfers of {MAX_ROWS} "
                           f"GPUs; this one has {count:,} of {gpus:,}")
    total = timeline.seconds or 1.0
    plot_w = WIDTH - LEFT - RIGHT
    height = TOP + rows * ROW_H + 50
    d = draw.Drawing(WIDTH, height, font_family=FONT)
    d.append(draw.Rectangle(0, 0, WIDTH, height, fill=t.background))
    name = named_with_options(timeline.plan.algorithm, timeline.plan)  # as its repr names it
    d.append(draw.Text(f"{name} · {gpus} GPUs · {timeline.elements:,} elements: "
                       f"{format_seconds(timeline.seconds)} (lockstep {format_seconds(timeline.lockstep)})",
                       15, 18, 26, fill=t.text, font_weight="bold", class_="title"))
    d.append(draw.Text("a bar per transfer on its sender's row, start to arrival; outlined: the "
                       "critical path", 11, 18, 46, fill=t.muted))
    step = 10 ** math.floor(math.log10(total)) if total > 0 else 1.0
    while total / step > 8:
        step *= 2
    tick = 0.0
    while tick <= total * 1.0001:
        x = LEFT + tick / total * plot_w
        d.append(draw.Line(x, TOP, x, TOP + rows * ROW_H, stroke=t.panel, stroke_width=1))
        d.append(draw.Text(format_seconds(tick), 10, x, TOP + rows * ROW_H + 16, fill=t.muted,
                           text_anchor="middle"))
        tick += step
    for g in range(rows):  # a plan's switches (nvls) after the GPUs, named as walk names them
        d.append(draw.Text(timeline.name(g), 11, LEFT - 8, TOP + (g + 0.5) * ROW_H, fill=t.muted,
                           text_anchor="end", dominant_baseline="central",
                           **({"class_": "gpu", "data_gpu": g + 1} if g < gpus
                              else {"class_": "switch", "data_participant": g + 1})))
    critical = set(timeline.critical_path())
    for i in range(count):
        x0 = LEFT + float(timeline.start[i]) / total * plot_w
        x1 = LEFT + float(timeline.end[i]) / total * plot_w
        reduce = int(timeline.ops[i]) == 0
        bar = draw.Group(class_="transfer", data_src=int(timeline.src[i]) + 1,
                         data_dst=int(timeline.dst[i]) + 1, data_op="reduce" if reduce else "copy",
                         data_step=int(timeline.step[i]) + 1)
        src, dst = timeline.name(int(timeline.src[i])), timeline.name(int(timeline.dst[i]))
        bar.append(draw.Title(f"step {int(timeline.step[i]) + 1}: {src} → {dst}, "
                              f"{format_seconds(float(timeline.start[i]))}"
                              f" to {format_seconds(float(timeline.end[i]))}"))
        bar.append(draw.Rectangle(x0, TOP + int(timeline.src[i]) * ROW_H + 3, max(x1 - x0 - 1.0, 1.0),
                                  ROW_H - 6, fill=t.reduce if reduce else t.copy, fill_opacity=0.75,
                                  stroke=t.text if i in critical else "none", stroke_width=1.5))
        d.append(bar)
    return d.as_svg()


def notebook_timeline_svg(timeline) -> str | None:
    """The chart for Jupyter, or None (the text repr) without drawsvg or for a huge timeline."""
    try:
        import drawsvg  # noqa: F401
        return timeline_svg(timeline)
    except (ImportError, RingsimError):
        return None
