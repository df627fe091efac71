"""ringsim walk: every iteration in words, then the ledger against the closed forms."""

from __future__ import annotations

import argparse
import json

from ..algorithms import closed_form
from ..errors import RingsimError
from ..formula import format_number
from ..ledger import transfer_elements
from ..naming import subscript
from ..narrate import held
from ..simulation import SYMBOLIC_MAX_GPUS, Simulation, phase_text
from ..backend import to_numpy
from ..textout import json_ensure_ascii
from ._collective import add_collective_argument, collective_simulation
from .common import add_scenario_arguments, options_from_args, simulation_from_args

ORDER = 10
HELP = "print every iteration in words, then the ledger vs the formulas"
MAX_VALUES_SHOWN = 20_000  # numbers --values prints in all, unless --force


def register(sub) -> None:
    parser = sub.add_parser("walk", help=HELP, description=HELP + ". Defaults: the 4-GPU "
                            "example (ring, 4 GPUs, 8 elements per GPU).")
    add_scenario_arguments(parser)
    parser.add_argument("--values", action="store_true",
                        help="show every GPU's numbers after each iteration (small integers; "
                             f"at most {MAX_VALUES_SHOWN:,} numbers in all unless --force)")
    parser.add_argument("--force", action="store_true",
                        help="print --values however many numbers that makes")
    parser.add_argument("--json", action="store_true",
                        help="print JSON Lines: one object per step, then a summary")
    add_collective_argument(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if args.gpus > SYMBOLIC_MAX_GPUS:
        raise RingsimError(f"walk prints every transfer, so it takes at most {SYMBOLIC_MAX_GPUS} "
                           f"GPUs; `ringsim compare --gpus {args.gpus}` handles any G")
    if args.values and not args.force:
        steps = int(closed_form(args.algorithm, args.gpus, args.elements, master=args.master,
                                **dict(options_from_args(args))).steps)
        shown = args.gpus * args.elements * (steps + 1)
        if shown > MAX_VALUES_SHOWN:
            raise RingsimError(f"--values would print {shown:,} numbers ({args.gpus} GPUs × "
                               f"{args.elements:,} elements, at the start and after each of "
                               f"{steps:,} steps); at most {MAX_VALUES_SHOWN:,} without --force")
    sim = collective_simulation(args) or simulation_from_args(args)
    (_json_lines if args.json else _text)(sim, args.values)
    return 0


def _json_lines(sim: Simulation, _values: bool) -> None:
    while not sim.done:
        index = sim.position
        step = sim.plan.steps[index]
        counts = transfer_elements(step, sim.layout).tolist()
        labels = [held(sim.symbolic, t.src, t.first, t.last, parens=False) for t in step.transfers()]
        sim.step()
        transfers = [
            {"src": t.src + 1, "dst": t.dst + 1, "segment": t.first + 1,
             **({"last_segment": t.last + 1} if t.last != t.first else {}),
             "op": t.op, "elements": n, "label": label, "sentence": text}
            for t, n, label, text in zip(step.transfers(), counts, labels, sim.sentences(index))
        ]
        print(json.dumps({"type": "step", "step": index + 1, "phase": step.phase,
                          "iteration": step.iteration, "transfers": transfers},
                         ensure_ascii=json_ensure_ascii()))
    ledger, formulas = sim.ledger(), sim.closed_form()
    print(json.dumps({
        "type": "summary", "algorithm": sim.plan.algorithm, "gpus": sim.plan.gpus,
        "elements_per_gpu": sim.layout.elements, "total_elements": ledger.total,
        "formula_total": int(formulas.total.value), "sent": ledger.sent.tolist(),
        "received": ledger.received.tolist(), "steps": ledger.steps,
        "messages": ledger.messages, "busiest_gpu": ledger.busiest() + 1,
        "correct": sim.correct(),
    }, ensure_ascii=json_ensure_ascii()))


def _values_lines(sim: Simulation) -> list[str]:
    values = to_numpy(sim.values())
    layout = sim.layout
    lines = []
    for gpu, row in enumerate(values):
        parts = [" ".join(str(v) for v in row[layout.offset(j):layout.offset(j + 1)])
                 for j in range(sim.plan.segments)]
        lines.append(f"    GPU{gpu + 1}: " + " | ".join(parts))
    return lines


def _text(sim: Simulation, values: bool) -> None:
    sizes = sorted(set(sim.layout.sizes()))
    size_text = " or ".join(str(s) for s in sizes)
    print(sim.title)
    g = sim.plan.segments
    print(f"Each GPU's gradient is split into {g} segments of {size_text} elements; "
          f"GPU k's segments carry letter k (GPU1 holds a₁…{'a' + subscript(g)}).")
    if values:
        print("\nStart: every GPU holds only its own gradient")
        print("\n".join(_values_lines(sim)))
    phase = None
    while not sim.done:
        step = sim.step()
        if step.phase != phase:
            phase = step.phase
            print(f"\n{phase}")
        print(f"  {phase_text(step)}")
        for text in sim.sentences():
            print(f"    {text}")
        if values:
            print("\n".join(_values_lines(sim)))
    _print_ledger(sim)
    problems = sim.problems()
    goal = getattr(sim, "goal", "Every GPU holds the sum")
    print(f"\n{goal}: {'yes' if not problems else 'no'}")
    for problem in problems[:10]:
        print(f"  {problem}")


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
    print(f"\nLedger{' ' * (width - 4)}measured   formula")
    for name, measured, formula in rows:
        print(f"  {name:<{width}}  {measured:>8}   {formula}")
    print("  sent per GPU:     " + ", ".join(format_number(v) for v in ledger.sent))
    print("  received per GPU: " + ", ".join(format_number(v) for v in ledger.received))
    note = uneven_note(sim)
    if note:
        print(f"\n{note}")


def uneven_note(sim: Simulation) -> str:
    """Why per-GPU counts differ from the textbook 2·(G−1)·N/G when G does not divide N."""
    form = sim.closed_form().busiest_sent
    if not form.uneven:
        return ""
    g, n = sim.plan.gpus, sim.layout.elements
    sizes = " and ".join(str(size) for size in sorted(set(sim.layout.sizes()), reverse=True))
    return (f"N mod G = {n % g}: the segments differ by one element (sizes {sizes}), so GPUs "
            f"do not all send the same. The busiest sends exactly {form.exact} = "
            f"{format_number(form.value)}, not the textbook {form.text} = "
            f"{format_number(form.textbook)}, which holds when G divides N.")
