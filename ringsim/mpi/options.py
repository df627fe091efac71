"""The options of an MPI run, shared by `ringsim mpi` (the launcher) and `python -m ringsim.mpi`."""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from ..algorithms import ALGORITHMS, DEFAULT_ALGORITHM, check_options, given_options, option_flag
from ..algorithms.flags import add_option_arguments
from ..core.checks import count_arg, echo
from ..core.errors import RingsimError

DTYPES = ("int32", "int64", "float32", "float64")
BENCH_ELEMENTS = 1 << 22


def parse_size(text: str) -> int:
    """Bytes from '4096', '16MiB', '1GB' (10^9) or '1GiB' (2^30): ringsim's one units vocabulary."""
    from ..core.units import parse_size as parse
    try:
        return parse(text, "--size")
    except RingsimError as error:  # argparse names the option itself: keep the reason only
        raise argparse.ArgumentTypeError(str(error).removeprefix("--size: ")) from None


TIMEOUT_RANGE = (0.1, 3600.0)  # below, a busy but live peer looks dead; above, a hang looks alive


def check_timeout(value, name: str = "--timeout") -> float:
    """A wait's deadline in seconds, within TIMEOUT_RANGE (NaN, inf, 0, negatives refused)."""
    import math
    import numbers
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or \
            not math.isfinite(float(value)) or not TIMEOUT_RANGE[0] <= float(value) <= TIMEOUT_RANGE[1]:
        raise RingsimError(f"{name} must be a number of seconds from {TIMEOUT_RANGE[0]:g} to "
                           f"{TIMEOUT_RANGE[1]:,.0f}, got {value!r}")
    return float(value)


def _timeout(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected seconds such as 10, got {echo(text)}") from None
    try:
        return check_timeout(value)
    except RingsimError as error:
        raise argparse.ArgumentTypeError(str(error).split(", got")[0].replace("--timeout ", "")
                                         + f", got {text!r}") from None


_elements = count_arg("the number of elements per GPU", minimum=0)


def add_run_arguments(parser: argparse.ArgumentParser) -> None:
    """Every option the ranks read (the launcher adds -n and passes the rest through)."""
    parser.add_argument("-a", "--algorithm", default=DEFAULT_ALGORITHM, choices=list(ALGORITHMS),
                        help=f"all-reduce algorithm (default: {DEFAULT_ALGORITHM})")
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--elements", "-N", type=_elements, default=None, metavar="N",
                      help="elements per rank (default: 8; 2^22 with --bench)")
    size.add_argument("--size", type=parse_size, default=None, metavar="S",
                      help="bytes per rank, with a unit: 16MiB, 1GB, 4096 (instead of --elements)")
    parser.add_argument("--dtype", default="float32", choices=DTYPES,
                        help="element type (default: float32); integers use their whole range, so sums wrap")
    parser.add_argument("--backend", default="numpy", choices=("numpy", "cupy", "auto"),
                        help="rank buffers in host memory (numpy, the default) or on a CUDA device")
    parser.add_argument("--json", action="store_true",
                        help="JSON Lines: one object per step, then a summary")
    parser.add_argument("--timeout", type=_timeout, default=10.0, metavar="SECONDS",
                        help=f"how long a rank waits on a silent peer before declaring it dead, "
                             f"{TIMEOUT_RANGE[0]:g} to {TIMEOUT_RANGE[1]:,.0f} (default: 10)")
    parser.add_argument("--kill-rank", type=count_arg("--kill-rank", minimum=None), default=None, metavar="R",
                        help="rank R (0-based, as MPI counts) dies on purpose at --at-step")
    parser.add_argument("--at-step", type=count_arg("--at-step", minimum=None), default=None, metavar="S",
                        help="the 1-based step at which --kill-rank dies (default: 1)")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--bench", action="store_true",
                      help="ring over MPI vs MPI_Allreduce on the same data, best of 5 after warm-up")
    mode.add_argument("--calibrate", action="store_true",
                      help="fit α and β by ping-pong, then predicted vs measured time per algorithm")
    parser.add_argument("--seed", type=count_arg("the seed", minimum=0, maximum=2**63 - 1), default=0,
                        metavar="SEED", help="seed of the random data, 0 or more (default: 0)")
    parser.add_argument("--write-topology", metavar="FILE", default=None,
                        help="with --calibrate: write the fitted α, β and γ as a topology file "
                             "(TOML) that --topology FILE of predict, compare and diagnose reads")
    add_option_arguments(parser)  # the ranks are the GPUs: --master K is rank K−1


