"""Write a simulation's pictures to a file chosen by its suffix: .svg, .png (one step), .pdf (one
page per step), .gif and .html (animated over every step). Files are written whole or not at
all: into a temporary file beside the target, then renamed over it."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from ..core.errors import RingsimError
from ..sim.simulation import Simulation
from . import page, raster
from .render import drawn
from .theme import theme as find_theme

STILL = (".svg", ".png")
ANIMATED = (".gif", ".html", ".pdf")
SUFFIXES = STILL + ANIMATED
MIN_SIZE, MAX_SIZE = 64, 4096  # px, --dimensions' bounds


def parse_size(text: str) -> tuple[int, int]:
    """'800' (the width) or '800x600' as (width, height) in px; 0 keeps the aspect ratio."""
    parts = str(text).lower().split("x")
    if len(parts) not in (1, 2) or not all(p.strip().isdigit() for p in parts):
        raise RingsimError(f"--dimensions must be a width in px (800) or width x height (800x600), got {text!r}")
    values = [int(p) for p in parts]
    for v in values:
        if not MIN_SIZE <= v <= MAX_SIZE:
            raise RingsimError(f"--dimensions must be from {MIN_SIZE} to {MAX_SIZE} px, got {text!r}")
    return (values[0], values[1] if len(values) == 2 else 0)


def suffix_of(path: str | os.PathLike) -> str:
    """The output's suffix, checked."""
    suffix = Path(path).suffix.lower()
    if suffix not in SUFFIXES:
        raise RingsimError(f"cannot tell what to draw from {str(path)!r}: the file name must end in "
                           f"{', '.join(SUFFIXES)}")
    return suffix


def check_target(path: str | os.PathLike) -> Path:
    """The output path, refused at once when its folder is missing or not writable."""
    target = Path(path)
    folder = target.parent if str(target.parent) else Path(".")
    if target.is_dir():
        raise RingsimError(f"cannot write {str(target)!r}: it is a folder")
    if not folder.is_dir():
        raise RingsimError(f"cannot write {str(target)!r}: the folder {str(folder)!r} does not exist")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise RingsimError(f"cannot write {str(target)!r}: no permission to write in {str(folder)!r}")
    return target


def write_atomically(path: Path, data: bytes) -> None:
    """Write the bytes to a temporary file beside `path`, then rename it over `path`."""
    try:
        fd, temp = tempfile.mkstemp(dir=path.parent if str(path.parent) else ".",
                                    prefix=f".{path.name}.", suffix=".part")
    except OSError as e:
        raise RingsimError(f"cannot write {str(path)!r}: {e.strerror or e}") from None
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.chmod(temp, 0o644)
        os.replace(temp, path)
    except OSError as e:
        try:
            os.unlink(temp)
        except OSError:
            pass
        raise RingsimError(f"cannot write {str(path)!r}: {e.strerror or e}") from None


def render(sim: Simulation, suffix: str, step: int | None = None, theme: str = "light",
           size: tuple[int, int] | None = None) -> bytes:
    """The bytes of the picture: one step for .svg/.png (default: step 1, or the start of an
    empty plan), every step for .gif/.html/.pdf unless `step` picks one."""
    find_theme(theme)
    if suffix in STILL and step is None:
        step = min(1, len(sim.plan))
    positions = None if step is None else [step]
    # Raster sizes are applied when rasterising; the SVG itself keeps its natural size then.
    svg_size = size if suffix in (".svg", ".html") else None
    frames = drawn(sim, positions, theme, svg_size)
    svgs = [f.svg for f in frames]
    width = (size[0] or round(frames[0].width * size[1] / frames[0].height)) if size else None
    if suffix == ".svg":
        return svgs[0].encode("utf-8")
    if suffix == ".png":
        return raster.png(svgs[0], width)
    if suffix == ".gif":
        return raster.gif(svgs, width)
    if suffix == ".pdf":
        return raster.pdf(svgs, width, [f.width for f in frames])
    return page.html(sim.title, svgs, find_theme(theme)).encode("utf-8")


def write(sim: Simulation, path: str | os.PathLike, step: int | None = None, theme: str = "light",
          size: tuple[int, int] | None = None) -> int:
    """Draw and write the file; returns its size in bytes."""
    suffix = suffix_of(path)
    target = check_target(path)
    data = render(sim, suffix, step, theme, size)
    write_atomically(target, data)
    return len(data)
