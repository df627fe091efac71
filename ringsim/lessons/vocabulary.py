"""The words a lesson may quote: how each figure is computed, and why it has its value.

Each Entry computes a figure from an evaluation `a` (placeholders._Ask: the scenario, the
position, the options) and can say in words which expression the engine evaluated, which
Question.explain() gives a learner who answered wrong.
"""

from __future__ import annotations

import re
from dataclasses import replace
from fractions import Fraction
from typing import Callable

from ..algorithms import ALGORITHMS, check_options, closed_form, default_options, option_names
from ..core.errors import RingsimError
from ..core.formula import format_number
from ..core.layout import Layout
from ..execute.ledger import Ledger, measure
from ..core.naming import gpu_name, letter, sum_label, term
from ..sim.scenario import Scenario
from ..sim.simulation import Simulation
from . import buckets, faults, protocols, sharding
from .budget import ledger_cost
from .cache import Cache as _Cache
from .text import plural
from .words import Entry, check_training, machine_flags, model_key, model_line, small_number

LEDGER_MAX_GPUS = 1024     # ledgers of other scenarios come from real plans: keep them small
SIMULATE_MAX_CELLS = 1_000_000  # G·N of another scenario that is simulated for its labels
LIST_MAX = 8           # per-GPU lists longer than this are shortened
COMPARED = ("ring", "master", "naive")


# --- caches of engine results (shared by every lesson loaded in this process) --------------
_LEDGERS, _SIMULATIONS, _TRAININGS, _COSTS = _Cache(256), _Cache(8), _Cache(16), _Cache(256)
_PRECISION = _Cache(64)
_SEGMENTS = _Cache(256)
SWEEP_SIZES = (1 << 10, 1 << 15, 1 << 20, 1 << 25, 1 << 30)  # 1 KiB … 1 GiB, every ×32


def ledger_cached(scenario: Scenario, position: int) -> bool:
    return (scenario, position) in _LEDGERS


def ledger_of(scenario: Scenario, position: int) -> Ledger:
    """The ledger of the scenario's first `position` steps."""
    def make():
        plan = scenario.plan()
        return measure(plan, Layout(plan.segments, scenario.elements), position)
    return _LEDGERS.get_or((scenario, position), make)


def simulation_cached(scenario: Scenario) -> bool:
    return scenario in _SIMULATIONS


def simulation_of(scenario: Scenario) -> Simulation:
    return _SIMULATIONS.get_or(scenario, scenario.simulation)


# --- the vocabulary ---------------------------------------------------------------------
def _n(value) -> str:
    return format_number(value)


def _label(s: Scenario) -> str:
    """The words the algorithm's own label adds to its title ('GPU3' for the master), or ''."""
    spec = ALGORITHMS[s.algorithm]
    return spec.label(**check_options(s.algorithm, s.gpus, dict(s.options))) if spec.label else ""


def where(a) -> str:
    """'Ring all-reduce at G = 4, N = 8, after step 3 of 6' for explanations."""
    s = a.scenario
    name = ALGORITHMS[s.algorithm].title
    if label := _label(s):
        name += f" on {label}"
    steps = a.steps()
    at = "before step 1" if a.position == 0 else (
        "at the end" if a.position == steps else f"after step {a.position} of {steps}")
    return f"{name}, G = {s.gpus:,}, N = {s.elements:,}, {at}"


def generic_why(a, value: str) -> str:
    return f"The engine evaluated {a.expr.head} on {where(a)}: {value}."


def title_text(scenario: Scenario) -> str:
    """'Ring all-reduce · 4 GPUs · 8 elements per GPU', singular where the count is 1."""
    name = ALGORITHMS[scenario.algorithm].title
    if label := _label(scenario):
        name += f" ({label})"
    return f"{name} · {plural(scenario.gpus, 'GPU')} · {plural(scenario.elements, 'element')} per GPU"


def _sentences(a) -> str:
    step = a.options.get("step")
    sim = a.sim()
    last = len(sim.plan)
    if step is None:
        if a.position == 0:
            raise RingsimError("no step is done at stop 0: write 'sentences step=K'")
        step = a.position
    if not 1 <= step <= last:
        raise RingsimError(f"step={step} is outside the run (1..{last})")
    if a.own and step > a.position:
        # A later step's sentences run the lesson's own scenario to it, then back.
        a.ctx.pay_ahead(step)
        a.ctx.pay_replay(a.position)
    return "\n".join(f"- {text}" for text in sim.sentences(step - 1))


def _segment(a, index: int) -> int:
    if not 1 <= index <= a.scenario.gpus:
        raise RingsimError(f"segment {index} does not exist: segments are 1..{a.scenario.gpus}")
    return index - 1


def _held(a) -> str:
    gpu, segment = a.indices
    g, j = a.gpu(gpu), _segment(a, segment)
    sim = a.sim()
    if sim.symbolic is None:
        raise RingsimError("labels are kept only for at most 128 GPUs")
    return sim.symbolic.label(g, j, max_terms=8)


