"""ringsim walk: every iteration in words, then the ledger against the closed forms.

With a topology or --time, each step also gets its modelled time (ringsim.cost.model, priced from
the plan itself), its bottleneck port and the running clock, and the walk ends with the
total and nccl-tests' algbw and busbw. With a float --dtype the gradients are floats and
--values shows how the order of additions sets the last bits (ringsim.studies.numerics).
"""

from __future__ import annotations

import argparse
import json
import math
from dataclasses import dataclass

import numpy as np

from ..algorithms import option_names, symbols
from ..algorithms.timing import unavailable
from ..cost.nccl import NcclChoice
from ..studies.whose import nccl_for, nccl_line, runs_line
from ..execute.backend import array_module, to_numpy
from ..algorithms.collectives import ALL_REDUCE, Collective, collective
from ..cost.model import CostModel, PlanCost, algbw_of, price
from ..cost.ports import Port, bottleneck_gpus
from ..core.errors import RingsimError
from ..core.formula import format_number
from ..core.layout import Layout
from ..execute.memory import check_memory, simulation_bytes
from ..core.naming import participant_name, plural, plural_word, segment_range, term
from ..sim.narrate import held, port_words, step_words
from ..sim.simulation import SYMBOLIC_MAX_GPUS, Simulation, demo_gradients, phase_text
from ..sim.scenario import shown_elements
from ..core.textout import json_ensure_ascii
from ..core.width import say
from ._collective import add_collective_argument
from ._numerics_view import float_note, float_report, float_sums
from ..cost.topology_model import LEVEL_WORDS, Topology
from ..core.units import format_bandwidth, format_bytes, format_seconds, itemsize
from ._cost_args import (BANDWIDTH_HELP, MODEL_HELP, add_cost_arguments, elements_from_args,
                         gpus_from_args, topology_from_args)
from ._nccl_log import add_nccl_log_arguments, apply_nccl_log, print_preface
from ._walk_budget import MAX_SECONDS, check as check_time, estimate as walk_work
from ..algorithms.flags import NODES_ALGORITHM
from .common import NODES_TOPOLOGY, add_scenario_arguments, gpus_up_to, options_from_args
from ._view_args import elements_follow_gpus

ORDER = 10
HELP = "print every iteration in words, then the ledger vs the formulas"
MAX_VALUES_SHOWN = 20_000  # numbers --values prints in all, unless --force
# --force's own ceiling: about 10 s and 100 MB of output (measured: 9.6 million numbers in
# 9.6 s as float32 text), past which a walk is no longer something to read.
MAX_VALUES_FORCED = 10_000_000
# Printing one step's numbers holds each as a Python object and its text at once (measured:
# 95 bytes a number for float64 JSON Lines, 56 as text), counted with the walk's memory.
PRINT_BYTES_PER_VALUE = 100
# The gradients are made before the Simulation, which then checks its own memory against what
# is left: made as float64 or int64 and a second array of them, then cast (_gradients).
MAKING_BYTES_PER_VALUE = 3 * 8


NUMPY_DTYPES = ("float64", "float32", "float16", "int64", "int32", "int16", "int8", "uint8")
FLOAT_DTYPES = ("float64", "float32", "float16")
DESCRIPTION = (
    HELP + ". Defaults: the 4-GPU example (ring, 4 GPUs, 8 elements per GPU). With --time or "
    "a time-model option (--topology, --size, --alpha, --bandwidth, --reduce-bandwidth), every "
    "step also shows its modelled time, its bottleneck port and the running clock, and the walk "
    "ends with the total, algbw and busbw: ringsim walk --topology dgx-h100 --nodes 2 --elements "
    "1e6. An algorithm the topology cannot run (nvls where the switch does not add) is walked "
    "but not timed, as compare --time leaves it out. walk allocates the gradients it "
    "simulates, so a huge --size is refused; ringsim compare --time prices any size without "
    f"allocating. A walk estimated to take more than {MAX_SECONDS:g} s (from its plan's "
    "transfers, the labels they print and the elements moved) is refused before it starts; "
    "ringsim compare counts any plan. " + MODEL_HELP + " " + BANDWIDTH_HELP)
