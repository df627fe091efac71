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

ORDER = 35
HELP = "run a plan on real MPI processes (one rank per GPU), checked against MPI_Allreduce"
# Lines MPICH's launcher prints around a rank that ended badly; ringsim's own line says it all.
_LAUNCHER_NOISE = ("=====", "=   ", "YOUR APPLICATION TERMINATED", "This typically refers",
                   "Please see the FAQ", "MPICH: Builtin communicator")


def register(sub) -> None:
    parser = sub.add_parser("mpi", help=HELP, description=HELP + ". Starts the mpiexec of this "
                            "Python environment (the [mpi] extra's MPICH), else the one on PATH. "
                            "On a cluster run `srun -n G python -m ringsim.mpi …` instead.")
    ranks = count_arg("the number of MPI ranks", minimum=None)
    parser.add_argument("--ranks", type=ranks, default=4, metavar="G",
                        help="number of MPI ranks, one per GPU (default: 4; may exceed the cores); "
                             "mpiexec's -n G works too")
    # `-n` is elements in every other command; here it stays as mpiexec users type it, unlisted.
    parser.add_argument("-n", dest="ranks", type=ranks, help=argparse.SUPPRESS)
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
    from ..mpi.options import check_run
    check_run(args, args.ranks, args.ranks)  # bad input: one line here, before any process starts
    mpiexec = find_mpiexec()
    forwarded = _rebuild(args)
    command = [mpiexec, "-n", str(args.ranks), *launcher_flags(mpiexec), sys.executable,
               "-m", "ringsim.mpi", *forwarded]
    env = dict(os.environ)
    package_root = str(Path(__file__).resolve().parents[2])  # the ranks import this ringsim
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH")) if p)
    process = subprocess.Popen(command, env=env, stderr=subprocess.PIPE, text=True,
                               start_new_session=True)
    try:
        for line in process.stderr:
            if not line.strip() or line.startswith(_LAUNCHER_NOISE):
                continue
            sys.stderr.write(line)
        return _status(process.wait())
    except KeyboardInterrupt:
        os.killpg(process.pid, 15)
        process.wait()
        return 130


def _status(code: int) -> int:
    """mpiexec's status as ringsim's: 0 all well, 2 bad input, 1 anything else."""
    return code if code in (0, 2) else 1



def _rebuild(args: argparse.Namespace) -> list[str]:
    """The rank program's options, written back out from the parsed ones."""
    out = ["--algorithm", args.algorithm, "--dtype", args.dtype, "--backend", args.backend,
           "--timeout", repr(args.timeout), "--seed", str(args.seed)]
    if args.elements is not None:
        out += ["--elements", str(args.elements)]
    if args.size is not None:
        out += ["--size", str(args.size)]
    if args.master is not None:
        out += ["--master", str(args.master)]
    if args.kill_rank is not None:
        out += ["--kill-rank", str(args.kill_rank), "--at-step", str(args.at_step)]
    for flag in ("json", "bench", "calibrate"):
        if getattr(args, flag):
            out.append(f"--{flag}")
    return out