def _held_why(a, value: str) -> str:
    gpu, segment = a.indices
    sim = a.sim()
    held = sim.symbolic.contributors(gpu - 1, segment - 1)
    start = term(gpu - 1, segment - 1)
    if len(held) == 1:
        return (f"GPU{gpu}'s segment {segment} still holds only its own {start}: nothing was "
                f"added into it by then ({where(a)}).")
    return (f"GPU{gpu}'s segment {segment} started as {start}; each reduce step adds the copy that "
            f"arrives, each copy step replaces it. {where(a)}: it holds {len(set(held))} of "
            f"{a.scenario.gpus} terms, {value}.")


def _phase_step(a):
    """The step whose phase `iterations` counts (the one done last; the first at stop 0), or None."""
    if a.plan is None:
        if a.scenario.gpus > LEDGER_MAX_GPUS:
            raise RingsimError(f"iterations of another scenario need at most {LEDGER_MAX_GPUS:,} GPUs "
                               f"(got {a.scenario.gpus:,}); use formula.steps for larger ones")
        plan = a.scenario.plan()
    else:
        plan = a.plan
    return plan.steps[max(a.position - 1, 0)] if plan.steps else None


def _iterations(a) -> str:
    step = _phase_step(a)
    return "0" if step is None else _n(step.iterations)


def _iterations_why(a, value: str) -> str:
    step, s = _phase_step(a), a.scenario
    if step is None:
        return f"{ALGORITHMS[s.algorithm].title} at G = {s.gpus:,} has no steps: {value}."
    adds = "; in each, the copy that arrives is added to a partial sum" if step.reduces.any() else ""
    return (f"{step.phase} of {ALGORITHMS[s.algorithm].title} at G = {s.gpus:,} runs {value} "
            f"iterations one after another (the engine's plan){adds}.")


def segments_of(scenario: Scenario) -> int:
    """How many segments the scenario's own plan cuts N into (G for the ring, 1 for a tree)."""
    return _SEGMENTS.get_or(scenario, lambda: scenario.plan().segments)


def _sizes(a) -> str:
    sizes = sorted(set(Layout(segments_of(a.scenario), a.scenario.elements).sizes()))
    return " or ".join(_n(s) for s in sizes)


def _per_gpu(a, field: str) -> list[int]:
    ledger = a.ledger()
    if field == "load":
        return [int(s + r) for s, r in zip(ledger.sent, ledger.received)]
    return [int(v) for v in getattr(ledger, field)]


def _listed(values: list) -> str:
    shown = [_n(v) for v in values]
    if len(shown) > LIST_MAX:
        shown = shown[:LIST_MAX - 2] + ["…", shown[-1]]
    return shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " and " + shown[-1]


def _each(field: str) -> Callable:
    def fn(a) -> str:
        values = _per_gpu(a, field)
        if len(set(values)) > 1:
            raise RingsimError(f"not every GPU {_VERB[field]} the same here ({_listed(values)}): put "
                               f"this sentence under '<!-- if ... -->' (e.g. N % G == 0)")
        return _n(values[0])
    return fn


def _each_why(field: str) -> Callable:
    def why(a, value: str) -> str:
        return (f"The ledger counts what each GPU {_VERB[field]} ({where(a)}): "
                f"{_listed(_per_gpu(a, field))}, so {value} each.")
    return why


_VERB = {"sent": "sent", "received": "received", "load": "sent plus received"}


def _ledger_why(field: str, gpu_from_index: bool = True) -> Callable:
    def why(a, value: str) -> str:
        g = a.indices[0] - 1 if gpu_from_index else None
        who = f"GPU{g + 1}" if g is not None else "the GPUs"
        if a.position > 8:  # a long run: the sum, not every step
            return (f"The ledger adds what {who} {_VERB.get(field, 'moved')} over steps 1 to "
                    f"{a.position} ({where(a)}): {value}.")
        steps = []
        for position in range(1, a.position + 1):
            before, after = a.ledger(position - 1), a.ledger(position)
            moved = _field(after, field, g) - _field(before, field, g)
            if moved:
                steps.append((position, moved, _step_parts(before, after, field, g)))
        if not steps:
            return f"{who} {_VERB.get(field, 'moved')} nothing in the steps done ({where(a)})."
        # Each step in words (who sent how much to whom), so a wrong guess can be traced.
        runs: list[list] = []  # consecutive steps that moved the same, told once
        for p, _, parts in steps:
            if runs and runs[-1][2] == parts and runs[-1][1] == p - 1:
                runs[-1][1] = p
            else:
                runs.append([p, p, parts])
        told = "; ".join((f"in step {p}, {parts}" if p == q else f"in each of steps {p} to {q}, {parts}")
                         for p, q, parts in runs[:4])
        if len(runs) > 4:
            told += f"; … ({len(steps)} steps)"
        moved = {m for _, m, _ in steps}
        total = (f"{len(steps)} × {_n(steps[0][1])}" if len(moved) == 1 and len(steps) > 2
                 else " + ".join(_n(m) for _, m, _ in steps))
        in_all = f" In all, {total} = {value}." if len(steps) > 1 else ""
        return (f"The ledger counts what {who} {_VERB.get(field, 'moved')} ({where(a)}): "
                f"{told}.{in_all}")
    return why