NODES_HELP = NODES_TOPOLOGY + "; without one, " + NODES_ALGORITHM
DTYPE_HELP = ("element type, for the bytes per element (default: float32). Named, it is also "
              "the gradients' type: a float type gives random floats, so --values shows float "
              "sums; bfloat16 and float8 have no NumPy type, so those walks add small whole "
              "numbers. Left out, the gradients are small whole numbers (exact in float32)")
GPUS_HELP = (f"number of GPUs, 1..{SYMBOLIC_MAX_GPUS}: walk prints every transfer "
             "(default: 4; ringsim compare counts and prices up to 1,000,000)")


def register(sub) -> None:
    """Add the `walk` subcommand to `sub`."""
    # The time model's --nodes (G = M × GPUs per node) and hierarchical's --nodes share one
    # flag: the algorithm option, added last, resolves the clash and serves both (see run).
    parser = sub.add_parser("walk", help=HELP, description=DESCRIPTION,
                            conflict_handler="resolve")
    add_cost_arguments(parser)
    add_scenario_arguments(parser)
    for action in parser._actions:
        if action.dest == "nodes":
            action.help = NODES_HELP
        elif action.dest == "dtype":
            action.help = DTYPE_HELP
            action.__class__ = _NamedDtype
        elif action.dest == "gpus":
            action.help, action.type = GPUS_HELP, gpus_up_to(SYMBOLIC_MAX_GPUS)
    parser.add_argument("--time", action="store_true",
                        help="add each step's modelled time, bottleneck port and running clock, "
                             "and the total with algbw and busbw (default topology: flat)")
    parser.add_argument("--values", action="store_true",
                        help="show every GPU's numbers after each iteration (small integers, or "
                             "floats with a float --dtype; at most "
                             f"{MAX_VALUES_SHOWN:,} numbers in all unless --force)")
    parser.add_argument("--force", action="store_true",
                        help=f"print --values past {MAX_VALUES_SHOWN:,} numbers, up to "
                             f"{MAX_VALUES_FORCED:,} and the memory they take")
    parser.add_argument("--json", action="store_true",
                        help="print JSON Lines: one object per step, then a summary")
    add_collective_argument(parser)
    add_nccl_log_arguments(parser)
    elements_follow_gpus(parser)
    parser.set_defaults(run=run, gpus=None, elements=None, dtype="float32")


class _NamedDtype(argparse._StoreAction):
    """--dtype that remembers it was named: only a named type changes the gradients' values."""

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        super().__call__(parser, namespace, values, option_string)
        namespace.dtype_named = True


@dataclass(frozen=True)
class Timing:
    """The walk's time model and the plan priced on it, step by step."""

    model: CostModel
    dtype: str
    cost: PlanCost
    gpus: int
    elements: int
    collective: Collective = ALL_REDUCE
    held: tuple[tuple[int, ...], ...] = ()  # per step: the 0-based GPUs that held it up

    def step_bottleneck(self, index: int) -> tuple[Port | None, tuple[int, ...]]:
        """Step `index`'s bottleneck port and the GPUs tied on it; no port where every GPU's
        ports are loaded alike (the tie rule would name one GPU that holds nothing up)."""
        port, tied = self.cost.steps[index].port, self.held[index]
        return (port if tied else None), tied

    @property
    def nbytes(self) -> int:
        """Bytes per GPU: S in nccl-tests' algbw = S/t."""
        return self.elements * self.model.itemsize

    def bandwidths(self) -> tuple[float | None, float | None]:
        """(algbw, busbw) in bytes/s as nccl-tests defines them; None when nothing moved."""
        alg = algbw_of(self.nbytes, self.cost.seconds)
        factor = self.collective.bus_factor(self.gpus)
        return alg, None if alg is None else alg * float(factor)


def uses_time(args: argparse.Namespace) -> bool:
    """True when --time or any time-model option asks for the modelled time."""
    return bool(args.time or args.topology or args.size or args.alpha or args.bandwidth
                or args.reduce_bandwidth)


