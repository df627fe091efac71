"""The simulator screen: banner, GPU view (panels or heat map), transfers and counters (or the
timeline or the training step), and beside them the sweep plot or the lesson."""

from __future__ import annotations

from textual import events
from textual.app import ComposeResult
from textual.content import Content
from textual.geometry import Size
from textual.containers import Container, Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Static

from ...sim.simulation import Simulation
from ..limits import DETAIL_MAX_GPUS, MIN_SIZE, MIN_SIZE_PRESENT
from ..state import Figures, ViewState
from ..widgets.counters import Counters, CountersBox
from ..widgets.gpu_grid import GpuGrid
from ..widgets.heat_map import HeatMap
from ..widgets.legend import EDGE as LEGEND_EDGE, Legend
from ..widgets.lesson_panel import LessonPanel
from ..widgets.overlap_pane import OverlapPane
from ..widgets.phase_banner import PhaseBanner
from ..widgets.shape import ShapeView
from ..widgets.sweep_plot import SweepPanel
from ..widgets.timeline_pane import TimelinePane
from ..widgets.too_small import TooSmall
from ..widgets.transfer_list import TransferList

NARROW = 110  # below this width the transfer list and the counters stack instead of sitting side by side
SHORT = 30  # below this height the banner drops its rule
# Below this height the counters take four rows without bars beside the GPU panels: under
# eight GPU panels, a taller box for the bars would leave the counters a single row.
COMPACT = 36
HEAT_SIDE_MIN = 36  # columns the transfer list needs beside the heat map; with fewer it goes below
# Widths ringsim.tcss gives: the column of boxes beside the heat map on a wide terminal (58
# beside the lesson panel), and the sweep plot and the lesson panel beside the simulator.
HEAT_COLUMN, HEAT_COLUMN_LESSON, PLOT_WIDTH, LESSON_WIDTH = 64, 58, 56, 52
PLOT_MIN = 120  # the sweep plot (w) needs this many columns: its own 56 and the simulator's 64


def set_title(widget, text: str, which: str = "border_title") -> None:
    """A box's border title (or subtitle) as plain text, set only when it changes: setting it
    repaints the whole box and what lies under it."""
    if getattr(widget, "_shown_" + which, None) != text:
        setattr(widget, "_shown_" + which, text)
        setattr(widget, which, Content(text))


