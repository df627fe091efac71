"""ringsim.mpi.allreduce: a drop-in for comm.Allreduce(x, out, op=SUM) that runs a ringsim plan."""

from __future__ import annotations

import atexit
import os
import sys
import threading
import time
import zlib
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from ..algorithms import DEFAULT_ALGORITHM, make_plan
from ..core.checks import as_numeric_array
from ..core.errors import RingsimError
from ..core.layout import Layout
from ..core.plan import Plan
from ._load import mpi
from .executor import MPIExecutor, StepRecord
from .watch import ArrivalError, RankFailedError, Watch

DEFAULT_TIMEOUT = 60.0   # seconds a rank waits on a silent peer before declaring it dead
SUSPECT = 0.5            # seconds of waiting before a rank starts pinging its peers


@dataclass(frozen=True, eq=False)
class RankRun:
    """One rank's all-reduce: the sum, the plan it followed, and what each step cost it."""

    output: Any
    plan: Plan
    layout: Layout
    records: list[StepRecord]
    transport: str


class _Channels:
    """Private duplicates of a user's communicator: one for data, one for control messages."""

    def __init__(self, MPI: Any, comm: Any, timeout: float) -> None:
        # comm.Dup() blocks until every rank has called it, forever if one exited or sleeps:
        # the non-blocking Idup lets this rank give up after `timeout` seconds instead.
        (self.data, first), (self.control, second) = comm.Idup(), comm.Idup()
        deadline = time.monotonic() + timeout
        while not MPI.Request.Testall([first, second]):
            if time.monotonic() > deadline:
                error = ArrivalError(_missing_text(MPI, comm, timeout))
                _leave_at_exit(str(error))  # the Idups stay pending: MPI_Finalize would hang
                raise error
            time.sleep(0.0005)  # ranks may share cores: let the others run
        self.calls = 0
        self.nccl = None       # the NCCL link, made on first use by ranks on CUDA devices
        self.transport = None  # how device buffers travel (devices.device_transport)


_KEYVAL: list = []


def _missing_text(MPI: Any, comm: Any, timeout: float) -> str:
    """Who this rank waited for: the ranks MPI reports failed, else every other rank."""
    me, size = comm.Get_rank(), comm.Get_size()
    failed: list[int] = []
    try:  # MPI 4.1's fault-tolerance query; most MPI libraries report nothing here
        group = comm.Get_failed()
        failed = [int(r) for r in MPI.Group.Translate_ranks(group, list(range(group.Get_size())),
                                                             comm.Get_group())]
    except (AttributeError, NotImplementedError, MPI.Exception):
        pass
    if failed:
        return (f"rank {me}: {_ranks_text(failed)} failed before ringsim.mpi.allreduce "
                f"started, so this rank stopped")
    others = [r for r in range(size) if r != me]
    return (f"rank {me}: waited {timeout:g} s at the start of ringsim.mpi.allreduce for "
            f"{_ranks_text(others)} and not all arrived (one exited, is stuck, or never called "
            f"it; MPI cannot tell which), so this rank stopped")


def _ranks_text(ranks: list[int]) -> str:
    """'rank 2' or 'ranks 0, 1, 2', at most eight named: the line stays one line."""
    if len(ranks) == 1:
        return f"rank {ranks[0]}"
    named = ", ".join(str(r) for r in ranks[:8])
    return f"ranks {named}" + (f" and {len(ranks) - 8:,} more" if len(ranks) > 8 else "")


def channels(MPI: Any, comm: Any, timeout: float = DEFAULT_TIMEOUT) -> _Channels:
    """The communicator's private channels, made once and cached on it as an MPI attribute.

    ringsim's messages never mix with the user's own, whatever tags they use.
    """
    if not _KEYVAL:
        _KEYVAL.append(MPI.Comm.Create_keyval())
    found = comm.Get_attr(_KEYVAL[0])
    if found is None:
        found = _Channels(MPI, comm, timeout)
        comm.Set_attr(_KEYVAL[0], found)
    return found


@lru_cache(maxsize=32)
def _plan(algorithm: str, gpus: int, options: tuple) -> Plan:
    return make_plan(algorithm, gpus, **dict(options))  # a switch is played by a rank too


def plan_for(algorithm: str, gpus: int, options: dict) -> Plan:
    """The plan (cached: a training loop calls all-reduce with the same shape again and again)."""
    return _plan(algorithm, gpus, tuple(sorted(options.items())))


def _flat(x) -> tuple[Any, tuple, np.dtype]:
    """The rank's array as a flat view or copy (never written), its shape and dtype: refused
    as ringsim.allreduce refuses it (masked entries, ragged lists, np.matrix, non-numbers)."""
    x = as_numeric_array(x, "the array")
    return x.reshape(-1), tuple(x.shape), np.dtype(x.dtype)


