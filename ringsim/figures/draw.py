"""One frame as SVG (drawsvg): GPUs as columns of segment cells, an arrow per transfer.

The contract tests and pages rely on: every GPU is an element of class `gpu`, every segment
buffer one of class `segment` holding its label's text, every transfer one of class
`transfer` with `data-src` and `data-dst` (1-based GPUs) and `data-op` (`reduce` or `copy`).
Beyond 16 GPUs the columns would be too narrow to read, so the frame becomes a heat map of
how much of each sum every buffer holds, beside a matrix of who sends to whom.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from ..core.naming import gpu_name, plural, term
from .cells import LABEL_SIZE, columns, text_width
from .frames import MAX_TERMS, Frame, Move
from .layout import GAP_X, GAP_Y, Layout, around_slots
from .routes import beside, route, spread_ends
from .theme import Theme, gpu_colour, lane_colour

DETAILED_MAX_GPUS = 16
FONT = "DejaVu Sans, Liberation Sans, Arial, Helvetica, sans-serif"
TOP = 78       # the title block above the columns
FOOTER = 64    # counters and legend below
MIN_WIDTH = 680
KEY_H = 34     # the heat map's key, under its grid
MAX_CHIPS = 32  # arrows that get an add/copy tag; more would hide the cells


def cell_width(gpus: int, segments: int) -> float:
    """One column width for every step of a plan, so that nothing moves between frames: wide
    enough for the longest label any step can show (MAX_TERMS terms, or 'a₁+b₁+…+h₁')."""
    widest_term = max(text_width(term(g, segments - 1), LABEL_SIZE) for g in range(gpus))
    terms = min(gpus, MAX_TERMS)
    longest = terms * widest_term + (terms - 1) * text_width("+", LABEL_SIZE)
    return max(64.0, min(172.0, longest + 14))


@dataclass(frozen=True)
class Drawn:
    """A drawn frame: its SVG text and its natural size in px."""

    svg: str
    width: float
    height: float


def _head(x0: float, y0: float, x1: float, y1: float, size: float = 9.0) -> list[float]:
    """An arrowhead's three corners at (x1, y1), pointing away from (x0, y0)."""
    dx, dy = x1 - x0, y1 - y0
    n = max((dx * dx + dy * dy) ** 0.5, 1e-9)
    ux, uy = dx / n, dy / n
    bx, by = x1 - ux * size, y1 - uy * size
    return [x1, y1, bx - uy * size * 0.5, by + ux * size * 0.5, bx + uy * size * 0.5, by - ux * size * 0.5]


