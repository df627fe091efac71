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


def test_slides_that_cannot_show_every_sentence_count_them_without_keys(tmp_path, capsys):
    assert main(["export", "--svg", str(tmp_path), "-a", "naive", "--size", "80x24"]) == 0
    text = _svg_text(sorted(tmp_path.glob("01-*.svg"))[0])
    assert "This iteration · 7 more below" in text and "tab" not in text  # 5 of 12 shown
    # A slide cannot scroll, so the command says so, naming a frame and what it leaves out.
    out = capsys.readouterr().out.splitlines()
    assert out[-1] == ("note: 1 frame of 2 cannot show all it holds (01-all-to-all.svg: 7 sentences "
                       "of this iteration not shown); a taller --screen (up to 200 rows) shows more")
    assert main(["export", "--svg", str(tmp_path), "-a", "naive", "--size", "160x50"]) == 0
    assert not capsys.readouterr().out.splitlines()[-1].startswith("note:")


def test_cropped_slides_count_only_the_sentences_they_leave_out(tmp_path, capsys):
    # Cropped, the transfer list takes the rows it needs: an 8-GPU ring's 8 sentences all show.
    assert main(["export", "--svg", str(tmp_path / "ring"), "-g", "8", "--crop"]) == 0
    assert "note:" not in capsys.readouterr().out
    text = _svg_text(tmp_path / "ring" / "01-reduce-scatter-1.svg")
    assert "more below" not in text
    assert all(sentence in text for sentence in Simulation.create("ring", 8, 8).sentences(0))
    # The naive algorithm's 56 do not fit 120x40: the title and the note count those not drawn.
    assert main(["export", "--svg", str(tmp_path / "naive"), "-a", "naive", "-g", "8", "--crop"]) == 0
    text = _svg_text(tmp_path / "naive" / "01-all-to-all.svg")
    drawn = sum(sentence in text for sentence in Simulation.create("naive", 8, 8).sentences(0))
    assert 10 < drawn < 56 and f"This iteration · {56 - drawn} more below" in text
    assert f"01-all-to-all.svg: {56 - drawn} sentences of this iteration not shown" in capsys.readouterr().out


def test_slides_at_the_tallest_screen_do_not_ask_for_a_taller_one(tmp_path, capsys):
    assert main(["export", "--svg", str(tmp_path), "-a", "naive", "-g", "64", "--screen", "400x200"]) == 0
    note = capsys.readouterr().out.splitlines()[-1]
    assert note.startswith("note: 1 frame of 2 cannot show all it holds (01-all-to-all.svg: ")
    assert note.endswith("; --screen is at its tallest (200 rows): fewer GPUs show more")


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


def test_export_replaces_only_the_frames_it_wrote(tmp_path, capsys):
    mine = {"01-intro.png": "a", "10-summary.svg": "b", "notes.txt": "c"}
    for name, text in mine.items():
        (tmp_path / name).write_text(text)
    assert main(["export", "--svg", str(tmp_path), "-a", "ring", "-g", "4"]) == 0
    assert (tmp_path / "06-all-gather-3.svg").exists()
    # A second export with fewer steps removes the first one's frames, and only those.
    assert main(["export", "--svg", str(tmp_path), "-a", "master", "-g", "4"]) == 0
    names = {path.name for path in tmp_path.iterdir()}
    assert names == {*mine, ".ringsim-export", "00-start.svg", "01-reduce-to-gpu1.svg",
                     "02-broadcast-from-gpu1.svg"}
    assert all((tmp_path / name).read_text() == text for name, text in mine.items())