def _step_parts(before: Ledger, after: Ledger, field: str, gpu: int | None) -> str:
    """One step's transfers in words: 'GPU2, GPU3 and GPU4 each sent it 8 (3 × 8 = 24)'."""
    start = len(before.src)
    src, dst, size = after.src[start:], after.dst[start:], after.elements[start:]
    pieces = []
    if gpu is None:
        return _grouped([(int(e), "") for e in size if e], "transfers of", "")
    if field in ("received", "load"):
        came = [(int(e), gpu_name(int(s))) for s, d, e in zip(src, dst, size) if d == gpu and e]
        if came:
            pieces.append(_grouped(came, "received", "from"))
    if field in ("sent", "load"):
        went = [(int(e), gpu_name(int(d))) for s, d, e in zip(src, dst, size) if s == gpu and e]
        if went:
            pieces.append(_grouped(went, "sent", "to"))
    return " and ".join(pieces)


def _grouped(moves: list[tuple[int, str]], verb: str, preposition: str) -> str:
    """'received 8 from each of GPU2, GPU3 and GPU4 (3 × 8 = 24)' or 'sent 2 to GPU2'."""
    if not preposition:  # every transfer of the step, peers unnamed
        sizes = sorted({e for e, _ in moves})
        if len(sizes) == 1:
            count, each = len(moves), sizes[0]
            return (f"{plural(count, 'transfer')} of {_n(each)}" +
                    (f" ({_n(count)} × {_n(each)} = {_n(count * each)})" if count > 1 else ""))
        return f"{plural(len(moves), 'transfer')} moved {_n(sum(e for e, _ in moves))}"
    by_size: dict[int, list[str]] = {}
    for size, peer in moves:
        by_size.setdefault(size, []).append(peer)
    said = []
    for size, peers in by_size.items():
        if len(peers) == 1:
            said.append(f"{_n(size)} {preposition} {peers[0]}")
        else:
            said.append(f"{_n(size)} {preposition} each of {_listed_names(peers)} "
                        f"({_n(len(peers))} × {_n(size)} = {_n(len(peers) * size)})")
    return f"{verb} " + ", ".join(said)


def _listed_names(names: list[str]) -> str:
    if len(names) > LIST_MAX:
        names = names[:LIST_MAX - 2] + ["…", names[-1]]
    return ", ".join(names[:-1]) + " and " + names[-1]


def _field(ledger: Ledger, field: str, gpu: int | None) -> int:
    if gpu is None:
        return ledger.total
    if field == "load":
        return int(ledger.sent[gpu] + ledger.received[gpu])
    return int(getattr(ledger, field)[gpu])


def _exact(f) -> str:
    """A closed form as 'formula = value', with the exact formula where G does not divide N."""
    exact = getattr(f, "exact", None)
    return f"{exact} = {_n(f.value)}" if exact else f"{f.text} = {_n(f.value)}"


def _compare(a) -> str:
    g, n = a.scenario.gpus, a.scenario.elements
    lines = [f"G = {g:,} GPUs, N = {n:,} elements per GPU"]
    # The three algorithms of the original story, in the registry's order (new algorithms
    # are compared in lesson 9's cost table, which reads the whole registry).
    for name, spec in ((k, s) for k, s in ALGORITHMS.items() if k in COMPARED):
        cf = closed_form(name, g, n)
        lines.append(f"{spec.title + ':':<19}in all {_exact(cf.total)}")
        sent, received = cf.busiest_sent, cf.busiest_received
        if sent.value == received.value:
            lines.append(f"  the busiest GPU sends and receives {_exact(sent)} each")
        else:
            lines.append(f"  the busiest GPU sends {_exact(sent)}, receives {_exact(received)}")
    return "\n".join(lines)


def _ratio_total(a) -> str:
    g, n = a.scenario.gpus, a.scenario.elements
    ring = closed_form("ring", g, n).total.value
    return _n(closed_form("naive", g, n).total.value / ring) if ring else "1"


def _ratio_busiest(a) -> str:
    g, n = a.scenario.gpus, a.scenario.elements
    m, r = closed_form("master", g, n), closed_form("ring", g, n)
    ring = r.busiest_sent.value + r.busiest_received.value
    return _n((m.busiest_sent.value + m.busiest_received.value) / ring) if ring else "1"


