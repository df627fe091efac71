"""The ringsim App: owns one Simulation, turns keys into engine calls, and shows the result."""

from __future__ import annotations

from dataclasses import replace
from typing import Callable

from textual.app import App
from textual.binding import Binding
from textual.notifications import Notification, Notify, SeverityLevel
from textual.reactive import var
from textual.timer import Timer

from ..algorithms import ALGORITHMS, DEFAULT_ALGORITHM, option_names, plan_options
from ..core.errors import RingsimError
from ..lessons import load_lessons
from ..core.naming import gpu_name
from ..sim.scenario import Scenario
from ..sim.simulation import Simulation
from .clock import Clock, fitting, on_machine
from .limits import (DETAIL_MAX_GPUS, MAX_ELEMENTS, MAX_GPUS, MIN_GPUS, check_view_limits,
                     fewer_elements, more_elements)
from .notices import Notice, Notices, rows_on
from .screens.help import HelpScreen
from .screens.simulator import SimulatorScreen
from .state import SLOW_FACTORS, SPEEDS, Figures, ViewState
from .sweeps import sweep_view
from .training import MODEL_NAMES, training_step
from .widgets.lesson_panel import LessonPanel

PARTS = ("chunks", "channels")  # the options c / C change, in the algorithms that take one


def taking(option: str) -> str:
    """The registered algorithms that take `option`: 'tree, double-tree, nccl-tree, nvls'."""
    return ", ".join(name for name in ALGORITHMS if option in option_names(name))


