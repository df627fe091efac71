"""The lessons' timeline figures: a plan run as events with faults (ringsim.timeline), in words.

Nothing is modelled here: every figure is `ringsim.timeline.simulate` on the lessons' machine
(ringsim.lessons.costs.model_of: flat with α in µs and links in GB/s, γ = 0, or a preset), with
the faults a placeholder names (slow_link=1-2:0.5, slow_gpu=3:0.5, delay=2:100us, parsed by
ringsim.timeline.faults as the command line's flags are), and `ringsim.timeline.report` for
what each fault costs, the critical path, the Gantt strip and the other schedules.
"""

from __future__ import annotations

import textwrap

from ..algorithms import DEFAULT_ALGORITHM
from ..core.errors import RingsimError
from .cache import Cache
from ..core.formula import format_number
from ..core.naming import gpu_name
from ..core.units import format_seconds
from .budget import ledger_cost
from .words import Entry, machine_flags, model_key, model_line, ratio

FAULT_OPTIONS = ("slow_gpu", "slow_link", "delay")   # the command line's order
TIMELINE_MAX_GPUS = 256  # event runs of larger rings belong to `ringsim timeline`, not a lesson
OPTIONS = ("algorithm", "gpus", "elements", "alpha_us", "gbps", "topology") + FAULT_OPTIONS

_RUNS = Cache(64)
_ALTERNATIVES = Cache(64)


def _model(a):
    from .costs import model_of
    return model_of(*model_key(a))


def _faults(a) -> tuple:
    return tuple(a.options[k] for k in FAULT_OPTIONS if k in a.options)


def _key(a, faults: tuple) -> tuple:
    s = a.scenario
    return (s.algorithm, s.gpus, s.elements, model_key(a), faults)


def _check(a) -> None:
    g = a.scenario.gpus
    if g > TIMELINE_MAX_GPUS:
        raise RingsimError(f"{a.expr.head!r} runs the plan as events: at most {TIMELINE_MAX_GPUS} "
                           f"GPUs in a lesson (got {g:,}); use `ringsim timeline` for larger ones")
    for fault in _faults(a):
        fault.check(g)


def run(a, faulty: bool = True):
    """The timeline of the figure's scenario, with its faults (or healthy)."""
    from ..algorithms import make_plan
    from ..timeline import simulate
    _check(a)
    faults = _faults(a) if faulty else ()
    key = _key(a, faults)
    if key not in _RUNS:
        s = a.scenario
        a.ctx.budget.spend(ledger_cost(int(a.closed().messages.value) * 10),
                           f"{a.expr.head!r} (a timeline of {s.gpus:,} GPUs)")
        _RUNS[key] = simulate(make_plan(s.algorithm, s.gpus), s.elements, _model(a), faults)
    return _RUNS[key]


def _need_faults(a) -> None:
    if not _faults(a):
        raise RingsimError(f"{a.expr.head!r} compares a run with faults to a healthy one: name one "
                           f"(slow_link=1-2:0.5, slow_gpu=3:0.5 or delay=2:100us)")


def _stretch(a) -> float:
    _need_faults(a)
    healthy = run(a, False).seconds
    return run(a).seconds / healthy if healthy > 0 else 1.0


def _added(a) -> float:
    _need_faults(a)
    return run(a).seconds - run(a, False).seconds


def _cost_of(kind: str):
    def fn(a) -> str:
        from ..timeline.report import fault_costs
        _need_faults(a)
        for cost in fault_costs(run(a)):
            if cost.fault.kind == kind:
                return format_seconds(cost.seconds)
        raise RingsimError(f"{a.expr.head!r}: no {kind} fault is named (write {kind.replace('-', '_')}=…)")
    return fn


def _path_link(a) -> tuple[int, int, int, float]:
    from ..timeline.report import path_links
    timeline = run(a)
    path = timeline.critical_path()
    if not path:
        raise RingsimError(f"{a.expr.head!r}: nothing is sent, so there is no critical path")
    return path_links(timeline, path)[0]


def _strip(a) -> str:
    from ..timeline.report import strip
    # 30 columns of time and the names' indent cut to two, so that the block fits a 40-column
    # terminal whole: bars cannot wrap without losing the time they stand for.
    lines = strip(run(a), width=30)
    if not lines:
        return "(no strip: more than 32 GPUs, or nothing is sent)"
    return "\n".join("  " + line.rstrip() for line in textwrap.dedent("\n".join(lines)).split("\n"))


def alternatives(a) -> list:
    """report.alternatives for the figure's G, N, machine and faults (the ring's other schedules)."""
    from ..timeline.report import alternatives as others
    _check(a)
    _need_faults(a)
    faults = _faults(a)
    key = _key(a, faults)
    if key not in _ALTERNATIVES:
        s = a.scenario
        a.ctx.budget.spend(ledger_cost(int(a.closed().messages.value) * 200),
                           f"{a.expr.head!r} (four schedules of {s.gpus:,} GPUs as events)")
        _ALTERNATIVES[key] = others(s.gpus, s.elements, _model(a), faults)
    return _ALTERNATIVES[key]


def schedule(a, key: str):
    """One schedule of report.alternatives by its key (ring, tree, around, channels)."""
    for alt in alternatives(a):
        if alt.key == key:
            return key, alt
    raise RingsimError(f"{a.expr.head!r}: no {key!r} schedule at G = {a.scenario.gpus:,} "
                       f"(two rings around a link need at least 4 GPUs)")


def _alt_ratio(alt) -> float:
    return alt.faulty / alt.healthy if alt.healthy > 0 else 1.0


