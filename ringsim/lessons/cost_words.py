"""The lessons' cost words: every all-reduce priced by the engine's α-β-γ model (a block, the
fastest, each row's time, steps, chunks and bandwidths), the sweep from 1 KiB to 1 GiB, and
the flags that give a command the lessons' machine.

Nothing is modelled here: the rows are ringsim.lessons.costs', read from the cost model.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Callable

from ..algorithms import closed_form, option_names, symbols
from ..core.errors import RingsimError
from ..core.formula import format_number
from .cache import Cache
from .letters import letter_values, substitute
from .text import plural
from .words import Entry, machine_flags, model_key, model_line

SWEEP_SIZES = (1 << 10, 1 << 15, 1 << 20, 1 << 25, 1 << 30)  # 1 KiB … 1 GiB, every ×32
MODEL = ("alpha_us", "gbps", "topology")
OPTIONS = ("gpus", "elements") + MODEL  # every algorithm is priced: G, N and the machine, no algorithm

_COSTS = Cache(256)


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
        return format_number(_row_of(a, key).steps)
    return fn


def _latencies_why(key: str) -> Callable:
    def why(a, value: str) -> str:
        row, s = _row_of(a, key), a.scenario
        form = closed_form(row.name, s.gpus, s.elements, **row.options).steps
        # Worked out with the letters of the row's options: L and M, its nodes, are said nowhere else.
        worked = substitute(form.text, letter_values(s, row.options))
        shown = (f"its closed form {form.text} = "
                 + (f"{worked} = " if worked not in (None, form.text) else "") + format_number(form.value)
                 if form.text != format_number(form.value) else "its closed form")
        note = symbols(s.gpus, [form])
        shown += f", with {note}" if note else ""
        return (f"{row.title} on {plural(s.gpus, 'GPU')} runs {value} steps one after another "
                f"({shown}), each paying α at least once.")
    return why


def _chunks_row(key: str) -> Callable:
    def fn(a) -> str:
        return format_number(_row_of(a, key).options["chunks"])
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
            lines.append(f"  {then.label} overtakes {first.label} from {format_number(n * 4)} bytes per GPU")
    return "\n".join(lines)


class _Sub:
    """The same figure at another N (for the sweep's sizes)."""

    def __init__(self, a, elements: int) -> None:
        self.ctx, self.expr, self.options = a.ctx, a.expr, a.options
        self.scenario = replace(a.scenario, elements=elements)


def _links(a) -> str:
    """'α = 5 µs, 100 GB/s' (one kind of link), or each level's: 'inside a node α = 0.47 µs,
    450 GB/s; across nodes α = 2.7 µs, 50 GB/s', read off the machine the lesson prices on."""
    from ..cost.topology_model import LEVEL_WORDS
    from .costs import model_of
    levels = model_of(*model_key(a)).topology.levels
    said = {key: f"α = {level.alpha * 1e6:g} µs, {level.bandwidth / 1e9:g} GB/s" for key, level in levels.items()}
    if len(said) == 1:
        return next(iter(said.values()))
    return "; ".join(f"{LEVEL_WORDS.get(key, key)} {words}" for key, words in said.items())


def _slowest_link(a) -> str:
    """The slowest link's bandwidth per direction: '100 GB/s', or the NIC's across nodes."""
    from .costs import model_of
    levels = model_of(*model_key(a)).topology.levels.values()
    return f"{min(level.bandwidth for level in levels) / 1e9:g} GB/s"


def entries() -> dict:
    """The cost words, as vocabulary Entries: the table, the fastest, the sweep, the machine's
    flags, and for each algorithm its time, steps, chunks (where it takes them) and bandwidths."""
    from .costs import RAILS_KEY, RAILS_TITLE, ROW_KEYS
    found = {
        "latency": Entry(_latency, OPTIONS, "every all-reduce priced by the engine's α-β-γ model (a block)"),
        "latency.best": Entry(_best, OPTIONS, "the fastest all-reduce in the engine's cost model", _best_why),
        "sweep": Entry(_sweep, ("gpus",) + MODEL, "the fastest all-reduce from 1 KiB to 1 GiB per GPU (a block)"),
        "machine.flags": Entry(lambda a: " ".join(machine_flags(a)), MODEL,
                               "the flags that give `ringsim sweep`, `overlap` or `timeline` the lessons' "
                               "machine: '--reduce-bandwidth inf' on flat"),
        "machine.links": Entry(_links, MODEL, "the machine's links, α and bandwidth per direction: "
                               "'α = 5 µs, 100 GB/s' on flat, each level's on a topology of nodes"),
        "machine.bandwidth": Entry(_slowest_link, MODEL, "the slowest link's bandwidth per direction: "
                                   "'100 GB/s' on flat, the NIC's across nodes on a topology of nodes"),
    }
    for key, name in {**ROW_KEYS, RAILS_KEY: RAILS_TITLE}.items():
        found[f"latency.{key}"] = Entry(_latency_row(key), OPTIONS,
                                        f"modelled time of {name}", _latency_why(key))
        found[f"latencies.{key}"] = Entry(_latencies_row(key), OPTIONS,
                                          f"steps (latencies in a row) of {name}", _latencies_why(key))
        if key in ROW_KEYS and "chunks" in option_names(key.replace("_", "-")):
            found[f"chunks.{key}"] = Entry(_chunks_row(key), OPTIONS,
                                           f"the chunks C the lessons pipeline {name} in", _chunks_why(key))
        found[f"busbw.{key}"] = Entry(_busbw_row(key, "busbw"), OPTIONS,
                                      f"nccl-tests' busbw of {name}", _latency_why(key))
        found[f"algbw.{key}"] = Entry(_busbw_row(key, "algbw"), OPTIONS,
                                      f"nccl-tests' algbw of {name}", _latency_why(key))
    return found
