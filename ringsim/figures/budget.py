"""What a figure would cost, estimated from its plan before a frame is drawn.

A figure takes the time of simulating its plan up to the last frame (sim/work.py), then time
per segment buffer of every frame (a cell, its label and, past 16 GPUs, the list of GPUs it
holds), per transfer (an arrow, or a cell of the who-sends-to-whom matrix) and per frame;
and each kind of file has its own cost: a .gif and a .png are rasterised pixel by pixel, a
.pdf lays out every frame's SVG at once (Typst holds them all), and an .html page carries
every frame's SVG text. All of it follows from the plan's columns, the counts and the
drawing's natural size (its layout: nothing drawn).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.errors import RingsimError
from ..core.naming import plural
from ..core.plan import Plan
from ..core.units import format_seconds
from ..execute.memory import format_bytes
from ..sim.work import contributor_counts, run_of

MAX_SECONDS = 15.0   # estimated time one figure command may take
MAX_BYTES = 2_000_000_000  # working memory it may take, as a timeline: a picture, not a data set

# Measured on one core (drawsvg, typst, Pillow), rounded up. Drawing, per segment buffer of
# each frame: a cell with its label in the columns view (up to 16 GPUs), a smaller cell in
# the heat map beyond that, which also lists the GPUs the buffer holds.
SECONDS_PER_FRAME = 5e-3
SECONDS_PER_CELL = 10e-6
SECONDS_PER_ARROW = 120e-6       # a transfer drawn as an arrow between columns, routed
SECONDS_PER_HEAT_CELL = 20e-6
SECONDS_PER_HELD = 1.2e-6        # one GPU a heat map's cell lists
SECONDS_PER_MATRIX_MOVE = 30e-6  # a transfer as a cell of the heat map's matrix
# SVG text, per the same units (bytes)
SVG_PER_CELL = 400
SVG_PER_ARROW = 1600
SVG_PER_HEAT_CELL = 190
SVG_PER_HELD = 4
SVG_PER_MATRIX_MOVE = 300
SVG_PER_FRAME = 8000
# Each kind of file. The SVG text is held as Python strings for every frame, then copied into
# the page or handed to Typst.
BYTES_PER_SVG_BYTE = 12  # Python's strings of it (subscripts take two bytes a character)
SECONDS_PER_SVG_BYTE = 10e-9
PDF_SECONDS_PER_CELL = 40e-6     # Typst lays out every label and arrow of every page at once,
PDF_SECONDS_PER_ARROW = 400e-6   # and holds them all until the PDF is written
PDF_SECONDS_PER_HEAT_CELL = 6e-6
PDF_BYTES_PER_CELL = 15_000
PDF_BYTES_PER_HEAT_CELL = 1_500
PDF_BYTES_PER_HELD = 100
SECONDS_PER_PIXEL = 70e-9        # a .gif frame rasterised, sampled for the palette, quantised
PNG_SECONDS_PER_PIXEL = 25e-9
BYTES_PER_PIXEL = 13             # a frame's pixels as Typst draws them and as PNG
GIF_BYTES_PER_PIXEL = 24         # two frames at once (the next drawn while one is written)


@dataclass(frozen=True)
class FigureWork:
    """One figure's size: its frames, the buffers and transfers they draw, their size in
    pixels, and the estimated seconds and bytes of working memory."""

    suffix: str
    frames: int
    buffers: int          # segment buffers of one frame
    transfers: int        # arrows over every frame
    pixels: tuple[int, int]  # of one frame as rasterised (0, 0 for vector files)
    seconds: float
    bytes: int


def estimate(plan: Plan, elements: int, held: np.ndarray, positions: list[int], suffix: str,
             shown: tuple[float, float], detailed: bool) -> FigureWork:
    """The work of drawing `plan` (`elements` per GPU) at `positions` into a `suffix` file:
    `held` as for contributor_counts, `shown` a frame's size in px as rasterised, and
    `detailed` whether it is drawn as columns (else as a heat map)."""
    gpus, segments = plan.gpus, plan.segments
    wanted = set(positions)
    listed = 0
    for position, counts in enumerate(contributor_counts(plan, held)):
        if position in wanted:
            listed += int(counts[:gpus].sum())
        if position >= max(wanted):
            break
    frames = len(positions)
    moves = sum(len(plan.steps[p - 1]) for p in positions if p)
    # The frames are read from a Simulation stepped to the last of them, sentences and all.
    run = run_of(plan, elements, held, max(positions))
    if detailed:
        cells = plan.participants * segments * frames
        seconds = cells * SECONDS_PER_CELL + moves * SECONDS_PER_ARROW
        svg = cells * SVG_PER_CELL + moves * SVG_PER_ARROW
        pdf_seconds = cells * PDF_SECONDS_PER_CELL + moves * PDF_SECONDS_PER_ARROW
        pdf_bytes = cells * PDF_BYTES_PER_CELL
    else:
        cells = gpus * segments * frames
        seconds = (cells * SECONDS_PER_HEAT_CELL + listed * SECONDS_PER_HELD
                   + moves * SECONDS_PER_MATRIX_MOVE)
        svg = cells * SVG_PER_HEAT_CELL + listed * SVG_PER_HELD + moves * SVG_PER_MATRIX_MOVE
        pdf_seconds = cells * PDF_SECONDS_PER_HEAT_CELL
        pdf_bytes = cells * PDF_BYTES_PER_HEAT_CELL + listed * PDF_BYTES_PER_HELD
    seconds += frames * SECONDS_PER_FRAME + run.label_seconds() + run.number_seconds()
    svg += frames * SVG_PER_FRAME
    memory = svg * BYTES_PER_SVG_BYTE
    seconds += svg * SECONDS_PER_SVG_BYTE
    pixels = (0, 0)
    if suffix == ".pdf":
        seconds += pdf_seconds
        memory += pdf_bytes
    elif suffix in (".gif", ".png"):
        pixels = (round(shown[0]), round(shown[1]))
        area = pixels[0] * pixels[1]
        if suffix == ".gif":
            seconds += frames * area * SECONDS_PER_PIXEL
            memory += area * GIF_BYTES_PER_PIXEL
        else:
            seconds += area * PNG_SECONDS_PER_PIXEL
            memory += area * BYTES_PER_PIXEL
    return FigureWork(suffix, frames, gpus * segments, moves, pixels, seconds, int(memory))


def check(work: FigureWork) -> None:
    """Refuse, in one line with the figures, a figure estimated past MAX_SECONDS or MAX_BYTES."""
    if work.seconds <= MAX_SECONDS and work.bytes <= MAX_BYTES:
        return
    many = work.frames > 1
    article = "an" if work.suffix == ".html" else "a"
    what = f"{article} {work.suffix} of {plural(work.frames, 'frame') if many else 'one frame'}"
    detail = [f"{work.buffers:,} segment buffers" + (" each" if many else ""),
              plural(work.transfers, "transfer")]
    fixes = ["use fewer GPUs, channels or chunks"]
    if many:
        fixes.insert(0, "draw one step (--step K)")
    if work.pixels != (0, 0):
        detail.append(f"{work.pixels[0]:,} × {work.pixels[1]:,} px" + (" each" if many else ""))
        fixes.append("give --dimensions a smaller width (or width x height) in px")
    if len(fixes) > 1:
        fixes[-1] = "or " + fixes[-1]
    raise RingsimError(
        f"{what} would take about {format_bytes(work.bytes)} and {format_seconds(work.seconds)} "
        f"({', '.join(detail)}); the limits are {format_bytes(MAX_BYTES)} and "
        f"{format_seconds(MAX_SECONDS)}: {'; '.join(fixes)}")
