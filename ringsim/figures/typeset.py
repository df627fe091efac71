"""SVG frames as pages, through Typst (the `typst` wheel: Typst's compiler in one self-contained
binary, no cairo or other system library): a PDF deck of vector pages, or each page as PNG.

Typst reads an SVG with usvg and writes it into the PDF with svg2pdf (github.com/typst/svg2pdf),
shapes as paths and text as text in an embedded font, so a slide stays sharp at any zoom and
its labels can be searched and copied. Its PNG comes from the same reading, drawn by tiny-skia
(resvg's renderer), about four times faster than resvg-py for a 16-GPU figure, with the fonts
found once per process. Frames become PNG one compile each, so that only one frame's pixels are
held at a time however long the animation.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from ..core.errors import RingsimError

CSS_PPI = 96.0  # an SVG's px is a CSS px: 96 per inch, and a PDF's pt is 1/72 inch
PT_PER_PX = 72.0 / CSS_PPI
WHITE = "#ffffff"
T, U = TypeVar("T"), TypeVar("U")
# typst-py forgets what a compile memoised (an SVG frame's parsed shapes and its drawn pixels,
# megabytes at 16 GPUs, tens of them at 4096 px) once it has gone unused for 10 later compiles.
# As many compiles of an empty page after each frame, well under a millisecond each, let it go
# before the next frame is drawn, so that only one frame's pixels are held at a time.
FORGET_COMPILES = 10
EMPTY_PAGE = b"#set page(width: 1pt, height: 1pt)\n"


def _typst():
    try:
        import typst
    except ImportError:
        raise RingsimError("this output needs typst: pip install '.[figures]' from a clone of ringsim "
                           "(or pip install typst)") from None
    return typst


@functools.lru_cache(maxsize=1)
def _compiler():
    """One compiler for the process: finding the system's fonts is the slow part of a compile."""
    typst = _typst()
    return typst.Compiler(font_paths=typst.Fonts(include_system_fonts=True, include_embedded_fonts=True))


def _source(sizes: list[tuple[float, float]], title: str, background: str) -> str:
    """The Typst document: page k is frame k's SVG (the input `f{k}`) fitted to `sizes[k]`, on
    the theme's background where the page's shape differs. No date is set, so the same frames
    give the same PDF bytes."""
    lines = ['#set document(title: sys.inputs.title, date: none)',
             f'#set page(margin: 0pt, fill: rgb("{background}"))']
    for k, (w, h) in enumerate(sizes):
        lines.append(f'#page(width: {w * PT_PER_PX:.3f}pt, height: {h * PT_PER_PX:.3f}pt)'
                     f'[#image(bytes(sys.inputs.f{k}), format: "svg", width: 100%, height: 100%, fit: "contain")]')
    return "\n".join(lines) + "\n"


def _compile(svgs: list[str], sizes: list[tuple[float, float]], title: str, background: str, **how):
    inputs = {f"f{k}": svg for k, svg in enumerate(svgs)}
    inputs["title"] = title
    typst = _typst()
    try:
        return _compiler().compile(_source(sizes, title, background).encode("utf-8"),
                                   sys_inputs=inputs, **how)
    except typst.TypstError as error:  # a bug here, not the user's: say it in one line all the same
        raise RingsimError(f"typst could not lay out the figure: {error.message}") from None


def pdf(svgs: list[str], sizes: list[tuple[float, float]], title: str = "ringsim",
        background: str = WHITE) -> bytes:
    """A PDF deck of vector pages, one per frame, each `sizes[k]` CSS px (at 0.75 pt per px)."""
    return bytes(_compile(svgs, sizes, title, background, format="pdf", pdf_tags=False))


def _forget() -> None:
    """Let typst drop what the last compile memoised (see FORGET_COMPILES)."""
    compiler = _compiler()
    for _ in range(FORGET_COMPILES):
        compiler.compile(EMPTY_PAGE, format="svg")


def _page_png(svg: str, size: tuple[float, float], background: str) -> bytes:
    out = _compile([svg], [size], "ringsim", background, format="png", ppi=CSS_PPI)
    _forget()
    return bytes(out[0] if isinstance(out, list) else out)


def one_ahead(work: Callable[[T], U], items: Sequence[T]) -> Iterator[U]:
    """`work` of each item in turn, the next one worked out on a second thread while the caller
    uses this one: typst, and Pillow's decoding, let go of Python's lock, so two cores share the
    load, and no more than two results are held at once."""
    if not items:
        return
    with ThreadPoolExecutor(max_workers=1) as pool:
        ahead = pool.submit(work, items[0])
        for k in range(1, len(items) + 1):
            done = ahead.result()
            if k < len(items):
                ahead = pool.submit(work, items[k])
            yield done


def pngs(svgs: list[str], sizes: list[tuple[float, float]], background: str = WHITE) -> Iterator[bytes]:
    """Each frame as PNG bytes, `sizes[k]` px (a CSS px each), the frame fitted inside, drawn one
    at a time as the caller takes them (the next one meanwhile, see `one_ahead`)."""
    return one_ahead(lambda k: _page_png(svgs[k], sizes[k], background), range(len(svgs)))


def png(svg: str, size: tuple[float, float], background: str = WHITE) -> bytes:
    """One frame as PNG bytes (see `pngs`)."""
    return _page_png(svg, size, background)