def _ratio_why(kind: str) -> Callable:
    def why(a, value: str) -> str:
        g, n = a.scenario.gpus, a.scenario.elements
        if kind == "total":
            return (f"Naive moves G·(G−1)·N, the ring 2·(G−1)·N; their ratio is G/2. With G = {g:,} "
                    f"and N = {n:,}: {_n(closed_form('naive', g, n).total.value)} ÷ "
                    f"{_n(closed_form('ring', g, n).total.value)} = {value}.")
        return (f"The master sends and receives (G−1)·N each way, a ring GPU 2·(G−1)·N/G each way; "
                f"the ratio is G/2. With G = {g:,}: {value}.")
    return why


# The letters a closed form writes for a scenario's numbers, and the functions it calls.
_OPTION_LETTERS = {"chunks": "C", "channels": "K", "nodes": "M"}
_FUNCTIONS = {"min", "max", "lg", "log"}
_WORD = re.compile(r"[A-Za-z]+")


def _letter(name: str) -> re.Pattern:
    # A letter stands alone: not part of a word, nor of a subscripted name such as N₁.
    return re.compile(rf"(?<![A-Za-z]){name}(?![A-Za-z₀-₉])")


def letter_values(s, options: dict | None = None) -> dict[str, int]:
    """The value of each letter a closed form may write: G, N and its options' C, K, M (L = G/M)."""
    values = {"G": s.gpus, "N": s.elements}
    options = default_options(s.algorithm) if options is None else options
    for option, name in _OPTION_LETTERS.items():
        if isinstance(options.get(option), int):
            values[name] = options[option]
    if "M" in values:
        values["L"] = s.gpus // values["M"]
    return values


def substitute(text: str, values: dict[str, int]) -> str | None:
    """A formula with its letters replaced by their values ('2·(G−1)·N' → '2·(4−1)·8'), or None.

    None when the text holds a name with no value here (H, p2) or words: it cannot be worked out.
    """
    if any(w not in values and w not in _FUNCTIONS for w in _WORD.findall(text)):
        return None
    for name, value in values.items():
        text = _letter(name).sub(f"{value:,}", text)
    return text


def _given(text: str, values: dict[str, int]) -> str:
    # Only the letters the formula uses: 'G = 25', not 'G = 25 and N = 8' for 2·(G−1).
    used = [name for name in values if _letter(name).search(text)] or ["G"]
    parts = [f"{name} = {values[name]:,}" for name in used]
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def _formula_why(field: str) -> Callable:
    words = {"total": "the elements moved in all", "busiest_sent": "what the busiest GPU sends",
             "busiest_received": "what the busiest GPU receives", "steps": "the number of steps",
             "messages": "the number of messages"}[field]

    def why(a, value: str) -> str:
        s = a.scenario
        formula = getattr(a.closed(), field)
        values = letter_values(s)
        worked = substitute(formula.text, values)
        return (f"For {ALGORITHMS[s.algorithm].title}, {words} is {formula.text}; with "
                f"{_given(formula.text, values)} that is "
                + (f"{worked} = " if worked is not None else "") + f"{_n(formula.value)}.")
    return why


def _calc(a) -> str:
    return _n(a.indices[0])


def _calc_why(a, value: str) -> str:
    s = a.ctx.scenario
    expression = a.expr.indices[0].text.replace("//", "÷").replace("*", "·").replace("-", "−")
    values = {"G": s.gpus, "N": s.elements}
    if not any(_letter(name).search(expression) for name in values):
        return f"{expression} is {value}."
    return f"{expression} with {_given(expression, values)} is {value}."


def _letters(a) -> str:
    g = a.scenario.gpus
    # Only the letters shown are made: G may be a million.
    shown = range(g) if g <= 6 else (0, 1, 2, None, g - 1)
    return " + ".join("…" if k is None else letter(k) for k in shown)


def _segments(a) -> str:
    g = a.gpu(a.indices[0])
    names = [term(g, j) for j in range(a.scenario.gpus)]
    if len(names) > 6:
        names = names[:3] + ["…", names[-1]]
    return " ".join(names)


def _complete(a) -> str:
    j = _segment(a, a.indices[0])
    return sum_label(tuple(range(a.scenario.gpus)), j, max_terms=8)


def _busiest(a) -> int:
    return a.ledger().busiest()


def _busiest_why(a, value: str) -> str:
    ledger, k = a.ledger(), _busiest(a)
    return (f"The ledger adds what each GPU sent and received ({where(a)}); GPU{k + 1} has the most: "
            f"{_n(ledger.sent[k])} sent + {_n(ledger.received[k])} received = "
            f"{_n(ledger.sent[k] + ledger.received[k])}.")


def _cost_rows(a, only: str | None = None) -> list:
    """The engine's priced all-reduces for the figure's G and N (one row when `only` names it)."""
    from . import costs
    topology, alpha, gbps = model_key(a)
    g, n = a.scenario.gpus, a.scenario.elements
    key = (g, n, topology, alpha, gbps, only)

    def make():
        model = costs.model_of(topology, alpha, gbps)
        rows = costs.cost_rows(g, n, model, only=only)
        if not rows:
            raise RingsimError(f"{a.expr.head!r}: {only} does not apply at G = {g:,} on {topology}")
        return rows
    return _COSTS.get_or(key, make)


