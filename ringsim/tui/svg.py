"""The TUI's screen as an SVG for slides (fonts installed locally, nothing loaded from the
internet), optionally cropped to the GPU view and the transfer list, and as a PNG."""

from __future__ import annotations

import io

from rich.console import Console, ConsoleOptions, RenderResult
from rich.segment import Segment
from rich.terminal_theme import MONOKAI
from textual.app import App
from textual.strip import Strip

# Rich's CONSOLE_SVG_FORMAT loads Fira Code from a CDN (so a slide shown offline, or in a
# viewer that blocks remote fonts, changes its look). These formats name fonts that are
# installed on most systems, then the generic monospace; {chrome} is the window frame.
FONTS = '"Fira Code", "DejaVu Sans Mono", "Liberation Mono", Menlo, Consolas, monospace'
_BODY = """\
    <style>
    .{unique_id}-matrix {{
        font-family: %s;
        font-size: {char_height}px;
        line-height: {line_height}px;
        font-variant-east-asian: full-width;
    }}
    .{unique_id}-title {{
        font-size: 18px;
        font-weight: bold;
        font-family: Arial, "Liberation Sans", "DejaVu Sans", sans-serif;
    }}
    {styles}
    </style>
    <defs>
    <clipPath id="{unique_id}-clip-terminal">
      <rect x="0" y="0" width="{terminal_width}" height="{terminal_height}" />
    </clipPath>
    {lines}
    </defs>
""" % FONTS
WINDOW_FORMAT = ("""<svg class="rich-terminal" viewBox="0 0 {width} {height}" \
xmlns="http://www.w3.org/2000/svg">
""" + _BODY + """
    {chrome}
    <g transform="translate({terminal_x}, {terminal_y})" clip-path="url(#{unique_id}-clip-terminal)">
    {backgrounds}
    <g class="{unique_id}-matrix">
    {matrix}
    </g>
    </g>
</svg>
""")
# Cropped: the view box is the terminal's text area itself; no frame, title or margins.
CROPPED_FORMAT = ("""<svg class="rich-terminal" viewBox="0 0 {terminal_width} {terminal_height}" \
xmlns="http://www.w3.org/2000/svg">
""" + _BODY + """
    <rect x="0" y="0" width="{terminal_width}" height="{terminal_height}" fill="%s"/>
    <g clip-path="url(#{unique_id}-clip-terminal)">
    {backgrounds}
    <g class="{unique_id}-matrix">
    {matrix}
    </g>
    </g>
</svg>
""" % MONOKAI.background_color.hex)


class _Rows:
    """Screen rows (Textual strips) as a Rich renderable, one line each."""

    def __init__(self, strips: list[Strip]) -> None:
        self.strips = strips

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        for strip in self.strips:
            yield from strip
            yield Segment.line()


def screen_strips(app: App) -> list[Strip]:
    """The app's current screen, row by row (what App.export_screenshot renders too)."""
    return app.screen._compositor.render_strips()


def screen_svg(app: App, title: str, rows: tuple[int, int] | None = None,
               strips: list[Strip] | None = None) -> str:
    """The app's current screen as SVG (or `strips`, a screen kept from earlier); with `rows`
    (first, end) only those rows, no window frame."""
    width, height = app.size
    strips = screen_strips(app) if strips is None else strips
    first, end = rows if rows is not None else (0, height)
    strips = strips[first:end]
    console = Console(width=width, height=len(strips), file=io.StringIO(), force_terminal=True,
                      color_system="truecolor", record=True, legacy_windows=False, safe_box=False)
    console.print(_Rows(strips), end="")
    code_format = CROPPED_FORMAT if rows is not None else WINDOW_FORMAT
    return console.export_svg(title=title, code_format=code_format)


def svg_to_png(svg: str) -> bytes:
    """Rasterise an SVG with resvg (resvg-py: a self-contained wheel, no system libraries)."""
    import resvg_py
    return bytes(resvg_py.svg_to_bytes(svg_string=svg))
