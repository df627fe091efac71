"""ringsim mpi: start mpiexec with G ranks of `python -m ringsim.mpi` and pass its report through."""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

from ..core.checks import count_arg
from ..core.errors import RingsimError
from ..core.width import output_width

ORDER = 35
HELP = "run a plan on real MPI processes (one rank per GPU), checked against MPI_Allreduce"
# Lines MPICH's launcher prints around a rank that ended badly; ringsim's own line says it all.
_LAUNCHER_NOISE = ("=====", "=   ", "YOUR APPLICATION TERMINATED", "This typically refers",
                   "Please see the FAQ", "MPICH: Builtin communicator")


RANKS_PER_CORE = 4   # past this every rank waits its turn for a core and timeouts mean nothing
MAX_RANKS = 4096     # even with --oversubscribe: one Python process (tens of MB) per rank
GRACE_SECONDS = 5.0  # after a stop signal, how long mpiexec's group gets before SIGKILL


def check_ranks(ranks: int, oversubscribe: bool, cores: int | None = None) -> None:
    """Refuse more ranks than RANKS_PER_CORE per core (unless oversubscribe) before any starts."""
    cores = cores or os.cpu_count() or 1
    if not oversubscribe and ranks > RANKS_PER_CORE * cores:
        raise RingsimError(f"--ranks {ranks:,} is more than {RANKS_PER_CORE} ranks per core on this "
                           f"machine ({cores} cores, at most {RANKS_PER_CORE * cores}); add "
                           f"--oversubscribe to run them anyway, slowly")


def register(sub) -> None:
    """Add the `mpi` subcommand to `sub`."""
    parser = sub.add_parser("mpi", help=HELP, description=HELP + ". Starts the mpiexec of this "
                            "Python environment (the [mpi] extra's MPICH), else the one on PATH. "
                            "On a cluster run `srun -n G python -m ringsim.mpi …` instead.")
    ranks = count_arg("the number of ranks", minimum=1, maximum=MAX_RANKS)
    parser.add_argument("--ranks", type=ranks, default=4, metavar="G",
                        help=f"number of MPI ranks, one per GPU (default: 4; at most "
                             f"{RANKS_PER_CORE} per core unless --oversubscribe); mpiexec's -n G "
                             "and the other commands' -g G work too")
    # `-n` is elements in every other command; here it stays as mpiexec users type it, unlisted.
    parser.add_argument("-n", dest="ranks", type=ranks, help=argparse.SUPPRESS)
    # every other command counts GPUs with -g: one rank per GPU, so it means the same here
    parser.add_argument("-g", "--gpus", dest="ranks", type=ranks, help=argparse.SUPPRESS)
    parser.add_argument("--oversubscribe", action="store_true",
                        help=f"allow more than {RANKS_PER_CORE} ranks per core (still at most "
                             f"{MAX_RANKS:,}, and as many as memory holds)")
    from ..mpi.options import add_run_arguments  # plain argparse and NumPy: no mpi4py here
    add_run_arguments(parser)
    parser.set_defaults(run=run)


def find_mpiexec() -> str:
    """The mpiexec next to this Python (the mpich wheel installs it there), else on PATH."""
    here = Path(sys.executable).parent / "mpiexec"
    if here.is_file() and os.access(here, os.X_OK):
        return str(here)
    for name in ("mpiexec", "mpirun"):
        found = shutil.which(name)
        if found:
            return found
    raise RingsimError("no mpiexec found: pip install '.[mpi]' from a clone of ringsim (its MPICH "
                       "wheel brings one) or put your MPI's mpiexec on PATH")


def launcher_flags(mpiexec: str) -> list[str]:
    """Flags that let ranks outnumber cores and let survivors of a dead rank report it."""
    try:
        version = subprocess.run([mpiexec, "--version"], capture_output=True, text=True,
                                 timeout=20).stdout
    except (OSError, subprocess.TimeoutExpired):
        version = ""
    if "Open MPI" in version or "OpenRTE" in version:
        return ["--oversubscribe"]
    if "HYDRA" in version or "hydra" in version:
        # Hydra kills every rank the moment one exits badly; ringsim's watch names it instead.
        return ["-disable-auto-cleanup"]
    return []


