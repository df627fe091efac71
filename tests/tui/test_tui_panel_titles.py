"""A GPU panel's title keeps its marks on a narrow panel: decoration goes first, then the name
shortens (at 80×24 with G = 8 a panel has four columns of title: 'G1●', never 'GPU…')."""

from ringsim import Simulation
from ringsim.tui.app import RingsimApp
from ringsim.tui.widgets.gpu_panel import fitting, load_wordings, title_wordings

SMALL, WIDE = (80, 24), (140, 45)


def test_wordings_go_from_full_to_the_marks_alone():
    words = title_wordings(0, selected=True, slow=0.5, master=True, bottleneck=True)
    assert words[0] == "▸ GPU1 ×0.5 · master ●"
    assert words[-1] == "▸1●"
    assert fitting(words, 4) == "▸G1●" and fitting(words, 3) == "▸1●"
    assert fitting(words, 12) == "▸GPU1 ×0.5 ●" and fitting(words, 11) == "▸GPU1×0.5●" and fitting(words, None) == words[0]
    assert title_wordings(1) == ("GPU2", "G2", "2") and fitting(title_wordings(1), 4) == "GPU2"
    assert fitting(title_wordings(0, bottleneck=True), 4) == "G1●"
    assert fitting(load_wordings(8, 0), 4) == "↑8↓0" and fitting(load_wordings(8, 0), 9) == "↑8 ↓0"


async def test_80x24_g8_shows_the_bottleneck_mark_whole():
    app = RingsimApp(Simulation.create("master", 8, 8))
    async with app.run_test(size=SMALL) as pilot:
        await pilot.press("n")
        await pilot.pause()
        top = [strip.text for strip in app.screen._compositor.render_strips()][2]
        assert top.startswith("┏━ G1● ━") and "GPU…" not in top, top
        assert "─ GPU2 ─" in top and "─ GPU8 ─" in top


async def test_a_wide_terminal_keeps_the_full_title():
    app = RingsimApp(Simulation.create("master", 4, 8))
    async with app.run_test(size=WIDE) as pilot:
        await pilot.press("n")
        await pilot.pause()
        text = "\n".join(strip.text for strip in app.screen._compositor.render_strips())
        assert "GPU1 · master ●" in text


async def test_80x24_g8_shows_every_load_line_whole_on_a_row_of_its_own():
    # A 10-column panel's bottom edge has 4 columns of text: '↑0↓56' would be cut to '↑0↓…'.
    for algorithm, expected in (("master", ["↑0 ↓56"] + ["↑8 ↓0"] * 7), ("naive", ["↑56 ↓56"] * 8)):
        app = RingsimApp(Simulation.create(algorithm, 8, 8))
        async with app.run_test(size=SMALL) as pilot:
            await pilot.press("n")
            await pilot.pause()
            rows = [strip.text for strip in app.screen._compositor.render_strips()]
            loads = next(row for row in rows if "↑" in row and row.startswith(("┃", "│")))
            cells = [c.strip() for c in loads.replace("┃", "│").split("│") if c.strip()]
            assert cells == expected, loads
            assert "…" not in loads
            bottom = rows[rows.index(loads) + 1]
            assert bottom.startswith(("┗━━━━━━━━┛", "╰────────╯")), bottom  # the edge is plain
            assert len(bottom) == 80


async def test_a_wide_terminal_keeps_the_load_in_the_bottom_edge():
    app = RingsimApp(Simulation.create("master", 8, 8))
    async with app.run_test(size=WIDE) as pilot:
        await pilot.press("n")
        await pilot.pause()
        rows = [strip.text for strip in app.screen._compositor.render_strips()]
        assert any("━ ↑0 ↓56 ━" in row for row in rows)
        assert not any(row.startswith("┃ ↑0") for row in rows)
