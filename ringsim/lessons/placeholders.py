"""Placeholders: a small fixed vocabulary of engine figures a lesson may quote, '{{ledger.total}}'.

An expression is a name, optional 1-based indices and options: 'sent[3]', 'held[1][G]',
'sentences step=1', 'formula.total gpus=2*G'. Indices and whole-number options may be
expressions in G and N (ringsim.lessons.expr); '{{= G-1}}' prints one. The lesson's own
scenario is used unless the options name another (algorithm=, gpus=, elements=, and the
options the algorithm takes: master=, chunks=, …);
the position is the section's stop (the end of the run when it has none) unless at= says
otherwise. unit=WORD after any number adds its noun, singular for 1: '{{G unit=GPU}}'.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..algorithms import (ALGORITHMS, OPTION_ORDER, algorithms_taking, check_options, closed_form,
                          option_names, whole_number_options)
from ..core.checks import check_elements, check_gpus
from ..core.errors import RingsimError
from ..execute.ledger import Ledger
from ..sim.simulation import SYMBOLIC_MAX_GPUS, Simulation
from .budget import Budget, ledger_cost, own_simulation_costs, placeholder_cost, simulation_cost
from .expr import compile_expression, evaluate
from .model import Scenario
from ..core.textout import clip
from .text import one_of, plural
from .vocabulary import LEDGER_MAX_GPUS, VOCABULARY
from . import cache, vocabulary
from .words import SCENARIO_OPTIONS, SIMULATE_MAX_CELLS

PLACEHOLDER = re.compile(r"\{\{(.*?)\}\}")
_HEAD = re.compile(r"^([A-Za-z_][\w.]*?)((?:\[[^\[\]]+\])*)((?:\.[A-Za-z_]\w*)*)$")
UNIVERSAL_OPTIONS = ("unit",)

__all__ = ["Context", "Expression", "LEDGER_MAX_GPUS", "PLACEHOLDER", "SCENARIO_OPTIONS",
           "SIMULATE_MAX_CELLS", "VOCABULARY", "parse"]


@dataclass(frozen=True)
class Deferred:
    """A whole-number option or index written as an expression in G and N ('2*G')."""

    text: str

    def value(self, gpus: int, elements: int) -> int:
        """The expression's value for G GPUs and N elements each."""
        return evaluate(self.text, gpus, elements)


@dataclass(frozen=True)
class Expression:
    """A parsed placeholder: the vocabulary name ('sent[]'), its indices and its options."""

    name: str
    indices: tuple
    options: dict
    head: str = ""


def parse(text: str) -> Expression:
    """Parse 'sent[3] at=2' into an Expression, or raise RingsimError saying what is wrong."""
    text = text.strip()
    if text.startswith("="):
        body, _, rest = text[1:].partition(" unit=")
        compile_expression(body)
        options = {"unit": _unit(rest)} if rest else {}
        return Expression("=", (Deferred(body.strip()),), options, "=")
    parts = text.split()
    if not parts:
        raise RingsimError("empty placeholder '{{}}'")
    head = _HEAD.match(parts[0])
    if not head:
        raise RingsimError(f"cannot read placeholder {clip(parts[0])!r}")
    base, brackets, attrs = head.groups()
    indices = tuple(_index(i) for i in re.findall(r"\[([^\[\]]+)\]", brackets))
    name = base + "[]" * len(indices) + attrs
    entry = VOCABULARY.get(name)
    if entry is None:
        raise RingsimError(f"unknown placeholder {clip(parts[0])!r}; see docs/lessons.md for the vocabulary")
    options = {}
    for part in parts[1:]:
        key, eq, value = part.partition("=")
        if not eq or not value:
            raise RingsimError(f"placeholder option {clip(part)!r} must be written key=value")
        if key not in entry.options and key not in UNIVERSAL_OPTIONS:
            allowed = ", ".join(entry.options) or "none"
            raise RingsimError(f"{name!r} takes no option {clip(key)!r} (allowed: {allowed})")
        if key in options:
            raise RingsimError(f"option {key!r} given twice")
        options[key] = _option_value(key, value)
    return Expression(name, indices, options, parts[0])


