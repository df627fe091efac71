"""The GPU columns of a frame as SVG text: a column per GPU (class `gpu`) holding a cell per
segment (class `segment`, with its label's text), and a plan's switches.

A 16-GPU animation has thousands of cells, so they are written as text in one pass rather than
built as drawsvg elements (which costs about ten times as long to build and to serialise); the
parts that never change between frames (each column's frame and name) are written once per
drawing and reused.
"""

from __future__ import annotations

import functools
from html import escape

from ..core.naming import gpu_name
from .layout import CELL_H, HEADER_H, Layout
from .theme import Theme, gpu_colour, mixture

LABEL_SIZE = 12
TICKS_MAX_GPUS = 8  # beyond this a tick per GPU under a partial sum is too small to see
# DejaVu Sans' advance widths (in ems) where they differ most from the 0.62 of a letter:
# subscripts, '+', and the spaces, separators and digits of a line of counters.
_WIDTHS = {**dict.fromkeys("₀₁₂₃₄₅₆₇₈₉", 0.42), "+": 0.84, **dict.fromkeys(" ,.·:", 0.34),
           **dict.fromkeys("0123456789", 0.64)}


def text_width(text: str, size: float) -> float:
    """About how wide DejaVu Sans sets `text` at `size` px (subscripts are narrower)."""
    return size * sum(_WIDTHS.get(c, 0.62) for c in text)


def num(value: float) -> str:
    """A coordinate as short SVG text: 2 decimals at most, no trailing zeros."""
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def label_text(label: str, x: float, y: float, room: float, ink: str, size: float = LABEL_SIZE) -> str:
    """A centred label, squeezed to `room` px when it would be wider."""
    squeeze = (f' textLength="{num(room)}" lengthAdjust="spacingAndGlyphs"'
               if text_width(label, size) > room else "")
    return (f'<text x="{num(x)}" y="{num(y)}" font-size="{num(size)}" text-anchor="middle" '
            f'dominant-baseline="central" fill="{ink}"{squeeze}>{escape(label, quote=False)}</text>')


@functools.lru_cache(maxsize=64)
def _heads(lay: Layout, gpus: int, t: Theme) -> tuple[str, ...]:
    """Each GPU column's frame, colour chip and name: the same in every frame of a drawing."""
    w, out = lay.width, []
    for k in range(gpus):
        x, y = lay.x[k], lay.y[k]
        out.append(
            f'<rect x="{num(x - 3)}" y="{num(y)}" width="{num(w + 6)}" height="{num(lay.height + 3)}" '
            f'rx="6" fill="{t.panel}" stroke="{t.muted}" stroke-width="0.8"/>'
            f'<rect x="{num(x)}" y="{num(y + 4)}" width="16" height="{HEADER_H - 8}" rx="3" '
            f'fill="{gpu_colour(k, gpus, t)}"/>'
            f'<text x="{num(x + w / 2 + 8)}" y="{num(y + HEADER_H / 2 + 1)}" font-size="13" '
            f'text-anchor="middle" dominant-baseline="central" fill="{t.text}" '
            f'font-weight="bold">{gpu_name(k)}</text>')
    return tuple(out)


def columns(f, lay: Layout, t: Theme, sending: dict, receiving: dict) -> str:
    """Every GPU's column and every switch's box, as SVG text. `sending` and `receiving` map
    (gpu, segment) to the colour of the arrow that reads or writes the cell."""
    w, heads = lay.width, _heads(lay, f.gpus, t)
    tick = (w - 8) / max(f.gpus, 1)  # who is in a partial sum: one tick per GPU, under the label
    parts = []
    for k in range(f.gpus):
        x, y = lay.x[k], lay.y[k]
        parts.append(f'<g class="gpu" data-gpu="{k + 1}">{heads[k]}')
        for s in range(f.segments):
            cy = y + HEADER_H + s * CELL_H
            holds, done = f.holds[k][s], f.complete[k][s]
            fill = t.complete if done else mixture(holds, f.gpus, t)
            ink = t.complete_text if done else (t.text if holds else t.muted)
            parts.append(
                f'<g class="segment" data-gpu="{k + 1}" data-segment="{s + 1}" '
                f'data-holds="{",".join(str(c + 1) for c in holds)}" '
                f'data-complete="{"true" if done else "false"}">'
                f'<rect x="{num(x + 1)}" y="{num(cy + 1)}" width="{num(w - 2)}" height="{CELL_H - 2}" '
                f'rx="3" fill="{fill}"/>')
            if f.gpus <= TICKS_MAX_GPUS and len(set(holds)) > 1 and not done:
                for c in sorted(set(holds)):
                    parts.append(f'<rect x="{num(x + 4 + c * tick)}" y="{num(cy + CELL_H - 4.5)}" '
                                 f'width="{num(max(tick - 1, 1))}" height="2.5" '
                                 f'fill="{gpu_colour(c, f.gpus, t)}"/>')
            parts.append(label_text(f.labels[k][s], x + w / 2, cy + CELL_H / 2 - 0.5, w - 8, ink))
            outline = _outline(x, cy, w, receiving.get((k, s)), sending.get((k, s)))
            parts.append(outline + "</g>")
        parts.append("</g>")
    for n, k in enumerate(range(f.gpus, len(lay.x))):  # a plan's switch: it adds what the GPUs send
        x, y = lay.x[k], lay.y[k]
        parts.append(
            f'<g class="switch" data-participant="{k + 1}">'
            f'<rect x="{num(x - 3)}" y="{num(y)}" width="{num(w + 6)}" height="{num(lay.height + 3)}" '
            f'rx="6" fill="{t.panel}" stroke="{t.muted}" stroke-width="0.8"/>'
            f'<text x="{num(x + w / 2)}" y="{num(y + HEADER_H / 2 + 1)}" font-size="13" '
            f'text-anchor="middle" dominant-baseline="central" fill="{t.text}" '
            f'font-weight="bold">switch</text>')
        for s, label in enumerate(f.switch_labels[n] if n < len(f.switch_labels) else ()):
            cy = y + HEADER_H + s * CELL_H
            holds = f.switch_holds[n][s]
            done = len(holds) == f.gpus and len(set(holds)) == f.gpus
            fill = t.complete if done else (mixture(holds, f.gpus, t) if holds else t.background)
            ink = t.complete_text if done else (t.text if label else t.muted)
            parts.append(
                f'<g class="switch-segment" data-segment="{s + 1}">'
                f'<rect x="{num(x + 1)}" y="{num(cy + 1)}" width="{num(w - 2)}" height="{CELL_H - 2}" '
                f'rx="3" fill="{fill}"/>'
                + label_text(label or "empty", x + w / 2, cy + CELL_H / 2 - 0.5, w - 8, ink)
                + _outline(x, cy, w, receiving.get((k, s)), sending.get((k, s))) + "</g>")
        parts.append("</g>")
    return "\n".join(parts)


def _outline(x: float, cy: float, w: float, received: str | None, sent: str | None) -> str:
    """A cell written in this step gets a solid frame in its arrow's colour; one read, a dashed one."""
    if received is None and sent is None:
        return ""
    box = (f'<rect x="{num(x + 0.5)}" y="{num(cy + 0.5)}" width="{num(w - 1)}" height="{CELL_H - 1}" '
           f'rx="3" fill="none" ')
    if received is not None:
        return box + f'stroke="{received}" stroke-width="2.4"/>'
    return box + f'stroke="{sent}" stroke-width="1.6" stroke-dasharray="4 3"/>'