def _agree(watch: Watch, comm: Any, MPI: Any, elements: int, dtype: np.dtype, recipe: str,
           problem: str | None = None) -> None:
    """Every rank must pass the same size, dtype and algorithm, and none may have found a
    problem with its own arguments; otherwise one line on every rank, naming the rank."""
    mine = np.array([elements, zlib.crc32(dtype.str.encode()), zlib.crc32(recipe.encode()),
                     problem is not None], np.int64)
    table = np.empty((comm.Get_size(), 4), np.int64)
    watch.wait([comm.Iallgather(mine, table)], [-1], -1)
    bad = np.flatnonzero(table[:, 3])
    if problem is not None:
        raise RingsimError(f"rank {comm.Get_rank()}: {problem}")
    if len(bad):
        raise RingsimError(f"rank {int(bad[0])} passed allreduce a bad argument (its own error "
                           f"says which), so no rank ran it")
    for column, what in ((0, "number of elements"), (1, "dtype"), (2, "algorithm, options and memory (host or device)")):
        differ = np.flatnonzero(table[:, column] != table[0, column])
        if len(differ):
            other = int(differ[0])
            if column == 0:
                detail = f"rank 0 has {table[0, 0]:,}, rank {other} has {table[other, 0]:,}"
            else:
                detail = f"rank 0 and rank {other} differ"
            raise RingsimError(f"every rank must pass the same {what} to allreduce: {detail}")


def allreduce(x, algorithm: str = DEFAULT_ALGORITHM, comm: Any = None, *, out: Any = None,
              timeout: float = DEFAULT_TIMEOUT, **options: Any):
    """Sum `x` over every rank of `comm` (default COMM_WORLD) with a ringsim plan; call on every rank.

    Returns a new array of x's shape and dtype holding the element-wise sum, bitwise equal on
    every rank and to `ringsim.allreduce` on the same arrays; x is never modified. Use it where
    an mpi4py program calls comm.Allreduce(x, out, op=MPI.SUM). A rank that dies makes every
    other rank raise RankFailedError within about `timeout` seconds instead of hanging; one
    that never reaches the first call makes the others raise ArrivalError after `timeout`
    seconds. After either, the process ends at exit with status 1 without MPI_Finalize (which
    would wait forever on the missing rank), so the job ends.
    With `out` (a contiguous array of x's size and dtype, as comm.Allreduce's recvbuf) the
    sum is written there and `out` is returned.
    """
    return run(x, algorithm, comm, out=out, timeout=timeout, **options).output


_BUSY: set[int] = set()
_BUSY_LOCK = threading.Lock()


@contextmanager
def _one_thread(comm: Any):
    """Refuse a second thread's call on a communicator while one runs: MPI matches collectives
    by their order on each rank, and two threads' calls would interleave differently on each."""
    key = id(comm)
    with _BUSY_LOCK:
        if key in _BUSY:
            raise RingsimError("ringsim.mpi.allreduce is already running on this communicator in "
                               "another thread: call it from one thread, or give each thread its "
                               "own comm.Dup()")
        _BUSY.add(key)
    try:
        yield
    finally:
        with _BUSY_LOCK:
            _BUSY.discard(key)


def _communicator(MPI: Any, comm: Any) -> Any:
    """COMM_WORLD for None, the communicator itself when it is an mpi4py intracommunicator."""
    comm = MPI.COMM_WORLD if comm is None else comm
    if not isinstance(comm, MPI.Intracomm) or comm == MPI.COMM_NULL:
        raise RingsimError(f"comm must be an mpi4py intracommunicator such as MPI.COMM_WORLD, "
                           f"got {type(comm).__name__}")
    return comm


def session(MPI: Any, comm: Any, timeout: float) -> tuple[_Channels, Watch]:
    """The communicator's channels and a Watch for one more collective call on them."""
    from .options import check_timeout
    timeout = check_timeout(timeout, "timeout")
    chan = channels(MPI, comm, timeout)
    chan.calls += 1
    return chan, Watch(MPI, chan.control, chan.calls, timeout, min(SUSPECT, timeout))


def mpi_executor(plan: Plan, layout: Layout, dtype: Any, *, comm: Any = None,
                 timeout: float = DEFAULT_TIMEOUT, **options: Any) -> MPIExecutor:
    """This rank's executor for a plan over `comm` (default COMM_WORLD), host memory."""
    MPI = mpi()
    comm = _communicator(MPI, comm)
    if plan.gpus != comm.Get_size():
        raise RingsimError(f"the plan is for {plan.gpus} GPUs but the communicator has "
                           f"{comm.Get_size()} ranks")
    chan, watch = session(MPI, comm, timeout)
    return MPIExecutor(plan, layout, dtype, comm=chan.data, watch=watch, MPI=MPI, **options)