def elements_of(args: argparse.Namespace) -> int:
    """N from --elements, --size (bytes ÷ item size) or the mode's default."""
    if args.size is not None:
        # As every other command: a size that splits an element is refused, never rounded down.
        size = np.dtype(args.dtype).itemsize
        if args.size % size:
            raise RingsimError(f"--size {args.size:,}B is not a whole number of {args.dtype} "
                               f"elements ({size} bytes each)")
        return args.size // size
    if args.elements is not None:
        return args.elements
    return BENCH_ELEMENTS if (args.bench or args.calibrate) else 8


# What one rank's process holds before any data: Python with NumPy, mpi4py and ringsim
# loaded (55 MiB resident measured per rank of `ringsim mpi --elements 8`).
RANK_PROCESS_BYTES = 64 << 20
WIDE_BYTES = 8  # a float element widened to float64 for the verdict's tolerance


def receive_bytes(plan, elements: int, itemsize: int) -> np.ndarray:
    """Per rank, the most it receives in one step (bytes): an upper bound of the receive space
    the MPI executor allocates and keeps for the life of the process (executor._scratch)."""
    from ..core.layout import Layout
    layout = Layout(plan.segments, elements)
    most = np.zeros(plan.gpus, np.int64)
    for step in plan.steps:
        if len(step) == 0:
            continue
        dst = np.asarray(step.dst, np.int64)
        rank = np.where(dst < plan.gpus, dst, (dst - plan.gpus) % plan.gpus)  # executor.host
        got = np.bincount(rank, weights=layout.spans(step.first, step.last), minlength=plan.gpus)
        most = np.maximum(most, got.astype(np.int64))
    return most * itemsize