def _transfer(m: Move, lay: Layout, t: Theme, repeat: int, lanes: int, chip: bool, both: bool,
              count: int = 1, fan: tuple[float | None, float | None] = (None, None),
              behind: bool = False, placed: list | None = None, slot: int = 0):
    """The transfer's arrow, and its add/copy tag (drawn later, above every arrow) or None.
    An arrow `behind` the columns (to a row beyond the next) gets its tag in the lowest gap.
    `placed` holds the tags drawn so far (centre and width): one that would cover another
    (two arrows crossing at their middles) moves along its own arrow."""
    import drawsvg as draw
    colour = lane_colour(m.lane) if lanes > 1 else (t.reduce if m.op == "reduce" else t.copy)
    g = draw.Group(class_="transfer", data_src=m.src + 1, data_dst=m.dst + 1, data_op=m.op,
                   data_first=m.first + 1, data_last=m.last + 1, data_sent=m.sent)
    g.append(draw.Title(m.sentence))
    r = route(lay, m, repeat, count, fan, both, slot)
    (x0, y0), (cx, cy), (x1, y1) = r.points[0], r.points[-2], r.points[-1]
    # End the line where the arrowhead starts, so that a dashed line does not blunt the tip.
    hx, hy = x1 - cx, y1 - cy
    n = max((hx * hx + hy * hy) ** 0.5, 1e-9)
    lx, ly = x1 - hx / n * 7, y1 - hy / n * 7
    if r.curved:
        path = f"M{x0:.1f},{y0:.1f} Q{cx:.1f},{cy:.1f} {lx:.1f},{ly:.1f}"
    else:
        path = "M" + " L".join(f"{px:.1f},{py:.1f}" for px, py in [*r.points[:-1], (lx, ly)])
    if chip:  # a few arrows: a halo keeps each readable where it crosses cells
        g.append(draw.Raw(f'<path d="{path}" fill="none" stroke="{t.halo}" stroke-width="5.5" '
                          'stroke-linecap="round" stroke-opacity="0.85"/>'))
    dash = ' stroke-dasharray="6 4"' if m.op == "copy" else ""
    # Many arrows at once (everyone to everyone): thinner and see-through, so the cells show.
    width, alpha = ("2.2", "1") if chip else ("1.1", "0.55")
    g.append(draw.Raw(f'<path d="{path}" fill="none" stroke="{colour}" stroke-width="{width}" '
                      f'stroke-opacity="{alpha}"{dash}/>'))
    g.append(draw.Lines(*_head(cx, cy, x1, y1, 9.0 if chip else 6.0), close=True, fill=colour,
                        fill_opacity=alpha))
    tag = None
    if chip:
        word = "add" if m.op == "reduce" else "copy"
        # Tags of arrows that share a path (both ways, or two lanes) sit apart along it.
        at = 0.5 + (0.2 if repeat % 2 else -0.2) if repeat else 0.5
        if both:
            at = 0.25  # each near its own sender
        if not r.curved:  # lines: where the route puts it, lanes on one hop apart along it
            at = r.tag_at + ((0.2 if repeat % 2 else -0.2) if repeat else 0.0)
        if behind:  # in the gap beside the lower end's row, which no shorter arrow crosses
            reach = GAP_Y / 2 / max(abs(y1 - y0), 1.0)
            at = max(0.5, 1 - reach) if y1 > y0 else min(0.5, reach)
        cw = text_width(word, 10) + 8
        placed = [] if placed is None else placed
        # Both ways across a narrow gap: tags near each sender would cover the other arrow's
        # head, so each sits mid-gap, and a second one steps off the first up or down.
        narrow = r.curved and both and abs(x1 - x0) < 3 * cw and abs(y1 - y0) < abs(x1 - x0)
        if narrow:
            at = 0.5
        for shift in (0.0,) if narrow else (0.0, -0.15, 0.15, -0.3, 0.3):
            u = at if not shift else min(max(at + shift, 0.1), 0.9)
            mx, my = r.at(u)
            hit = [py for px, py, pw in placed if abs(mx - px) < (cw + pw) / 2 and abs(my - py) < 15]
            if narrow and hit:
                my = hit[0] + (16 if my >= hit[0] else -16)
            if not hit:
                break
        placed.append((mx, my, cw))
        tag = draw.Group(class_="tag", data_src=m.src + 1, data_dst=m.dst + 1, data_op=m.op)
        tag.append(draw.Rectangle(mx - cw / 2, my - 7.5, cw, 15, rx=7.5, fill=t.background,
                                  stroke=colour, stroke_width=1.2))
        tag.append(draw.Text(word, 10, mx, my, text_anchor="middle", dominant_baseline="central",
                             fill=colour, font_weight="bold"))
    return g, tag


def _legend(d, f: Frame, t: Theme, y: float, width: float) -> None:
    import drawsvg as draw
    x = 18.0
    if f.gpus <= DETAILED_MAX_GPUS:
        d.append(draw.Text("gradients:", 11, x, y, fill=t.muted, dominant_baseline="central"))
        x += 62
        for k in range(f.gpus):
            d.append(draw.Rectangle(x, y - 5, 10, 10, rx=2, fill=gpu_colour(k, f.gpus, t)))
            x += 13
        x += 8
    d.append(draw.Rectangle(x, y - 5, 10, 10, rx=2, fill=t.complete))
    d.append(draw.Text("complete sum", 11, x + 14, y, fill=t.muted, dominant_baseline="central"))
    x += 100
    d.append(draw.Line(x, y, x + 22, y, stroke=t.reduce, stroke_width=2.2))
    d.append(draw.Text("add (reduce)", 11, x + 27, y, fill=t.muted, dominant_baseline="central"))
    x += 104
    d.append(draw.Line(x, y, x + 22, y, stroke=t.copy, stroke_width=2.2, stroke_dasharray="6 4"))
    d.append(draw.Text("copy", 11, x + 27, y, fill=t.muted, dominant_baseline="central"))
    if f.lanes > 1:
        x += 62
        d.append(draw.Text(f"{f.lanes} lanes:", 11, x, y, fill=t.muted, dominant_baseline="central"))
        x += 50
        for lane in range(f.lanes):
            d.append(draw.Line(x, y, x + 16, y, stroke=lane_colour(lane), stroke_width=3))
            x += 20


def _counters(f: Frame) -> str:
    """The counters so far; the busiest GPU is the whole run's, so its counts say of how many."""
    return (f"step {f.position} of {f.steps} · {plural(f.moved, 'element')} moved in "
            f"{plural(f.messages, 'message')} · busiest {gpu_name(f.busiest)} sent {f.busiest_sent:,} of "
            f"{f.busiest_total[0]:,}, received {f.busiest_received:,} of {f.busiest_total[1]:,}")