MAX_INDEX_DIGITS = 20  # far past any GPU or segment a lesson names; int() refuses past 4,300


def _index(text: str):
    stripped = text.strip()
    # 0-9 only: str.isdigit also takes ² (which int() refuses) and other scripts' digits
    if stripped.isascii() and stripped.isdigit():
        if len(stripped) > MAX_INDEX_DIGITS:
            raise RingsimError(f"an index has at most {MAX_INDEX_DIGITS} digits, got {clip(stripped)}")
        return int(stripped)
    compile_expression(text)
    return Deferred(text.strip())


def _unit(word: str) -> str:
    if not re.fullmatch(r"[A-Za-z][A-Za-z-]{0,30}", word):
        raise RingsimError(f"unit must be a word, got {clip(word)!r}")
    return word


def _option_value(key: str, value: str):
    if key == "unit":
        return _unit(value)
    if key == "algorithm":
        if value not in ALGORITHMS:
            raise RingsimError(f"unknown algorithm {clip(value)!r}; choose one of: {', '.join(ALGORITHMS)}")
        return value
    if key == "sync":
        if value not in ("yes", "no"):
            raise RingsimError(f"sync must be yes or no, got {clip(value)!r}")
        return value == "yes"
    if key == "topology":
        from ..cost.topology import presets
        if value not in presets():
            raise RingsimError(f"unknown topology {clip(value)!r}; choose one of: {', '.join(presets())}")
        return value
    if key in ("alpha_us", "gbps"):
        return _link_number(key, value)
    if key in TEXT_OPTIONS:
        return TEXT_OPTIONS[key](value)
    try:
        return int(value.replace(",", "_"))
    except ValueError:
        pass
    try:
        compile_expression(value)
    except RingsimError:
        raise RingsimError(f"{key} must be a whole number or an expression in G and N, "
                           f"got {clip(value)!r}") from None
    return Deferred(value)