def _scenario(args: argparse.Namespace) -> tuple[int, int, CostModel | None]:
    """G, N and the time model (None without one) from the options; --nodes read for both uses."""
    model = None
    gpus = args.gpus
    if uses_time(args):
        topology = topology_from_args(args)
        model = CostModel(topology, itemsize(args.dtype or "float32"), args.dtype or "float32")
        if args.nodes is not None:
            if topology.gpus_per_node is not None:
                gpus = gpus_from_args(args, topology, 4)
                if "nodes" not in option_names(args.algorithm):
                    args.nodes = None  # spent on G; only an algorithm with nodes also takes it
            elif "nodes" not in option_names(args.algorithm):
                raise RingsimError(f"topology {topology.name} has no nodes; give --gpus instead "
                                   "of --nodes (or a topology with nodes, such as dgx-h100)")
    gpus = 4 if gpus is None else gpus
    priced = argparse.Namespace(**{**vars(args), "dtype": args.dtype or "float32"})
    elements = elements_from_args(priced, model.itemsize if model else 4, None)
    return gpus, elements, model


# The algorithm options compare takes too, short enough to repeat in a one-line hint.
COMPARE_OPTIONS = ("chunks", "gpus_per_node", "channels")


def _compare_hint(args: argparse.Namespace, gpus: int, elements: int, timed: bool,
                  options: bool = False) -> str:
    """The compare command that answers this scenario without allocating (`options`: with
    the algorithm options compare shares, where they change the counts)."""
    size = f"--size {args.size}" if getattr(args, "size", None) else f"--elements {elements}"
    extra = "".join(f" --{name.replace('_', '-')} {getattr(args, name)}" for name in COMPARE_OPTIONS
                    if options and getattr(args, name, None) is not None)
    if timed:
        return (f"`ringsim compare --time --gpus {gpus} {size}{extra}` (with the same time-model "
                "options) prices any size and G without allocating")
    return (f"`ringsim compare --gpus {gpus} --elements {elements}{extra}` gives the counts "
            "without allocating")


def run(args: argparse.Namespace) -> int:
    """Run `ringsim walk` on the parsed `args`; returns the exit status."""
    if not getattr(args, "dtype_named", False):
        args.dtype = None  # the float32 default prices 4-byte elements; the values stay whole numbers
    log = apply_nccl_log(args, SYMBOLIC_MAX_GPUS)
    gpus, elements, model = _scenario(args)
    if gpus > SYMBOLIC_MAX_GPUS:
        raise RingsimError(f"walk prints every transfer, so it takes at most {SYMBOLIC_MAX_GPUS} "
                           f"GPUs; {_compare_hint(args, gpus, elements or 8, model is not None)}")
    if model is not None:
        model.topology.check_gpus(gpus)
    c = collective(args.collective)
    if elements is None:  # as tui and figure: 8, or one per segment where the plan has more
        elements = shown_elements(c.plan(gpus, args.algorithm, **dict(options_from_args(args))).segments)
    args.gpus, args.elements = gpus, elements
    shown = 0
    if args.values:
        steps = int(c.closed_form(gpus, elements, args.algorithm,
                                  **dict(options_from_args(args))).steps)
        shown = gpus * elements * (steps + 1)
        most = MAX_VALUES_FORCED if args.force else MAX_VALUES_SHOWN
        if shown > most:
            raise RingsimError(f"--values would print {shown:,} numbers ({gpus} GPUs × "
                               f"{elements:,} elements, at the start and after each of "
                               f"{steps:,} steps); at most {most:,} "
                               + ("even with --force: use fewer elements" if args.force
                                  else "without --force"))
    sim = _simulation(args, model, c, shown)
    timing = None
    # The same check as compare --time and the sweep: no time where the hardware cannot run it.
    why = unavailable(args.algorithm, model, gpus) if model is not None else ""
    if model is not None and not why:
        timing = Timing(model, args.dtype or "float32", price(sim.plan, elements, model), gpus,
                        elements, c, _held(sim, model))
    if log is not None:
        print_preface(log, args.json, model.topology if model else None)
    untimed = (model.topology.name, why) if why else None
    if args.json:
        _json_lines(sim, args.values, timing, untimed)
    else:
        _text(sim, args.values, timing, args.dtype, untimed)
    return 0