def test_export_refuses_to_overwrite_a_file_it_did_not_write(tmp_path, capsys):
    (tmp_path / "00-start.svg").write_text("the user's own")
    assert main(["export", "--svg", str(tmp_path), "-a", "master", "-g", "4"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "already holds 00-start.svg" in err
    assert [path.name for path in tmp_path.iterdir()] == ["00-start.svg"]


def test_export_over_an_older_ringsims_frames_says_what_to_do(tmp_path, capsys):
    # An older ringsim wrote the frames and no .ringsim-export: they are kept, and the refusal
    # says why and what to do instead of claiming that no export wrote them.
    for name in ("00-start.svg", "01-reduce-to-gpu1.svg", "02-broadcast-from-gpu1.svg"):
        (tmp_path / name).write_text("an older export's frame")
    assert main(["export", "--svg", str(tmp_path), "-a", "master", "-g", "4"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert (f"{tmp_path} already holds 00-start.svg and 2 more files this export writes, which no "
            ".ringsim-export lists (an older ringsim wrote none)") in err
    assert "delete them if an earlier export wrote them, or export into another folder" in err
    assert {path.read_text() for path in tmp_path.iterdir()} == {"an older export's frame"}
    # Deleted as the message says, the folder takes the export again.
    for path in tmp_path.iterdir():
        path.unlink()
    assert main(["export", "--svg", str(tmp_path), "-a", "master", "-g", "4"]) == 0


@pytest.mark.parametrize("argv, need", [(["--screen", "79x24"], "80x24"), (["--screen", "40x10"], "80x24"),
                                        (["--screen", "80x24", "--present"], "100x30"),
                                        (["--screen", "120x29", "--present"], "100x30")])
def test_export_refuses_a_screen_the_tui_does_not_fit(tmp_path, capsys, argv, need):
    assert main(["export", "--svg", str(tmp_path / "x"), *argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and need in err
    assert not (tmp_path / "x").exists()


def test_export_knows_the_tui_minimum():
    from ringsim.cli import export
    from ringsim.tui.screens import simulator
    assert (export.MIN_SIZE, export.MIN_SIZE_PRESENT) == (simulator.MIN_SIZE, simulator.MIN_SIZE_PRESENT)


@pytest.mark.parametrize("argv", [["-g", "8"], ["-g", "8", "--present"], ["-g", "4", "--present"],
                                  ["-g", "8", "--present", "--screen", "100x30"]])
def test_ring_slides_at_the_documented_sizes_show_everything(tmp_path, capsys, argv):
    # A slide cannot scroll: 8 GPUs at 120x40 keep every counter row (the blank row above
    # the bars goes) and every sentence on one row (long sums cut as the cells cut them).
    assert main(["export", "--svg", str(tmp_path), *argv]) == 0
    assert "note:" not in capsys.readouterr().out
    for path in sorted(tmp_path.glob("*.svg")):
        text = _svg_text(path)
        assert "more row" not in text and "more below" not in text, path.name


def test_16_gpu_slides_in_presentation_mode_show_every_counter_row(tmp_path, capsys):
    # Beside the heat map the counters take the rows they need; the transfer list scrolls.
    assert main(["export", "--svg", str(tmp_path), "-g", "16", "--present"]) == 0
    assert "counter row" not in capsys.readouterr().out
    for path in sorted(tmp_path.glob("*.svg")):
        assert "more row" not in _svg_text(path), path.name


def test_slides_count_the_sentences_of_a_list_as_tall_as_its_text(tmp_path):
    # At 100x30 the transfer list beside the heat map takes its own height: its title counts
    # what that height leaves out, not what the start's one-line hint left out.
    assert main(["export", "--svg", str(tmp_path), "-g", "16", "--present", "--screen", "100x30"]) == 0
    text = _svg_text(tmp_path / "01-reduce-scatter-1.svg")
    drawn = sum(sentence in text for sentence in Simulation.create("ring", 16, 16).sentences(0))
    assert 0 < drawn < 16 and f"This iteration · {16 - drawn} more below" in text


def test_counters_give_up_no_more_than_the_rows_they_must(tmp_path):
    # One row short, the counters drop their blank row and keep the busiest GPU's two rows.
    assert main(["export", "--svg", str(tmp_path / "tall"), "-g", "8", "--present", "--screen", "120x60"]) == 0
    assert main(["export", "--svg", str(tmp_path / "slide"), "-g", "8", "--present"]) == 0
    tall = _svg_text(tmp_path / "tall" / "01-reduce-scatter-1.svg")
    slide = _svg_text(tmp_path / "slide" / "01-reduce-scatter-1.svg")
    for text in (tall, slide):
        assert "busiest GPU1 sent" in text and "busiest GPU1 received" in text


def test_long_sums_in_a_sentence_are_cut_as_the_cells_cut_them():
    from ringsim.tui.widgets.transfer_list import shorten
    line = "GPU1 sends (a₈+b₈+c₈+d₈+e₈+f₈+g₈+h₈) to GPU2, where it replaces (h₈+a₈+b₈)"
    assert shorten(line, 80) == "GPU1 sends (a₈+…+h₈) to GPU2, where it replaces (h₈+a₈+b₈)"
    assert shorten(line, 50) == "GPU1 sends (a₈+…+h₈) to GPU2, where it replaces (h₈+…+b₈)"
    assert shorten("GPU1 sends a₁ to GPU2, where it is added to b₁", 10) == \
        "GPU1 sends a₁ to GPU2, where it is added to b₁"


def test_cropped_frames_of_one_export_share_the_tallest_height(tmp_path):
    # The master's first frame holds one hint line, the others three sentences: cropped each
    # to its own rows they would differ in height, and a deck would scale them differently.
    import re
    assert main(["export", "--svg", str(tmp_path), "--present", "--crop", "-a", "master"]) == 0
    boxes = {path.name: re.search(r'viewBox="0 0 (\d+(?:\.\d+)?) (\d+(?:\.\d+)?)"', path.read_text()).groups()
             for path in sorted(tmp_path.glob("*.svg"))}
    assert len(boxes) == 3 and len(set(boxes.values())) == 1, boxes
    # The tallest frame is the one whose three sentences all show.
    text = _svg_text(tmp_path / "01-reduce-to-gpu1.svg")
    assert "more below" not in text and text.count("where they are added") == 3


def test_an_export_whose_first_frame_shows_it_too_large_stops_there(tmp_path, capsys):
    # A 64-GPU tree in 150 chunks: 162 frames, each heat map cell styled on its own (about 80
    # bytes a cell at 120x40, not the 30 of a sparse large screen). The first frame drawn
    # says the set passes 100 MiB; nothing is left behind, not even the new folder.
    target = tmp_path / "deck"
    assert main(["export", "--svg", str(target), "-g", "64", "-a", "tree", "--chunks", "150"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "the export would write 162 frames of 120x40: about " in err
    assert "fewer channels or chunks" in err
    assert not target.exists()
