"""Options shared by the commands that price time: topology, nodes, size, dtype, α, β, γ."""

from __future__ import annotations

import argparse
import sys

from ..core.checks import MAX_GPUS, check_count, check_gpus, count_arg
from ..cost.model import CostModel
from ..core.errors import RingsimError
from ..core.textout import printable
from ..cost.topology import load, presets
from ..cost.topology_model import LEVELS, Topology
from ..core.units import DTYPES, itemsize, parse_bandwidth, parse_seconds, parse_size
from .common import NODES_TOPOLOGY

BANDWIDTH_HELP = (
    "Bandwidths are reported as nccl-tests does (its doc/PERFORMANCE.md): algbw = S/t, with S the "
    "bytes each GPU holds and t the modelled time; busbw = algbw·2(G−1)/G for all-reduce, the "
    "rate each GPU's link must carry, since any all-reduce moves at least 2(G−1)/G·S through "
    "each GPU. Compare busbw with the link bandwidth of the topology (busbw reaches it for a "
    "ring when latency is negligible). GB/s are 10^9 bytes per second.")
MODEL_HELP = (
    "The model: every GPU has a full-duplex port per level (inside a node, across nodes); a "
    "transfer of b bytes costs α + b·β on both ports, a reduce b·γ more at the receiver; "
    "transfers sharing a port in a step queue; a step lasts as long as its slowest port "
    "(its bottleneck).")


# NCCL's channel settings, as predict and diagnose take them: --min-channels (NCCL_MIN_NCHANNELS),
# --max-channels and --nvls-channels
CHANNEL_BOUNDS = ("min", "max", "nvls")


def add_channel_arguments(parser: argparse.ArgumentParser, helps: dict[str, str]) -> None:
    """--min-channels, --max-channels and --nvls-channels N, each 1 to MAX_CHANNELS, with the
    help `helps` gives each bound."""
    from ..cost.nccl import MAX_CHANNELS
    for bound in CHANNEL_BOUNDS:
        parser.add_argument(f"--{bound}-channels", default=None, metavar="N",
                            type=count_arg(f"NCCL_{bound.upper()}_NCHANNELS", minimum=1,
                                           maximum=MAX_CHANNELS),
                            help=helps[bound])


def channel_arguments(args: argparse.Namespace) -> dict[str, int]:
    """The channel settings given, as predict and diagnose take them: {'max_channels': 4}."""
    return {f"{bound}_channels": getattr(args, f"{bound}_channels") for bound in CHANNEL_BOUNDS
            if getattr(args, f"{bound}_channels") is not None}


def add_ctas_arguments(parser: argparse.ArgumentParser, words: str) -> None:
    """--min-ctas and --max-ctas N (NCCL_MIN_CTAS / NCCL_MAX_CTAS), each 1 to MAX_CHANNELS;
    `words` ends each help."""
    from ..cost.nccl import MAX_CHANNELS
    for bound, does in (("min", "copies the rings up to at least N and raises NVLS's channels "
                                "to N, as NCCL_MIN_NCHANNELS and NCCL_NVLS_NCHANNELS would"),
                        ("max", "runs rings and trees on at most N channels and holds NVLS's to "
                                "N, as NCCL_MAX_NCHANNELS and NCCL_NVLS_NCHANNELS would")):
        parser.add_argument(f"--{bound}-ctas", default=None, metavar="N",
                            type=count_arg(f"NCCL_{bound.upper()}_CTAS", minimum=1,
                                           maximum=MAX_CHANNELS),
                            help=f"as NCCL_{bound.upper()}_CTAS does (connect.cc, "
                                 f"transport/nvls.cc): {does} (1 to {MAX_CHANNELS}); {words}")


def ctas_arguments(args: argparse.Namespace) -> dict[str, int]:
    """The CTA bounds given: {'max_ctas': 4}."""
    return {key: getattr(args, key) for key in ("min_ctas", "max_ctas")
            if getattr(args, key) is not None}


