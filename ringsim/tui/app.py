"""The ringsim App: owns one Simulation, turns keys into engine calls, and shows the result."""

from __future__ import annotations

from dataclasses import replace

from textual.app import App
from textual.binding import Binding
from textual.timer import Timer

from ..algorithms import ALGORITHMS, option_names, plan_options
from ..core.errors import RingsimError
from ..lessons import load_lessons
from ..core.naming import gpu_name
from ..sim.simulation import Simulation
from .clock import SLOW_FACTORS, Clock, fitting
from .scenario import (DETAIL_MAX_GPUS, MAX_ELEMENTS, MAX_GPUS, MIN_GPUS, Scenario,
                       check_view_limits, fewer_elements, more_elements)
from .screens.help import HelpScreen
from .screens.simulator import SimulatorScreen
from .sweeps import sweep_view
from .training import MODEL_NAMES, training_step
from .widgets.lesson_panel import LessonPanel

PARTS = ("chunks", "channels")  # the options c / C change, in the algorithms that take one
SPEEDS = (2.0, 1.0, 0.5, 0.25, 0.1)  # autoplay: seconds per iteration, slow to fast


class RingsimApp(App[None]):
    """Step through an all-reduce: the App's Simulation is the only source of figures."""

    CSS_PATH = "ringsim.tcss"
    TITLE = "ringsim"
    ENABLE_COMMAND_PALETTE = False

    # The footer shows the keys a new user needs (it fits 80 columns, `? Help` and `q Quit`
    # included); the help screen lists every binding, with its tooltip, built from these lists.
    GPUS = Binding.Group("GPUs")
    ELEMENTS = Binding.Group("N")
    SPEED = Binding.Group("Play")  # the footer shows space under this name
    PARTS_KEYS = Binding.Group("chunks")
    TIME = Binding.Group("time")
    SELECT = Binding.Group("select")
    PLOT = Binding.Group("Plot")
    VIEW = Binding.Group("view")
    TRAINING = Binding.Group("training")
    BINDINGS = [
        Binding("right,n", "next", "Next", tooltip="next iteration"),
        Binding("left,p", "back", "Back", tooltip="back one iteration"),
        Binding("space", "play", "Play", group=SPEED, tooltip="play / pause (autoplay)"),
        Binding("plus", "faster", "Faster", show=False, group=SPEED, tooltip="faster"),
        Binding("minus", "slower", "Slower", show=False, group=SPEED, tooltip="slower"),
        Binding("r", "reset", "Reset", show=False, tooltip="reset to the start"),
        Binding("a", "algorithm", "Algo", tooltip="next algorithm (all nine in turn)"),
        Binding("c", "parts(-1)", "−chunks", show=False, group=PARTS_KEYS,
                tooltip="fewer chunks (tree, double-tree) or channels (ring)"),
        Binding("C", "parts(1)", "+chunks", key_display="C", show=False, group=PARTS_KEYS,
                tooltip="more"),
        Binding("t", "topology", "Topology", show=False, group=TIME,
                tooltip="next topology for the clock"),
        Binding("T", "timeline", "Timeline", key_display="T", show=False, group=TIME,
                tooltip="timeline pane"),
        Binding("less_than_sign", "select(-1)", "◂GPU", key_display="<", show=False, group=SELECT,
                tooltip="select the previous GPU"),
        Binding("greater_than_sign", "select(1)", "GPU▸", key_display=">", show=False,
                group=SELECT, tooltip="the next (▸ on its panel)"),
        Binding("s", "slow", "Slow GPU", show=False,
                tooltip="the selected GPU at " + ", ".join(f"{f:g}×" for f in SLOW_FACTORS)
                        + ", then full speed"),
        Binding("w", "plot", "Plot", group=PLOT, tooltip="sweep plot: time per algorithm over sizes"),
        Binding("W", "metric", "busbw", key_display="W", show=False, group=PLOT, tooltip="time ↔ busbw"),
        Binding("o", "overlap", "Training", show=False, group=TRAINING,
                tooltip="training step: backward and DDP buckets"),
        Binding("O", "model", "Model", key_display="O", show=False, group=TRAINING,
                tooltip="next model"),
        Binding("g", "gpus(-1)", "−GPU", key_display="g", group=GPUS, tooltip="one GPU fewer"),
        Binding("G", "gpus(1)", "+GPU", key_display="G", group=GPUS,
                tooltip=f"more ({MIN_GPUS} to {MAX_GPUS}; past {DETAIL_MAX_GPUS} a heat map; N ≥ G)"),
        Binding("e", "elements(-1)", "−N", key_display="e", show=False, group=ELEMENTS,
                tooltip="fewer elements per GPU"),
        Binding("E", "elements(1)", "+N", key_display="E", show=False, group=ELEMENTS,
                tooltip=f"more (0–{MAX_ELEMENTS:,}; ±1 to 16, then ×2 ÷2)"),
        Binding("v", "values", "Values", show=False, group=VIEW,
                tooltip="labels (a₁+b₁) ↔ numbers in the cells"),
        Binding("P", "present", "Present", key_display="P", show=False, group=VIEW,
                tooltip="presentation mode"),
        Binding("l", "lesson", "Lesson",
                tooltip="lesson panel, beside the simulator (below it when narrow)"),
        Binding("question_mark", "help", "Help", key_display="?", tooltip="this help"),
        Binding("q", "quit", "Quit", tooltip="quit"),
    ]

    def __init__(self, sim: Simulation | None = None, *, master: int | None = None,
                 present: bool = False, values: bool = False, lesson: int | None = None) -> None:
        super().__init__()
        self.sim = sim if sim is not None else Simulation.create("ring", 4, 8)
        check_view_limits(self.sim.plan.gpus, self.sim.layout.elements)
        self.scenario = Scenario(self.sim.plan.algorithm, self.sim.plan.gpus,
                                 self.sim.layout.elements, master,
                                 tuple(plan_options(self.sim.plan).items()))
        self.present = present
        self.values = values
        self.speed = 1
        self.clock = Clock()
        self.pane: str | None = None  # in the counters' place: "timeline" (T) or "overlap" (o)
        self.selected = 0  # the 0-based GPU that s slows (keys < >)
        self.selecting = False  # marked (▸) once < > or s is used: slides stay as they were
        self.plot: str | None = None  # the sweep plot (w): "time" or "busbw" (W); None: closed
        self.model = MODEL_NAMES[0]  # the training step's model (O)
        self.playing = False
        self._timer: Timer | None = None
        self.simulator = SimulatorScreen()
        self.first_lesson = 0 if lesson is None else lesson - 1  # the lesson `l` opens first
        self.open_lesson = lesson is not None

    def get_default_screen(self) -> SimulatorScreen:
        return self.simulator

    async def screen_ready(self) -> None:
        """The simulator's widgets exist: first frame, and the lesson panel if asked for."""
        await self.refresh_view()
        if self.open_lesson:
            await self.action_lesson()

    async def refresh_view(self) -> None:
        """Send the Simulation's state down to the screen."""
        plan, elements, position = self.sim.plan, self.sim.layout.elements, self.sim.position
        gpus, topology = plan.gpus, self.clock.topology
        training = self._ask(training_step, self.model, gpus, topology, plan.algorithm) \
            if self.pane == "overlap" else None
        if training is None and self.pane == "overlap":
            self.pane = None
        sweep = self._ask(sweep_view, gpus, topology, elements) if self.plot else None
        if sweep is None:
            self.plot = None
        await self.simulator.show(
            self.sim, values=self.values, playing=self.playing, delay=SPEEDS[self.speed],
            present=self.present, clock=self.clock.reading(plan, elements, position),
            bottleneck=self.clock.bottleneck(plan, elements, position),
            timeline=self.clock.timeline(plan, elements) if self.pane == "timeline" else None,
            training=training, selected=self.selected if self.selecting else None,
            slow=dict(self.clock.slow), sweep=sweep, metric=self.plot or "time")

    def _ask(self, compute, *args):
        """What the engine answers for a pane, or None (and a notice with the reason) if it refuses."""
        try:
            return compute(*args)
        except RingsimError as error:
            self.notify(str(error), severity="warning")
            return None

    # --- moving through the plan ------------------------------------------------------
    async def action_next(self) -> None:
        """Carry out the next iteration."""
        if self.sim.done:
            self.notify("The run is done: press r to start again.", severity="information")
            return
        self.sim.step()
        await self.refresh_view()

    async def action_back(self) -> None:
        """Undo the last iteration."""
        if self.sim.position == 0:
            self.notify("Already at the start.", severity="information")
            return
        self.sim.back()
        await self.refresh_view()

    async def action_reset(self) -> None:
        """Back to the start."""
        self._stop()
        self.sim.reset()
        await self.refresh_view()

    async def goto(self, position: int) -> None:
        """Show the state after `position` steps."""
        self.sim.goto(position)
        await self.refresh_view()

    # --- autoplay ---------------------------------------------------------------------
    async def action_play(self) -> None:
        """Start or stop stepping on a timer (from the start again when the run is done)."""
        if self.playing:
            self._stop()
        else:
            if self.sim.done:
                self.sim.reset()
            self.playing = True
            self._restart_timer()
        await self.refresh_view()

    async def action_faster(self) -> None:
        """Shorter autoplay delay."""
        await self._set_speed(self.speed + 1)

    async def action_slower(self) -> None:
        """Longer autoplay delay."""
        await self._set_speed(self.speed - 1)

    async def _set_speed(self, speed: int) -> None:
        if not 0 <= speed < len(SPEEDS):
            self.notify(f"Autoplay runs at {SPEEDS[0]:g} to {SPEEDS[-1]:g} s per iteration.",
                        severity="warning")
            return
        self.speed = speed
        if self.playing:
            self._restart_timer()
        await self.refresh_view()

    def _restart_timer(self) -> None:
        if self._timer is not None:
            self._timer.stop()
        self._timer = self.set_interval(SPEEDS[self.speed], self._tick)

    def _stop(self) -> None:
        self.playing = False
        if self._timer is not None:
            self._timer.stop()
            self._timer = None

    async def _tick(self) -> None:
        if self.sim.done:
            self._stop()
        else:
            self.sim.step()
        await self.refresh_view()

    # --- changing the scenario --------------------------------------------------------
    async def switch(self, scenario: Scenario, position: int = 0) -> bool:
        """Simulate another scenario (from its start, or at `position`); refused with a notice."""
        try:
            check_view_limits(scenario.gpus, scenario.elements)
            sim = scenario.simulation(self.sim.xp)
            sim.goto(position)
        except RingsimError as error:
            self.notify(str(error), severity="warning")
            return False
        self._stop()
        self.sim, self.scenario = sim, scenario
        self.selected = min(self.selected, scenario.gpus - 1)
        gone = self.clock.keep_gpus(scenario.gpus)
        if gone:
            self.notify(f"{', '.join(gpu_name(g) for g in gone)} left the run: no longer slow.",
                        severity="information")
        if self.clock.topology not in fitting(scenario.gpus)[0]:
            self.notify(f"{scenario.gpus} GPUs do not fit {self.clock.topology}'s nodes: "
                        "the clock is back on flat.", severity="information")
            self.clock.topology = "flat"
        await self.refresh_view()
        return True

    async def action_algorithm(self) -> None:
        """The next algorithm of the registry, same G and N (one that refuses G is skipped)."""
        scenario = self.scenario
        for _ in range(len(ALGORITHMS) - 1):
            scenario = scenario.next_algorithm()
            try:
                scenario.plan()
            except RingsimError:
                continue
            await self.switch(scenario)
            return
        self.notify("No other algorithm takes this G.", severity="warning")

    async def action_parts(self, change: int) -> None:
        """Fewer or more chunks (tree, double tree) or channels (ring)."""
        name = next((o for o in PARTS if o in option_names(self.scenario.algorithm)), None)
        if name is None:
            self.notify(f"{self.sim.plan.algorithm} has neither chunks nor channels "
                        "(tree and double-tree have chunks, ring has channels).", severity="information")
            return
        options = dict(self.scenario.options)
        count = int(options.get(name) or 1) + change
        if count < 1:
            self.notify(f"At least one {name[:-1]}.", severity="warning")
            return
        options[name] = count
        if name == "channels":
            options["ring_order"] = None  # one order per ring would no longer match
        await self.switch(replace(self.scenario, options=tuple(options.items())), self.sim.position)

    async def action_timeline(self) -> None:
        """Open or close the timeline pane (in the counters' place)."""
        self.pane = None if self.pane == "timeline" else "timeline"
        await self.refresh_view()

    async def action_select(self, change: int) -> None:
        """Select the previous or next GPU (round the ring of GPUs)."""
        self.selected = (self.selected + change) % self.scenario.gpus
        self.selecting = True
        await self.refresh_view()

    async def action_slow(self) -> None:
        """The selected GPU one notch slower (SLOW_FACTORS), then at full speed again; the
        clock and the timeline follow (ringsim.timeline's slow-gpu fault)."""
        self.clock.cycle_slow(self.selected)
        self.selecting = True
        await self.refresh_view()

    async def action_plot(self) -> None:
        """Open or close the sweep plot beside the simulator (it closes the lesson panel)."""
        self.plot = None if self.plot else "time"
        if self.plot and self.simulator.has_class("-lesson"):
            await self.action_lesson()
        await self.refresh_view()

    async def action_metric(self) -> None:
        """The sweep plot shows time or busbw (opening it if closed)."""
        self.plot = "busbw" if self.plot == "time" else "time"
        if self.simulator.has_class("-lesson"):
            await self.action_lesson()
        await self.refresh_view()

    async def action_overlap(self) -> None:
        """Open or close the training-step pane (in the counters' place)."""
        self.pane = None if self.pane == "overlap" else "overlap"
        await self.refresh_view()

    async def action_model(self) -> None:
        """The training step's next model preset (opening the pane if closed)."""
        self.model = MODEL_NAMES[(MODEL_NAMES.index(self.model) + 1) % len(MODEL_NAMES)]
        self.pane = "overlap"
        await self.refresh_view()

    async def action_topology(self) -> None:
        """The clock's next topology preset that G fits."""
        fit, skip = fitting(self.scenario.gpus)
        names = fit or ["flat"]
        now = self.clock.topology
        self.clock.topology = names[(names.index(now) + 1) % len(names)] if now in names else names[0]
        if skip:
            self.notify(f"Skipped {', '.join(skip)}: {self.scenario.gpus} GPUs do not fill their nodes.",
                        severity="information")
        await self.refresh_view()

    async def action_gpus(self, change: int) -> None:
        """One GPU fewer or more (1 to 64); N follows G up, so that no segment is empty."""
        gpus = self.scenario.gpus + change
        if not MIN_GPUS <= gpus <= MAX_GPUS:
            self.notify(f"The view shows {MIN_GPUS} to {MAX_GPUS} GPUs.", severity="warning")
            return
        scenario = self.scenario.with_gpus(gpus)
        if scenario.elements < gpus:
            scenario = replace(scenario, elements=gpus)
        await self.switch(scenario)

    async def action_elements(self, change: int) -> None:
        """Fewer or more elements per GPU (0 to 4,096)."""
        n = self.scenario.elements
        elements = more_elements(n) if change > 0 else fewer_elements(n)
        if not 0 <= elements <= MAX_ELEMENTS:
            self.notify(f"The view shows 0 to {MAX_ELEMENTS:,} elements per GPU.", severity="warning")
            return
        await self.switch(replace(self.scenario, elements=elements))

    # --- how it is shown --------------------------------------------------------------
    async def action_values(self) -> None:
        """Cells show labels (a₁+b₁) or the numbers they hold."""
        if self.sim.plan.gpus > 8:
            self.notify("Numbers are shown for up to 8 GPUs; the heat map shows the sums.",
                        severity="information")
        self.values = not self.values
        await self.refresh_view()

    async def action_present(self) -> None:
        """Presentation mode on or off: large, high-contrast cells for a projector."""
        self.present = not self.present
        await self.refresh_view()

    def action_help(self) -> None:
        """The key help."""
        self.push_screen(HelpScreen())

    async def action_lesson(self) -> None:
        """Open or close the lesson panel beside the simulator (it closes the sweep plot)."""
        panel = self.simulator.query_one(LessonPanel)
        if self.simulator.has_class("-lesson"):
            self.simulator.remove_class("-lesson")
            self.set_focus(None)
            return
        if not panel.lessons:
            try:
                lessons = load_lessons()
            except RingsimError as error:
                self.notify(f"The lessons cannot be loaded: {error}", severity="error")
                return
            if not lessons:
                self.notify("No lessons were found.", severity="warning")
                return
            panel.load(lessons, self.first_lesson)
        self.simulator.add_class("-lesson")
        panel.focus()
        if self.plot:
            self.plot = None
            await self.refresh_view()

    async def on_lesson_panel_section_shown(self, message: LessonPanel.SectionShown) -> None:
        """The reader moved to a section: switch to its lesson's scenario and its stop."""
        scenario = message.lesson.scenario
        stop = message.section.stop
        if scenario != self.scenario:
            await self.switch(scenario, stop or 0)
        elif stop is not None:
            self._stop()
            await self.goto(stop)