def _latency(a) -> str:
    from ..core.units import format_bandwidth
    rows = _cost_rows(a)
    width = max(len(r.short) for r in rows)
    nodes = model_key(a)[0] != "flat"
    lines = [model_line(a),
             f"  {'':<{width}}  {'steps':>5}  {'time':>10}  {'busbw':>11}" + ("  bottleneck" if nodes else "")]
    fastest = min(r.seconds for r in rows)
    for r in rows:
        mark = " <" if r.seconds == fastest else "  "
        lines.append(f"  {r.short:<{width}}  {r.steps:>5,}  {r.time:>10}  "
                     f"{format_bandwidth(r.busbw):>11}{mark}" + (f"{r.bottleneck or '—'}" if nodes else ""))
    return "\n".join(line.rstrip() for line in lines)


def _row_of(a, key: str):
    return _cost_rows(a, only=key)[0]


def _latency_row(key: str) -> Callable:
    def fn(a) -> str:
        return _row_of(a, key).time
    return fn


def _busbw_row(key: str, field: str) -> Callable:
    def fn(a) -> str:
        from ..core.units import format_bandwidth
        return format_bandwidth(getattr(_row_of(a, key), field))
    return fn


def _latencies_row(key: str) -> Callable:
    def fn(a) -> str:
        return _n(_row_of(a, key).steps)
    return fn


def _latencies_why(key: str) -> Callable:
    def why(a, value: str) -> str:
        row, s = _row_of(a, key), a.scenario
        form = closed_form(row.name, s.gpus, s.elements, **row.options).steps
        shown = f"its closed form {form}" if form.text != _n(form.value) else "its closed form"
        return (f"{row.title} on {plural(s.gpus, 'GPU')} runs {value} steps one after another "
                f"({shown}), each paying α at least once.")
    return why


def _chunks_row(key: str) -> Callable:
    def fn(a) -> str:
        return _n(_row_of(a, key).options["chunks"])
    return fn


def _chunks_why(key: str) -> Callable:
    def why(a, value: str) -> str:
        from ..core.units import format_bytes
        from .costs import BYTES_PER_ELEMENT, TREE_CHUNK_BYTES, TREE_MAX_CHUNKS
        return (f"The lessons pipeline {_row_of(a, key).title} in chunks of about "
                f"{TREE_CHUNK_BYTES // 1024} KiB, at most {TREE_MAX_CHUNKS}: C = min({TREE_MAX_CHUNKS}, "
                f"⌈bytes/{TREE_CHUNK_BYTES // 1024} KiB⌉) = {value} for "
                f"{format_bytes(a.scenario.elements * BYTES_PER_ELEMENT)} per GPU.")
    return why


def _latency_why(key: str) -> Callable:
    def why(a, value: str) -> str:
        row = _row_of(a, key)
        return (f"The engine's cost model (ringsim.cost.model) priced {row.short}, step by step: each step "
                f"lasts as long as its busiest port (α + bytes·β per message queued there, + bytes·γ "
                f"on a reduce); the {row.steps:,} steps add up to {value}. {model_line(a)}.")
    return why


def _best(a) -> str:
    from .costs import best
    return best(_cost_rows(a)).label


def _best_why(a, value: str) -> str:
    from .costs import best
    rows = _cost_rows(a)
    # Only the winner is named: the runner-up may be the answer to the next question.
    return (f"The engine's cost model priced every all-reduce this machine can run ({len(rows)}) "
            f"from their plans; the fastest takes {best(rows).time}. {model_line(a)}.")