# What a run holds, from what story.py, bench.py, calibrate.py and executor.py allocate, in
# units of one rank's buffer (b bytes; G ranks):
#   every rank, for its whole life: its process (RANK_PROCESS_BYTES) and its receive space,
#     which the executor keeps between calls (receive_bytes);
#   then the larger of two moments of a narrated run:
#   - the run: each rank's input, its result, MPI_Allreduce's result and the two byte copies
#     compared with it (5b), and the buffers of the switches the ranks play (b each);
#   - rank 0's check: its input, result and MPI's result (3b), every rank's input gathered
#     (G·b), then the larger of the in-process all-reduce (execute.memory.allreduce_bytes)
#     and what follows it: that run's (G, N) result kept (G·b) beside either a byte copy for
#     the digest (b) or, for floats, the tolerance's float64 copy and |copy| of the gathered
#     inputs and the float64 gaps (2G + 1 arrays of N float64). The other ranks then hold
#     only their receive space.
#   --bench and --calibrate hold the input, the result and one buffer more per rank
#   (MPI_Allreduce's scratch, or calibrate's two arrays that time γ), with the receive space;
#   calibrate runs every algorithm, so a rank may receive every other rank's buffer.
# Measured (psutil, the ranks' summed resident memory at its peak) on 2 cores with 10^7
# float32 per rank: 4 ranks of ring 1,379 MiB (estimate 1,400), naive 1,788 (1,820),
# master 1,448 (1,591), 3 ranks of ring 1,080 (1,108); 4 ranks of 5·10^7: 5,868 (5,978).
def bytes_needed(args: argparse.Namespace, ranks: int, ranks_here: int,
                 running: bool = False) -> int:
    """Memory a run takes on one machine holding `ranks_here` of the ranks (rank 0 among them);
    `running`: the ranks' processes exist already, and only what they will allocate counts."""
    from ..algorithms import make_plan
    from ..execute.memory import allreduce_bytes
    from ..core.layout import Layout
    elements = elements_of(args)
    itemsize = np.dtype(args.dtype).itemsize
    b = elements * itemsize
    processes = 0 if running else ranks_here * RANK_PROCESS_BYTES
    # --bench and --calibrate check each sum against MPI_Allreduce's (bench.check_sum): its
    # expected copy and a mask of it, 1.25 b more a rank (b a multiple of 4 or not: rounded up).
    check = -(-5 * b // 4)
    if args.calibrate:
        return processes + ranks_here * (3 * b + check + (ranks - 1) * b)
    plan = make_plan(args.algorithm, ranks, **dict(given_options(args)))
    receive = int(np.sort(receive_bytes(plan, elements, itemsize))[::-1][:ranks_here].sum())
    if args.bench:
        return processes + receive + ranks_here * (3 * b + check)
    run = ranks_here * 5 * b + plan.switches * b
    # Two ranks add the same two numbers in either order, which IEEE arithmetic makes bitwise
    # equal to MPI's sum: the float64 tolerance is computed only from three ranks on.
    wide = 0 if np.dtype(args.dtype).kind != "f" or ranks < 3 else elements * WIDE_BYTES
    after = ranks * b + max(b, (2 * ranks + 1) * wide)
    check = (ranks + 3) * b + max(allreduce_bytes(plan, Layout(plan.segments, elements), itemsize),
                                  after)
    return processes + receive + max(run, check)


def check_run(args: argparse.Namespace, ranks: int, ranks_here: int = 1,
              running: bool = False, more_ranks: str = "try --ranks 4") -> None:
    """Refuse, in one line, what cannot run: one rank, no elements, a kill outside the plan,
    more memory than the `ranks_here` ranks on one machine may take (`running`: as checked
    by ranks already started, whose processes are already in memory)."""
    if ranks < 2:
        raise RingsimError(f"an MPI all-reduce needs at least 2 ranks, got {ranks}: with one rank "
                           f"there is nothing to send ({more_ranks})")
    if elements_of(args) == 0:
        raise RingsimError("there are 0 elements per rank: nothing to send (try --elements 8)")
    options = dict(given_options(args))
    check_options(args.algorithm, ranks, options)  # the ranks are the GPUs: as every command checks them
    if args.calibrate and options:  # refused, not ignored: its rows would not say which ran
        raise RingsimError(f"--calibrate times every algorithm at its default options: give it "
                           f"without {', '.join(option_flag(k) for k in options)}")
    if args.kill_rank is None and args.at_step is not None:
        raise RingsimError("--at-step is the step at which --kill-rank dies: give --kill-rank R too")
    if args.kill_rank is not None:
        args.at_step = 1 if args.at_step is None else args.at_step
        if not 0 <= args.kill_rank < ranks:
            raise RingsimError(f"--kill-rank must be from 0 to {ranks - 1}, got {args.kill_rank}")
        if args.bench or args.calibrate:
            raise RingsimError("--kill-rank runs one narrated all-reduce; leave out --bench/--calibrate")
        from ..algorithms import make_plan
        steps = len(make_plan(args.algorithm, ranks, **options))
        if not 1 <= args.at_step <= steps:
            raise RingsimError(f"--at-step must be from 1 to {steps} (the plan's steps), got {args.at_step}")
    check_timeout(args.timeout)
    if getattr(args, "write_topology", None) is not None:
        if not args.calibrate:
            raise RingsimError("--write-topology writes what --calibrate measures; add --calibrate")
        check_topology_path(args.write_topology)
    check_memory_of(args, ranks, ranks_here, running)


def check_memory_of(args: argparse.Namespace, ranks: int, ranks_here: int,
                    running: bool = False) -> None:
    """Refuse a run whose ranks would need more than ringsim allows itself (execute.memory's
    limit: half the memory available now, or RINGSIM_MEMORY_LIMIT), before any rank runs."""
    from ..execute.memory import check_memory
    what = f"{ranks:,} ranks of {elements_of(args):,} {args.dtype} elements"
    if ranks_here < ranks:
        what += f" ({ranks_here:,} of them on this machine)"
    instead = "try fewer --elements or ranks (ringsim walk shows the same plan without the data)"
    # The processes alone come first: they need no plan, which is slow to build for many ranks.
    if not running:
        check_memory(ranks_here * RANK_PROCESS_BYTES, what, instead=instead)
    # Then each rank's own buffer, counted in Python integers: the plan's receive space is
    # counted in int64 arrays, which a buffer of 10^21 elements would overflow.
    check_memory(ranks_here * elements_of(args) * np.dtype(args.dtype).itemsize, what,
                 instead=instead)
    check_memory(bytes_needed(args, ranks, ranks_here, running), what, instead=instead)


def check_topology_path(path: str) -> None:
    """Refuse, before any rank starts, a --write-topology path that cannot be written."""
    target = Path(path)
    if target.is_dir():
        raise RingsimError(f"--write-topology {path} is a folder; give a file name such as my-machine.toml")
    if not target.name.endswith(".toml"):
        raise RingsimError(f"--write-topology {path}: name the file NAME.toml, so that "
                           "--topology reads it as a file")
    if not target.resolve().parent.is_dir():
        raise RingsimError(f"--write-topology {path}: folder {target.parent} does not exist")