def _link_number(key: str, value: str) -> float:
    """alpha_us (µs, from 0) or gbps (GB/s, more than 0), read by the engine's number parser: its
    exponent and digit range hold, and a sign, nan or inf cannot be written."""
    from fractions import Fraction
    from ..core.units import MAX_BANDWIDTH, MAX_SECONDS, MIN_BANDWIDTH, read_number
    # The ranges of parse_seconds and parse_bandwidth, in µs and GB/s.
    low, high, unit = ((0, MAX_SECONDS * 10**6, "µs") if key == "alpha_us" else
                       (Fraction(MIN_BANDWIDTH, 10**9), MAX_BANDWIDTH // 10**9, "GB/s"))
    kind = "non-negative" if key == "alpha_us" else "positive"
    try:
        number = read_number(value, key, value)
    except RingsimError as error:
        if "cannot read" not in str(error):
            raise
        raise RingsimError(f"{key} must be a {kind} number, got {clip(value)!r}") from None
    # α = 0 is the bandwidth-bound machine; a link needs some bandwidth.
    if not low <= number <= high:
        raise RingsimError(f"{key} must be from {float(low):g} to {high:,} {unit}, got {clip(value)!r}")
    return float(number)


def _text_options() -> dict:
    """Options whose value is not a whole number: each parsed by the engine's own parser."""
    from ..algorithms.collectives import collective
    from ..training.models import MODELS
    from ..timeline import faults
    from ..core.units import parse_params
    from .buckets import check_bucket

    def model(value: str) -> str:
        if value not in MODELS:
            raise RingsimError(f"unknown model {clip(value)!r}; choose one of: {', '.join(MODELS)}")
        return value

    def system(value: str) -> str:
        from ..studies import peers
        if value not in {s["id"] for s in peers.data()["system"]}:
            raise RingsimError(f"unknown published system {clip(value)!r} "
                               "(ringsim/studies/published/measurements.toml)")
        return value

    def release(value: str) -> str:
        from ..cost.nccl_tuner import given_release
        return given_release(value)

    def nccl_list(kind: str, flag: str):
        def check(value: str) -> str:
            from ..cost.nccl import checked_list
            return checked_list(value, kind, flag)
        return check

    # Ring orders and trees are text the algorithm's own check reads, as from the command line.
    written = {option: str for option in OPTION_ORDER if option not in whole_number_options()}
    return {**written, "slow_link": faults.slow_link, "slow_gpu": faults.slow_gpu,
            "delay": faults.delay, "model": model, "bucket_mb": check_bucket,
            "params": parse_params, "collective": lambda v: collective(v).name,
            "algo": nccl_list("algorithms", "algo"), "proto": nccl_list("protocols", "proto"),
            "system": system, "nccl": release}


TEXT_OPTIONS = _text_options()


class Context:
    """Evaluates expressions for one lesson: its scenario, its Simulation, other scenarios."""

    def __init__(self, scenario: Scenario, budget: Budget | None = None) -> None:
        self.scenario = scenario
        self.budget = Budget() if budget is None else budget
        self.plan = scenario.plan()
        self._sim: Simulation | None = None
        self._paid = self._spent = 0  # the own run's steps paid for, and their estimated ms
        self._costs: tuple[list[int], list[int]] | None = None

    def value(self, text: str) -> int:
        """An expression in the lesson's G and N."""
        return evaluate(text, self.scenario.gpus, self.scenario.elements)

    def evaluate(self, expr: Expression, position: int | None) -> str:
        """The placeholder's text at `position` (None: the end of the lesson's run)."""
        entry = VOCABULARY[expr.name]
        ask = _Ask(self, expr, position)
        # However cheap, every placeholder spends a little: a file of thousands is bounded too.
        self.budget.spend(placeholder_cost(ask.scenario.gpus), repr(expr.head))
        text = str(entry.fn(ask))
        unit = expr.options.get("unit")
        if unit is not None:
            count = text.replace(",", "")
            if not re.fullmatch(r"-?\d+", count):
                raise RingsimError(f"unit= needs a whole number, but {expr.head!r} gives {clip(text)!r}")
            text = plural(int(count), unit)
        return text

    def explain(self, expr: Expression, position: int | None, value: str) -> str:
        """Why the placeholder has this value: the expression the engine evaluated, in words."""
        entry = VOCABULARY[expr.name]
        ask = _Ask(self, expr, position)
        return entry.why(ask, value) if entry.why else vocabulary.generic_why(ask, value)

    def simulation(self, position: int | None = None) -> Simulation:
        """The lesson's own Simulation, its steps up to `position` (default: the end) paid for.

        The own scenario is bounded by the front matter's limits, so no single figure's share
        applies to it; each step it is taken to is charged to the whole check all the same,
        before it runs, so that many large lessons cannot add up past the budget."""
        position = len(self.plan) if position is None else position
        if position > self._paid or self._sim is None:
            self.pay_ahead(position)
        elif position < self._sim.position:
            self.pay_replay(position)
        if self._sim is None:
            self._sim = self.scenario.simulation()
        return self._sim

    def _own_words(self) -> str:
        s = self.scenario
        return (f"the lesson's own scenario (a simulation of {s.gpus:,} GPUs, "
                f"{s.elements:,} elements each)")

    def _own_costs(self) -> tuple[list[int], list[int]]:
        """The own run's estimated ms to each position, forward and replayed: one pass over
        the plan, once, so that pricing a figure costs a look-up however many there are."""
        if self._costs is None:
            self._costs = own_simulation_costs(self.plan, self.scenario.elements)
        return self._costs

    def pay_ahead(self, position: int) -> None:
        """Charge the own run's steps up to `position` not paid for yet (labels and all)."""
        cost = self._own_costs()[0][position]
        self.budget.spend(max(cost - self._spent, 0), self._own_words(), per_figure=False)
        self._paid, self._spent = max(position, self._paid), max(cost, self._spent)

    def pay_replay(self, position: int) -> None:
        """Charge going back to `position`: a Simulation replays its run from the start
        (Simulation.goto), the sums and numbers again, the sentences kept."""
        self.budget.spend(self._own_costs()[1][position], self._own_words(), per_figure=False)


class _Ask:
    """One evaluation: the scenario and position the expression asks about."""

    def __init__(self, ctx: Context, expr: Expression, position: int | None) -> None:
        self.ctx, self.expr = ctx, expr
        base = ctx.scenario
        self.options = {k: (v.value(base.gpus, base.elements) if isinstance(v, Deferred) else v)
                        for k, v in expr.options.items()}
        named = {k: v for k, v in self.options.items() if k in SCENARIO_OPTIONS}
        # Naming any scenario option means another scenario (even one equal to the lesson's),
        # so that a figure means the same whichever G and N the lesson runs at.
        self.own = not named
        if self.own:
            self.scenario = base
            self.plan = ctx.plan
        else:
            algorithm = named.get("algorithm", base.algorithm)
            given = {k: v for k, v in named.items() if k in OPTION_ORDER}
            for key in given:
                if key not in option_names(algorithm):
                    takes = one_of([f"algorithm={name}" for name in algorithms_taking(key)])
                    raise RingsimError(f"{key}= only applies to {takes}")
            # The same algorithm keeps the lesson's options, unless the placeholder names others.
            options = {**(dict(base.options) if algorithm == base.algorithm else {}), **given}
            self.scenario = Scenario(algorithm, check_gpus(named.get("gpus", base.gpus)),
                                     check_elements(named.get("elements", base.elements)), options)
            check_options(algorithm, self.scenario.gpus, options)
            self.plan = None
        self.indices = tuple(i.value(base.gpus, base.elements) if isinstance(i, Deferred) else i
                             for i in expr.indices)
        end = self.steps()
        # A section's stop is a position in the lesson's own run; other scenarios default to their end.
        at = self.options.get("at", position if self.own else None)
        self.position = end if at is None else at
        if not 0 <= self.position <= end:
            raise RingsimError(f"at={self.position} is outside the run (0..{end} steps)")

    # --- the three sources: closed forms, the ledger, a simulation -------------------
    def steps(self) -> int:
        if self.plan is not None:
            return len(self.plan)
        return int(self.closed().steps.value)

    def closed(self):
        s = self.scenario
        return closed_form(s.algorithm, s.gpus, s.elements, **dict(s.options))

    def ledger(self, position: int | None = None) -> Ledger:
        s = self.scenario
        position = self.position if position is None else position
        if not self.own and s.gpus > LEDGER_MAX_GPUS:
            raise RingsimError(f"ledger figures of another scenario need at most {LEDGER_MAX_GPUS:,} "
                               f"GPUs (got {s.gpus:,}); use formula.* for larger ones")
        if not self.own and not cache.ledger_cached(s, position):
            self.ctx.budget.spend(ledger_cost(int(self.closed().messages.value) + s.gpus),
                                  f"{self.expr.head!r} (the ledger of {s.gpus:,} GPUs)")
        return cache.ledger_of(s, position)

    def sim(self) -> Simulation:
        s = self.scenario
        if self.own:
            sim = self.ctx.simulation(self.position)
        else:
            if s.gpus > SYMBOLIC_MAX_GPUS or s.gpus * s.elements > SIMULATE_MAX_CELLS:
                raise RingsimError(f"{self.expr.head!r} simulates its scenario: at most "
                                   f"{SYMBOLIC_MAX_GPUS} GPUs and {SIMULATE_MAX_CELLS:,} elements in all")
            if not cache.simulation_cached(s):
                self.ctx.budget.spend(simulation_cost(s.gpus, self.steps(), s.elements),
                                      f"{self.expr.head!r} (a simulation of {s.gpus:,} GPUs)")
            sim = cache.simulation_of(s)
        sim.goto(self.position)
        return sim

    def gpu(self, index: int) -> int:
        """0-based GPU from a 1-based index, checked against the scenario."""
        if not 1 <= index <= self.scenario.gpus:
            raise RingsimError(f"GPU{index} does not exist: the scenario has GPU1..GPU{self.scenario.gpus}")
        return index - 1
