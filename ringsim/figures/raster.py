"""SVG to pixels with resvg (resvg-py: a self-contained wheel, no system libraries such as
cairo), and pixels to GIF and PDF with Pillow."""

from __future__ import annotations

import hashlib
import io
import math

from ..core.errors import RingsimError

GIF_STEP_MS = 1400   # each step of the animation
GIF_LAST_MS = 3200   # the result stays a little longer
GIF_COLOURS = 128    # a palette this small keeps the G = 4 animation well under 1 MB


def _need(module: str, package: str):
    try:
        return __import__(module)
    except ImportError:
        raise RingsimError(f"this output needs {package}: pip install '.[figures]' from a clone of ringsim "
                           f"(or pip install {package})") from None


def png(svg: str, width: int | None = None) -> bytes:
    """The SVG as PNG bytes, `width` px wide (default: the SVG's own width)."""
    resvg_py = _need("resvg_py", "resvg-py")
    if width:
        return bytes(resvg_py.svg_to_bytes(svg_string=svg, width=int(width)))
    return bytes(resvg_py.svg_to_bytes(svg_string=svg))


def _image(svg: str, width: int | None):
    _need("PIL", "pillow")
    from PIL import Image
    return Image.open(io.BytesIO(png(svg, width))).convert("RGB")


def digest(svgs: list[str]) -> str:
    """A fingerprint of the frames' SVG text, kept in a GIF's comment (tests compare it)."""
    h = hashlib.sha256()
    for svg in svgs:
        h.update(svg.encode("utf-8"))
        h.update(b"\0")
    return h.hexdigest()


def gif(svgs: list[str], width: int | None = None) -> bytes:
    """An animated GIF of the frames, looping; its comment holds the frames' SVG digest."""
    images = [_image(svg, width) for svg in svgs]
    from PIL import Image
    # One palette for every frame, taken from all of them: colours that only some steps
    # show (the arrows, the partial sums) keep their own entries.
    sheet = Image.new("RGB", (images[0].width, sum(im.height for im in images)))
    top = 0
    for im in images:
        sheet.paste(im, (0, top))
        top += im.height
    palette = sheet.quantize(colors=GIF_COLOURS, method=Image.Quantize.MEDIANCUT)
    frames = [im.quantize(palette=palette, dither=Image.Dither.NONE) for im in images]
    out = io.BytesIO()
    durations = [GIF_STEP_MS] * (len(frames) - 1) + [GIF_LAST_MS]
    frames[0].save(out, format="GIF", save_all=True, append_images=frames[1:], loop=0,
                   duration=durations, optimize=False, disposal=1,
                   comment=f"ringsim frames sha256 {digest(svgs)}".encode("ascii"))
    return out.getvalue()


def pdf(svgs: list[str], width: int | None = None, natural: list[float] | None = None) -> bytes:
    """A PDF deck, one page per frame (each page the frame rendered at twice its size).

    `natural` holds each frame's own width in px, so that a page is rendered once, at twice
    the width resvg gives the frame (a fractional width rounded half up)."""
    images = []
    for k, svg in enumerate(svgs):
        if width:
            shown = width
        elif natural is not None:
            shown = 2 * math.floor(natural[k] + 0.5)
        else:
            shown = _image(svg, None).width * 2
        images.append(_image(svg, shown))
    out = io.BytesIO()
    images[0].save(out, format="PDF", save_all=True, append_images=images[1:], resolution=144.0)
    return out.getvalue()
