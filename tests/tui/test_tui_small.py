"""The TUI on the most common terminal, 80×24, and presentation mode on 100×30: everything a
new user needs is on screen (read from the rendered screen itself, row by row)."""

from ringsim import Simulation
from ringsim.tui.app import RingsimApp
from ringsim.tui.screens.help import HelpScreen, help_rows, scroll_row
from ringsim.tui.widgets.gpu_panel import GpuPanel
from ringsim.tui.widgets.heat_map import COMPLETE_MOVING, PALETTE, HeatMap
from ringsim.tui.widgets.lesson_panel import LessonPanel

SMALL = (80, 24)


def screen_rows(app) -> list[str]:
    """The screen as the terminal shows it: one string per row."""
    return [strip.text for strip in app.screen._compositor.render_strips()]


async def until(pilot, ready) -> bool:
    """Pause frame by frame until `ready()` holds, for up to about 5 s: on a loaded machine a
    new screen or an animated scroll can take more than the one frame `pause()` waits."""
    for _ in range(100):
        if ready():
            return True
        await pilot.pause(0.05)
    return ready()


async def test_80x24_footer_shows_help_and_quit():
    app = RingsimApp()
    async with app.run_test(size=SMALL) as pilot:
        await pilot.pause()
        footer = screen_rows(app)[-1]
        assert "? Help" in footer and "q Quit" in footer and "n Next" in footer


async def test_80x24_transfer_list_shows_every_sentence_of_a_ring_step():
    app = RingsimApp()
    async with app.run_test(size=SMALL) as pilot:
        for step in range(len(app.sim.plan)):
            await pilot.press("n")
            await pilot.pause()
            text = "\n".join(screen_rows(app))
            sentences = app.sim.sentences()
            assert len(sentences) == 4
            for sentence in sentences:
                assert sentence in text, (step, sentence)
        assert "moved so far" in text  # the counters keep a row


async def test_100x30_presentation_mode_shows_every_sentence_of_a_ring_step():
    app = RingsimApp(present=True)
    async with app.run_test(size=(100, 30)) as pilot:
        for _ in range(len(app.sim.plan)):
            await pilot.press("n")
            await pilot.pause()
            text = "\n".join(screen_rows(app))
            assert not app.screen.has_class("-too-small")
            for sentence in app.sim.sentences():
                assert sentence in text, sentence


async def test_100x30_presentation_mode_shows_the_whole_4_gpu_example_counters_included():
    app = RingsimApp(present=True)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("n")
        await pilot.pause()
        rows = screen_rows(app)
        view = app.screen.query_one("#view")
        assert view.max_scroll_y == 0 and "segments" not in "\n".join(rows)
        # Two rows a cell (label, transfer); the banner keeps its two lines and its rule.
        assert {p.cell_height for p in app.screen.query(GpuPanel)} == {2}
        assert rows[2].startswith("━━━") and rows[3].startswith("┏")
        assert rows[4].split() == ["┃", "a₁", "┃┃", "a₁+b₁", "┃┃", "c₁", "┃┃", "d₁", "┃"]
        assert rows[5].split() == ["┃", "→", "GPU2", "┃┃", "←", "GPU1", "+", "┃┃", "┃┃", "┃"]
        # Every panel's bottom edge, with the GPU's sent and received counts.
        edge = rows[12]
        assert edge.count("┗") == 4 and edge.count("↑2 ↓2") == 4, edge
        assert any(row.startswith(" busiest GPU1 ↑2 ↓2") for row in rows)
        for sentence in app.sim.sentences():
            assert sentence in "\n".join(rows)
        # Eight GPUs: one row a cell, the arrow before the label, and every segment shows.
        for _ in range(4):
            await pilot.press("G")
        await pilot.press("n")
        await pilot.pause()
        rows = screen_rows(app)
        assert app.sim.plan.gpus == 8 and view.max_scroll_y == 0
        assert {p.cell_height for p in app.screen.query(GpuPanel)} == {1}
        assert "▼ segments" not in "\n".join(rows)
        assert rows[4].split()[:4] == ["┃", "→", "a₁", "┃┃"]
        assert rows[11].split()[:3] == ["┃", "←", "h₈+a₈"] and rows[12].count("↑1 ↓1") == 8


