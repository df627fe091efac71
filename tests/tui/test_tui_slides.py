"""Exported slides (`ringsim export`): the screen without what only a terminal user can use
(the key footer, "paused", which keys scroll), and the shape pane clear of every edge."""

import pytest

from ringsim import Simulation
from ringsim.cli import main
from ringsim.tui.app import RingsimApp

from .test_tui_cli import _svg_text


def test_slides_have_no_key_footer_and_no_play_state(tmp_path):
    assert main(["export", "--svg", str(tmp_path), "--size", "140x45"]) == 0
    frames = sorted(tmp_path.glob("*.svg"))
    assert len(frames) == 7
    for path in frames:
        text = _svg_text(path)
        for gone in ("Quit", "Help", "n Next", "paused", "tab here"):
            assert gone not in text, (path.name, gone)
        assert "Ring all-reduce" in text and "step " in text
        # A symmetric ring: no GPU is shown as the bottleneck on any slide.
        assert "bottleneck" not in text, path.name


def test_slides_of_the_master_name_its_bottleneck(tmp_path):
    assert main(["export", "--svg", str(tmp_path), "-a", "master", "--size", "140x45"]) == 0
    assert "bottleneck GPU1" in _svg_text(sorted(tmp_path.glob("01-*.svg"))[0])


def test_slides_that_cannot_show_every_sentence_count_them_without_keys(tmp_path):
    assert main(["export", "--svg", str(tmp_path), "-a", "naive", "--size", "80x24"]) == 0
    text = _svg_text(sorted(tmp_path.glob("01-*.svg"))[0])
    assert "This iteration · 7 more below" in text and "tab" not in text  # 5 of 12 shown


@pytest.mark.parametrize("size", [(140, 45), (120, 40)])
async def test_the_shape_pane_keeps_a_row_above_and_columns_right_of_its_drawing(size):
    app = RingsimApp(Simulation.create("ring", 4, 8))
    async with app.run_test(size=size) as pilot:
        await pilot.press("n")
        await pilot.pause()
        shape = app.screen.query_one("#shape")
        rule = app.screen.query_one("#banner").region.bottom
        content = shape.content_region
        assert content.y >= rule + 1  # the top GPU's label is not against the banner's rule
        assert content.right <= size[0] - 2  # nor the rightmost label against the window edge
        rows = [strip.text for strip in app.screen._compositor.render_strips()]
        drawing = [row[content.x:content.right] for row in rows[content.y:content.bottom]]
        assert any("1" in row for row in drawing[:2]) and any(row.rstrip().endswith("2") for row in drawing)
        assert all(row[shape.region.right - 1] == " " for row in rows[shape.region.y:shape.region.bottom])