class SimulatorScreen(Screen):
    """Everything the App's Simulation holds, as the App's ViewState asks, redrawn by show()."""

    # What the boxes hold beyond what they show, in words ('2 sentences of this iteration'):
    # a slide cannot scroll, so `ringsim export` says which frames cut something short.
    cut: tuple[str, ...] = ()

    def compose(self) -> ComposeResult:
        """Lay out the banner, the GPU view, the lower boxes and the side panels."""
        yield PhaseBanner(id="banner")
        yield TooSmall(id="too-small")
        with Horizontal(id="body"):
            with Container(id="main"):
                with VerticalScroll(id="view"):
                    with Horizontal(id="gpus"):
                        yield GpuGrid(id="grid")
                        yield ShapeView(id="shape")
                    yield HeatMap(id="heat")
                    yield Legend(id="legend")
                yield Static(id="view-more")
                yield Static(id="plot-hint")
                with Container(id="bottom"):
                    with VerticalScroll(id="transfers-box") as box:
                        box.border_title = "This iteration"
                        yield TransferList(id="transfers")
                    with CountersBox(id="counters-box") as box:
                        box.border_title = "Elements moved"
                        yield Counters(id="counters")
                    with VerticalScroll(id="timeline-box") as box:
                        box.border_title = "Timeline (T)"
                        yield TimelinePane(id="timeline")
                    with VerticalScroll(id="overlap-box") as box:
                        box.border_title = "Training step (o)"
                        yield OverlapPane(id="overlap")
            yield SweepPanel(id="plot")
            yield LessonPanel(id="lesson")
        yield Footer(compact=True)

    ready = False  # True once the widgets exist; earlier show() calls wait for on_mount's

    async def on_mount(self) -> None:
        """The App owns the Simulation: once the widgets exist, ask it for the first frame."""
        self.ready = True
        # The notices' rack (Textual's, first among the screen's children) after the footer:
        # both sit in the bottom row, and the later one draws over the other (ringsim.tcss).
        for rack in self.query("ToastRack"):
            self.move_child(rack, after=self.query_one(Footer))
        for box in ("#view", "#transfers-box", "#counters-box"):
            self.watch(self.query_one(box), "scroll_y", self._scrolled, init=False)
        # A box as tall as its text settles a layout pass after the text: count again then.
        self.screen_layout_refresh_signal.subscribe(self, lambda _: self.say_more())
        await self.app.screen_ready()

    def _scrolled(self, old: float, new: float) -> None:
        if int(old) != int(new):
            self.say_more()

    async def show(self, sim: Simulation, state: ViewState, figures: Figures) -> None:
        """Show the Simulation as it is now, as the state asks (rebuilding the GPU panels only
        when G changed): the figures' timeline or training step take the counters' place, their
        sweep opens the plot beside, and the state's lesson flag opens the lesson panel."""
        if not self.ready:
            return
        self._sim = sim
        heat = sim.plan.gpus > DETAIL_MAX_GPUS
        self.set_class(heat, "-heat")
        self.set_class(state.present, "-present")
        self._show_lesson(state.lesson)
        self.query_one(PhaseBanner).show(sim, state.playing, state.delay, figures.reading)
        grid = self.query_one(GpuGrid)
        if heat:
            await grid.build(0)
            self.query_one(HeatMap).show(sim, state.selected)
        else:
            await grid.build(sim.plan.gpus, sim.plan.segments)
            self._grid_args = (sim, state.values, state.present, figures.bottlenecks,
                               state.selected, dict(state.slow))
            self._load_row = grid.load_row(sim)
            self._cell_rows = self.cell_rows(sim.plan.segments, self.size.height, self._load_row)
            grid.show(*self._grid_args, rows=self._cell_rows)
            self.query_one(ShapeView).show(sim.plan, sim.current, figures.bottlenecks)
        self.query_one(TransferList).show(sim)
        self.query_one(Counters).show(sim, self._compact())
        timeline, training, sweep = figures.timeline, figures.training, figures.sweep
        self.set_class(timeline is not None, "-timeline")
        if timeline is not None:
            self.query_one(TimelinePane).show(timeline, sim.position)
        self.set_class(training is not None and timeline is None, "-overlap")
        if training is not None:
            self.query_one("#overlap-box").border_title = Content(
                f"Training step (o) · {training.model.name} · {training.algorithm} · "
                f"{training.topology} · DDP")
            self.query_one(OverlapPane).show(training)
        self._plot_wanted = sweep is not None
        if sweep is not None:
            await self.query_one(SweepPanel).show(sweep, state.plot, sim.plan.algorithm)
        self._fit(self.size.width, self.size.height)
        self.call_after_refresh(self.say_more)

    def _show_lesson(self, shown: bool) -> None:
        """Open or close the lesson panel; the keys go to it while it is open."""
        if shown == self.has_class("-lesson"):
            return
        self.set_class(shown, "-lesson")
        if shown:
            self.query_one(LessonPanel).focus()
        else:
            self.app.set_focus(None)

    _sim: Simulation | None = None
    _grid_args: tuple | None = None  # what the GPU panels show, to redraw them on a resize
    _cell_rows = 2
    _load_row = False  # the GPU panels' load on a row of their own (too narrow for the edge)
    _plot_wanted = False  # key w: the plot is asked for (shown if the terminal is wide enough)

    def cell_rows(self, segments: int, height: int, load_row: bool = False) -> int:
        """Rows per segment cell: 2 (label, then note), or 1 on a short terminal where two
        rows per cell (and the panels' load row, when they have one) would not let the GPU
        view show every segment. Presentation mode: 3 (a spacer row under the note) where the
        view still shows every segment, its bottom edge and the legend, else 2 (4 GPUs on
        100×30, 8 GPUs on 120×40), else 1 (8 GPUs on 100×30): the edge holds each GPU's sent
        and received counts. A short, narrow terminal with the lesson or the timeline below
        the view: 1, so that the lesson's text and question, or every GPU's row, fit."""
        if self.has_class("-present"):
            room = self._view_rows(height) - 2 - load_row - (height >= SHORT)  # edges, legend
            return next((rows for rows in (3, 2, 1) if rows * segments <= room), 2)
        if height >= SHORT:
            return 2
        if self.has_class("-narrow") and (self.has_class("-lesson") or self.has_class("-timeline")):
            return 1  # the lesson's text and question, or every GPU's timeline row, need the rows
        return 1 if 2 * segments + 2 + load_row > self._view_rows(height) else 2

    def _view_rows(self, height: int) -> int:
        """The most rows the GPU view may take on a terminal `height` rows tall (its CSS
        max-height, of the simulator's part of the screen)."""
        view, main = self.query_one("#view"), self.query_one("#main")
        part = height - self._banner_rows(height) - 1  # the banner and the footer
        if main.styles.max_height is not None and main.styles.height is not None \
                and main.styles.height.is_auto:
            part = int(main.styles.max_height.resolve(Size(self.size.width, part), self.size))
        limit = view.styles.max_height
        return part if limit is None else int(limit.resolve(Size(self.size.width, part), self.size))

    def _banner_rows(self, height: int) -> int:
        """The banner's rows as ringsim.tcss sizes it: two lines and a rule; presentation mode
        adds a blank line where the GPU panels have rows to spare (COMPACT or more; never
        beside the heat map, whose counters need the row); no rule on short terminals."""
        if height < SHORT:
            return 2
        spare = height >= COMPACT and not self.has_class("-heat")
        return 4 if self.has_class("-present") and spare else 3

    def _compact(self, height: int | None = None) -> bool:
        """Counters in four rows without bars: short terminals (this one, or `height` rows)
        with the GPU panels on screen."""
        height = self.size.height if height is None else height
        return height < COMPACT and not self.has_class("-heat")

    def on_resize(self, event: events.Resize) -> None:
        """Fit the layout to the new size, then recount the counters and hints."""
        self._fit(event.size.width, event.size.height)
        # The counters' box may grow to more rows now, though its own size is the same.
        self.call_after_refresh(self.query_one(Counters).redraw)
        self.call_after_refresh(self.say_more)

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        """Update the hints when a box takes the focus."""
        self.say_more()  # the hints name the keys of the box that has them

    def on_descendant_blur(self, event: events.DescendantBlur) -> None:
        """Update the hints when a box loses the focus."""
        self.say_more()

    def _fit(self, width: int, height: int) -> None:
        """Show a message instead of the view when the terminal is too small for it."""
        need_width, need_height = MIN_SIZE_PRESENT if self.has_class("-present") else MIN_SIZE
        small = width < need_width or height < need_height
        self.set_class(width < NARROW, "-narrow")
        short = height < SHORT
        compact = self._compact(height)
        if compact != self.has_class("-compact") and self._sim is not None:
            self.query_one(Counters).show(self._sim, compact)
        self.set_class(short, "-short")
        self.set_class(compact, "-compact")
        if self._grid_args is not None and not self.has_class("-heat"):
            grid, sim = self.query_one(GpuGrid), self._grid_args[0]
            load_row = grid.load_row(sim)
            rows = self.cell_rows(sim.plan.segments, height, load_row)
            if (rows, load_row) != (self._cell_rows, self._load_row):
                self._cell_rows, self._load_row = rows, load_row
                grid.show(*self._grid_args, rows=rows)
        # The plot asked for on a narrow terminal: a one-line hint instead, in the transfer
        # box's bottom edge where the legend sits on short terminals, else on a row of its own.
        hidden = self._plot_wanted and width < PLOT_MIN
        hint = f"Sweep plot (w): needs {PLOT_MIN} columns, this terminal has {width}." if hidden else ""
        edge = short and not self.has_class("-heat")
        set_title(self.query_one("#transfers-box"), (hint or LEGEND_EDGE) if edge else "", "border_subtitle")
        hint_view = self.query_one("#plot-hint", Static)
        if str(hint_view.content) != hint:  # an unchanged hint needs no layout pass
            hint_view.update(Content(hint))
        self.set_class(self._plot_wanted and not hidden, "-plot")
        self.set_class(hidden and not edge, "-plot-hint")
        heat_width = self.query_one(HeatMap).get_content_width(self.size, self.size) + 4
        # What the heat map and its boxes share: the terminal less a plot or lesson beside.
        lesson = self.has_class("-lesson") and not self.has_class("-narrow")
        beside = PLOT_WIDTH if self.has_class("-plot") else LESSON_WIDTH if lesson else 0
        heat, side = self.has_class("-heat"), width - beside - heat_width
        self.set_class(heat and side < HEAT_SIDE_MIN, "-heat-stack")
        # The heat map keeps every segment: its column of boxes narrows to what is left.
        # (beside the plot the map and the column share what is left evenly)
        plotted = self.has_class("-plot")
        column = (width - beside) // 2 if plotted else HEAT_COLUMN_LESSON if lesson else HEAT_COLUMN
        self.set_class(heat and HEAT_SIDE_MIN <= side < column, "-heat-squeeze")
        self.set_class(small, "-too-small")
        if small:
            self.query_one(TooSmall).show(width, height, need_width, need_height,
                                          present=self.has_class("-present"))

    def say_more(self) -> None:
        """Where a box cannot show all it holds, its edge says how many more and how to see
        them: the GPU view (segments), this iteration (sentences), the counters (rows)."""
        focused = self.app.focused
        slide = self.has_class("-slide")  # `ringsim export`: no keys to name
        view = self.query_one("#view")
        hint = ""
        if not self.has_class("-heat") and view.max_scroll_y > 0 and self._grid_args is not None:
            segments = self._grid_args[0].plan.segments
            rows = self._cell_rows
            shown = max(0, (int(view.scroll_y) + view.scrollable_content_region.height - 1) // rows)
            if shown < segments:
                keys = "↓ pgdn end" if focused is view else "tab to the GPU view, then ↓ pgdn end"
                hint = f"▼ segments {shown + 1}–{segments} of {segments} below" + ("" if slide else f": {keys}")
        more = self.query_one("#view-more", Static)
        if str(more.content) != hint:
            more.update(Content(hint))
        self.set_class(bool(hint), "-view-more")
        box = self.query_one("#transfers-box")
        hidden = self.query_one(TransferList).below(int(box.scroll_y), box.scrollable_content_region.height)
        set_title(box, "This iteration" + (
            f" · {hidden} more below" + ("" if slide else ": " + (
                "↓ pgdn end" if focused is box else "tab here, then ↓")) if hidden else ""))
        counters = self.query_one("#counters-box")
        rows = counters.max_scroll_y - int(counters.scroll_y)
        shown_rows = rows > 0 and counters.display
        self.cut = tuple(words for words, cut in (
            (f"segments {shown + 1}–{segments}" if hint else "", bool(hint)),
            (f"{hidden} sentence{'s' * (hidden != 1)} of this iteration", bool(hidden)),
            (f"{rows} counter row{'s' * (rows != 1)}", shown_rows)) if cut)
        set_title(counters, "Elements moved" + (
            f" · {rows} more row{'s' * (rows != 1)}" + ("" if slide else ": " + (
                "↓ pgdn end" if focused is counters else "tab here, then ↓"))
            if rows > 0 and counters.display else ""))

    def crop_rows(self) -> tuple[int, int]:
        """The screen rows from the top of the GPU view to the bottom of the transfer list."""
        regions = [self.query_one("#view").region, self.query_one("#transfers-box").region]
        return min(r.y for r in regions), max(r.bottom for r in regions)
