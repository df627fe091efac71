"""ringsim zero: ZeRO stages 0–3 per training step — elements sent, time, memory per GPU."""

from __future__ import annotations

import argparse
import json

from ..core.checks import count_arg
from ..core.naming import plural
from ..core.errors import RingsimError
from ..core.width import say, table
from ._cost_args import add_cost_arguments, gpus_from_args, model_from_args
from .common import add_option_arguments, gpus_arg

ORDER = 37
HELP = "ZeRO stages 0-3 (FSDP): per training step, what each GPU sends, how long, what it keeps"
DESCRIPTION = (
    HELP + ". Mixed-precision Adam as in Rajbhandari et al., ZeRO (SC'20): 2 bytes of fp16 "
    "parameters, 2 of fp16 gradients and 12 of Adam state per parameter; stage 1 shards the "
    "Adam state, stage 2 the gradients too, stage 3 (FSDP's full shard) the parameters too. "
    "Stages 0-2 move 2Ψ per GPU per step, stage 3 moves 3Ψ. Times from the α-β-γ model, "
    "fp16 elements by default, on the ring: one ring in GPU order 1, 2, …, G unless "
    "--ring-order or --channels lay it out otherwise; on several nodes it also prints what "
    "NCCL's layout, one ring per NIC (--ring-order rails:P), would take.")


def _gb(nbytes: int) -> str:
    """Bytes in decimal units as the paper writes them: 31.41 GB, 234.38 MB."""
    for unit, size in (("TB", 10**12), ("GB", 10**9), ("MB", 10**6), ("kB", 10**3)):
        if nbytes >= size:
            return f"{nbytes / size:,.2f} {unit}"
    return f"{nbytes} B"


def _params(text: str) -> int:
    from ..core.units import parse_params
    try:
        return parse_params(text)
    except RingsimError as error:
        raise argparse.ArgumentTypeError(str(error).split(": ", 1)[-1]) from None


def register(sub) -> None:
    """Add the `zero` subcommand to `sub`."""
    parser = sub.add_parser("zero", help=HELP, description=DESCRIPTION)
    parser.add_argument("--stage", type=count_arg("--stage", minimum=None), choices=[0, 1, 2, 3], default=None,
                        help="one ZeRO stage (default: all four)")
    parser.add_argument("--params", type=_params, required=True, metavar="P",
                        help="model parameters Ψ: 7B, 7.5B, 125M, 1.3e9")
    parser.add_argument("-g", "--gpus", type=gpus_arg, default=None, metavar="G",
                        help="data-parallel GPUs N_d (default: 64, or --nodes × GPUs per node)")
    parser.add_argument("--gpu-memory", default=None, metavar="M", type=_memory,
                        help="each GPU's memory, e.g. 80GB for an H100 (default: the topology's "
                             "gpu_memory, which the presets of known GPUs give, such as 80GB "
                             "for dgx-h100): the stages whose states do not fit are named "
                             "(activations and buffers come on top)")
    parser.add_argument("--json", action="store_true", help="one JSON object per stage")
    add_cost_arguments(parser, size=False)
    for action in parser._actions:  # the shared --dtype help names float32; ZeRO moves fp16
        if action.dest == "dtype":
            action.default = "float16"
            action.help = ("element type of the gradients and parameters sent, for the bytes per "
                           "element (default: float16, as mixed-precision training sends)")
    add_option_arguments(parser, nodes=False)  # the ring's options; --nodes is the topology's
    parser.set_defaults(run=run)


def _memory(text: str) -> int:
    """--gpu-memory as bytes: 80GB, 141GB, 192GiB; from 1 MB to 100 TB, as a topology's gpu_memory."""
    from ..cost.topology import parse_gpu_memory
    try:
        return parse_gpu_memory(text, "--gpu-memory")
    except RingsimError as error:
        # argparse names the flag itself ("argument --gpu-memory: ..."): say it once
        raise argparse.ArgumentTypeError(str(error).removeprefix("--gpu-memory: ")) from None


def _gpu_memory(args: argparse.Namespace, topology) -> tuple[int | None, str]:
    """The memory each GPU has, in bytes (None where neither says), and where it comes from:
    --gpu-memory, else the topology's gpu_memory."""
    if args.gpu_memory is not None:
        if topology.gpu_memory is None or topology.gpu_memory == args.gpu_memory:
            return args.gpu_memory, "--gpu-memory"
        return args.gpu_memory, (f"--gpu-memory, in place of {_gb(topology.gpu_memory)} from "
                                 f"topology {topology.name}")
    if topology.gpu_memory is not None:
        return topology.gpu_memory, (f"topology {topology.name}'s gpu_memory; --gpu-memory sets "
                                     "another")
    return None, ""