def add_thread_arguments(parser: argparse.ArgumentParser, words: str) -> None:
    """--nthreads, --ll128-nthreads N and --buffsize B (NCCL_NTHREADS, NCCL_LL128_NTHREADS,
    NCCL_BUFFSIZE); `words` ends each help."""
    for name, does in (("nthreads", "the threads of a Ring or Tree channel with LL and Simple "
                                    "(64 to 512)"),
                       ("ll128-nthreads", "the threads of a Ring or Tree channel with LL128 "
                                          "(160 to 640)")):
        setting = f"NCCL_{name.upper().replace('-', '_')}"
        parser.add_argument(f"--{name}", default=None, metavar="N",
                            type=count_arg(setting, minimum=1, maximum=1 << 20),
                            help=f"as {setting} does: {does}, held as NCCL's getNthreads holds "
                                 "it (a value that is not a multiple of 32 is the most); fewer "
                                 f"threads keep more of a small call's channels (enqueue.cc){words}")
    parser.add_argument("--buffsize", default=None, metavar="B",
                        help="as NCCL_BUFFSIZE does: Simple's buffer, of which one step is an "
                             "eighth (NCCL's default 4MiB: 512 KiB steps), which sets how long a tree's "
                             "first step takes to cross its pipeline (the fill); a size with a "
                             f"unit, as --sizes takes one{words}")


def thread_arguments(args: argparse.Namespace) -> dict[str, int]:
    """The thread counts and buffer size given: {'nthreads': 256, 'buffsize': 16777216}."""
    given = {key: getattr(args, key) for key in ("nthreads", "ll128_nthreads")
             if getattr(args, key) is not None}
    if args.buffsize is not None:
        from ..core.units import parse_size
        given["buffsize"] = parse_size(args.buffsize, "--buffsize")
    return given


def add_cost_arguments(parser: argparse.ArgumentParser, *, size: bool = True) -> None:
    """--topology, --nodes, (--size,) --dtype, --alpha, --bandwidth, --reduce-bandwidth."""
    group = parser.add_argument_group("time model (α-β-γ)")
    group.add_argument("--topology", default=None, metavar="T",
                       help=f"the topology: a preset ({', '.join(presets())}; default flat) or a "
                            "TOML file (see docs/cost.md)")
    group.add_argument("--nodes", type=count_arg("the number of nodes", minimum=None), default=None,
                       metavar="M", help=NODES_TOPOLOGY)
    if size:
        group.add_argument("--size", default=None, metavar="S",
                           help="bytes per GPU, with a unit: 256MiB, 1GB, 4096, 64K (a bare "
                                "letter is binary, as in nccl-tests) (instead of --elements)")
    group.add_argument("--dtype", default="float32", choices=list(DTYPES), type=_dtype,
                       help="element type, for the bytes per element (default: float32; "
                            "nccl-tests' float, half, double also)")
    group.add_argument("--alpha", action="append", default=[], metavar="[LEVEL=]T",
                       help="latency per transfer, e.g. 0.5us; LEVEL inside or across sets one "
                            "level (default: every level)")
    group.add_argument("--bandwidth", action="append", default=[], metavar="[LEVEL=]B",
                       help="port bandwidth per direction, e.g. 450GB/s or 400Gb/s (b is bits), "
                            "or inf to see latency alone; LEVEL inside or across sets one level "
                            "(default: every level). A what-if: any rate is taken as given, "
                            "not checked against real NICs as a topology file's [across] "
                            "bandwidth is")
    group.add_argument("--reduce-bandwidth", default=None, metavar="B",
                       help="bytes a GPU reduces per second, e.g. 1TB/s, or inf (γ = 0)")


def uses_cost(args: argparse.Namespace) -> bool:
    """True when any time-model option (or an NCCL release to price with) was given."""
    return any([args.topology, args.nodes, getattr(args, "size", None), args.alpha,
                args.bandwidth, args.reduce_bandwidth, args.dtype != "float32",
                getattr(args, "nccl", None)])


def _per_level(values: list[str], parse, what: str) -> dict:
    out: dict = {}
    for text in values:
        key, sep, value = text.partition("=")
        if not sep:
            key, value = None, text
        elif key not in LEVELS:
            raise RingsimError(f"--{what}: the level before '=' must be inside or across, "
                               f"got {key!r}")
        if key in out:  # two values for one level: refused rather than the last kept silently
            level = "every level" if key is None else key
            raise RingsimError(f"--{what} is given twice for {level}: give it once")
        out[key] = parse(value, f"--{what}")
    return out


def warn(message: str, command: str | None = None) -> None:
    """One line on stderr, as errors are said (headed by the command) but as a warning: the
    run goes on."""
    from . import PROG
    prog = f"{PROG} {command}" if command else PROG
    if sys.stderr is not None:
        try:
            print(f"{prog}: warning: {printable(message)}", file=sys.stderr, flush=True)
        except (OSError, ValueError):  # stderr closed or full: the warning is lost, not the run
            pass


