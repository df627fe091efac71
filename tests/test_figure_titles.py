"""Every figure's title fits its canvas: for every collective, algorithm, G from 2 to 8 and step,
each line of the banner is narrower than the narrowest canvas, by the width the drawing lays it
out with and, where DejaVu Sans Bold is installed, by the font's own metrics."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

pytest.importorskip("drawsvg", reason="the figures extra (drawsvg) is not installed")

from ringsim.algorithms.collectives import COLLECTIVES  # noqa: E402
from ringsim.core.errors import RingsimError  # noqa: E402
from ringsim.figures.draw import BANNER_SIZE, MIN_WIDTH, banner_lines, title_width  # noqa: E402
from ringsim.figures.render import figure_svg  # noqa: E402
from ringsim.sim.simulation import Simulation  # noqa: E402

SVG = "{http://www.w3.org/2000/svg}"
ROOM = MIN_WIDTH - 36  # the narrowest canvas less its 18 px margins
BOLD = next((p for p in ("/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf",
                         "/usr/share/fonts/dejavu/DejaVuSans-Bold.ttf") if Path(p).exists()), None)


def _font_width(text: str, size: float) -> float | None:
    """The text's width set in DejaVu Sans Bold, or None without the font (or Pillow)."""
    if BOLD is None:
        return None
    try:
        from PIL import ImageFont
    except ImportError:
        return None
    return ImageFont.truetype(BOLD, round(size)).getlength(text)


def _banners(collective: str, gpus: int) -> set[str]:
    c, out = COLLECTIVES[collective], set()
    for name in c.algorithms:
        try:
            sim = Simulation(c.plan(gpus, name), 8, collective=c)
        except RingsimError:  # an algorithm that does not take this G
            continue
        for position in range(len(sim.plan) + 1):
            sim.goto(position)
            out.add(sim.banner)
    return out


@pytest.mark.parametrize("gpus", [2, 3, 4, 5, 6, 8])
@pytest.mark.parametrize("collective", list(COLLECTIVES))
def test_every_banner_fits_the_narrowest_canvas(collective, gpus):
    banners = _banners(collective, gpus)
    assert banners
    for banner in banners:
        size, lines = banner_lines(banner, ROOM)
        assert "".join(lines).replace(" ", "") == banner.replace(" ", ""), banner  # nothing cut
        for line in lines:
            assert title_width(line, size) <= ROOM, (banner, line)
            real = _font_width(line.rstrip(), size)
            assert real is None or real <= ROOM, (banner, line, real)


@pytest.mark.parametrize("collective, step", [("all-gather", 0), ("reduce-scatter", 3)])
def test_a_long_goal_is_drawn_on_two_lines_inside_the_canvas(collective, step):
    c = COLLECTIVES[collective]
    svg = figure_svg(Simulation(c.plan(4, "ring"), 8, collective=c), step)
    root = ET.fromstring(svg)
    width = float(root.get("viewBox").split()[2])
    title = next(e for e in root.iter(SVG + "text") if e.get("class") == "title")
    lines = [t.text for t in title.iter(SVG + "tspan")]
    assert len(lines) == 2 and lines[1] == "(GPU k: segment k)"
    assert title_width("".join(lines), BANNER_SIZE) > width - 36  # one line would not fit
    size = float(title.get("font-size"))
    for line in lines:
        real = _font_width(line.rstrip(), size)
        assert 18 + (real if real is not None else title_width(line, size)) <= width - 18, line
    # The subtitle sits below both lines.
    subtitle = next(e for e in root.iter(SVG + "text") if e.get("class") == "subtitle")
    assert float(subtitle.get("y")) > float(title.get("y")) + 2 * size


def test_a_short_banner_keeps_its_one_line():
    svg = figure_svg(Simulation.create("ring", 4), 2)
    title = next(e for e in ET.fromstring(svg).iter(SVG + "text") if e.get("class") == "title")
    assert title.text == "Reduce-scatter · iteration 2 of 3" and float(title.get("font-size")) == BANNER_SIZE
