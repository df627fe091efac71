"""Write a simulation's pictures to a file chosen by its suffix: .svg, .png (one step), .pdf (one
page per step), .gif and .html (animated over every step). Files are written whole or not at
all (core.files.atomic_output)."""

from __future__ import annotations

import os
from pathlib import Path

from ..core.checks import echo
from ..core.errors import RingsimError
from ..core.files import atomic_output, check_output
from ..core.textout import printable
from ..sim.simulation import Simulation
from . import budget, page, raster, typeset
from .draw import DETAILED_MAX_GPUS
from .frames import check_simulation, check_size
from .render import drawn, natural_size
from .theme import theme as find_theme

STILL = (".svg", ".png")
ANIMATED = (".gif", ".html", ".pdf")
SUFFIXES = STILL + ANIMATED
MIN_SIZE, MAX_SIZE = 64, 4096  # px, --dimensions' bounds
# A .png without --dimensions has 2 pixels per CSS px: at 1, the 11–12 px captions lose strokes
# (a 't' all but vanishes) and a projector blurs the picture as it enlarges it.
PNG_SCALE = 2
WHAT = "the figure"  # how errors name the file


def parse_size(text: str) -> tuple[int, int]:
    """'800' (the width) or '800x600' as (width, height) in px; 0 keeps the aspect ratio."""
    parts = str(text).lower().split("x")
    # 0-9 only: str.isdigit also takes ², which int() refuses
    if len(parts) not in (1, 2) or not all(p.strip().isascii() and p.strip().isdigit() for p in parts):
        raise RingsimError(f"--dimensions must be a width in px (800) or width x height (800x600), "
                           f"got {echo(text)}")
    for part in parts:
        digits = part.strip().lstrip("0") or "0"
        # more digits than MAX_SIZE has is out of range unread (int() refuses past 4,300)
        if len(digits) > len(str(MAX_SIZE)) or not MIN_SIZE <= int(digits) <= MAX_SIZE:
            raise RingsimError(f"--dimensions must be from {MIN_SIZE} to {MAX_SIZE} px, got {echo(text)}")
    values = [int(p) for p in parts]
    return (values[0], values[1] if len(values) == 2 else 0)


def suffix_of(path: str | os.PathLike) -> str:
    """The output's suffix, checked."""
    suffix = Path(path).suffix.lower()
    if suffix not in SUFFIXES:
        raise RingsimError(f"cannot tell what to draw from {str(path)!r}: the file name must end in "
                           f"{', '.join(SUFFIXES)}")
    return suffix


def check_target(path: str | os.PathLike) -> Path:
    """The output path, refused at once (before any drawing) when it is a folder, its folder is
    missing or it may not be written there."""
    target = Path(check_output(path, WHAT))
    folder = target.parent if str(target.parent) else Path(".")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise RingsimError(f"cannot write {WHAT} {printable(str(target))}: no permission to write in "
                           f"{printable(str(folder))}")
    return target


def write_bytes(path: str | os.PathLike, data: bytes) -> None:
    """Write the file whole or not at all (core.files.atomic_output)."""
    with atomic_output(path, WHAT, binary=True) as out:
        out.write(data)


def render(sim: Simulation, suffix: str, step: int | None = None, theme: str = "light",
           size: tuple[int, int] | None = None) -> bytes:
    """The bytes of the picture: one step for .svg/.png (default: step 1, or the start of an
    empty plan), every step for .gif/.html/.pdf unless `step` picks one. A .png is twice the
    picture's natural size (PNG_SCALE) unless `size` says otherwise."""
    check_simulation(sim)
    background = find_theme(theme).background
    if suffix in STILL and step is None:
        step = min(1, len(sim.plan))
    positions = None if step is None else [step]
    _check_work(sim, suffix, step, size)
    # Pages and rasters take their size from the page Typst lays each frame on; the SVG inside
    # keeps its natural size then.
    svg_size = size if suffix in (".svg", ".html") else None
    frames = drawn(sim, positions, theme, svg_size)
    svgs = [f.svg for f in frames]
    # --dimensions W or WxH sets each page's size in CSS px, as for an SVG: the frame is
    # scaled to fit it and centred (letterboxed) where WxH has another aspect ratio.
    sizes = [(f.width, f.height) if not size else _shown(f.width, f.height, size) for f in frames]
    if suffix == ".svg":
        return svgs[0].encode("utf-8")
    if suffix == ".png":
        w, h = sizes[0] if size else (sizes[0][0] * PNG_SCALE, sizes[0][1] * PNG_SCALE)
        return typeset.png(svgs[0], (w, h), background)
    if suffix == ".gif":
        return raster.gif(svgs, sizes, background)
    if suffix == ".pdf":
        return typeset.pdf(svgs, sizes, sim.title, background)
    return page.html(sim.title, svgs, find_theme(theme), fit=not size).encode("utf-8")


def _check_work(sim: Simulation, suffix: str, step: int | None,
                size: tuple[int, int] | None) -> None:
    """Refuse, before anything is drawn, a file that would take too long or too much memory
    (budget.py); a step out of range is left for frames() to name."""
    plan = sim.plan
    positions = list(range(len(plan) + 1)) if step is None else [step]
    if not all(isinstance(p, int) and not isinstance(p, bool) and 0 <= p <= len(plan)
               for p in positions):
        return
    check_size(sim, len(positions))  # the GPUs and buffers a figure can show at all, first
    natural = natural_size(sim)
    if suffix == ".png":
        shown = _shown(*natural, size) if size else (natural[0] * PNG_SCALE, natural[1] * PNG_SCALE)
    else:
        shown = _shown(*natural, size) if size else natural
    budget.check(budget.estimate(plan, sim.layout.elements,
                                 sim.collective.holdings(plan.gpus, plan.segments), positions,
                                 suffix, shown, plan.gpus <= DETAILED_MAX_GPUS))


def _shown(width: float, height: float, size: tuple[int, int]) -> tuple[float, float]:
    """The page size for --dimensions W or WxH (0: keep the frame's aspect ratio)."""
    w, h = size
    return (w or width * h / height, h or height * w / width)


def write(sim: Simulation, path: str | os.PathLike, step: int | None = None, theme: str = "light",
          size: tuple[int, int] | None = None) -> int:
    """Draw and write the file; returns its size in bytes."""
    target = check_target(path)  # first: a name that is no file name has no suffix either
    suffix = suffix_of(target)
    data = render(sim, suffix, step, theme, size)
    write_bytes(target, data)
    return len(data)
