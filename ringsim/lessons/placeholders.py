"""Placeholders: a small fixed vocabulary of engine figures a lesson may quote, '{{ledger.total}}'.

An expression is a name, optional 1-based indices and options: 'sent[3]', 'held[1][2]',
'sentences step=1', 'formula.total gpus=1000 elements=7000000000'. The lesson's own scenario
is used unless the options name another (algorithm=, gpus=, elements=, master=); the position
is the section's stop (the end of the run when it has none) unless at= says otherwise.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable

from ..algorithms import ALGORITHMS, closed_form
from ..checks import check_count, check_elements, check_gpus
from ..errors import RingsimError
from ..formula import format_number
from ..layout import Layout
from ..ledger import Ledger, measure
from ..naming import gpu_name
from ..simulation import SYMBOLIC_MAX_GPUS, Simulation
from .model import Scenario

PLACEHOLDER = re.compile(r"\{\{(.*?)\}\}")
_HEAD = re.compile(r"^([A-Za-z_][\w.]*?)((?:\[\d+\])*)((?:\.[A-Za-z_]\w*)*)$")
SCENARIO_OPTIONS = ("algorithm", "gpus", "elements", "master")
LEDGER_MAX_GPUS = 1024     # ledgers of other scenarios come from real plans: keep them small
SIMULATE_MAX_CELLS = 1_000_000  # G·N of another scenario that is simulated for its labels
TRAIN_MAX_EPOCHS = 50  # lessons load eagerly: keep a training placeholder to a second or so


@dataclass(frozen=True)
class Expression:
    """A parsed placeholder: the vocabulary name ('sent[]'), its indices and its options."""

    name: str
    indices: tuple[int, ...]
    options: dict
    head: str = ""


def parse(text: str) -> Expression:
    """Parse 'sent[3] at=2' into an Expression, or raise RingsimError saying what is wrong."""
    parts = text.split()
    if not parts:
        raise RingsimError("empty placeholder '{{}}'")
    head = _HEAD.match(parts[0])
    if not head:
        raise RingsimError(f"cannot read placeholder {parts[0]!r}")
    base, brackets, attrs = head.groups()
    indices = tuple(int(i) for i in re.findall(r"\d+", brackets))
    name = base + "[]" * len(indices) + attrs
    entry = VOCABULARY.get(name)
    if entry is None:
        raise RingsimError(f"unknown placeholder {parts[0]!r}; see docs/lessons.md for the vocabulary")
    options = {}
    for part in parts[1:]:
        key, eq, value = part.partition("=")
        if not eq or not value:
            raise RingsimError(f"placeholder option {part!r} must be written key=value")
        if key not in entry.options:
            allowed = ", ".join(entry.options) or "none"
            raise RingsimError(f"{name!r} takes no option {key!r} (allowed: {allowed})")
        if key in options:
            raise RingsimError(f"option {key!r} given twice")
        options[key] = _option_value(key, value)
    return Expression(name, indices, options, parts[0])


def _option_value(key: str, value: str):
    if key in ("algorithm",):
        if value not in ALGORITHMS:
            raise RingsimError(f"unknown algorithm {value!r}; choose one of: {', '.join(ALGORITHMS)}")
        return value
    if key == "sync":
        if value not in ("yes", "no"):
            raise RingsimError(f"sync must be yes or no, got {value!r}")
        return value == "yes"
    if key in ("alpha_us", "gbps"):
        try:
            number = float(value)
        except ValueError:
            raise RingsimError(f"{key} must be a number, got {value!r}") from None
        if not number > 0 or number == float("inf"):
            raise RingsimError(f"{key} must be a positive number, got {value!r}")
        return number
    try:
        return int(value.replace(",", "_"))
    except ValueError:
        raise RingsimError(f"{key} must be a whole number, got {value!r}") from None


class Context:
    """Evaluates expressions for one lesson: its scenario, its Simulation, other scenarios."""

    def __init__(self, scenario: Scenario) -> None:
        self.scenario = scenario
        self.plan = scenario.plan()
        self._sim: Simulation | None = None

    def evaluate(self, expr: Expression, position: int | None) -> str:
        """The placeholder's text at `position` (None: the end of the lesson's run)."""
        entry = VOCABULARY[expr.name]
        return str(entry.fn(_Ask(self, expr, position)))

    def simulation(self) -> Simulation:
        if self._sim is None:
            self._sim = self.scenario.simulation()
        return self._sim


class _Ask:
    """One evaluation: the scenario and position the expression asks about."""

    def __init__(self, ctx: Context, expr: Expression, position: int | None) -> None:
        self.ctx, self.expr, self.options = ctx, expr, expr.options
        base = ctx.scenario
        named = {k: v for k, v in expr.options.items() if k in SCENARIO_OPTIONS}
        self.own = not named
        if self.own:
            self.scenario = base
            self.plan = ctx.plan
        else:
            algorithm = named.get("algorithm", base.algorithm)
            if "master" in named and algorithm != "master":
                raise RingsimError("master= only applies to algorithm=master")
            master = named.get("master", base.master if algorithm == base.algorithm else None)
            self.scenario = Scenario(algorithm, check_gpus(named.get("gpus", base.gpus)),
                                     check_elements(named.get("elements", base.elements)),
                                     master if algorithm == "master" else None)
            if master is not None and algorithm == "master":
                check_count(master, "the master GPU", minimum=1, maximum=self.scenario.gpus)
            self.plan = None
        end = self.steps()
        # A section's stop is a position in the lesson's own run; other scenarios default to their end.
        at = expr.options.get("at", position if self.own else None)
        self.position = end if at is None else at
        if not 0 <= self.position <= end:
            raise RingsimError(f"at={self.position} is outside the run (0..{end} steps)")

    # --- the three sources: closed forms, the ledger, a simulation -------------------
    def steps(self) -> int:
        if self.plan is not None:
            return len(self.plan)
        return int(closed_form(self.scenario.algorithm, self.scenario.gpus, self.scenario.elements)
                   .steps.value)

    def closed(self):
        s = self.scenario
        return closed_form(s.algorithm, s.gpus, s.elements)

    def ledger(self) -> Ledger:
        s = self.scenario
        if self.own:
            return _ledger(s, self.position)
        if s.gpus > LEDGER_MAX_GPUS:
            raise RingsimError(f"ledger figures of another scenario need at most {LEDGER_MAX_GPUS:,} "
                               f"GPUs (got {s.gpus:,}); use formula.* for larger ones")
        return _ledger(s, self.position)

    def sim(self) -> Simulation:
        s = self.scenario
        if self.own:
            sim = self.ctx.simulation()
        else:
            if s.gpus > SYMBOLIC_MAX_GPUS or s.gpus * s.elements > SIMULATE_MAX_CELLS:
                raise RingsimError(f"{self.expr.head!r} simulates its scenario: at most "
                                   f"{SYMBOLIC_MAX_GPUS} GPUs and {SIMULATE_MAX_CELLS:,} elements in all")
            sim = _simulation(s)
        sim.goto(self.position)
        return sim

    def gpu(self, index: int) -> int:
        """0-based GPU from a 1-based index, checked against the scenario."""
        if not 1 <= index <= self.scenario.gpus:
            raise RingsimError(f"GPU{index} does not exist: the scenario has GPU1..GPU{self.scenario.gpus}")
        return index - 1


@lru_cache(maxsize=64)
def _ledger(scenario: Scenario, position: int) -> Ledger:
    plan = scenario.plan()
    return measure(plan, Layout(plan.gpus, scenario.elements), position)


@lru_cache(maxsize=8)
def _simulation(scenario: Scenario) -> Simulation:
    return scenario.simulation()


# --- the vocabulary ---------------------------------------------------------------------
@dataclass(frozen=True)
class Entry:
    """A vocabulary word: how to compute it, which options it takes, one line of help."""

    fn: Callable[[_Ask], object]
    options: tuple[str, ...]
    help: str


def _n(value) -> str:
    return format_number(value)


def _title(a: _Ask) -> str:
    s = a.scenario
    name = ALGORITHMS[s.algorithm].TITLE
    if s.algorithm == "master":
        name += f" (GPU{s.master or 1})"
    return f"{name} · {s.gpus:,} GPUs · {s.elements:,} elements per GPU"


def _sentences(a: _Ask) -> str:
    step = a.options.get("step")
    sim = a.sim()
    last = len(sim.plan)
    if step is None:
        if a.position == 0:
            raise RingsimError("no step is done at stop 0: write 'sentences step=K'")
        step = a.position
    if not 1 <= step <= last:
        raise RingsimError(f"step={step} is outside the run (1..{last})")
    return "\n".join(f"- {text}" for text in sim.sentences(step - 1))


def _held(a: _Ask) -> str:
    gpu, segment = a.expr.indices
    g = a.gpu(gpu)
    if not 1 <= segment <= a.scenario.gpus:
        raise RingsimError(f"segment {segment} does not exist: segments are 1..{a.scenario.gpus}")
    sim = a.sim()
    if sim.symbolic is None:
        raise RingsimError("labels are kept only for at most 128 GPUs")
    return sim.symbolic.label(g, segment - 1, max_terms=8)


def _iterations(a: _Ask) -> str:
    plan = a.plan if a.plan is not None else a.scenario.plan()
    if not plan.steps:
        return "0"
    return _n(plan.steps[max(a.position - 1, 0)].iterations)


def _sizes(a: _Ask) -> str:
    sizes = sorted(set(Layout(a.scenario.gpus, a.scenario.elements).sizes()))
    return " or ".join(_n(s) for s in sizes)


def _compare(a: _Ask) -> str:
    g, n = a.scenario.gpus, a.scenario.elements
    lines = [f"G = {g:,} GPUs, N = {n:,} elements per GPU"]
    for name, module in ALGORITHMS.items():
        cf = closed_form(name, g, n)
        lines.append(f"{module.TITLE}:")
        lines.append(f"  elements moved in all: {cf.total}")
        lines.append(f"  the busiest GPU sends {cf.busiest_sent} and receives {cf.busiest_received}")
    return "\n".join(lines)


def _ratio_total(a: _Ask) -> str:
    g, n = a.scenario.gpus, a.scenario.elements
    ring = closed_form("ring", g, n).total.value
    return _n(closed_form("naive", g, n).total.value / ring) if ring else "1"


def _ratio_busiest(a: _Ask) -> str:
    g, n = a.scenario.gpus, a.scenario.elements
    m, r = closed_form("master", g, n), closed_form("ring", g, n)
    ring = r.busiest_sent.value + r.busiest_received.value
    return _n((m.busiest_sent.value + m.busiest_received.value) / ring) if ring else "1"


def _latency(a: _Ask) -> str:
    from .costs import costs, format_seconds
    g, n = a.scenario.gpus, a.scenario.elements
    alpha, gbps = a.options.get("alpha_us", 5.0), a.options.get("gbps", 100.0)
    rows = costs(g, n, alpha, gbps)
    lines = [f"G = {g:,} GPUs, N = {n:,} float32 elements per GPU, α = {alpha:g} µs per message, "
             f"links of {gbps:g} GB/s"]
    width = max(len(r.name) for r in rows)
    digits = max(len(f"{r.elements:,}") for r in rows)
    for r in rows:
        note = "" if r.simulated else "  (not simulated)"
        lines.append(f"  {r.name:<{width}}  {r.latencies:>6,} × α + {r.elements:>{digits},} elements "
                     f"≈ {format_seconds(r.seconds)}{note}")
    return "\n".join(lines)


def _latency_row(name: str) -> Callable[[_Ask], str]:
    def fn(a: _Ask) -> str:
        from .costs import costs, format_seconds
        rows = {r.name: r for r in costs(a.scenario.gpus, a.scenario.elements,
                                          a.options.get("alpha_us", 5.0), a.options.get("gbps", 100.0))}
        return format_seconds(rows[name].seconds)
    return fn


@lru_cache(maxsize=16)
def _training(gpus: int, algorithm: str, epochs: int, sync: bool, master: int | None):
    from ..train import train
    return train(gpus, algorithm, epochs, sync=sync, master=master)


def _train_run(a: _Ask):
    s = a.scenario
    epochs = a.options.get("epochs", 5)
    if not 1 <= epochs <= TRAIN_MAX_EPOCHS:
        raise RingsimError(f"epochs must be from 1 to {TRAIN_MAX_EPOCHS} in a lesson, got {epochs}")
    return _training(s.gpus, s.algorithm, epochs, a.options.get("sync", True), s.master)


def _train_block(a: _Ask) -> str:
    from ..train import report_lines
    return "\n".join(report_lines(_train_run(a)))


def _float(value: float) -> str:
    return "0" if value == 0 else f"{value:.2e}"


_SCEN = SCENARIO_OPTIONS
_SIZE = ("gpus", "elements")  # figures that compare every algorithm take only G and N
_POS = _SCEN + ("at",)
_TRAIN = ("algorithm", "gpus", "master", "epochs", "sync")

VOCABULARY: dict[str, Entry] = {
    "G": Entry(lambda a: _n(a.scenario.gpus), _SCEN, "the number of GPUs"),
    "N": Entry(lambda a: _n(a.scenario.elements), _SCEN, "elements per GPU"),
    "algorithm": Entry(lambda a: ALGORITHMS[a.scenario.algorithm].TITLE, _SCEN, "the algorithm's name"),
    "title": Entry(_title, _SCEN, "'Ring all-reduce · 4 GPUs · 8 elements per GPU'"),
    "banner": Entry(lambda a: a.sim().banner, _POS, "where the run is: 'Reduce-scatter · iteration 2 of 3'"),
    "position": Entry(lambda a: _n(a.position), _POS, "steps done at this point"),
    "plan.steps": Entry(lambda a: _n(a.steps()), _SCEN, "steps in the whole run"),
    "iterations": Entry(_iterations, _POS, "iterations in the phase of the step done last "
                        "(the first step's phase at stop 0)"),
    "segment.size": Entry(_sizes, _SCEN, "elements per segment: '2' or '2 or 3'"),
    "ledger.total": Entry(lambda a: _n(a.ledger().total), _POS, "elements moved so far"),
    "ledger.messages": Entry(lambda a: _n(a.ledger().messages), _POS, "transfers so far"),
    "ledger.steps": Entry(lambda a: _n(a.ledger().steps), _POS, "steps done so far"),
    "sent[]": Entry(lambda a: _n(a.ledger().sent[a.gpu(a.expr.indices[0])]), _POS,
                    "elements GPU k sent so far"),
    "received[]": Entry(lambda a: _n(a.ledger().received[a.gpu(a.expr.indices[0])]), _POS,
                        "elements GPU k received so far"),
    "load[]": Entry(lambda a: _n(a.ledger().sent[a.gpu(a.expr.indices[0])]
                                 + a.ledger().received[a.gpu(a.expr.indices[0])]), _POS,
                    "elements GPU k sent plus received so far"),
    "busiest": Entry(lambda a: gpu_name(a.ledger().busiest()), _POS, "the GPU that sent plus received most"),
    "busiest.sent": Entry(lambda a: _n(a.ledger().sent[a.ledger().busiest()]), _POS,
                          "elements the busiest GPU sent"),
    "busiest.received": Entry(lambda a: _n(a.ledger().received[a.ledger().busiest()]), _POS,
                              "elements the busiest GPU received"),
    "busiest.load": Entry(lambda a: _n(a.ledger().sent[a.ledger().busiest()]
                                       + a.ledger().received[a.ledger().busiest()]), _POS,
                          "elements the busiest GPU sent plus received"),
    "held[][]": Entry(_held, _POS, "what GPU k's segment j holds: 'd₄+a₄'"),
    "sentences": Entry(_sentences, _POS + ("step",), "the seed's sentences of one step, one per line"),
    "compare": Entry(_compare, _SIZE, "the three algorithms' closed forms for the scenario"),
    "ratio.total": Entry(_ratio_total, _SIZE, "naive total ÷ ring total (G/2)"),
    "ratio.busiest": Entry(_ratio_busiest, _SIZE,
                           "the master's load ÷ a ring GPU's load, sent plus received (G/2)"),
    "latency": Entry(_latency, _SIZE + ("alpha_us", "gbps"), "α–β time model of five all-reduces"),
    "train": Entry(_train_block, _TRAIN, "the training demo's report"),
    "train.replica_difference": Entry(lambda a: _float(_train_run(a).epochs[-1].replica_difference),
                                      _TRAIN, "largest weight difference between replicas at the end"),
    "train.reference_difference": Entry(lambda a: _float(_train_run(a).epochs[-1].reference_difference),
                                        _TRAIN, "largest difference from one-GPU training at the end"),
    "train.loss": Entry(lambda a: f"{_train_run(a).epochs[-1].loss:.5f}", _TRAIN, "final loss"),
    "train.elements": Entry(lambda a: _n(_train_run(a).elements_moved), _TRAIN,
                            "elements all the syncs moved"),
    "train.syncs": Entry(lambda a: _n(_train_run(a).syncs), _TRAIN, "number of syncs"),
    "train.parameters": Entry(lambda a: _n(_train_run(a).parameters), _TRAIN, "model size N"),
}

for _field in ("total", "busiest_sent", "busiest_received", "steps", "messages"):
    VOCABULARY[f"formula.{_field}"] = Entry(
        (lambda f: lambda a: str(getattr(a.closed(), f)))(_field), _SCEN,
        f"closed form of {_field}, with its value: '2·(G−1)·N = 48'")
    VOCABULARY[f"formula.{_field}.text"] = Entry(
        (lambda f: lambda a: getattr(a.closed(), f).text)(_field), _SCEN, f"closed form of {_field}")
    VOCABULARY[f"formula.{_field}.value"] = Entry(
        (lambda f: lambda a: _n(getattr(a.closed(), f).value))(_field), _SCEN, f"value of {_field}")

for _key, _name in (("naive", "Naive all-to-all"), ("master", "Single-GPU master"),
                    ("ring", "Ring all-reduce"), ("tree", "Binary tree"),
                    ("halving_doubling", "Halving-doubling")):
    VOCABULARY[f"latency.{_key}"] = Entry(_latency_row(_name), _SIZE + ("alpha_us", "gbps"),
                                          f"α–β model time of {_name}")