def _simulation(args: argparse.Namespace, model: CostModel | None, c: Collective,
                shown: int = 0) -> Simulation:
    """The walk's Simulation of the collective, its time and memory checked first (with what to
    use for any size); `shown`: the numbers --values will print."""
    xp = array_module(getattr(args, "backend", "numpy"))
    plan = c.plan(args.gpus, args.algorithm, **dict(options_from_args(args)))
    dtype = np.dtype(args.dtype) if args.dtype in NUMPY_DTYPES else np.dtype(np.int64)
    layout = Layout(plan.segments, args.elements)
    instead = _compare_hint(args, args.gpus, args.elements, model is not None)
    printing = args.gpus * args.elements * PRINT_BYTES_PER_VALUE if args.values else 0
    making = args.gpus * args.elements * MAKING_BYTES_PER_VALUE
    check_memory(simulation_bytes(plan, layout, dtype.itemsize,
                                  symbolic=plan.gpus <= SYMBOLIC_MAX_GPUS) + printing + making,
                 f"a walk of {args.gpus:,} GPUs with {args.elements:,} elements each",
                 instead=instead, xp=xp)
    # Building the plan is cheap next to printing it (budget in _walk_budget.py): its columns
    # say how long the walk would take before a line of it is printed.
    check_time(walk_work(plan, args.elements, c.holdings(plan.gpus, plan.segments),
                         as_json=args.json, values=shown, floats=dtype.kind == "f"),
               f"a walk of {plan.algorithm} on {plural(args.gpus, 'GPU')}",
               _compare_hint(args, args.gpus, args.elements, model is not None, options=True))
    gradients = xp.asarray(_gradients(args.gpus, args.elements, dtype))
    return Simulation(plan, args.elements, gradients, xp=xp, collective=c)


