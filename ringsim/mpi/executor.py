"""The MPI executor: one rank's part of every plan step, as real point-to-point messages.

Rank r plays GPU r. For a step it posts every receive (Irecv) and every send (Isend) the
plan gives it, all in flight at once, waits for them all, then applies what arrived: a copy
replaces the segments; a reduce adds them in `arrival_order` (ringsim/core/order.py), the rule
the in-process NumericExecutor follows, so an MPI run gives the same bits as
`ringsim.allreduce` on the same data. Sends read the state before the step, as in the
plan's semantics, because nothing is written until every message of the step is done.
Messages carry raw bytes, so any numeric dtype travels; MPI's own datatypes are not needed.

A plan's switches (NVLS: the switch that adds what the GPUs push and multicasts the sum) are
played by ranks too: switch w lives in rank w mod G, beside that rank's GPU, with a buffer of
its own that starts at zero. What a GPU sends to the switch its own rank hosts travels as a
message to itself, so every GPU's link carries what the ledger says. A step's messages are
posted in the plan's transfer order on both sides, so two messages between the same two
ranks (to the GPU and to the switch it hosts) match in that order, as MPI and NCCL match them.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..core.errors import RingsimError
from ..core.layout import Layout
from ..core.order import arrival_order
from ..core.plan import Plan
from .watch import Watch

TAG_LIMIT = 32767  # the MPI standard guarantees tags up to at least this


@dataclass(frozen=True)
class Arrival:
    """Segments first..last of participant `dst` (this rank's GPU or a switch it hosts) that
    `sources` send in one step, and the op."""

    first: int
    last: int
    op: str
    sources: tuple[int, ...]
    dst: int = -1


@dataclass
class RankStep:
    """This rank's part of one step, in the plan's transfer order: what it sends (dst rank,
    src participant, lo, hi) and receives (src rank, dst participant, src participant, lo, hi)."""

    sends: list[tuple[int, int, int, int]] = field(default_factory=list)
    receives: list[tuple[int, int, int, int, int]] = field(default_factory=list)
    arrivals: list[Arrival] = field(default_factory=list)
    direct: list[bool] = field(default_factory=list)  # receive straight into the buffer


@dataclass(frozen=True)
class StepRecord:
    """What one step cost this rank: seconds, and bytes really sent and received by its GPU
    (and by the switch it hosts, if any)."""

    seconds: float
    sent: int
    received: int
    switch_sent: int = 0
    switch_received: int = 0


def host(plan: Plan, participant: int) -> int:
    """The rank that plays a participant: GPU g is rank g, switch w (participant G + w) rank w mod G."""
    return participant if participant < plan.gpus else (participant - plan.gpus) % plan.gpus


def played_by(plan: Plan, rank: int) -> list[int]:
    """The participants rank `rank` plays: its GPU, then the switches it hosts."""
    return [rank] + [plan.gpus + w for w in range(plan.switches) if w % plan.gpus == rank]


def rank_steps(plan: Plan, layout: Layout, rank: int) -> list[RankStep]:
    """Rank `rank`'s sends, receives and arrivals in every step (empty segments move nothing)."""
    mine_all = set(played_by(plan, rank))
    out = []
    for step in plan.steps:
        mine = RankStep()
        groups: dict[tuple[int, int, int, str], list[int]] = {}
        copies = []
        for t in step.transfers():
            lo, hi = layout.offset(t.first), layout.offset(t.last + 1)
            if hi == lo:
                continue
            if t.src in mine_all:
                mine.sends.append((host(plan, t.dst), t.src, lo, hi))
            if t.dst in mine_all:
                mine.receives.append((host(plan, t.src), t.dst, t.src, lo, hi))
                copies.append(t.op == "copy")  # a plan never lands two copies in one buffer
                groups.setdefault((t.dst, t.first, t.last, t.op), []).append(t.src)
        mine.arrivals = [Arrival(f, l, op, tuple(s), d) for (d, f, l, op), s in groups.items()]
        for (_, dst, _, lo, hi), copy in zip(mine.receives, copies):
            # A copy lands in place unless this participant also sends from those elements.
            mine.direct.append(copy and all(hi <= a or b <= lo for _, src, a, b in mine.sends
                                            if src == dst))
        out.append(mine)
    return out


class MPIExecutor:
    """Runs this rank's part of a plan over an mpi4py communicator (rank r is GPU r): an Executor."""

    def __init__(self, plan: Plan, layout: Layout, dtype: Any, *, comm: Any, watch: Watch,
                 MPI: Any, xp: Any = np, kill_at: int | None = None, out: Any = None,
                 link: Any = None) -> None:
        self.plan, self.layout, self.xp, self.MPI = plan, layout, xp, MPI
        self.comm, self.watch = comm, watch
        # How messages travel: MPI point-to-point, or NCCL's send/recv (ringsim.mpi.nccl).
        self.link = link if link is not None else MPILink(comm, watch, MPI, xp)
        self.rank = comm.Get_rank()
        self.dtype = np.dtype(dtype)
        self.steps = _cached_steps(plan, layout, self.rank)
        self.switches = played_by(plan, self.rank)[1:]
        if plan.switches and link is not None and not isinstance(link, MPILink):
            raise RingsimError("a plan with a switch runs over MPI messages only, not NCCL's "
                               "send/recv: use --backend numpy")
        scratch = max((sum(r[4] - r[3] for r, d in zip(s.receives, s.direct) if not d)
                       for s in self.steps), default=0)
        held = layout.elements * ((out is None) + len(self.switches))
        if xp is np:
            check_memory((held + scratch) * self.dtype.itemsize)
        # The result lands in `out` when given (comm.Allreduce's recvbuf); load() fills it all.
        self.buf = xp.empty(layout.elements, dtype=self.dtype) if out is None else out
        # A switch's buffer starts at zero in every call, as in the in-process executors.
        self.buffers = {self.rank: self.buf,
                        **{w: xp.zeros(layout.elements, dtype=self.dtype) for w in self.switches}}
        self.scratch = _scratch(xp, scratch, self.dtype)
        self.records: list[StepRecord] = []
        self.kill_at = kill_at  # 0-based step at which this rank dies on purpose (a demo)

    def load(self, x) -> None:
        """Copy this rank's flat input into the buffer (the input is never written)."""
        self.buf[...] = self.xp.asarray(x).reshape(-1)
        for w in self.switches:
            self.buffers[w][...] = 0
        self.records = []

    def result(self):
        """The buffer: after run(), the element-wise sum over every rank."""
        return self.buf

    def run(self, barrier: bool = False) -> None:
        """Every step in order; with `barrier`, ranks line up before each step so its time is its own."""
        for index in range(len(self.steps)):
            if barrier:
                self.watch.wait([self.comm.Ibarrier()], [-1], index)
            self.apply(index)

    def apply(self, index: int) -> None:
        """Carry out step `index`: post every message, wait for all, then write what arrived."""
        if self.kill_at == index:
            _die()
        mine, bufs = self.steps[index], self.buffers
        start = time.perf_counter()
        receives, incoming = [], {}
        at = 0
        for (src, dst, origin, lo, hi), direct in zip(mine.receives, mine.direct):
            if direct:
                target = bufs[dst][lo:hi]
            else:
                target = self.scratch[at:at + hi - lo]
                at += hi - lo
            incoming[(dst, origin, lo)] = None if direct else target
            receives.append((src, target))
        sends = [(dst, bufs[origin][lo:hi]) for dst, origin, lo, hi in mine.sends]
        got = self.link.exchange(receives, sends, index)
        self._write(mine, incoming)
        # The GPU's own link, as the ledger counts it, apart from the switch this rank hosts.
        counts = got if isinstance(got, list) else [got]  # NCCL's link reports the total
        gpu = self.rank
        sent = sum(p.nbytes for (_, origin, _, _), (_, p) in zip(mine.sends, sends) if origin == gpu)
        received = sum(n for n, r in zip(counts, mine.receives) if r[1] == gpu) \
            if self.switches else sum(counts)
        self.records.append(StepRecord(time.perf_counter() - start, sent, received,
                                       sum(p.nbytes for _, p in sends) - sent,
                                       sum(counts) - received))

    def _write(self, mine: RankStep, incoming: dict) -> None:
        """Apply the step's arrivals: copies replace, reduces add in `arrival_order`."""
        xp, layout = self.xp, self.layout
        for arrival in mine.arrivals:
            lo, hi = layout.offset(arrival.first), layout.offset(arrival.last + 1)
            me = arrival.dst
            own = self.buffers[me][lo:hi]
            if arrival.op == "copy":
                got = incoming[(me, arrival.sources[0], lo)]
                if got is not None:  # None: it was received straight into place
                    own[...] = got
                continue
            order = arrival_order(me, list(arrival.sources))
            values = [own if g == me else incoming[(me, g, lo)] for g in order]
            if len(values) == 2:
                xp.add(own, values[0] if values[1] is own else values[1], out=own)
                continue
            # Several arrivals: fold left in the rule's order, in a received buffer (never
            # `own` before its turn), so every receiver adds the same values the same way.
            acc = values[0] if values[0] is not own else values[1]
            xp.add(values[0], values[1], out=acc)
            for value in values[2:]:
                xp.add(acc, value, out=acc)
            own[...] = acc


class MPILink:
    """A step's messages as MPI_Irecv/MPI_Isend of raw bytes, all in flight, one bounded wait."""

    def __init__(self, comm: Any, watch: Watch, MPI: Any, xp: Any) -> None:
        self.comm, self.watch, self.MPI, self.xp = comm, watch, MPI, xp

    def exchange(self, receives: list, sends: list, index: int) -> list[int]:
        """Post every receive (src, array) and send (dst, array); return the bytes each
        receive got."""
        MPI, comm, tag = self.MPI, self.comm, index % TAG_LIMIT
        if self.xp is not np:  # MPI reads device memory directly: finish pending kernels first
            self.xp.cuda.get_current_stream().synchronize()
        requests = [comm.Irecv([_bytes(a), MPI.BYTE], source=src, tag=tag) for src, a in receives]
        requests += [comm.Isend([_bytes(a), MPI.BYTE], dest=dst, tag=tag) for dst, a in sends]
        peers = [src for src, _ in receives] + [dst for dst, _ in sends]
        statuses = [MPI.Status() for _ in requests]
        self.watch.wait(requests, peers, index, statuses)
        # Measured from the messages: what each completed receive reports it got.
        return [s.Get_count(MPI.BYTE) for s in statuses[:len(receives)]]


def _bytes(array):
    """The array's memory as bytes, for messages of any dtype."""
    return array.view(np.uint8) if isinstance(array, np.ndarray) else array.view("uint8")


def _die() -> None:
    """End this process at once, as a crashed rank does: no MPI_Finalize, nothing flushed by MPI."""
    import os
    import sys
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(137)


_STEPS: dict = {}
_SCRATCH: dict = {}


def _scratch(xp: Any, elements: int, dtype: np.dtype):
    """Receive space, kept between calls: a fresh array would pay its page faults every call."""
    key = (xp.__name__, dtype.str)
    found = _SCRATCH.get(key)
    if found is None or found.size < elements:
        found = _SCRATCH[key] = xp.empty(elements, dtype=dtype)
    return found[:elements]


def _cached_steps(plan: Plan, layout: Layout, rank: int) -> list[RankStep]:
    """rank_steps, computed once per (plan, layout, rank): training loops repeat the same call."""
    key = (id(plan), layout, rank)
    found = _STEPS.get(key)
    if found is None or found[0] is not plan:
        if len(_STEPS) > 32:
            _STEPS.clear()
        found = _STEPS[key] = (plan, rank_steps(plan, layout, rank))
    return found[1]


def check_memory(nbytes: int) -> None:
    """Refuse, in one line, buffers larger than ringsim allows itself (as the simulator does:
    half of the memory available now, or RINGSIM_MEMORY_LIMIT)."""
    from ..execute.memory import check_memory as within_limit
    within_limit(nbytes, "this rank's buffers", instead="use fewer elements or ranks")