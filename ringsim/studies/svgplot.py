"""A small log-log line chart written as SVG text, for slides (plotext draws only terminals).

Plain SVG 1.1 with a system font stack, no scripts and no external resources, so that it
opens offline in browsers, Inkscape and slide tools. Each series is one <polyline>, drawn
in its own colour and dash pattern (`style`).
"""

from __future__ import annotations

import math
from xml.sax.saxutils import escape

COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2",
           "#7f7f7f", "#bcbd22", "#17becf")
# Past ten series the colours come round again, each time with another dash pattern (SVG
# stroke-dasharray, in px), so that no two series are drawn alike: 40 series apart.
DASHES = ("", "7 4", "2 3", "9 3 2 3")
WIDTH, HEIGHT = 860, 520
LEFT, RIGHT, TOP, BOTTOM = 90, 230, 50, 70
PLOT_WIDTH = WIDTH - LEFT - RIGHT
# The legend sits right of the plot; its column is as wide as the longest name needs, at a
# generous 0.62 em per character of the 13 px font (DejaVu Sans averages about 0.55 em).
CHAR_WIDTH = 13 * 0.62
LEGEND_LINE = 46  # from the plot's edge to the name: the gap, the colour stroke, the gap


def style(number: int) -> tuple[str, str]:
    """(colour, dash pattern) of the series numbered `number` from 0; '' is a solid line."""
    return COLOURS[number % len(COLOURS)], DASHES[number // len(COLOURS) % len(DASHES)]


def _decades(low: float, high: float) -> list[float]:
    first, last = math.floor(math.log10(low)), math.ceil(math.log10(high))
    return [10.0 ** e for e in range(first, last + 1)]


def loglog_svg(title: str, xlabel: str, ylabel: str, series: dict[str, list[tuple[float, float]]],
               xticks: list[tuple[float, str]], yformat=lambda v: f"{v:g}") -> str:
    """SVG text of a log-log chart: one polyline per named series of positive (x, y) points."""
    points = [p for values in series.values() for p in values if p[0] > 0 and p[1] > 0]
    if not points:
        raise ValueError("nothing positive to plot on log axes")
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    x0, x1 = math.log10(min(xs)), math.log10(max(xs))
    decades = _decades(min(ys), max(ys))
    names = max((len(name) for name in series), default=0)
    width = max(WIDTH, math.ceil(LEFT + PLOT_WIDTH + LEGEND_LINE + names * CHAR_WIDTH + 15))
    y0, y1 = math.log10(decades[0]), math.log10(decades[-1])
    x1, y1 = (x1 if x1 > x0 else x0 + 1), (y1 if y1 > y0 else y0 + 1)
    plot_w, plot_h = PLOT_WIDTH, HEIGHT - TOP - BOTTOM

    def px(x: float) -> float:
        return LEFT + (math.log10(x) - x0) / (x1 - x0) * plot_w

    def py(y: float) -> float:
        return TOP + plot_h - (math.log10(y) - y0) / (y1 - y0) * plot_h

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{HEIGHT}" '
           f'viewBox="0 0 {width} {HEIGHT}" font-family="DejaVu Sans, Helvetica, Arial, '
           'sans-serif" font-size="13">',
           f'<rect width="{width}" height="{HEIGHT}" fill="white"/>',
           f'<text x="{LEFT + plot_w / 2:.1f}" y="28" text-anchor="middle" font-size="16">'
           f'{escape(title)}</text>']
    for value in decades:
        y = py(value)
        out.append(f'<line x1="{LEFT}" y1="{y:.2f}" x2="{LEFT + plot_w}" y2="{y:.2f}" '
                   'stroke="#e0e0e0"/>')
        out.append(f'<text x="{LEFT - 8}" y="{y + 4:.2f}" text-anchor="end">'
                   f'{escape(yformat(value))}</text>')
    shown_to = -math.inf  # the right edge of the last label drawn
    for value, label in xticks:
        x = px(value)
        out.append(f'<line x1="{x:.2f}" y1="{TOP}" x2="{x:.2f}" y2="{TOP + plot_h}" '
                   'stroke="#e0e0e0"/>')
        half = len(label) * CHAR_WIDTH / 2
        if x - half < shown_to + 6:
            continue  # sizes this close (1,000 B and 1 KiB) would print one label over another
        shown_to = x + half
        out.append(f'<text x="{x:.2f}" y="{TOP + plot_h + 18}" text-anchor="middle">'
                   f'{escape(label)}</text>')
    out.append(f'<rect x="{LEFT}" y="{TOP}" width="{plot_w}" height="{plot_h}" fill="none" '
               'stroke="#333"/>')
    out.append(f'<text x="{LEFT + plot_w / 2:.1f}" y="{HEIGHT - 20}" text-anchor="middle">'
               f'{escape(xlabel)}</text>')
    out.append(f'<text x="20" y="{TOP + plot_h / 2:.1f}" text-anchor="middle" '
               f'transform="rotate(-90 20 {TOP + plot_h / 2:.1f})">{escape(ylabel)}</text>')
    for number, (name, values) in enumerate(series.items()):
        colour, dash = style(number)
        stroke = f'stroke="{colour}"' + (f' stroke-dasharray="{dash}"' if dash else "")
        coords = " ".join(f"{px(x):.2f},{py(y):.2f}" for x, y in values if x > 0 and y > 0)
        out.append(f'<polyline data-series="{escape(name)}" points="{coords}" fill="none" '
                   f'{stroke} stroke-width="2"/>')
        ly = TOP + 10 + 22 * number
        out.append(f'<line x1="{LEFT + plot_w + 15}" y1="{ly}" x2="{LEFT + plot_w + 40}" '
                   f'y2="{ly}" {stroke} stroke-width="3"/>')
        out.append(f'<text x="{LEFT + plot_w + LEGEND_LINE}" y="{ly + 4}">{escape(name)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"