class RingsimApp(App[None]):
    """Step through an all-reduce: the App's Simulation is the only source of figures.

    Every key sets a new `state` (a ViewState); watch_state then shows it."""

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
        Binding("a", "algorithm", "Algo", tooltip=f"next algorithm (all {len(ALGORITHMS)} in turn)"),
        Binding("c", "parts(-1)", "−chunks", show=False, group=PARTS_KEYS,
                tooltip=f"fewer chunks ({taking('chunks')}) or channels ({taking('channels')})"),
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
                tooltip=f"more ({MIN_GPUS} to {MAX_GPUS}; past {DETAIL_MAX_GPUS} a heat map; N grows to one element per segment)"),
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

    state: var[ViewState] = var(ViewState(), init=False)  # no repaint of its own: the watcher redraws

    def __init__(self, sim: Simulation | None = None, *, present: bool = False,
                 values: bool = False, lesson: int | None = None, topology: str = "flat") -> None:
        """The App on `sim` (default: a ring of 4 GPUs, 8 elements each), its clock on the
        preset `topology`, the lesson panel open at lesson `lesson` when given."""
        self._notices = Notices()  # what each notice on screen speaks of
        super().__init__()
        self.sim = sim if sim is not None else Simulation.create(DEFAULT_ALGORITHM, 4, 8)
        check_view_limits(self.sim.plan.gpus, self.sim.layout.elements)
        scenario = Scenario(self.sim.plan.algorithm, self.sim.plan.gpus, self.sim.layout.elements,
                            plan_options(self.sim.plan))
        # The first state is set without its watcher: there is no screen to show it on yet.
        self.set_reactive(RingsimApp.state, ViewState(scenario, self.sim.position, values=values,
                                                      present=present, topology=topology))
        self.clock = Clock(topology)  # the state's topology, no GPU slowed yet
        self._timer: Timer | None = None
        self.simulator = SimulatorScreen()
        self.first_lesson = 0 if lesson is None else lesson - 1  # the lesson `l` opens first
        self.open_lesson = lesson is not None

    def notify(self, message: str, *, title: str = "", severity: SeverityLevel = "information",
               timeout: float | None = None, markup: bool = False,
               about: Callable[[], object] | None = None) -> None:
        """A notice, as plain text: an error's `held[3][1]` or `'.[plot]'` shows as written
        (Textual would read brackets as markup and drop them). A notice whose words are still
        on screen is not shown again: a held key would pile up copies. `about` (the_run,
        the_scenario, the lesson panel's place) says what it speaks of: it goes as soon as that
        changes, not seconds later when it is no longer true."""
        notification = Notification(message, title, severity,
                                    self.NOTIFICATION_TIMEOUT if timeout is None else timeout)
        if self._notices.add(Notice(notification, about)):
            self.post_message(Notify(notification))
            self.drop_stale_notices()  # a stale copy of these words goes, and the oldest past three

    def drop_stale_notices(self) -> None:
        """Take off the screen each notice that no longer holds (and the oldest past three)."""
        held = self._notices.drop_stale(lambda notification: rows_on(notification, self.size.width))
        if held is None:
            return
        # Textual clears only every notice at once. The ones that still hold are posted again
        # first: the same notifications, so their toasts stay as they are, with their time left.
        for notification in held:
            self.post_message(Notify(notification))
        super().clear_notifications()

    def _unnotify(self, notification: Notification, refresh: bool = True) -> None:
        """Forget a notice that Textual takes off the screen (its time is up, or it was clicked
        away), so that it is not posted again with the notices that still hold, and its words
        show again when next asked for."""
        self._notices.forget(notification)
        super()._unnotify(notification, refresh)

    def clear_notifications(self) -> None:
        """Take every notice off the screen; the next one of the same words shows again."""
        self._notices.clear()
        super().clear_notifications()

    # What a notice may speak of (notify's `about`).
    def the_run(self) -> tuple:
        """The scenario and the steps done (what 'the run is done' speaks of)."""
        return self.state.scenario, self.state.position

    def the_scenario(self) -> tuple:
        """The scenario and the clock's topology (what a note on a change speaks of)."""
        return self.state.scenario, self.state.topology

    def action_help_quit(self) -> None:
        """Ctrl+C: say which key quits, in plain words (Textual's own hint is written in markup,
        which notify shows as typed)."""
        keys = [key for key, active in self.active_bindings.items()
                if active.binding.action in ("quit", "app.quit")]
        if keys:
            key = "q" if "q" in keys else keys[0]
            self.notify(f"Press {key} to quit", title="Do you want to quit?")

    def get_default_screen(self) -> SimulatorScreen:
        """The simulator, the screen the App opens on."""
        return self.simulator

    async def screen_ready(self) -> None:
        """The simulator's widgets exist: first frame, and the lesson panel if asked for."""
        await self.show_state()
        if self.open_lesson:
            self.action_lesson()

    async def watch_state(self, old: ViewState, new: ViewState) -> None:
        """A new state: the notices about the old one go, the autoplay timer and the clock
        follow it, then the screen shows it."""
        self.drop_stale_notices()
        if (old.playing, old.speed) != (new.playing, new.speed):
            self._restart_timer(new)
        if (old.topology, old.slow) != (new.topology, new.slow):
            self.clock = Clock(new.topology, new.slow)
        await self.show_state()

    async def show_state(self) -> None:
        """Move the Simulation to the state's position and send the state, with the engine's
        figures for it, to the screen."""
        state = self.state
        self.sim.goto(state.position)
        plan, elements = self.sim.plan, self.sim.layout.elements
        training = sweep = None
        if state.pane and (why := self.clock.unavailable(plan)):
            # The panes are timed as the clock is: none where the topology cannot run the plan.
            self.notify(f"{self.sim.collective.plan_title(plan)} is not timed on {state.topology}: "
                        f"{why}", severity="warning", about=self.the_scenario)
            self.state = replace(state, pane=None)
            return
        if state.pane == "overlap":
            training = self._ask(training_step, state.model, plan.gpus, state.topology, plan.algorithm)
            if training is None:
                self.state = replace(state, pane=None)  # its watcher shows the view without the pane
                return
        if state.plot:
            sweep = self._ask(sweep_view, plan.gpus, state.topology, elements)
            if sweep is None:
                self.state = replace(state, plot=None)
                return
        timeline = self.clock.timeline(plan, elements) if state.pane == "timeline" else None
        await self.simulator.show(self.sim, state, Figures(
            self.clock.reading(plan, elements, state.position, self.sim.collective.name),
            self.clock.bottlenecks(plan, elements, state.position), timeline, training, sweep))

    def _ask(self, compute, *args):
        """What the engine answers for a pane, or None (and a notice with the reason) if it refuses."""
        try:
            return compute(*args)
        except RingsimError as error:
            self.notify(str(error), severity="warning", about=self.the_scenario)
            return None

    def _at_end(self) -> bool:
        return self.state.position == len(self.sim.plan)

    # --- moving through the plan ------------------------------------------------------
    def action_next(self) -> None:
        """Carry out the next iteration."""
        if self._at_end():
            self.notify("The run is done: press r to start again.", about=self.the_run)
            return
        self.state = replace(self.state, position=self.state.position + 1)

    def action_back(self) -> None:
        """Undo the last iteration."""
        if self.state.position == 0:
            self.notify("Already at the start.", about=self.the_run)
            return
        self.state = replace(self.state, position=self.state.position - 1)

    def action_reset(self) -> None:
        """Back to the start."""
        self.state = replace(self.state, position=0, playing=False)

    def goto(self, position: int) -> None:
        """Show the state after `position` steps."""
        self.state = replace(self.state, position=position)

    # --- autoplay ---------------------------------------------------------------------
    def action_play(self) -> None:
        """Start or stop stepping on a timer (from the start again when the run is done)."""
        state = self.state
        if state.playing:
            self.state = replace(state, playing=False)
        else:
            self.state = replace(state, playing=True, position=0 if self._at_end() else state.position)

    def action_faster(self) -> None:
        """Shorter autoplay delay."""
        self._set_speed(self.state.speed + 1)

    def action_slower(self) -> None:
        """Longer autoplay delay."""
        self._set_speed(self.state.speed - 1)

    def _set_speed(self, speed: int) -> None:
        if not 0 <= speed < len(SPEEDS):
            self.notify(f"Autoplay runs at {SPEEDS[0]:g} to {SPEEDS[-1]:g} s per iteration.",
                        severity="warning")
            return
        self.state = replace(self.state, speed=speed)

    def _restart_timer(self, state: ViewState) -> None:
        """A timer at the state's speed while it plays; none while it is paused."""
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        if state.playing:
            self._timer = self.set_interval(state.delay, self._tick)

    def _tick(self) -> None:
        if self._at_end():
            self.state = replace(self.state, playing=False)
        else:
            self.state = replace(self.state, position=self.state.position + 1)

    # --- changing the scenario --------------------------------------------------------
    def switch(self, scenario: Scenario, position: int = 0, topology: str | None = None) -> None:
        """Simulate another scenario (from its start, or at `position`), on the clock's topology
        or `topology`; refused with a notice."""
        state = self.state
        topology = state.topology if topology is None else topology
        fits = topology in fitting(scenario.gpus)[0]
        scenario = on_machine(scenario, topology if fits else "flat")
        try:
            check_view_limits(scenario.gpus, scenario.elements)
            sim = scenario.simulation(self.sim.xp)
            sim.goto(position)
        except RingsimError as error:
            self.notify(str(error), severity="warning", about=self.the_scenario)
            return
        gone = [g for g, _ in state.slow if g >= scenario.gpus]
        selected = None if state.selected is None else min(state.selected, scenario.gpus - 1)
        self.sim = sim
        self.state = replace(state, scenario=scenario, position=position, playing=False,
                             topology=topology if fits else "flat", selected=selected,
                             slow=tuple((g, f) for g, f in state.slow if g < scenario.gpus))
        # Said once the new scenario is set: these notices speak of it, and go with the next.
        if not fits:
            self.notify(f"{scenario.gpus} GPUs do not fit {topology}'s nodes: "
                        "the clock is back on flat.", about=self.the_scenario)
        if gone:
            self.notify(f"{', '.join(gpu_name(g) for g in gone)} left the run: no longer slow.",
                        about=self.the_scenario)

    def action_algorithm(self) -> None:
        """The next algorithm of the registry, same G and N (one that refuses G is skipped)."""
        scenario = self.state.scenario
        for _ in range(len(ALGORITHMS) - 1):
            scenario = scenario.next_algorithm()
            try:
                shown = scenario.filled()
            except RingsimError:
                continue
            self.switch(shown)
            return
        self.notify("No other algorithm takes this G.", severity="warning", about=self.the_scenario)

    def action_parts(self, change: int) -> None:
        """Fewer or more chunks (the trees, NVLS) or channels (ring)."""
        scenario = self.state.scenario
        name = next((o for o in PARTS if o in option_names(scenario.algorithm)), None)
        if name is None:
            self.notify(f"{self.sim.plan.algorithm} has neither chunks nor channels "
                        f"(chunks: {taking('chunks')}; channels: {taking('channels')}).",
                        about=self.the_scenario)
            return
        options = dict(scenario.options)
        count = int(options.get(name, 1)) + change
        if count < 1:
            self.notify(f"At least one {name[:-1]}.", severity="warning")
            return
        options[name] = count
        if name == "channels":
            options["ring_order"] = None  # one order per ring would no longer match
        self.switch(replace(scenario, options=options), self.state.position)

    def action_timeline(self) -> None:
        """Open or close the timeline pane (in the counters' place)."""
        self.state = replace(self.state, pane=None if self.state.pane == "timeline" else "timeline")

    def action_select(self, change: int) -> None:
        """Select the previous or next GPU (round the ring of GPUs)."""
        state = self.state
        self.state = replace(state, selected=((state.selected or 0) + change) % state.scenario.gpus)

    def action_slow(self) -> None:
        """The selected GPU one notch slower (SLOW_FACTORS), then at full speed again; the
        clock and the timeline follow (ringsim.timeline's slow-gpu fault)."""
        self.state = self.state.slower(self.state.selected or 0)

    def action_plot(self) -> None:
        """Open or close the sweep plot beside the simulator (it closes the lesson panel)."""
        plot = None if self.state.plot else "time"
        self.state = replace(self.state, plot=plot, lesson=self.state.lesson and plot is None)

    def action_metric(self) -> None:
        """The sweep plot shows time or busbw (opening it if closed)."""
        self.state = replace(self.state, plot="busbw" if self.state.plot == "time" else "time",
                             lesson=False)

    def action_overlap(self) -> None:
        """Open or close the training-step pane (in the counters' place)."""
        self.state = replace(self.state, pane=None if self.state.pane == "overlap" else "overlap")

    def action_model(self) -> None:
        """The training step's next model preset (opening the pane if closed)."""
        model = MODEL_NAMES[(MODEL_NAMES.index(self.state.model) + 1) % len(MODEL_NAMES)]
        self.state = replace(self.state, model=model, pane="overlap")

    def action_topology(self) -> None:
        """The clock's next topology preset that G fits."""
        gpus = self.state.scenario.gpus
        fit, skip = fitting(gpus)
        names = fit or ["flat"]
        now = self.state.topology
        topology = names[(names.index(now) + 1) % len(names)] if now in names else names[0]
        scenario = self.state.scenario
        machine = on_machine(scenario, topology)
        if machine != scenario:  # the plan follows the machine's nodes: a new plan, from its start
            self.switch(machine, 0, topology)
        else:
            self.state = replace(self.state, topology=topology)
        if self.state.topology != topology:
            return  # refused: switch() says why
        # Said once the topology is set: these notices speak of it, and go with the next change.
        if skip:
            self.notify(f"Skipped {', '.join(skip)}: {gpus} GPUs do not fill their nodes.",
                        about=self.the_scenario)
        if machine != scenario:
            self.notify(f"{self.sim.plan.algorithm} on {topology}'s {machine.option('nodes')} "
                        "nodes: from the start.", about=self.the_scenario)

    def action_gpus(self, change: int) -> None:
        """One GPU fewer or more (1 to 64); N follows G up, so that no segment is empty."""
        gpus = self.state.scenario.gpus + change
        if not MIN_GPUS <= gpus <= MAX_GPUS:
            self.notify(f"The view shows {MIN_GPUS} to {MAX_GPUS} GPUs.", severity="warning")
            return
        before = self.state.scenario
        scenario = before.with_gpus(gpus)
        try:
            scenario = scenario.filled()
        except RingsimError:
            pass  # a plan G cannot build: switch() says why
        self.switch(scenario)
        # an option set for the old G (a master GPU that is gone, a ring order) is said, not lost quietly
        dropped = [name.replace("_", " ") for name, _ in before.options
                   if name not in dict(scenario.options)]
        if dropped and self.state.scenario.gpus == gpus:
            self.notify(f"With {gpus} GPUs the {' and '.join(dropped)} you set no longer "
                        f"hold{'s' * (len(dropped) == 1)}: back to the default.",
                        about=self.the_scenario)

    def action_elements(self, change: int) -> None:
        """Fewer or more elements per GPU (0 to 4,096)."""
        n = self.state.scenario.elements
        elements = more_elements(n) if change > 0 else fewer_elements(n)
        if not 0 <= elements <= MAX_ELEMENTS:
            self.notify(f"The view shows 0 to {MAX_ELEMENTS:,} elements per GPU.", severity="warning")
            return
        self.switch(replace(self.state.scenario, elements=elements))

    # --- how it is shown --------------------------------------------------------------
    def action_values(self) -> None:
        """Cells show labels (a₁+b₁) or the numbers they hold."""
        if self.sim.plan.gpus > 8:
            self.notify("Numbers are shown for up to 8 GPUs; the heat map shows the sums.",
                        about=self.the_scenario)
        self.state = replace(self.state, values=not self.state.values)

    def action_present(self) -> None:
        """Presentation mode on or off: large, high-contrast cells for a projector."""
        self.state = replace(self.state, present=not self.state.present)

    def action_help(self) -> None:
        """The key help."""
        self.push_screen(HelpScreen(self.BINDINGS))

    def action_lesson(self) -> None:
        """Open or close the lesson panel beside the simulator (it closes the sweep plot)."""
        if self.state.lesson:
            self.state = replace(self.state, lesson=False)
            return
        panel = self.simulator.query_one(LessonPanel)
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
        self.state = replace(self.state, lesson=True, plot=None)

    def on_lesson_panel_full_width(self, message: LessonPanel.FullWidth) -> None:
        """Open the lesson section at the terminal's full width, over the simulator."""
        from .screens.lesson_page import LessonPage  # loaded only when a reader asks for it
        self.push_screen(LessonPage(*message.parts, question=message.question))

    def on_lesson_panel_section_shown(self, message: LessonPanel.SectionShown) -> None:
        """The reader moved to a section: switch to its lesson's scenario and its stop (the
        notices about the section before go)."""
        self.drop_stale_notices()
        scenario = message.lesson.scenario
        stop = message.section.stop
        if scenario != self.state.scenario:
            self.switch(scenario, stop or 0)
        elif stop is not None:
            self.state = replace(self.state, position=stop, playing=False)