def _counters_line(f: Frame, t: Theme, width: float, height: float):
    """The counters under the picture, squeezed to its width when long (a million elements
    on 2 GPUs), as a long label is in its cell: every number stays whole."""
    import drawsvg as draw
    text, room = _counters(f), width - 36
    squeeze = {"textLength": room, "lengthAdjust": "spacingAndGlyphs"} if text_width(text, 12) > room else {}
    return draw.Text(text, 12, 18, height - FOOTER + 20, fill=t.text, class_="counters", **squeeze)


BANNER_SIZE = 20       # the banner's font size when it fits on one line
BANNER_WRAPPED = 17    # its two lines' size when it does not: both fit in the title block
# DejaVu Sans Bold's advance widths (in ems), each class's widest but a few: an estimate that
# errs wide, so that a banner said to fit does fit.
_BOLD_WIDTHS = ((" ", 0.35), ("ijlIJ'", 0.38), ("ftr", 0.5), ("mwMW…", 1.1), ("+", 0.84),
                ("₀₁₂₃₄₅₆₇₈₉", 0.44), ("0123456789", 0.7), ("abcdeghknopqsuvxyz", 0.72),
                ("ABCDEFGHKLNOPQRSTUVXYZ", 0.85))
_BOLD = {c: w for chars, w in _BOLD_WIDTHS for c in chars}


def title_width(text: str, size: float) -> float:
    """About how wide DejaVu Sans Bold sets `text` at `size` px (a little wide, never narrow
    for the letters, digits and punctuation a banner uses)."""
    return size * sum(_BOLD.get(c, 0.62 if c.isalpha() else 0.46) for c in text)


def banner_lines(banner: str, room: float) -> tuple[float, list[str]]:
    """The banner's font size and lines: one line at BANNER_SIZE where it fits in `room` px, else
    two smaller ones broken where the sentence breaks (before a bracket, after a colon), so that
    a long goal ('Done: every GPU holds its shard of the sum (GPU k: segment k)') is not cut."""
    if title_width(banner, BANNER_SIZE) <= room:
        return BANNER_SIZE, [banner]
    breaks = [i for i in range(1, len(banner)) if banner[i] == " "]
    bracket = [i for i in breaks if banner[i + 1] == "("]
    colon = [i for i in breaks if banner[i - 1] == ":" and banner.count("(", 0, i) == banner.count(")", 0, i)]

    def fits(i: int) -> bool:
        return max(title_width(banner[:i], BANNER_WRAPPED), title_width(banner[i + 1:], BANNER_WRAPPED)) <= room
    # Before a bracket, else after a colon outside brackets, else the most even break.
    at = next((i for i in [*reversed(bracket), *reversed(colon)] if fits(i)), None)
    if at is None:
        at = min(breaks, key=lambda i: abs(2 * i - len(banner)), default=len(banner))
    return BANNER_WRAPPED, [_clipped(banner[:at] + " ", BANNER_WRAPPED, room, title_width),
                            _clipped(banner[at + 1:], BANNER_WRAPPED, room, title_width)]


def _title(d, f: Frame, t: Theme, width: float) -> None:
    import drawsvg as draw
    size, lines = banner_lines(f.banner, width - 36)
    if len(lines) == 1:
        d.append(draw.Text(f.banner, size, 18, 30, fill=t.text, font_weight="bold", class_="title"))
        subtitle_y = 54
    else:  # two lines and the subtitle in the same 78 px as one line and the subtitle
        d.append(draw.Text("\n".join(lines), size, 18, 25, line_height=1.25, fill=t.text,
                           font_weight="bold", class_="title"))
        subtitle_y = 68
    d.append(draw.Text(_clipped(f.title, 13, width - 36), 13, 18, subtitle_y, fill=t.muted,
                       class_="subtitle"))


def _clipped(text: str, size: float, room: float, measure=text_width) -> str:
    """The text, cut with '…' where it would run past `room` px (many rings' orders)."""
    if measure(text, size) <= room:
        return text
    while text and measure(text + "…", size) > room:
        text = text[:-1]
    return text.rstrip(" ,;·") + "…"


