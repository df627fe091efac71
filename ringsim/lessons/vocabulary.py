"""The words a lesson may quote: how each figure is computed, and why it has its value.

Each Entry computes a figure from an evaluation `a` (placeholders._Ask: the scenario, the
position, the options) and can say in words which expression the engine evaluated, which
Question.explain() gives a learner who answered wrong.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Callable

from ..algorithms import ALGORITHMS, check_options, closed_form, default_options, symbols
from ..algorithms.spec import Shape
from ..core.errors import RingsimError
from ..core.formula import format_number, letter_pattern
from ..core.layout import Layout
from ..execute.ledger import Ledger
from ..core.naming import gpu_name, letter, sum_label, term
from ..sim.scenario import Scenario
from . import buckets, cost_words, faults, protocols, sharding, training_words
from .cache import Cache as _Cache
from .letters import OPTION_LETTERS, letter_values, substitute
from .text import plural
from .words import SCENARIO_OPTIONS, Entry

LEDGER_MAX_GPUS = 1024     # ledgers of other scenarios come from real plans: keep them small
LIST_MAX = 8           # per-GPU lists longer than this are shortened
COMPARED = ("ring", "master", "naive")

_SEGMENTS = _Cache(256)  # each scenario's segment count, shared by every lesson in this process


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
    """The explanation of a word that has none of its own: what was evaluated, where, and its value."""
    return f"The engine evaluated {a.expr.head} on {where(a)}: {value}."


def title_text(scenario: Scenario) -> str:
    """'Ring all-reduce · 4 GPUs · 8 elements per GPU', singular where the count is 1."""
    name = ALGORITHMS[scenario.algorithm].title
    if label := _label(scenario):
        name += f" ({label})"
    title = f"{name} · {plural(scenario.gpus, 'GPU')} · {plural(scenario.elements, 'element')} per GPU"
    # options the closed forms name by a letter, where the lesson sets them ('· C = 4')
    defaults = default_options(scenario.algorithm)
    given = dict(scenario.options)
    return title + "".join(f" · {letter_name} = {given[option]:,}"
                           for option, letter_name in OPTION_LETTERS.items()
                           if isinstance(given.get(option), int) and given[option] != defaults.get(option))


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
    sizes = Layout(segments_of(a.scenario), a.scenario.elements).distinct_sizes()
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
    exact = getattr(f, "exact", None) if f.uneven else None
    return f"{exact} = {_n(f.value)}" if exact else f"{f.text} = {_n(f.value)}"


def _compare(a) -> str:
    g, n = a.scenario.gpus, a.scenario.elements
    lines = [f"G = {plural(g, 'GPU')}, N = {plural(n, 'element')} per GPU"]
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


def _given(text: str, values: dict[str, int]) -> str:
    # Only the letters the formula uses: 'G = 25', not 'G = 25 and N = 8' for 2·(G−1).
    used = [name for name in values if letter_pattern(name).search(text)] or ["G"]
    parts = [f"{name} = {values[name]:,}" for name in used]
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def _formula_why(field: str) -> Callable:
    words = {"total": "the elements moved in all", "busiest_sent": "what the busiest GPU sends",
             "busiest_received": "what the busiest GPU receives", "steps": "the number of steps",
             "messages": "the number of messages"}[field]

    def why(a, value: str) -> str:
        s = a.scenario
        formula = getattr(a.closed(), field)
        # the letters of the options this scenario runs with (C = 4 for a tree in 4 chunks)
        values = letter_values(s, {**default_options(s.algorithm), **dict(s.options)})
        worked = substitute(formula.text, values)
        note = symbols(s.gpus, [formula.text])
        return (f"For {ALGORITHMS[s.algorithm].title}, {words} is {formula.text}; with "
                f"{_given(formula.text, values)}" + (f" ({note})" if note else "") + " that is "
                + (f"{worked} = " if worked is not None else "") + f"{_n(formula.value)}.")
    return why


def _calc(a) -> str:
    return _n(a.indices[0])


def _calc_why(a, value: str) -> str:
    s = a.ctx.scenario
    expression = a.expr.indices[0].text.replace("//", "÷").replace("*", "·").replace("-", "−")
    values = {"G": s.gpus, "N": s.elements}
    if not any(letter_pattern(name).search(expression) for name in values):
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


def _tree_parents(a) -> str:
    """'GPU2 and GPU4 send up to GPU3, GPU3 to GPU1': each parent and the GPUs whose sums it
    takes, read off the plan's first tree, the root's children first."""
    from ..algorithms.geometry import lane_count, spec_of, tree_parents
    plan = a.sim().plan
    if spec_of(plan).shape is not Shape.TREE:
        raise RingsimError(f"tree.parents: {ALGORITHMS[a.scenario.algorithm].title} is not a tree")
    children: dict[int, list[int]] = {}
    for gpu, parent in enumerate(tree_parents(plan, lane_count(plan))):
        children.setdefault(parent, []).append(gpu)
    root = children[-1][0]
    depth, queue = {root: 0}, [root]  # from the root down, so the sentence can climb from the leaves
    for node in queue:
        for child in children.get(node, []):
            depth[child] = depth[node] + 1
            queue.append(child)
    parts = []
    for node in sorted(depth, key=lambda g: (-depth[g], g)):
        kids = [gpu_name(g) for g in children.get(node, [])]
        if kids:
            said = kids[0] if len(kids) == 1 else _listed_names(kids)
            parts.append(f"{said} {'sends' if len(kids) == 1 else 'send'} up to {gpu_name(node)}")
    if len(parts) > LIST_MAX:  # a big tree: its deepest parents, then the root's
        parts = parts[:LIST_MAX - 2] + ["…", parts[-1]]
    return "; ".join(parts)


def _busiest(a) -> int:
    return a.ledger().busiest()


def _busiest_why(a, value: str) -> str:
    ledger, k = a.ledger(), _busiest(a)
    return (f"The ledger adds what each GPU sent and received ({where(a)}); GPU{k + 1} has the most: "
            f"{_n(ledger.sent[k])} sent + {_n(ledger.received[k])} received = "
            f"{_n(ledger.sent[k] + ledger.received[k])}.")


_SCEN = SCENARIO_OPTIONS
_SIZE = ("gpus", "elements")  # figures that compare every algorithm take only G and N
_POS = _SCEN + ("at",)

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
    "tree.parents": Entry(_tree_parents, _SCEN, "a tree's parents, from the leaves up: 'GPU2 and "
                                                "GPU4 send up to GPU3; GPU3 sends up to GPU1'"),
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


def _merge_topics() -> None:
    """Every topic module's words: costs and the sweep, precision and training, faults on the
    timeline, DDP's buckets, reduce-scatter, all-gather and ZeRO, and NCCL's protocols."""
    for module in (cost_words, training_words, faults, buckets, sharding, protocols):
        VOCABULARY.update(module.entries())


_merge_topics()
