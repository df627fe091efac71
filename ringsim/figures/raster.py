"""Frames to an animated GIF in two passes over the frames' PNG (typeset.pngs, drawn one at a
time): the first picks one palette for every frame from a sample of each, the second turns each
frame into palette indices and writes it at once. Only the compressed PNGs are kept between the
passes, never every frame's full-colour pixels, so memory stays near one frame's worth."""

from __future__ import annotations

import hashlib
import io
from typing import IO

from ..core.errors import RingsimError
from . import typeset

GIF_STEP_MS = 1400   # each step of the animation
GIF_LAST_MS = 3200   # the result stays a little longer
GIF_COLOURS = 128    # a palette this small keeps the G = 4 animation well under 1 MB
PALETTE_SAMPLE = 2_000_000  # pixels the palette is chosen from; more frames only cost time
DISPOSAL_KEEP = 1  # GIF: each frame is drawn over the last, so a frame need only hold what changed


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


def sample_step(sizes: list[tuple[float, float]]) -> int:
    """Every how many rows and columns the palette looks at, for about PALETTE_SAMPLE pixels."""
    pixels = sum(round(w) * round(h) for w, h in sizes)
    every = 1
    while pixels / (every * every) > PALETTE_SAMPLE:
        every += 1
    return every


def _sample(image, every: int, Image):
    """Every n-th row and column of a frame, never averaged, so a thin arrow's colour is kept."""
    if every == 1:
        return image
    return image.resize((max(1, image.width // every), max(1, image.height // every)),
                        Image.Resampling.NEAREST)


def _palette(parts: list, Image):
    """One palette from every frame's sample, so that colours only some steps show (the arrows,
    the partial sums) keep their own entries."""
    sheet = Image.new("RGB", (max(p.width for p in parts), sum(p.height for p in parts)),
                      parts[0].getpixel((0, 0)))
    top = 0
    for p in parts:
        sheet.paste(p, (0, top))
        top += p.height
    return sheet.quantize(colors=GIF_COLOURS, method=Image.Quantize.MEDIANCUT)


def write_gif(out: IO[bytes], svgs: list[str], sizes: list[tuple[float, float]],
              background: str = typeset.WHITE) -> None:
    """Write a looping GIF of the frames, `sizes[k]` px, to `out`; its comment holds the frames'
    SVG digest and every frame uses the one palette in its header."""
    Image = _pillow()
    # Image.save(save_all=True) keeps every frame until the last is in; GifImagePlugin's
    # getheader and getdata (documented, if old) write the header and each frame as they come.
    from PIL import GifImagePlugin, ImageChops
    every, parts, stored = sample_step(sizes), [], []
    for data in typeset.pngs(svgs, sizes, background):
        # Sampled before the copy in RGB: a full-size copy would double what a frame costs.
        parts.append(_sample(Image.open(io.BytesIO(data)), every, Image).convert("RGB"))
        stored.append(data)
    palette = _palette(parts, Image)
    del parts
    durations = [GIF_STEP_MS] * (len(stored) - 1) + [GIF_LAST_MS]
    previous = None

    def indexed(k: int):
        data, stored[k] = stored[k], b""  # each PNG goes as soon as its frame is drawn again
        return Image.open(io.BytesIO(data)).convert("RGB").quantize(palette=palette,
                                                                    dither=Image.Dither.NONE)

    for frame, duration in zip(typeset.one_ahead(indexed, range(len(stored))), durations):
        if previous is None:
            header, _ = GifImagePlugin.getheader(frame, info={
                "loop": 0, "comment": f"ringsim frames sha256 {digest(svgs)}".encode("ascii")})
            out.write(b"".join(header))
            box = (0, 0, *frame.size)
        else:
            # Only the rectangle that changed; an unchanged frame still gets its one pixel, so
            # that every step keeps its own frame and duration.
            box = ImageChops.subtract_modulo(frame, previous).getbbox(alpha_only=False) or (0, 0, 1, 1)
        piece = frame if box == (0, 0, *frame.size) else frame.crop(box)
        out.write(b"".join(GifImagePlugin.getdata(piece, box[:2], duration=duration,
                                                  disposal=DISPOSAL_KEEP)))
        previous = frame
    out.write(b";")  # the GIF's trailer


def gif(svgs: list[str], sizes: list[tuple[float, float]], background: str = typeset.WHITE) -> bytes:
    """A looping GIF of the frames, `sizes[k]` px; its comment holds the frames' SVG digest."""
    out = io.BytesIO()
    write_gif(out, svgs, sizes, background)
    return out.getvalue()