async def test_presentation_mode_keeps_three_row_cells_where_they_fit():
    app = RingsimApp(present=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("n")
        await pilot.pause()
        assert {p.cell_height for p in app.screen.query(GpuPanel)} == {3}
        rows = screen_rows(app)
        assert rows[2].strip() == "" and rows[3].startswith("━━━")  # the banner's blank line
        assert sum(row.count("↑2 ↓2") for row in rows) == 4
        for _ in range(4):  # 8 GPUs: three rows a cell would hide segment 8, two do not
            await pilot.press("G")
        await pilot.pause()
        assert {p.cell_height for p in app.screen.query(GpuPanel)} == {2}
        assert app.screen.query_one("#view").max_scroll_y == 0
        assert "▼ segments" not in "\n".join(screen_rows(app))


async def test_80x24_help_fits_and_lists_every_binding():
    from ringsim.tui.widgets.lesson_panel import LessonPanel
    app = RingsimApp()
    async with app.run_test(size=SMALL) as pilot:
        await pilot.press("question_mark")
        assert await until(pilot, lambda: isinstance(app.screen, HelpScreen) and any(
            row.startswith("╭─ ringsim keys") for row in screen_rows(app)))
        rows = screen_rows(app)
        # The whole box shows, top and bottom edges; what does not fit scrolls with the keys
        # its edge names, and End shows the last row.
        assert any(row.startswith("╭─ ringsim keys") for row in rows)
        assert any("↓ pgdn end: more · escape or ? to close ─╯" in row for row in rows)
        await pilot.press("end")
        box = app.screen.query_one("#help-box")
        assert await until(pilot, lambda: box.max_scroll_y > 0 and box.scroll_y == box.max_scroll_y)
        rows += screen_rows(app)
        text = " ".join(" ".join(row.strip("│ ").split()) for row in rows)
        assert "leave the answer field" in text  # the last row
        # Every binding's tooltip is on the help screen: it is built from the bindings.
        for cls in (RingsimApp, LessonPanel):
            for keys, what in help_rows(app, cls.BINDINGS):
                if cls is LessonPanel and keys.startswith("↓"):
                    continue  # the lesson's scrolling keys are the simulator's row below
                assert " ".join(what.split()) in text, what
        keys, what = scroll_row(app)
        assert keys.split() == ["↓", "↑", "pgdn", "pgup", "home", "end"]
        assert "scroll the box that has the keys" in text and "tab / shift+tab give them" in text
        actions = {b.action for b in RingsimApp.BINDINGS} | {b.action for b in LessonPanel.BINDINGS}
        assert len(actions) == len(RingsimApp.BINDINGS) + len(LessonPanel.BINDINGS)


def test_help_rows_group_the_bindings_as_the_footer_does():
    app = RingsimApp()
    rows = dict(help_rows(app, RingsimApp.BINDINGS))
    assert rows["→  n"] == "next iteration"
    assert rows["g  G"].startswith("one GPU fewer / more (1 to 64")
    assert rows["space  +  -"] == "play / pause (autoplay) / faster / slower"
    assert rows["q"] == "quit"


async def test_80x24_lesson_panel_goes_below_the_gpu_cells_not_beside_them():
    app = RingsimApp()
    async with app.run_test(size=SMALL) as pilot:
        await pilot.pause()
        width = app.screen.query_one("#gpu-1", GpuPanel).region.width
        await pilot.press("l")
        await pilot.pause()
        panel = app.screen.query_one(LessonPanel)
        panels = list(app.screen.query(GpuPanel))
        assert [p.region.width for p in panels][0] == width >= 18  # the cells keep their width
        assert panel.region.y >= max(p.region.bottom for p in panels)
        assert panel.region.width == 80 and panel.region.height >= 8
        assert "a₁" in "\n".join(screen_rows(app))
        footer = screen_rows(app)[-1]
        assert "? Help" in footer and "q Quit" in footer
    app = RingsimApp()
    async with app.run_test(size=(140, 40)) as pilot:  # wide: beside the simulator, as before
        await pilot.press("l")
        await pilot.pause()
        panel = app.screen.query_one(LessonPanel)
        assert panel.region.x >= app.screen.query_one("#gpu-4", GpuPanel).region.right


async def test_80x24_heat_map_and_sentences_both_show():
    app = RingsimApp(Simulation.create("ring", 16, 16))
    async with app.run_test(size=SMALL) as pilot:
        await pilot.press("n")
        await pilot.pause()
        heat = app.screen.query_one(HeatMap)
        assert heat.region.width >= 38 and heat.region.height >= 17
        text = "\n".join(screen_rows(app))
        assert "GPU16" in text and "GPU1 sends a₁ to GPU2, where it is" in text


async def test_gpus_key_makes_n_follow_g():
    app = RingsimApp(Simulation.create("ring", 8, 8))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("G")
        assert (app.sim.plan.gpus, app.sim.layout.elements) == (9, 9)
        await pilot.press("G", "G")
        assert (app.sim.plan.gpus, app.sim.layout.elements) == (11, 11)
        await pilot.press("g")  # fewer GPUs keep N
        assert (app.sim.plan.gpus, app.sim.layout.elements) == (10, 11)
        assert all(size > 0 for size in (app.sim.layout.size(j) for j in range(10)))


def test_heat_map_shows_a_complete_sum_complete_while_it_is_sent():
    # `export --svg D --gpus 16 --elements 64`, frame 15: the last step of reduce-scatter.
    sim = Simulation.create("ring", 16, 64)
    sim.goto(15)
    colour, sending, receiving = HeatMap._colours(sim)
    complete = [(g, j) for g in range(16) for j in range(16) if sim.symbolic.is_complete(g, j)]
    assert len(complete) == 16  # each GPU now holds one complete sum: the one it just received
    for g, j in complete:
        assert receiving[g][j] and PALETTE[colour[g][j]] == COMPLETE_MOVING
    sim.goto(16)  # all-gather 1: the complete sums are sent on, and stay green
    colour, sending, receiving = HeatMap._colours(sim)
    for g in range(16):
        for j in range(16):
            if sim.symbolic.is_complete(g, j):
                assert PALETTE[colour[g][j]] in ("#2ecc71", COMPLETE_MOVING)
                if sending[g][j]:
                    assert PALETTE[colour[g][j]] == COMPLETE_MOVING


async def test_heat_map_rows_mark_moved_cells_with_arrows():
    app = RingsimApp(Simulation.create("ring", 16, 64))
    async with app.run_test(size=(120, 40)) as pilot:
        app.goto(15)
        await pilot.pause()
        lines = app.screen.query_one(HeatMap).lines
        row = next(line for line in lines if line.startswith("GPU1 "))
        assert row.count("→") == 1 and row.count("←") == 1


async def test_lesson_questions_can_be_answered_or_revealed_in_the_panel(plain):
    from textual.widgets import Input
    app = RingsimApp()
    async with app.run_test(size=SMALL) as pilot:
        await pilot.press("l", "right_curly_bracket")  # lesson 2: the master
        panel = app.screen.query_one(LessonPanel)
        while panel.question is None:
            await pilot.press("right_square_bracket")
        questions = list(panel.section.questions)
        first = questions[0]
        assert first.prompt in plain(panel.query_one("#lesson-question"))
        assert "Think:" not in plain(panel.query_one("#lesson-text"))
        await pilot.press("enter")
        assert isinstance(app.focused, Input)
        await pilot.press(*"999", "enter")  # wrong: the reason, from the engine
        reply = plain(panel.query_one("#lesson-reply"))
        assert "Not quite" in reply and first.explain() in " ".join(reply.split())
        assert first.answer in reply and (panel.asked, panel.right) == (1, 0)
        if len(questions) > 1:  # the next question is asked in the same field
            second = questions[1]
            assert second.prompt in plain(panel.query_one("#lesson-question"))
            await pilot.press(*second.answer.replace(",", ""), "enter")
            assert plain(panel.query_one("#lesson-reply")).startswith(f"Right: {second.answer}")
            assert (panel.asked, panel.right) == (2, 1)
        # A section asked again: an empty reply shows the answer, as `ringsim lesson` does.
        panel.show(panel.lesson_index, panel.section_index)
        await pilot.press("enter", "enter")
        assert plain(panel.query_one("#lesson-reply")).strip() == f"Answer: {first.answer}."
        # Escape leaves the field: the simulator's keys work again.
        panel.query_one(Input).focus()
        position = app.sim.position
        await pilot.press("escape", "n")
        assert app.sim.position == min(position + 1, len(app.sim.plan))


async def test_80x24_counters_show_every_target_beside_the_heat_map():
    # At G = 9…24 the counters sit in a narrow column beside the heat map: each row keeps its
    # target ("36 of 264") when the formula does not fit, and the bars keep both numbers.
    from ringsim.tui.widgets.counters import Counters
    for gpus in (9, 12, 16, 24):
        app = RingsimApp(Simulation.create("ring", gpus, gpus))
        async with app.run_test(size=SMALL) as pilot:
            await pilot.press("n", "n")
            await pilot.pause()
            form = app.sim.closed_form()
            lines = app.screen.query_one(Counters).content.plain.splitlines()
            width = app.screen.query_one(Counters).content_region.width
            assert all(len(line) <= width for line in lines), (gpus, width, lines)
            for line, target in zip(lines, (form.total, form.busiest_sent, form.busiest_received,
                                            form.messages, form.steps)):
                assert line.endswith(f"of {str(target) if '=' in line else f'{int(target.value):,}'}"), line
            bars = lines[-gpus:]
            assert all(line.split()[-2:] == ["2", "2"] for line in bars), bars


async def test_80x24_banner_keeps_the_step_and_play_state():
    for algorithm, gpus, elements in (("master", 4, 8), ("nccl-tree", 4, 8), ("ring", 64, 4096)):
        app = RingsimApp(Simulation.create(algorithm, gpus, elements))
        async with app.run_test(size=SMALL) as pilot:
            await pilot.press("n")
            await pilot.pause()
            top = screen_rows(app)[0].rstrip()
            assert top.endswith(f"step 1 of {len(app.sim.plan)} · ■ paused"), top
            await pilot.press("space")
            await pilot.pause()
            top = screen_rows(app)[0].rstrip()
            assert "· ▶ playing" in top and f"step {app.state.position} of" in top, top
            await pilot.press("space")


async def test_100x30_counters_show_all_their_rows_under_eight_gpu_panels():
    # Presentation mode's own minimum: under eight GPU panels the counters take their four
    # compact rows, none of them scrolled out of sight.
    for algorithm, gpus in (("ring", 8), ("ring", 6), ("bidirectional-ring", 4)):
        app = RingsimApp(Simulation.create(algorithm, gpus, 8))
        async with app.run_test(size=(100, 30)) as pilot:
            await pilot.press("n")
            await pilot.pause()
            box = app.screen.query_one("#counters-box")
            assert app.screen.has_class("-compact") and box.max_scroll_y == 0, (algorithm, gpus)


async def test_80x24_title_drops_whole_parts_never_cuts_a_word():
    # The master's title with its option is one of the longest at G = 4: at 80 columns
    # "· 8 elements per GPU" goes whole rather than ending "per G…".
    app = RingsimApp(Simulation.create("master", 4, 8))
    async with app.run_test(size=SMALL) as pilot:
        await pilot.press("space")  # playing: the state's longer wording
        await pilot.pause()
        title = screen_rows(app)[0]
        assert "…" not in title and "per G" not in title, title
        assert title.strip().startswith("Single-GPU master (GPU1) · 4 GPUs")
        assert "step " in title


async def test_80x24_messages_row_reads_as_a_count_for_every_algorithm():
    # "messages 2 of 20" reads as a count only when what follows "of" is a formula or a
    # number; a sentence there ("of transfers that carry ...") reads as nonsense.
    from ringsim.tui.widgets.counters import Counters
    for algorithm, gpus, expected in (("halving-doubling", 6, "2·rem + 2·p2·lg p2 = 20"),
                                      ("halving-doubling", 8, "2·G·lg G = 48"),
                                      ("hierarchical", 8, "2·G·(L+M−2) = 64")):
        app = RingsimApp(Simulation.create(algorithm, gpus, 8))
        async with app.run_test(size=SMALL) as pilot:
            await pilot.press("n")
            await pilot.pause()
            row = next(line for line in app.screen.query_one(Counters).content.plain.splitlines()
                       if line.startswith("messages"))
            assert row.endswith(f"of {expected}"), row


async def test_80x24_lesson_text_and_whole_question_show_without_scrolling():
    # The GPU cells give up their note rows (the notes go beside the values) so that the
    # lesson shows several lines of its text above the question, and all of the question.
    app = RingsimApp()
    async with app.run_test(size=SMALL) as pilot:
        await pilot.press("l")
        await until(pilot, lambda: app.screen.has_class("-lesson"))
        await pilot.pause()
        rows = screen_rows(app)
        top = next(i for i, row in enumerate(rows) if "Lesson 1 of" in row)
        rule = next(i for i, row in enumerate(rows) if i > top and set(row.strip("│ ")) == {"─"})
        asked = next(i for i, row in enumerate(rows) if row.startswith("│ Question"))
        answer = next(i for i, row in enumerate(rows) if "answer, then Enter" in row)
        assert rule - top - 1 >= 6, rows[top:rule]  # the heading and at least 5 lines of text
        assert asked == rule + 1 and answer > asked and "weights?" in "".join(rows[asked:answer])
        assert all(f"a{i}" in "".join(rows).replace("₁", "1").replace("₂", "2").replace("₃", "3")
                   .replace("₄", "4") for i in (1, 2, 3, 4))  # every segment still shows


async def test_80x24_timeline_pane_shows_every_gpu_of_the_default_example():
    app = RingsimApp()
    async with app.run_test(size=SMALL) as pilot:
        await pilot.press("T")
        await until(pilot, lambda: app.screen.has_class("-timeline"))
        await pilot.pause()
        box = app.screen.query_one("#timeline-box")
        shown = [row for row in screen_rows(app)[box.region.y:box.region.bottom]]
        for gpu in ("GPU1", "GPU2", "GPU3", "GPU4"):
            assert any(row.lstrip("│ ").startswith(gpu) for row in shown), (gpu, shown)
        assert box.max_scroll_y == 0
