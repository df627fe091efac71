"""Frames to an animated GIF: each frame drawn to pixels once (typeset.pngs, one compile for all),
then one palette for every frame and the GIF written by Pillow."""

from __future__ import annotations

import hashlib
import io

from ..core.errors import RingsimError
from . import typeset

GIF_STEP_MS = 1400   # each step of the animation
GIF_LAST_MS = 3200   # the result stays a little longer
GIF_COLOURS = 128    # a palette this small keeps the G = 4 animation well under 1 MB
PALETTE_SAMPLE = 2_000_000  # pixels the palette is chosen from; more frames only cost time


def _pillow():
    try:
        from PIL import Image
    except ImportError:
        raise RingsimError("this output needs pillow: pip install '.[figures]' from a clone of ringsim "
                           "(or pip install pillow)") from None
    return Image


def digest(svgs: list[str]) -> str:
    """A fingerprint of the frames' SVG text, kept in a GIF's comment (tests compare it)."""
    h = hashlib.sha256()
    for svg in svgs:
        h.update(svg.encode("utf-8"))
        h.update(b"\0")
    return h.hexdigest()


def _palette(images: list, Image):
    """One palette taken from every frame, so that colours only some steps show (the arrows, the
    partial sums) keep their own entries. Big animations are sampled: every n-th row and column
    of each frame, never averaged, so a thin arrow's colour is still there."""
    pixels = sum(im.width * im.height for im in images)
    every = 1
    while pixels / (every * every) > PALETTE_SAMPLE:
        every += 1
    parts = [im if every == 1 else im.resize((max(1, im.width // every), max(1, im.height // every)),
                                             Image.Resampling.NEAREST) for im in images]
    sheet = Image.new("RGB", (max(p.width for p in parts), sum(p.height for p in parts)), images[0].getpixel((0, 0)))
    top = 0
    for p in parts:
        sheet.paste(p, (0, top))
        top += p.height
    return sheet.quantize(colors=GIF_COLOURS, method=Image.Quantize.MEDIANCUT)


def gif(svgs: list[str], sizes: list[tuple[float, float]], background: str = typeset.WHITE) -> bytes:
    """A looping GIF of the frames, `sizes[k]` px; its comment holds the frames' SVG digest."""
    Image = _pillow()
    images = [Image.open(io.BytesIO(p)).convert("RGB") for p in typeset.pngs(svgs, sizes, background)]
    palette = _palette(images, Image)
    frames = [im.quantize(palette=palette, dither=Image.Dither.NONE) for im in images]
    out = io.BytesIO()
    durations = [GIF_STEP_MS] * (len(frames) - 1) + [GIF_LAST_MS]
    frames[0].save(out, format="GIF", save_all=True, append_images=frames[1:], loop=0,
                   duration=durations, optimize=False, disposal=1,
                   comment=f"ringsim frames sha256 {digest(svgs)}".encode("ascii"))
    return out.getvalue()