def run(args: argparse.Namespace) -> int:
    """Run `ringsim mpi` on the parsed `args`; returns the exit status."""
    from ..mpi.options import check_run
    check_ranks(args.ranks, args.oversubscribe)
    check_run(args, args.ranks, args.ranks)  # bad input: one line here, before any process starts
    mpiexec = find_mpiexec()
    forwarded = _rebuild(args)
    command = [mpiexec, "-n", str(args.ranks), *launcher_flags(mpiexec), sys.executable,
               "-m", "ringsim.mpi", *forwarded]
    env = dict(os.environ)
    package_root = str(Path(__file__).resolve().parents[2])  # the ranks import this ringsim
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH")) if p)
    # The ranks write UTF-8 into pipes; this process re-prints it under the terminal's rules.
    env["PYTHONIOENCODING"] = "utf-8"
    # Writing into a pipe, rank 0 would see no width: it is told the terminal's.
    limit = output_width()
    if limit is not None:
        env["COLUMNS"] = str(limit)
    from ..mpi.launch import Job, Stopped
    try:
        with Job(command, env, GRACE_SECONDS) as job:
            job.relay(_keep, sys.stdout, sys.stderr)
            code = job.wait()
    except Stopped as stop:  # the job is ended; the shell's convention for a signal's status
        return 128 + stop.signum
    status = _status(code)
    if code and not job.printed:  # a launcher that cannot start programs, failing in silence
        print(f"ringsim mpi: error: {mpiexec} ended with status {code} and printed nothing; "
              f"check that it starts programs: {mpiexec} -n 2 hostname", file=sys.stderr)
    if args.kill_rank is not None and (idle := _idle_note(args)):
        print(idle, file=sys.stderr)
    return status


def _idle_note(args: argparse.Namespace) -> str:
    """Why the peers of a rank stopped on purpose name a later step: it had no part in the
    step it stopped before ('' where it had one)."""
    from ..algorithms import given_options, make_plan
    steps = make_plan(args.algorithm, args.ranks, **dict(given_options(args))).steps
    rank = args.kill_rank
    takes_part = [i for i, step in enumerate(steps, 1)
                  if rank in step.src or rank in step.dst]
    later = [i for i in takes_part if i >= args.at_step]
    if args.at_step in takes_part or not later:
        return ""
    return (f"note: rank {rank} (GPU{rank + 1}) stopped before step {args.at_step} "
            f"(--kill-rank {rank} --at-step {args.at_step}), a step it has no part in; its "
            f"peers first need it at step {later[0]}")


def _keep(line: str) -> bool:
    """Whether a line of mpiexec's stderr is worth showing (ringsim's own line says it all)."""
    return bool(line.strip()) and not line.startswith(_LAUNCHER_NOISE)


def _status(code: int) -> int:
    """mpiexec's status as ringsim's: 0 all well, 2 bad input, 1 anything else."""
    return code if code in (0, 2) else 1



def _rebuild(args: argparse.Namespace) -> list[str]:
    """The rank program's options, written back out from the parsed ones."""
    from ..algorithms import given_options, option_flag
    out = ["--algorithm", args.algorithm, "--dtype", args.dtype, "--backend", args.backend,
           "--timeout", repr(args.timeout), "--seed", str(args.seed)]
    if args.elements is not None:
        out += ["--elements", str(args.elements)]
    if args.size is not None:
        out += ["--size", str(args.size)]
    for name, value in given_options(args):
        out += [option_flag(name), str(value)]
    if args.kill_rank is not None:
        out += ["--kill-rank", str(args.kill_rank), "--at-step", str(args.at_step)]
    if getattr(args, "write_topology", None) is not None:
        out += ["--write-topology", os.path.abspath(args.write_topology)]
    for flag in ("json", "bench", "calibrate"):
        if getattr(args, flag):
            out.append(f"--{flag}")
    return out