def draw_frame(f: Frame, lay: Layout | None, t: Theme, size: tuple[int, int] | None = None) -> Drawn:
    """The SVG of one frame; `lay` is the columns' layout (None: the heat map, beyond 16 GPUs)."""
    if lay is None or f.gpus > DETAILED_MAX_GPUS:
        return draw_heat_map(f, t, size)
    import drawsvg as draw
    width, height = detailed_size(lay)
    d = _drawing(width, height, t, size)
    _title(d, f, t, width)
    body = draw.Group(transform=f"translate({(width - lay.right) / 2:.1f},{TOP})")
    for m, x, y, w, h in lay.boxes:
        node = draw.Group(class_="node", data_node=m + 1)
        node.append(draw.Rectangle(x, y, w, h, rx=10, fill="none", stroke=t.muted, stroke_width=1.2,
                                   stroke_dasharray="2 3"))
        body.append(node)
    sending, receiving = {}, {}
    for m in f.moves:
        colour = lane_colour(m.lane) if f.lanes > 1 else (t.reduce if m.op == "reduce" else t.copy)
        for s in range(m.first, m.last + 1):
            sending.setdefault((m.src, s), colour)
            receiving[(m.dst, s)] = colour
    seen: dict[tuple[int, int], int] = {}
    hops = Counter((m.src, m.dst) for m in f.moves)
    pairs = set(hops)
    tags, placed = [], []
    chips = len(f.moves) <= MAX_CHIPS and GAP_X >= 40
    fans = spread_ends(f.moves, lay)
    # An arrow to a row beyond the next is drawn under the columns, so it passes behind the
    # row between (a star's centre sending to its second row) instead of across its labels.
    behind, front = [], []
    slots = around_slots(lay, [(m.src, m.dst) for m in f.moves])
    for m, slot in zip(f.moves, slots):
        repeat = seen.get((m.src, m.dst), 0)
        seen[(m.src, m.dst)] = repeat + 1
        skips = abs(lay.row_of(m.src)[0] - lay.row_of(m.dst)[0]) > 1 and beside(lay, m, 0) is None
        arrow, tag = _transfer(m, lay, t, repeat, f.lanes, chips, (m.dst, m.src) in pairs,
                               hops[(m.src, m.dst)], fans[(m.src, m.dst)], skips, placed, slot or 0)
        (behind if skips else front).append(arrow)
        if tag is not None:
            tags.append(tag)
    for arrow in behind:
        body.append(arrow)
    body.append(draw.Raw(columns(f, lay, t, sending, receiving)))
    for arrow in front:
        body.append(arrow)
    for tag in tags:  # above every arrow, so that no line crosses a tag
        body.append(tag)
    for m, x, y, _w, _h in lay.boxes:  # above the arrows too, haloed: an arc between nodes crosses it
        body.append(draw.Text(f"node {m + 1}", 11, x + 8, y - 6, fill=t.muted, stroke=t.background,
                              stroke_width=3, paint_order="stroke", class_="node-label"))
    d.append(body)
    d.append(_counters_line(f, t, width, height))
    _legend(d, f, t, height - FOOTER + 44, width)
    return Drawn(d.as_svg(), width, height)


def _drawing(width: float, height: float, t: Theme, size: tuple[int, int] | None):
    import drawsvg as draw
    shown_w, shown_h = (width, height) if size is None else _scaled(width, height, size)
    d = draw.Drawing(shown_w, shown_h, font_family=FONT)
    d.view_box = (0, 0, width, height)
    d.append(draw.Rectangle(0, 0, width, height, fill=t.background))
    return d


def _scaled(width: float, height: float, size: tuple[int, int]) -> tuple[float, float]:
    """The shown size for --dimensions W or WxH (0: keep the drawing's aspect ratio)."""
    w, h = size
    if w and h:
        return w, h
    if w:
        return w, round(height * w / width)
    return round(width * h / height), h


def detailed_size(lay: Layout) -> tuple[float, float]:
    """The natural (width, height) in px of a frame of columns laid out as `lay`."""
    return max(lay.right, MIN_WIDTH), TOP + lay.bottom + FOOTER


def _heat_map_geometry(gpus: int, segments: int) -> tuple[float, ...]:
    """The heat map's cell and matrix cell sizes, the grid's left and top, the matrix's left,
    and the frame's natural width and height in px."""
    cell = max(3.0, min(14.0, 560.0 / max(segments, gpus)))
    grid_w, grid_h = segments * cell, gpus * cell
    mat = max(2.0, min(8.0, 300.0 / gpus))
    left, top = 70.0, TOP + 40
    mat_x = left + max(grid_w, 300) + 60  # past the grid's caption too
    width = max(MIN_WIDTH, mat_x + max(gpus * mat, 190) + 30)
    height = top + max(grid_h, gpus * mat) + 30 + KEY_H + FOOTER
    return cell, mat, left, top, mat_x, width, height