def _alternatives_block(a) -> str:
    rows = alternatives(a)
    width = max(len(r.label) for r in rows)
    lines = [f"  {'schedule':<{width}}  {'healthy':>10}  {'faulty':>10}  stretch"]
    for r in rows:
        lines.append(f"  {r.label:<{width}}  {format_seconds(r.healthy):>10}  "
                     f"{format_seconds(r.faulty):>10}  {ratio(_alt_ratio(r))}×")
    return "\n".join(lines)


def _fastest(a) -> str:
    return min((alt.faulty, alt.key) for alt in alternatives(a))[1]


def command(a) -> str:
    """The `ringsim timeline` command line that prints the figure's numbers."""
    s = a.scenario
    parts = ["ringsim timeline"] + ([] if s.algorithm == DEFAULT_ALGORITHM else ["-a", s.algorithm])
    parts += ["-g", str(s.gpus), "-n", str(s.elements)]
    parts += [f.flag() for f in _faults(a)] + machine_flags(a)
    return " ".join(parts)


# --- why, for a learner who answered wrong ------------------------------------------------
def _setting(a) -> str:
    faults = ", ".join(str(f) for f in _faults(a)) or "no faults"
    return f"{model_line(a)}; {faults}"


def _stretch_why(a, value: str) -> str:
    return (f"ringsim.timeline ran the plan as events twice ({_setting(a)}): "
            f"{format_seconds(run(a).seconds)} with the faults against "
            f"{format_seconds(run(a, False).seconds)} healthy, {value}×. A ring's every step sends "
            f"one segment over every link, so the slow link's port is busy in every step.")


def _added_why(a, value: str) -> str:
    return (f"ringsim.timeline ran the plan as events with and without the faults ({_setting(a)}): "
            f"{format_seconds(run(a).seconds)} − {format_seconds(run(a, False).seconds)}.")


def _sender_why(a, value: str) -> str:
    s, d, count, seconds = _path_link(a)
    return (f"The critical path is the chain of waits that ends last ({_setting(a)}): "
            f"{count} of its transfers go {gpu_name(s)} → {gpu_name(d)}, {format_seconds(seconds)} "
            f"of its time.")


def _fastest_why(a, value: str) -> str:
    rows = ", ".join(f"{alt.key} {format_seconds(alt.faulty)}" for alt in alternatives(a))
    return f"ringsim.timeline ran each schedule with the same faults ({_setting(a)}): {rows}."


def _schedule_why(key: str):
    def why(a, value: str) -> str:
        _, alt = schedule(a, key)
        return (f"ringsim.timeline ran {alt.label} as events with and without the faults "
                f"({_setting(a)}): {format_seconds(alt.faulty)} against {format_seconds(alt.healthy)}, "
                f"{value}×.")
    return why


def entries() -> dict:
    """The timeline words, as vocabulary Entries."""
    from ..timeline.report import SCHEDULES
    words = {
        "timeline.seconds": Entry(lambda a: format_seconds(run(a).seconds), OPTIONS,
                                  "the plan's time as events, with the faults named"),
        "timeline.healthy": Entry(lambda a: format_seconds(run(a, False).seconds), OPTIONS,
                                  "the same plan's time as events without faults"),
        "timeline.stretch": Entry(lambda a: ratio(_stretch(a)), OPTIONS,
                                  "time with the faults ÷ time without: '2'", _stretch_why),
        "timeline.added": Entry(lambda a: format_seconds(_added(a)), OPTIONS,
                                "time with the faults − time without", _added_why),
        "timeline.added.us": Entry(lambda a: ratio(_added(a) * 1e6), OPTIONS,
                                   "the same in µs, a bare number: '100'", _added_why),
        "timeline.path.length": Entry(lambda a: format_number(len(run(a).critical_path())), OPTIONS,
                                      "transfers on the critical path"),
        "timeline.path.link": Entry(lambda a: f"{gpu_name(_path_link(a)[0])} → {gpu_name(_path_link(a)[1])}",
                                    OPTIONS, "the link the critical path spends most time on: "
                                    "'GPU1 → GPU2'", _sender_why),
        "timeline.path.sender": Entry(lambda a: gpu_name(_path_link(a)[0]), OPTIONS,
                                      "the GPU sending on that link", _sender_why),
        "timeline.strip": Entry(_strip, OPTIONS, "a Gantt strip per GPU: █ sending, · idle (a block)"),
        "timeline.alternatives": Entry(_alternatives_block, OPTIONS,
                                       "ring, double binary tree, two rings around the link, two "
                                       "channels: healthy, with the faults, stretch (a block)"),
        "timeline.command": Entry(command, OPTIONS, "the `ringsim timeline` command line that prints "
                                  "these figures: 'ringsim timeline -g 8 -n 16777216 --slow-link 1-2:0.5 "
                                  "--reduce-bandwidth inf'"),
        "timeline.fastest": Entry(_fastest, OPTIONS, "the schedule that ends first with the faults: "
                                  "ring, tree, around or channels", _fastest_why),
    }
    for kind in FAULT_OPTIONS:
        words[f"timeline.cost.{kind}"] = Entry(
            _cost_of(kind.replace("_", "-")), OPTIONS,
            f"what the {kind} fault adds, the other faults kept (ringsim.timeline.report.fault_costs)")
    for key in SCHEDULES:
        words[f"timeline.stretch.{key}"] = Entry(
            (lambda k: lambda a: ratio(_alt_ratio(schedule(a, k)[1])))(key), OPTIONS,
            f"the {key} schedule's time with the faults ÷ without", _schedule_why(key))
    return words