def _gradients(gpus: int, elements: int, dtype: np.dtype) -> np.ndarray:
    """Small integers 0..9 (fewer where a narrow type would overflow), or floats with two
    decimals (standard normal, rounded) whose float sums show their last bits."""
    if dtype.kind == "f":
        rng = np.random.default_rng(0)
        return np.round(rng.standard_normal((gpus, elements)), 2).astype(dtype)
    top = min(9, int(np.iinfo(dtype).max) // max(gpus, 1))
    return (demo_gradients(gpus, elements) % (top + 1)).astype(dtype)


def _held(sim: Simulation, model: CostModel) -> tuple[tuple[int, ...], ...]:
    """Per step, the 0-based GPUs whose ports held it up (cost.ports.bottleneck_gpus)."""
    plan = sim.plan
    gpus = plan.gpus if plan.switches else None  # a switch is no GPU: never the bottleneck
    return tuple(bottleneck_gpus(model, step.src, step.dst,
                                 sim.layout.spans(step.first, step.last), step.reduces, gpus)
                 for step in plan.steps)


def _bottleneck(port: Port | None, topology: Topology) -> dict | None:
    if port is None:
        return None
    return {"gpu": port.gpu + 1, "level": port.level, "direction": port.direction,
            "link": topology.level(port.level).name, "words": port_words(port, topology)}


def _json_lines(sim: Simulation, values: bool, timing: Timing | None,
                untimed: tuple[str, str] | None = None) -> None:
    ascii_only = json_ensure_ascii()
    clock = timing.cost.clock() if timing else []
    while not sim.done:
        index = sim.position
        step = sim.plan.steps[index]
        counts = sim.layout.spans(step.first, step.last).tolist()
        labels = [held(sim.symbolic, t.src, t.first, t.last, parens=False) for t in step.transfers()]
        sim.step()
        transfers = [
            {"src": t.src + 1, "dst": t.dst + 1, "segment": t.first + 1,
             **({"last_segment": t.last + 1} if t.last != t.first else {}),
             "op": t.op, "elements": n, "label": label, "sentence": text}
            for t, n, label, text in zip(step.transfers(), counts, labels, sim.sentences(index))
        ]
        record = {"type": "step", "step": index + 1, "phase": step.phase,
                  "iteration": step.iteration, "transfers": transfers}
        if timing:
            cost = timing.cost.steps[index]
            port, tied = timing.step_bottleneck(index)
            record.update(seconds=cost.seconds, clock_seconds=clock[index],
                          bottleneck=_bottleneck(port, timing.model.topology),
                          bottleneck_level=cost.port.level if cost.port else None,
                          bottleneck_gpus=[g + 1 for g in tied],
                          ports_evenly_loaded=cost.port is not None and not tied)
        if values:
            record["values"] = to_numpy(sim.values()).tolist()
        print(json.dumps(record, ensure_ascii=ascii_only))
    ledger, formulas = sim.ledger(), sim.closed_form()
    summary = {
        "type": "summary", "algorithm": sim.plan.algorithm, "gpus": sim.plan.gpus,
        "elements_per_gpu": sim.layout.elements, "total_elements": ledger.total,
        "formula_total": int(formulas.total.value), "sent": ledger.sent.tolist(),
        "received": ledger.received.tolist(), "steps": ledger.steps,
        "messages": ledger.messages, "busiest_gpu": ledger.busiest() + 1,
        "correct": sim.correct(),
    }
    if timing:
        alg, bus = timing.bandwidths()
        summary.update(topology=timing.model.topology.name, dtype=timing.dtype,
                       dtype_bytes=timing.model.itemsize, bytes_per_gpu=timing.nbytes,
                       seconds=timing.cost.seconds, algbw=alg, busbw=bus,
                       bottleneck_level=timing.cost.bottleneck_level())
        pick = _nccl(timing)
        summary["nccl"] = pick.to_json() if isinstance(pick, NcclChoice) else None
    elif untimed:  # the topology cannot run it: compare --time --json says the same
        summary.update(topology=untimed[0], seconds=None, unavailable=untimed[1])
    if values and float_sums(sim):
        summary["numerics"] = float_report(sim)
    print(json.dumps(summary, ensure_ascii=ascii_only))


def _values_lines(sim: Simulation) -> list[str]:
    values = to_numpy(sim.values())
    layout = sim.layout
    lines = []
    for gpu, row in enumerate(values):
        parts = [" ".join(str(v) for v in row[layout.offset(j):layout.offset(j + 1)])
                 for j in range(sim.plan.segments)]
        lines.append(f"    GPU{gpu + 1}: " + " | ".join(parts))
    return lines


def _text(sim: Simulation, values: bool, timing: Timing | None, dtype: str | None,
          untimed: tuple[str, str] | None = None) -> None:
    sizes = sim.layout.distinct_sizes()
    size_text = " or ".join(str(s) for s in sizes)
    say(sim.title)
    g = sim.plan.segments
    whole = bool(sim.collective.holdings(sim.plan.gpus, g).all())
    say(f"Each GPU's {'gradient' if whole else 'buffer'} is split into {plural(g, 'segment')} of "
        f"{size_text} {plural_word(max(sizes, default=0), 'element')}; " + (
              f"GPU k's segments carry letter k (GPU1 holds {segment_range('a', g)})." if whole else
              # all-gather: each GPU starts with its own shard, the rest empty until it arrives
              f"GPU k starts with only its own shard, segment k, which carries letter k (GPU1 "
              f"holds {term(0, 0)}" + (f", GPU2 {term(1, 1)}" if g > 1 else "")
              + "); its other segments are empty (0) until they arrive."))
    if sim.collective.schedule_text:
        say(sim.collective.schedule_text)
    if dtype is not None and dtype not in NUMPY_DTYPES:
        say(f"{dtype} has no NumPy type: the walk adds small integers"
            + (f", priced as {itemsize(dtype)}-byte elements." if timing else "."))
    elif dtype in FLOAT_DTYPES:
        say(f"The gradients are random {dtype} numbers with two decimals.")
    if timing:
        _print_model(timing)
    if values:
        say(f"\nStart: {sim.collective.start_text}")
        say("\n".join(_values_lines(sim)))
    clock = timing.cost.clock() if timing else []
    phase = None
    while not sim.done:
        index = sim.position
        step = sim.step()
        if step.phase != phase:
            phase = step.phase
            say(f"\n{phase}")
        say(f"  {phase_text(step)}")
        for text in sim.sentences():
            say(f"    {text}")
        if timing:
            cost = timing.cost.steps[index]
            say(f"    time {format_seconds(cost.seconds)} · {step_words(timing, index)} · "
                f"clock {format_seconds(clock[index])}")
        if values:
            say("\n".join(_values_lines(sim)))
    _print_ledger(sim)
    if timing:
        _print_total(timing, sim.plan.algorithm)
    elif untimed:
        name = sim.collective.plan_title(sim.plan)
        say(f"\nNot timed on {untimed[0]}: {name}: {untimed[1]}.")
    problems = sim.problems()
    say(f"\n{sim.collective.goal_text}: {'yes' if not problems else 'no'}")
    for problem in problems[:10]:
        say(f"  {problem}")
    if values and float_sums(sim):
        say("\n" + float_note(float_report(sim), sim.layout.elements))


def _print_model(timing: Timing) -> None:
    topo = timing.model.topology
    where = f"{topo.name} · {plural(timing.gpus, 'GPU')}"
    if topo.gpus_per_node:
        nodes = topo.nodes(timing.gpus)
        where += f" in {plural(nodes, 'node')}"
    say(f"\nModelled time on {where} · {format_bytes(timing.nbytes)} per GPU "
        f"({timing.dtype}, {timing.model.itemsize}-byte elements)")
    say(topo.describe())


def _nccl(timing: Timing):
    return nccl_for(timing.model, timing.gpus, timing.nbytes, timing.collective.name)


def _print_total(timing: Timing, algorithm: str) -> None:
    alg, bus = timing.bandwidths()
    steps = len(timing.cost.steps)
    say(f"\nModelled time (textbook α-β-γ): {format_seconds(timing.cost.seconds)} over "
        f"{plural(steps, 'step')} · algbw {format_bandwidth(alg)} · busbw "
        f"{format_bandwidth(bus)}")
    shares = timing.cost.level_seconds()
    total = math.fsum(shares.values())
    if total > 0 and timing.model.topology.gpus_per_node:
        parts = [f"{LEVEL_WORDS[level]} {seconds / total:.0%}" for level, seconds in shares.items()]
        say(f"  the bottleneck port was {', '.join(parts)} of the time")
    say(f"  algbw = S/t with S = {format_bytes(timing.nbytes)} per GPU; busbw = "
        f"algbw·{timing.collective.factor_text}, what each GPU's link must carry "
        "(nccl-tests' definitions)")
    factor = float(timing.collective.bus_factor(timing.gpus))
    say("\n" + nccl_line(_nccl(timing), timing.nbytes, factor) + ".")
    if runs_line(algorithm):
        say(f"  {runs_line(algorithm)}.")


def _print_ledger(sim: Simulation) -> None:
    ledger, formulas = sim.ledger(), sim.closed_form()
    sender, receiver = int(ledger.sent.argmax()), int(ledger.received.argmax())
    rows = [
        ("elements moved", format_number(ledger.total), str(formulas.total)),
        (f"sent by the busiest sender (GPU{sender + 1})", format_number(ledger.sent[sender]),
         str(formulas.busiest_sent)),
        (f"received by the busiest receiver (GPU{receiver + 1})",
         format_number(ledger.received[receiver]), str(formulas.busiest_received)),
        ("steps", format_number(ledger.steps), str(formulas.steps)),
        ("messages", format_number(ledger.messages), str(formulas.messages)),
    ]
    width = max(len(r[0]) for r in rows)
    say(f"\nLedger{' ' * (width - 4)}measured   formula")
    for name, measured, formula in rows:
        say(f"  {name:<{width}}  {measured:>8}   {formula}")
    note = symbols(sim.plan.gpus, (formula for _, _, formula in rows), sim.plan.options)
    if note:
        say(f"  ({note})", hang="   ")
    say("  sent per GPU:     " + ", ".join(format_number(v) for v in ledger.sent), hang=" " * 20)
    say("  received per GPU: " + ", ".join(format_number(v) for v in ledger.received),
        hang=" " * 20)
    for w, (sent, received) in enumerate(zip(ledger.switch_sent, ledger.switch_received)):
        name = participant_name(ledger.gpus + w, ledger.gpus, ledger.switches)
        say(f"  {name}: received {format_number(received)}, sent {format_number(sent)} "
            f"(over the GPUs' links)")
    note = uneven_note(sim)
    if note:
        say(f"\n{note}")


def uneven_note(sim: Simulation) -> str:
    """Why per-GPU counts differ from the textbook figure when the segments do not divide N."""
    form = sim.closed_form().busiest_sent
    if not form.uneven:
        return ""
    g, n, s = sim.plan.gpus, sim.layout.elements, sim.layout.segments
    # Halving-doubling cuts N into p2 segments, not G: name the count it really uses.
    count, cut = ("G", "the segments") if s == g else (str(s), f"the {s} segments")
    sizes = " and ".join(str(size) for size in reversed(sim.layout.distinct_sizes()))
    return (f"N mod {count} = {n % s}: {cut} differ by one element (sizes {sizes}), so GPUs "
            f"do not all send the same. The busiest sends exactly {form.exact} = "
            f"{format_number(form.value)}, not the textbook {form.text} = "
            f"{format_number(form.textbook)}, which holds when {count} divides N.")