def run(x, algorithm: str = DEFAULT_ALGORITHM, comm: Any = None, *, timeout: float = DEFAULT_TIMEOUT,
        barrier: bool = False, kill_at: int | None = None, out: Any = None, **options: Any) -> RankRun:
    """allreduce with what the CLI reports: per-step times and bytes, and the transport used."""
    MPI = mpi()
    comm = _communicator(MPI, comm)
    with _one_thread(comm):
        if _BROKEN:
            raise RingsimError(f"an earlier ringsim.mpi.allreduce in this process failed "
                               f"({_BROKEN[0]}); MPI cannot be used again in this job")
        try:
            return _run(MPI, x, algorithm, comm, timeout, barrier, kill_at, out, options)
        except (RankFailedError, ArrivalError) as error:
            _leave_at_exit(str(error))
            raise


_BROKEN: list[str] = []


def _leave_at_exit(reason: str) -> None:
    """Make this process end without MPI_Finalize, which would wait forever on a rank that is
    dead or out of step: the program may still catch the error and print, then it exits 1."""
    if not _BROKEN:
        _BROKEN.append(reason)
        atexit.register(_exit_now)


def _exit_now() -> None:
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(1)


def _run(MPI, x, algorithm, comm, timeout, barrier, kill_at, out, options) -> RankRun:
    # A problem with this rank's own arguments still joins the first collective calls (the
    # channels' Dup, the agreement), so every rank learns of it instead of waiting forever.
    problem = None
    try:
        from .options import check_timeout
        timeout = check_timeout(timeout, "timeout")
    except RingsimError as error:
        problem, timeout = str(error), DEFAULT_TIMEOUT
    try:
        flat, shape, dtype = _flat(x)
    except (RingsimError, TypeError, ValueError) as error:
        problem = problem or (str(error) if isinstance(error, RingsimError)
                              else f"x must be a numeric array ({type(error).__name__})")
        flat, shape, dtype = np.zeros(0), (0,), np.dtype(np.float64)
    chan, watch = session(MPI, comm, timeout)
    size = comm.Get_size()
    from .devices import HOST, NCCL, STAGED, device_transport, placement
    xp, on_device = placement(flat)
    if problem is None and out is not None:
        try:
            _out_buffer(out, flat)
        except RingsimError as error:
            problem = str(error)
    # Host and device ranks would choose different transports: they must agree first.
    _agree(watch, chan.data, MPI, flat.size, dtype,
           f"{algorithm}{sorted(options.items())} on {'device' if on_device else 'host'}", problem)
    transport = HOST
    if on_device:
        if chan.transport is None:  # decided once per communicator: devices do not move
            chan.transport = device_transport(xp, chan.data, MPI, watch)
        transport = chan.transport
    stage = transport == STAGED
    plan = plan_for(algorithm, size, options)
    layout = Layout(plan.segments, int(flat.size))
    link = None
    if transport == NCCL:
        from .nccl import NcclLink, nccl_module
        if chan.nccl is None:
            chan.nccl = NcclLink(xp, nccl_module(xp), chan.data, watch)
        link = chan.nccl
        link.watch = watch
    target = None if out is None or stage else _out_buffer(out, flat)
    executor = MPIExecutor(plan, layout, dtype, comm=chan.data, watch=watch, MPI=MPI,
                           xp=np if stage else xp, kill_at=kill_at, out=target, link=link)
    executor.load(flat.get() if stage else flat)
    executor.run(barrier=barrier)
    result = executor.result()
    if stage:
        result = xp.asarray(result)
        if out is not None:
            _out_buffer(out, flat)[...] = result
    if out is not None:
        return RankRun(out, plan, layout, executor.records, transport)
    return RankRun(result.reshape(shape), plan, layout, executor.records, transport)


def _out_buffer(out, flat):
    """`out` as a flat writable view, or a RingsimError saying what it must be."""
    if getattr(out, "size", None) != flat.size or getattr(out, "dtype", None) != flat.dtype:
        raise RingsimError(f"out must have {flat.size:,} elements of {flat.dtype}, like the input")
    if not (out.flags.c_contiguous and getattr(out.flags, "writeable", True)):  # CuPy: no such flag
        raise RingsimError("out must be a contiguous, writable array")
    if isinstance(out, np.ndarray) and np.shares_memory(out, flat):
        raise RingsimError("out must not overlap the input (the input is never written)")
    return out.reshape(-1)