def _sweep(a) -> str:
    """The sweep: the fastest all-reduce at sizes from 1 KiB to 1 GiB, with its time and busbw."""
    from ..core.units import format_bandwidth
    from ..core.units import format_bytes as format_size
    from . import costs
    from .costs import best, overtake
    g = a.scenario.gpus
    # NCCL's tree is priced port by port, O(G) at each of the sweep's sizes (measured: 0.7 s
    # the first time at G = 1,000,000).
    a.ctx.budget.spend(2 + g // 1_500, f"{a.expr.head!r} (a sweep of {g:,} GPUs)")
    topology, alpha, gbps = model_key(a)
    lines = [f"G = {g:,}, " + (f"flat: α = {alpha:g} µs, links {gbps:g} GB/s, adds free" if topology == "flat"
                                else topology),
             f"  {'per GPU':>8}  {'fastest':<22}  {'time':>10}  {'busbw':>11}  {'ring':>10}"]
    tops = []
    for nbytes in SWEEP_SIZES:
        sub = _Sub(a, nbytes // 4)
        rows = _cost_rows(sub)
        top = best(rows)
        tops.append((nbytes // 4, top))
        ring = {r.key: r for r in rows}["ring"]  # the table sets the one ring beside the best
        lines.append(f"  {format_size(nbytes):>8}  {top.short:<22}  {top.time:>10}  "
                     f"{format_bandwidth(top.busbw):>11}  {ring.time:>10}")
    for (low, first), (high, then) in zip(tops, tops[1:]):
        if first.key != then.key:  # rows by key: the ring as NCCL's channels is a row of its own
            n = overtake(first.key, then.key, low, high, g, costs.model_of(topology, alpha, gbps))
            lines.append(f"  {then.label} overtakes {first.label} from {_n(n * 4)} bytes per GPU")
    return "\n".join(lines)


class _Sub:
    """The same figure at another N (for the sweep's sizes)."""

    def __init__(self, a, elements: int) -> None:
        self.ctx, self.expr, self.options = a.ctx, a.expr, a.options
        self.scenario = replace(a.scenario, elements=elements)


PRECISION_SEED = 0  # one fixed draw of gradients, so the lesson's figures are reproducible


def _precision_run(a):
    """float32 random gradients summed by the scenario's algorithm, and their exact float64 sums."""
    s = a.scenario
    if s.gpus * s.elements > SIMULATE_MAX_CELLS:
        raise RingsimError(f"{a.expr.head!r} sums real arrays: at most {SIMULATE_MAX_CELLS:,} elements in all")
    if s not in _PRECISION:
        a.ctx.budget.spend(ledger_cost(int(a.closed().messages.value)) + s.gpus * s.elements // 10_000,
                           f"{a.expr.head!r} (an all-reduce of {s.gpus:,} arrays)")

    def make():
        import math

        import numpy as np

        from ..api import allreduce
        rng = np.random.default_rng(PRECISION_SEED)
        arrays = [rng.standard_normal(s.elements).astype(np.float32) for _ in range(s.gpus)]
        out = allreduce(arrays, s.algorithm, **dict(s.options)).outputs[0]
        # math.fsum: the correctly rounded sum of the float32 values, the reference every order misses.
        exact = np.array([math.fsum(float(x[i]) for x in arrays) for i in range(s.elements)])
        nearest = exact.astype(np.float32)
        return (float(np.abs(out.astype(np.float64) - exact).max(initial=0.0)),
                int(np.count_nonzero(out != nearest)))
    return _PRECISION.get_or(s, make)


def _precision_why(a, value: str) -> str:
    s = a.scenario
    return (f"ringsim.allreduce summed {plural(s.gpus, 'GPU')}' float32 random gradients (seed {PRECISION_SEED}, "
            f"{plural(s.elements, 'element')}) with {ALGORITHMS[s.algorithm].title}, in its own order of "
            f"additions, and compared with the exact sum (math.fsum in float64): {value}.")


def _train_run(a):
    from .budget import training_cost
    s = a.scenario
    epochs = a.options.get("epochs", 5)
    check_training(epochs, s.gpus)
    sync = a.options.get("sync", True)
    key = (s.gpus, s.algorithm, epochs, sync, s.options)
    if key not in _TRAININGS:
        a.ctx.budget.spend(training_cost(epochs, 16, s.gpus, a.steps()),
                           f"{a.expr.head!r} (training on {s.gpus:,} GPUs for {epochs} epochs)")

    def make():
        from ..training.train import train
        return train(s.gpus, s.algorithm, epochs, sync=sync, options=dict(s.options))
    return _TRAININGS.get_or(key, make)


def _train_block(a) -> str:
    from ..training.train import report_lines
    return "\n".join(report_lines(_train_run(a)))


def _train_why(a, value: str) -> str:
    run = _train_run(a)
    if a.expr.name == "train.per_sync":
        return (f"One sync is one all-reduce of the model's N = {run.parameters} parameters on "
                f"{plural(run.gpus, 'GPU')}: {run.formula_per_sync}.")
    if a.expr.name == "train.elements":
        return (f"{run.syncs:,} syncs (one per batch) × {run.formula_per_sync} elements per sync "
                f"= {value}.")
    return f"The training run ({plural(run.gpus, 'GPU')}, {len(run.epochs)} epochs) reports {value}."


_SCEN = ("algorithm", "gpus", "elements", "master")
_SIZE = ("gpus", "elements")  # figures that compare every algorithm take only G and N
_POS = _SCEN + ("at",)
_TRAIN = ("algorithm", "gpus", "master", "epochs", "sync")
_MODEL = ("alpha_us", "gbps", "topology")
_COST = _SIZE + _MODEL

VOCABULARY: dict[str, Entry] = {
    "=": Entry(_calc, (), "'{{= G-1}}': a whole-number expression in G and N", _calc_why),
    "G": Entry(lambda a: _n(a.scenario.gpus), _SCEN, "the number of GPUs"),
    "N": Entry(lambda a: _n(a.scenario.elements), _SCEN, "elements per GPU"),
    "algorithm": Entry(lambda a: ALGORITHMS[a.scenario.algorithm].title, _SCEN, "the algorithm's name"),
    "title": Entry(lambda a: title_text(a.scenario), _SCEN,
                   "'Ring all-reduce · 4 GPUs · 8 elements per GPU'"),
    "banner": Entry(lambda a: a.sim().banner, _POS, "where the run is: 'Reduce-scatter · iteration 2 of 3'"),
    "position": Entry(lambda a: _n(a.position), _POS, "steps done at this point"),
    "plan.steps": Entry(lambda a: _n(a.steps()), _SCEN, "steps in the whole run"),
    "iterations": Entry(_iterations, _POS, "iterations in the phase of the step done last "
                        "(the first step's phase at stop 0)", _iterations_why),
    "segment.size": Entry(_sizes, _SCEN, "elements per segment of the algorithm's plan: '2' or '2 or 3'"),
    "letters": Entry(_letters, _SCEN, "the GPUs' gradient letters as a sum: 'a + b + c + d'"),
    "segments[]": Entry(_segments, _SCEN, "GPU k's segment names: 'a₁ a₂ a₃ a₄'"),
    "complete[]": Entry(_complete, _SCEN, "the complete sum of segment j: 'a₂+b₂+c₂+d₂'"),
    "ledger.total": Entry(lambda a: _n(a.ledger().total), _POS, "elements moved so far",
                          _ledger_why("total", False)),
    "ledger.messages": Entry(lambda a: _n(a.ledger().messages), _POS, "transfers so far"),
    "ledger.steps": Entry(lambda a: _n(a.ledger().steps), _POS, "steps done so far"),
    "sent[]": Entry(lambda a: _n(a.ledger().sent[a.gpu(a.indices[0])]), _POS,
                    "elements GPU k sent so far", _ledger_why("sent")),
    "received[]": Entry(lambda a: _n(a.ledger().received[a.gpu(a.indices[0])]), _POS,
                        "elements GPU k received so far", _ledger_why("received")),
    "load[]": Entry(lambda a: _n(a.ledger().sent[a.gpu(a.indices[0])]
                                 + a.ledger().received[a.gpu(a.indices[0])]), _POS,
                    "elements GPU k sent plus received so far", _ledger_why("load")),
    "sent.each": Entry(_each("sent"), _POS, "what every GPU sent, when all sent the same "
                       "(refused otherwise: a claim the engine checks)", _each_why("sent")),
    "received.each": Entry(_each("received"), _POS, "what every GPU received, when all the same",
                           _each_why("received")),
    "load.each": Entry(_each("load"), _POS, "sent plus received by every GPU, when all the same",
                       _each_why("load")),
    "sent.max": Entry(lambda a: _n(max(_per_gpu(a, "sent"))), _POS, "the most any GPU sent"),
    "sent.min": Entry(lambda a: _n(min(_per_gpu(a, "sent"))), _POS, "the least any GPU sent"),
    "received.max": Entry(lambda a: _n(max(_per_gpu(a, "received"))), _POS, "the most any GPU received"),
    "received.min": Entry(lambda a: _n(min(_per_gpu(a, "received"))), _POS, "the least any GPU received"),
    "sent.mean": Entry(lambda a: _n(Fraction(sum(_per_gpu(a, "sent")), a.scenario.gpus)), _POS,
                       "what a GPU sent on average (total ÷ G): '10.67'"),
    "received.mean": Entry(lambda a: _n(Fraction(sum(_per_gpu(a, "received")), a.scenario.gpus)), _POS,
                           "what a GPU received on average"),
    "sent.list": Entry(lambda a: _listed(_per_gpu(a, "sent")), _POS, "what GPU1, GPU2, … sent: '5, 6 and 5'"),
    "received.list": Entry(lambda a: _listed(_per_gpu(a, "received")), _POS, "what each GPU received"),
    "switch.received": Entry(lambda a: _n(int(a.ledger().switch_received.sum())), _POS,
                             "elements the plan's switch received so far (nvls; 0 without one)"),
    "switch.sent": Entry(lambda a: _n(int(a.ledger().switch_sent.sum())), _POS,
                         "elements the plan's switch sent so far (nvls; 0 without one)"),
    "busiest": Entry(lambda a: gpu_name(_busiest(a)), _POS, "the GPU that sent plus received most",
                     _busiest_why),
    "busiest.sent": Entry(lambda a: _n(a.ledger().sent[_busiest(a)]), _POS, "elements the busiest GPU sent",
                          _busiest_why),
    "busiest.received": Entry(lambda a: _n(a.ledger().received[_busiest(a)]), _POS,
                              "elements the busiest GPU received", _busiest_why),
    "busiest.load": Entry(lambda a: _n(a.ledger().sent[_busiest(a)] + a.ledger().received[_busiest(a)]),
                          _POS, "elements the busiest GPU sent plus received", _busiest_why),
    "held[][]": Entry(_held, _POS, "what GPU k's segment j holds: 'd₄+a₄'", _held_why),
    "sentences": Entry(_sentences, _POS + ("step",), "the sentences of one step, one per line"),
    "compare": Entry(_compare, _SIZE, "the algorithms' closed forms for the scenario"),
    "ratio.total": Entry(_ratio_total, _SIZE, "naive total ÷ ring total (G/2)", _ratio_why("total")),
    "ratio.busiest": Entry(_ratio_busiest, _SIZE,
                           "the master's load ÷ a ring GPU's load, sent plus received (G/2)",
                           _ratio_why("busiest")),
    "latency": Entry(_latency, _COST, "every all-reduce priced by the engine's α-β-γ model (a block)"),
    "latency.best": Entry(_best, _COST, "the fastest all-reduce in the engine's cost model", _best_why),
    "sweep": Entry(_sweep, ("gpus",) + _MODEL, "the fastest all-reduce from 1 KiB to 1 GiB per GPU (a block)"),
    "machine.flags": Entry(lambda a: " ".join(machine_flags(a)), _MODEL,
                           "the flags that give `ringsim sweep`, `overlap` or `timeline` the lessons' "
                           "machine: '--reduce-bandwidth inf' on flat"),
    "train": Entry(_train_block, _TRAIN, "the training demo's report"),
    "precision.error": Entry(lambda a: small_number(_precision_run(a)[0]), _SCEN,
                             "largest error of a float32 all-reduce against the exact sum", _precision_why),
    "precision.off": Entry(lambda a: _n(_precision_run(a)[1]), _SCEN,
                           "elements whose float32 sum is not the exact sum correctly rounded", _precision_why),
    "train.replica_difference": Entry(lambda a: small_number(_train_run(a).epochs[-1].replica_difference),
                                      _TRAIN, "largest weight difference between replicas at the end",
                                      _train_why),
    "train.reference_difference": Entry(lambda a: small_number(_train_run(a).epochs[-1].reference_difference),
                                        _TRAIN, "largest difference from one-GPU training at the end",
                                        _train_why),
    "train.loss": Entry(lambda a: f"{_train_run(a).epochs[-1].loss:.5f}", _TRAIN, "final loss", _train_why),
    "train.elements": Entry(lambda a: _n(_train_run(a).elements_moved), _TRAIN,
                            "elements all the syncs moved", _train_why),
    "train.per_sync": Entry(lambda a: _n(_train_run(a).elements_per_sync), _TRAIN,
                            "elements one sync (one all-reduce) moves", _train_why),
    "train.syncs": Entry(lambda a: _n(_train_run(a).syncs), _TRAIN, "number of syncs", _train_why),
    "train.parameters": Entry(lambda a: _n(_train_run(a).parameters), _TRAIN, "model size N", _train_why),
}

for _field_name in ("total", "busiest_sent", "busiest_received", "steps", "messages"):
    VOCABULARY[f"formula.{_field_name}"] = Entry(
        (lambda f: lambda a: str(getattr(a.closed(), f)))(_field_name), _SCEN,
        f"closed form of {_field_name}, with its value: '2·(G−1)·N = 48'", _formula_why(_field_name))
    VOCABULARY[f"formula.{_field_name}.text"] = Entry(
        (lambda f: lambda a: getattr(a.closed(), f).text)(_field_name), _SCEN,
        f"closed form of {_field_name}", _formula_why(_field_name))
    VOCABULARY[f"formula.{_field_name}.value"] = Entry(
        (lambda f: lambda a: _n(getattr(a.closed(), f).value))(_field_name), _SCEN,
        f"value of {_field_name}", _formula_why(_field_name))


def _register_latency_rows() -> None:
    from .costs import RAILS_KEY, RAILS_TITLE, ROW_KEYS
    for key, name in {**ROW_KEYS, RAILS_KEY: RAILS_TITLE}.items():
        VOCABULARY[f"latency.{key}"] = Entry(_latency_row(key), _COST,
                                             f"modelled time of {name}", _latency_why(key))
        VOCABULARY[f"latencies.{key}"] = Entry(_latencies_row(key), _COST,
                                               f"steps (latencies in a row) of {name}", _latencies_why(key))
        if key in ROW_KEYS and "chunks" in option_names(key.replace("_", "-")):
            VOCABULARY[f"chunks.{key}"] = Entry(_chunks_row(key), _COST,
                                                f"the chunks C the lessons pipeline {name} in", _chunks_why(key))
        VOCABULARY[f"busbw.{key}"] = Entry(_busbw_row(key, "busbw"), _COST,
                                           f"nccl-tests' busbw of {name}", _latency_why(key))
        VOCABULARY[f"algbw.{key}"] = Entry(_busbw_row(key, "algbw"), _COST,
                                           f"nccl-tests' algbw of {name}", _latency_why(key))


_register_latency_rows()


def _register_training_step() -> None:
    """The training step's words: faults on the timeline, DDP's buckets, reduce-scatter, all-gather and ZeRO."""
    for module in (faults, buckets, sharding, protocols):
        VOCABULARY.update(module.entries())


_register_training_step()