def heat_map_size(gpus: int, segments: int) -> tuple[float, float]:
    """The natural (width, height) in px of a heat map frame (beyond 16 GPUs)."""
    return _heat_map_geometry(gpus, segments)[-2:]


def draw_heat_map(f: Frame, t: Theme, size: tuple[int, int] | None = None) -> Drawn:
    """Beyond 16 GPUs: each buffer a small cell, darker the more of its sum it holds (the complete
    sum in full colour), and who sends to whom in this step as a G × G matrix."""
    import drawsvg as draw
    cell, mat, left, top, mat_x, width, height = _heat_map_geometry(f.gpus, f.segments)
    grid_h = f.gpus * cell
    d = _drawing(width, height, t, size)
    _title(d, f, t, width)
    d.append(draw.Text("each GPU's segments: how much of the sum they hold", 11, left, top - 10,
                       fill=t.muted))
    back = t.panel
    # The key: how dark a cell is for how many GPUs' copies it holds, under the grid.
    ky = top + max(grid_h, f.gpus * mat) + 22
    which = f"segments 1 to {f.segments} from left to right" if f.segments > 1 else "one segment per GPU"
    d.append(draw.Text(f"{which}; a cell holds:", 11, left, ky,
                       fill=t.muted, dominant_baseline="central"))
    kx = left
    ky += 20
    for count, words in ((1, "its own copy"), (max(1, f.gpus // 2), f"{max(1, f.gpus // 2)} GPUs'"),
                         (f.gpus - 1, f"{f.gpus - 1} GPUs'")):
        d.append(draw.Rectangle(kx, ky - 6, 12, 12, fill=_blend(back, t.reduce, 0.15 + 0.75 * count / f.gpus)))
        d.append(draw.Text(words, 11, kx + 17, ky, fill=t.muted, dominant_baseline="central"))
        kx += 30 + text_width(words, 11)
    d.append(draw.Rectangle(kx, ky - 6, 12, 12, fill=t.complete))
    d.append(draw.Text(f"all {f.gpus}: the complete sum", 11, kx + 17, ky, fill=t.muted,
                       dominant_baseline="central"))
    for k in range(f.gpus):
        g = draw.Group(class_="gpu", data_gpu=k + 1)
        if k == 0 or k == f.gpus - 1 or (k + 1) % 8 == 0:
            g.append(draw.Text(gpu_name(k), 10, left - 6, top + (k + 0.5) * cell, text_anchor="end",
                               dominant_baseline="central", fill=t.muted))
        for s in range(f.segments):
            holds, done = f.holds[k][s], f.complete[k][s]
            share = len(set(holds)) / f.gpus
            fill = t.complete if done else _blend(back, t.reduce, 0.15 + 0.75 * share) if holds else back
            c = draw.Group(class_="segment", data_gpu=k + 1, data_segment=s + 1,
                           data_holds=",".join(str(x + 1) for x in holds))
            c.append(draw.Title(f.labels[k][s]))
            c.append(draw.Rectangle(left + s * cell, top + k * cell, cell - 0.5, cell - 0.5, fill=fill))
            g.append(c)
        d.append(g)
    d.append(draw.Text("who sends to whom in this step", 11, mat_x, top - 24, fill=t.muted))
    d.append(draw.Text("(row: sender, column: receiver)", 11, mat_x, top - 10, fill=t.muted))
    d.append(draw.Rectangle(mat_x, top, f.gpus * mat, f.gpus * mat, fill="none", stroke=t.muted,
                            stroke_width=0.6))
    for m in f.moves:
        colour = t.reduce if m.op == "reduce" else t.copy
        g = draw.Group(class_="transfer", data_src=m.src + 1, data_dst=m.dst + 1, data_op=m.op,
                       data_first=m.first + 1, data_last=m.last + 1, data_sent=m.sent)
        g.append(draw.Title(m.sentence))
        g.append(draw.Rectangle(mat_x + m.dst * mat, top + m.src * mat, mat, mat, fill=colour))
        d.append(g)
    d.append(_counters_line(f, t, width, height))
    _legend(d, f, t, height - FOOTER + 44, width)
    return Drawn(d.as_svg(), width, height)


def _blend(a: str, b: str, share: float) -> str:
    ca = [int(a[i:i + 2], 16) for i in (1, 3, 5)]
    cb = [int(b[i:i + 2], 16) for i in (1, 3, 5)]
    return "#" + "".join(f"{round(x + (y - x) * share):02x}" for x, y in zip(ca, cb))