def _first_last(gpus: int) -> str:
    """'1, 2, …, 64' (or all of them when there are three or fewer)."""
    return ", ".join(str(g) for g in range(1, gpus + 1)) if gpus <= 3 else f"1, 2, …, {gpus}"


def run(args: argparse.Namespace) -> int:
    """Run `ringsim zero` on the parsed `args`; returns the exit status."""
    from ..core.units import format_seconds
    from ..algorithms import given_text
    from ..algorithms.timing import nccl_layout
    from ..training.zero import ALGORITHM, STAGE_NAMES, STAGES, paper_memory, ring_options, step
    from ._nccl_layout import flags, given_options
    model = model_from_args(args)
    gpus = gpus_from_args(args, model.topology, 64)
    given = ring_options(gpus, given_options(args))  # refuses another algorithm's option
    stages = STAGES if args.stage is None else (args.stage,)
    steps = [step(s, args.params, gpus, model, given) for s in stages]
    memory, memory_from = _gpu_memory(args, model.topology)
    layout = nccl_layout(ALGORITHM, gpus, model, given)
    # The same stages with NCCL's layout of the ring, one ring per NIC.
    nccl = None if layout is None else [step(s, args.params, gpus, model, layout)
                                        for s in stages]
    if args.json:
        for k, z in enumerate(steps):
            print(json.dumps({
                "stage": z.stage, "params": z.params, "gpus": z.gpus, "topology": model.topology.name,
                "algorithm": ALGORITHM, "options": given,
                "collectives": [{"collective": c.name, "moves": what} for c, what in z.collectives],
                "elements_sent_per_gpu": z.sent, "elements_received_per_gpu": z.received,
                "paper_elements_per_gpu": z.paper_elements, "seconds": z.seconds,
                "memory_bytes_per_gpu": z.memory.total,
                "memory": {"parameters": z.memory.parameters, "gradients": z.memory.gradients,
                           "optimizer": z.memory.optimizer},
                "paper_memory_bytes_per_gpu": float(paper_memory(z.stage, z.params, gpus)),
                "fits": None if memory is None else z.memory.total <= memory,
                "gpu_memory_bytes": memory,
                "gpu_memory_from": None if memory is None else
                ("option" if args.gpu_memory is not None else "topology"),
                # NCCL's layout of the ring, where the plain ring on several nodes was priced
                "rails": None if nccl is None else {**layout, "seconds": nccl[k].seconds}}))
        return 0
    psi = args.params
    say(f"ZeRO per training step · Ψ = {plural(psi, 'parameter')} · {plural(gpus, 'GPU')} · {model.topology.name}, "
        f"{model.itemsize}-byte elements on the wire")
    say("Memory: fp16 parameters 2Ψ, fp16 gradients 2Ψ, Adam states 12Ψ bytes (fp32 copy, "
        "momentum, variance), sharded by stage.")
    rings = given_text(ALGORITHM, gpus, given) or f"one ring, GPUs in order {_first_last(gpus)}"
    say(f"Time: the ring's collectives ({rings}), one after another.\n")
    header = ("stage", "elements sent per GPU", "× Ψ", "time", "parameters", "gradients",
              "Adam states", "memory per GPU")
    rows = [(str(z.stage), f"{z.sent:,}", f"{z.sent / psi:.3f}",
             "—" if z.seconds is None else format_seconds(z.seconds),
             _gb(z.memory.parameters), _gb(z.memory.gradients),
             _gb(z.memory.optimizer), _gb(z.memory.total)) for z in steps]
    print("\n".join(table([header, *rows], left=(0,))))
    print()
    for z in steps:
        moves = ", then ".join(f"{c.name} of the {what}" for c, what in z.collectives)
        say(f"Stage {z.stage} ({STAGE_NAMES[z.stage]}): {moves}.")
    say(f"\nThe paper rounds each collective to Ψ per GPU (stages 0-2: 2Ψ, stage 3: 3Ψ = 1.5×); "
        f"a ring moves (G−1)/G of that, {gpus - 1}/{gpus} here.")
    if memory is not None:
        over = [z.stage for z in steps if z.memory.total > memory]
        where = f"{_gb(memory)} per GPU ({memory_from})"
        say(("Every stage's states fit " + where if not over else
             f"Stage{'s' * (len(over) > 1)} {', '.join(map(str, over))} do"
             f"{'es' * (len(over) == 1)} not fit {where}")
            + ", before activations, buffers and fragmentation.")
    if nccl is not None:
        times = ", ".join(("" if len(nccl) == 1 else f"stage {z.stage} ") + format_seconds(z.seconds)
                          for z in nccl)
        say(f"The plain ring leaves each node through one NIC; NCCL lays its rings out one per "
            f"NIC: {flags(layout)} gives {times}.")
    return 0
