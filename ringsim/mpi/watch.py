"""Waiting on a step's messages with a deadline, and naming a rank that stopped answering.

MPI's Waitall blocks forever when a peer has died. Here a rank tests its requests in a
loop; once a wait passes `suspect` seconds it pings the peers it is still waiting on, over
a private control communicator, and every rank that is itself waiting answers at once. A
peer that leaves a ping unanswered for `timeout` seconds is declared dead: the rank that saw
it tells every other rank, and all of them raise the same one-line RankFailedError, so no
rank hangs. (The same idea as a heartbeat failure detector, e.g. Chandra & Toueg, "Unreliable
failure detectors for reliable distributed systems", JACM 1996; NCCL's watchdog bounds
collectives by a timeout the same way.)
"""

from __future__ import annotations

import os
import time
from typing import Any, Callable, Sequence

import numpy as np

from ..core.errors import RingsimError

PING, PONG, FAIL = 1, 2, 3
_POLL_EVERY = 0.002   # seconds between looks at the control channel while waiting
_SPIN = 0.0002        # spin this long before yielding the core to other ranks
# When a wait loop last ran (infinity outside waits), read by the CLI's backstop thread: a
# wait whose loop stops turning is stuck inside an MPI call.
heartbeat = [float("inf")]


class RankFailedError(RingsimError):
    """A peer rank died or stopped answering during an MPI all-reduce."""

    def __init__(self, dead: int, step: str, timeout: float) -> None:
        self.dead, self.step = dead, step
        super().__init__(f"rank {dead} (GPU{dead + 1}) stopped answering at {step}: no reply for "
                         f"{timeout:g} s, so every other rank stopped")


class ArrivalError(RingsimError):
    """Not every rank of the communicator reached ringsim.mpi.allreduce within the timeout."""


class Watch:
    """One rank's waits during one all-reduce call: deadlines, pings, and failure notices."""

    def __init__(self, MPI: Any, control: Any, call: int, timeout: float, suspect: float) -> None:
        self.MPI, self.control, self.call = MPI, control, call
        self.rank, self.size = control.Get_rank(), control.Get_size()
        self.timeout, self.suspect = float(timeout), float(suspect)
        self._outgoing: list = []  # control sends still in flight (kept alive until complete)

    # --- the control channel -------------------------------------------------------------
    def _send(self, kind: int, dest: int, step: int = 0, dead: int = -1, call: int | None = None) -> None:
        message = np.array([self.call if call is None else call, step, dead], dtype=np.int64)
        self._outgoing.append((self.control.Isend(message, dest=dest, tag=kind), message))

    def poll(self, answered: dict | None = None, where: str = "") -> None:
        """Answer pings, note pongs, and raise on a failure notice for this call."""
        MPI, status = self.MPI, self.MPI.Status()
        while self.control.Iprobe(source=MPI.ANY_SOURCE, tag=MPI.ANY_TAG, status=status):
            message = np.empty(3, dtype=np.int64)
            self.control.Recv(message, source=status.Get_source(), tag=status.Get_tag())
            call, step, dead = (int(v) for v in message)
            kind, peer = status.Get_tag(), status.Get_source()
            if kind == PING:
                self._send(PONG, peer, call=call)
            elif kind == PONG and call == self.call and answered is not None:
                answered.pop(peer, None)
            elif kind == FAIL and call == self.call:
                raise RankFailedError(dead, _where_text(step), self.timeout)
        if self._outgoing:
            self._outgoing = [(r, m) for r, m in self._outgoing if not r.Test()]

    # --- waiting ---------------------------------------------------------------------------
    def wait(self, requests: Sequence, peers: Sequence[int], step: int, statuses: list | None = None) -> None:
        """Complete every request (request i talks to rank peers[i]; -1: a collective).

        `step` is the 0-based plan step (-1 before the plan starts), used in the failure line.
        """
        MPI = self.MPI
        if statuses is None:
            statuses = [MPI.Status() for _ in requests]
        done = [False] * len(requests)
        kept: dict[int, Any] = {}  # statuses of requests completed one by one

        def waiting_on() -> list[int]:
            """Peers of the requests not complete yet (every other rank for a collective)."""
            waiting: set[int] = set()
            for i, request in enumerate(requests):
                if done[i]:
                    continue
                status = MPI.Status()
                if request.Test(status):
                    done[i], kept[i] = True, status
                elif peers[i] < 0:
                    waiting.update(r for r in range(self.size) if r != self.rank)
                else:
                    waiting.add(peers[i])
            return sorted(waiting)

        self.wait_for(lambda: MPI.Request.Testall(requests, statuses), waiting_on, step,
                      collective=any(p < 0 for p in peers))
        for i, status in kept.items():  # Testall reports completed-earlier requests as empty
            statuses[i] = status

    def wait_for(self, finished: Callable[[], bool], waiting_on: Callable[[], list[int]], step: int,
                 collective: bool = False) -> None:
        """Loop until finished(); ping the ranks waiting_on() names once the wait runs long."""
        start = heartbeat[0] = time.monotonic()
        next_poll = start + _POLL_EVERY
        next_ping = start + self.suspect
        unanswered: dict[int, float] = {}   # peer → when it was pinged
        # A rank stuck in a collective (a barrier) waits twice as long before it declares, so
        # the rank that waited on the dead one's own message names the step where it died.
        patience = self.timeout * (2 if collective else 1)
        try:
            while not finished():
                now = heartbeat[0] = time.monotonic()
                if now - start > _SPIN:
                    os.sched_yield()  # ranks may share cores: let the others run
                if now < next_poll:
                    continue
                next_poll = now + _POLL_EVERY
                self.poll(unanswered)
                if now >= next_ping:
                    next_ping = now + self.suspect
                    for peer in waiting_on():
                        if peer not in unanswered:
                            unanswered[peer] = now
                            self._send(PING, peer)
                late = [peer for peer, since in unanswered.items() if now - since > patience]
                if late:
                    still = set(waiting_on())
                    for peer in late:
                        if peer in still:  # its message never came and it never answered
                            self.declare(peer, step)
                        unanswered.pop(peer)
        finally:
            heartbeat[0] = float("inf")  # not waiting: the backstop has nothing to watch

    def declare(self, dead: int, step: int) -> None:
        """Tell every other live rank that `dead` stopped answering at `step`, then raise."""
        for rank in range(self.size):
            if rank not in (self.rank, dead):
                self._send(FAIL, rank, step=step, dead=dead)
        deadline = time.monotonic() + min(1.0, self.timeout)
        while self._outgoing and time.monotonic() < deadline:
            self._outgoing = [(r, m) for r, m in self._outgoing if not r.Test()]
            os.sched_yield()
        raise RankFailedError(dead, _where_text(step), self.timeout)


def _where_text(step: int) -> str:
    return f"step {step + 1}" if step >= 0 else "the start (the ranks' size check)"