def load_topology(name: str, command: str | None = None) -> Topology:
    """The preset or file `name` names; what in it looks wrong but may be right
    (Topology.doubts) is said as a warning, one line each, headed by the `command`."""
    topology = load(name)
    for doubt in topology.doubts():
        warn(doubt, command)
    return topology


def topology_from_args(args: argparse.Namespace) -> Topology:
    """The topology the options name, with --alpha/--bandwidth/--reduce-bandwidth applied."""
    topo = load_topology(args.topology or "flat", getattr(args, "command", None))
    reduce = None
    if args.reduce_bandwidth is not None:
        reduce = parse_bandwidth(args.reduce_bandwidth, "--reduce-bandwidth")
    return topo.with_overrides(_per_level(args.alpha, parse_seconds, "alpha"),
                               _per_level(args.bandwidth, parse_bandwidth, "bandwidth"), reduce)


def model_from_args(args: argparse.Namespace) -> CostModel:
    """The CostModel: topology with overrides and the dtype's bytes per element."""
    return CostModel(topology_from_args(args), itemsize(args.dtype), args.dtype)


def gpus_from_args(args: argparse.Namespace, topology: Topology, default: int) -> int:
    """G from --gpus, or from --nodes × GPUs per node; both must agree when both are given."""
    if args.nodes is None:
        return default if args.gpus is None else args.gpus
    if topology.gpus_per_node is None:
        raise RingsimError(f"topology {topology.name} has no nodes; give --gpus instead of --nodes")
    try:
        nodes = int(args.nodes)
    except ValueError:
        raise RingsimError(f"--nodes must be a whole number, got {args.nodes!r}") from None
    nodes = check_count(nodes, "the number of nodes", minimum=1)
    if nodes * topology.gpus_per_node > MAX_GPUS:  # named by the option given, not by G
        raise RingsimError(f"--nodes {nodes:,} × {topology.gpus_per_node:,} GPUs per node is "
                           f"{nodes * topology.gpus_per_node:,} GPUs; at most {MAX_GPUS:,}")
    gpus = check_gpus(nodes * topology.gpus_per_node)
    if args.gpus is not None and args.gpus != gpus:
        raise RingsimError(f"--gpus {args.gpus} disagrees with --nodes {nodes} × "
                           f"{topology.gpus_per_node} GPUs per node = {gpus}")
    return gpus


def node_option(args: argparse.Namespace, topology: Topology, gpus: int) -> dict:
    """{'nodes': M} for an algorithm with nodes on a topology with nodes: its nodes are the machine's."""
    from ..algorithms.timing import machine_options
    return machine_options(args.algorithm, gpus, CostModel(topology))


def elements_from_args(args: argparse.Namespace, size: int, default: int) -> int:
    """N from --elements, or from --size over the dtype's bytes per element."""
    text = getattr(args, "size", None)
    if text is None:
        return default if args.elements is None else args.elements
    if args.elements is not None:
        raise RingsimError("give --size or --elements, not both")
    nbytes = parse_size(text, "--size")
    if nbytes % size:
        raise RingsimError(f"--size {text} is not a whole number of {args.dtype} elements "
                           f"({size} bytes each)")
    return nbytes // size


def nccl_release(text: str) -> str:
    """--nccl VERSION: an NCCL release whose tuning tables ringsim carries ('2.21.5', or as
    NCCL prints it, '2.21.5-1+cuda12.4')."""
    from ..cost.nccl_tuner import given_release
    try:
        return given_release(text)
    except RingsimError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def add_nccl_argument(parser: argparse.ArgumentParser, priced: str = "each call") -> None:
    """--nccl VERSION: the NCCL release whose tables price NCCL's model (`priced`: what of it)."""
    from ..cost.nccl_tuner import versions, versions_text
    parser.add_argument("--nccl", default=None, metavar="VERSION", type=nccl_release,
                        help=f"the NCCL release whose tuning tables price {priced}: "
                             f"{versions_text()} (default: {versions()[0]}, the release "
                             "the model follows)")


# nccl-tests' names for its -d types (float is 4 bytes there, as in C, not NumPy's float64).
NCCL_TESTS_DTYPES = {"float": "float32", "half": "float16", "double": "float64", "int": "int32",
                     "char": "int8"}


def _dtype(text: str) -> str:
    """A dtype as ringsim names it, from its own name or nccl-tests' (float is float32)."""
    return NCCL_TESTS_DTYPES.get(text, text)
