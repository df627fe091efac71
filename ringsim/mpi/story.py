"""Rank 0's account of an MPI run: walk's sentences, measured times and bytes, and the checks."""

from __future__ import annotations

import argparse
import hashlib
import json
import os
from typing import Any

import numpy as np

from ..algorithms import given_options
from ..algorithms.collectives import ALL_REDUCE
from ..execute.backend import array_module, to_numpy
from ..core.errors import RingsimError
from ..core.naming import plural
from ..api import allreduce as in_process
from ..core.formula import format_number
from ..core.units import format_seconds
from ..core.width import say
from ..execute.ledger import measure
from ..sim.narrate import sentences
from ..sim.simulation import SYMBOLIC_MAX_GPUS, phase_text
from ..core.reference import tolerance
from ..execute.symbolic import SymbolicState
from .collective import RankRun, run, session
from .executor import check_memory, host


def options_of(args: argparse.Namespace) -> dict:
    """Algorithm options from the command line, those the MPI runner's flags give."""
    return dict(given_options(args))


def bytes_text(n: float) -> str:
    """A byte count as people read it: '24 B', '4.0 KiB', '16.0 MiB'."""
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= scale:
            return f"{n / scale:,.1f} {unit}"
    return f"{int(n)} B"


def _room_for_the_check(comm: Any, MPI: Any, timeout: float, nbytes: int) -> None:
    """Rank 0 gathers every input for the in-process check: all ranks refuse together if it can't."""
    problem = ""
    if comm.Get_rank() == 0:
        try:
            check_memory(nbytes)
        except RingsimError as error:
            problem = f"{error} (rank 0 gathers every rank's input to check the result)"
    _, watch = session(MPI, comm, timeout)
    flag = np.array([len(problem) > 0], np.int8)
    watch.wait([comm.Ibcast(flag, root=0)], [-1], -1)
    if flag[0]:
        raise RingsimError(problem or "rank 0 has no memory to gather every input for the check")


def on_device(backend: str, comm: Any, MPI: Any, x: np.ndarray) -> tuple[Any, str]:
    """This rank's data where --backend puts it: host memory, or CUDA device local_rank mod D."""
    if backend == "numpy":
        return x, ""
    try:
        cupy = array_module("cupy")
    except RingsimError:
        if backend == "cupy":
            raise
        return x, " (no CUDA device visible to CuPy, so the buffers stay in host memory)"
    from .devices import local_device
    count = int(cupy.cuda.runtime.getDeviceCount())
    device = local_device(comm, MPI, count)
    cupy.cuda.Device(device).use()
    return cupy.asarray(x), f"; this rank's buffer on CUDA device {device} of {count}"


def gather(watch, comm, MPI, mine: np.ndarray) -> np.ndarray | None:
    """Every rank's array of one shape, stacked on rank 0 (None elsewhere), deadline-bounded."""
    table = np.empty((comm.Get_size(), *mine.shape), mine.dtype) if comm.Get_rank() == 0 else None
    watch.wait([comm.Igather(np.ascontiguousarray(mine), table, root=0)], [-1], -1)
    return table


COLUMNS = 5  # per step and rank: seconds, bytes its GPU sent and received, its switch's likewise


def narrated_run(args: argparse.Namespace, comm: Any, MPI: Any, x: np.ndarray) -> int:
    """Run once with a barrier before each step, then report and check on rank 0; exit status."""
    rank, size = comm.Get_rank(), comm.Get_size()
    _room_for_the_check(comm, MPI, args.timeout, size * x.nbytes)
    kill_at = args.at_step - 1 if args.kill_rank == rank else None
    device, where = on_device(args.backend, comm, MPI, x)
    done = run(device, args.algorithm, comm, timeout=args.timeout, barrier=True, kill_at=kill_at,
               **options_of(args))
    done = RankRun(to_numpy(done.output), done.plan, done.layout, done.records,
                   done.transport + where)
    chan, watch = session(MPI, comm, args.timeout)
    records = np.array([[r.seconds, r.sent, r.received, r.switch_sent, r.switch_received]
                        for r in done.records], np.float64)
    table = gather(watch, chan.data, MPI, records.reshape(-1, COLUMNS))
    digest = np.frombuffer(hashlib.blake2b(np.ascontiguousarray(done.output).tobytes(),
                                           digest_size=16).digest(), np.uint8)
    digests = gather(watch, chan.data, MPI, digest)
    expected = np.empty_like(x)
    watch.wait([chan.data.Iallreduce(x, expected, op=MPI.SUM)], [-1], -1)
    same_as_mpi = gather(watch, chan.data, MPI, np.array([done.output.tobytes() == expected.tobytes()]))
    inputs = gather(watch, chan.data, MPI, x)
    nodes = gather(watch, chan.data, MPI, np.frombuffer(MPI.Get_processor_name().encode()[:64].ljust(64), np.uint8))
    if rank != 0:
        return 0
    reference = in_process(list(inputs), args.algorithm, **options_of(args), backend="numpy").outputs[0]
    ref_digest = hashlib.blake2b(np.ascontiguousarray(reference).tobytes(), digest_size=16).digest()
    facts = {
        "every_rank_same_bits": bool((digests == digests[0]).all()),
        "bitwise_equal_to_ringsim": bool((digests == np.frombuffer(ref_digest, np.uint8)).all()),
        "mpi_allreduce": _mpi_verdict(bool(same_as_mpi.all()), done.output.reshape(-1),
                                      expected.reshape(-1), inputs),
        "nodes": len({bytes(row) for row in nodes}),
    }
    report = Report(args, done, table.reshape(size, -1, COLUMNS), facts, MPI)
    report.print_json() if args.json else report.print_text()
    return 0 if report.ok else 1


def _mpi_verdict(bitwise: bool, ours: np.ndarray, theirs: np.ndarray, inputs: np.ndarray) -> dict:
    """Integers must match MPI_Allreduce exactly; floats within the gap two addition orders allow."""
    if bitwise:
        return {"equal": True, "exact": True, "text": "equal, bit for bit on every rank"}
    if ours.dtype.kind in "iu":
        return {"equal": False, "exact": False, "text": "NOT equal (integers must match exactly)"}
    gap = np.abs(ours.astype(np.float64) - theirs.astype(np.float64))
    close = bool((gap <= tolerance(inputs)).all())
    worst = float(gap.max())
    text = (f"equal to rounding (largest gap {worst:.1e}, within (G−1)·eps·Σ|x|; MPI adds in its "
            "own order, so float bits may differ)") if close else f"NOT equal (largest gap {worst:.1e})"
    return {"equal": close, "exact": False, "largest_gap": worst, "text": text}


class Report:
    """What rank 0 prints: per step, the ledger beside the measured bytes, and the verdicts."""

    def __init__(self, args, done: RankRun, table: np.ndarray, facts: dict, MPI: Any) -> None:
        self.args, self.done, self.table, self.facts, self.MPI = args, done, table, facts, MPI
        self.plan, self.layout = done.plan, done.layout
        self.itemsize = done.output.dtype.itemsize
        ledger = measure(self.plan, self.layout)
        self.ledger_sent = ledger.sent * self.itemsize
        self.ledger_received = ledger.received * self.itemsize
        self.sent = table[:, :, 1].sum(axis=1).astype(np.int64)
        self.received = table[:, :, 2].sum(axis=1).astype(np.int64)
        # Switch w is played by rank w mod G (mpi/executor.py): its bytes are that rank's.
        hosts = [host(self.plan, self.plan.gpus + w) for w in range(self.plan.switches)]
        self.switch_hosts = hosts
        self.switch_sent = [int(table[r, :, 3].sum()) for r in hosts]
        self.switch_received = [int(table[r, :, 4].sum()) for r in hosts]
        self.ledger_switch_sent = (ledger.switch_sent * self.itemsize).astype(np.int64).tolist()
        self.ledger_switch_received = (ledger.switch_received * self.itemsize).astype(np.int64).tolist()
        self.bytes_match = bool(np.array_equal(self.sent, self.ledger_sent)
                                and np.array_equal(self.received, self.ledger_received)
                                and self.switch_sent == self.ledger_switch_sent
                                and self.switch_received == self.ledger_switch_received)
        self.ok = (self.bytes_match and facts["every_rank_same_bits"]
                   and facts["bitwise_equal_to_ringsim"] and facts["mpi_allreduce"]["equal"])

    def _header(self) -> list[str]:
        g, n = self.plan.gpus, self.layout.elements
        title = ALL_REDUCE.run_title(self.plan)  # as walk titles the same plan
        library = library_name(self.MPI)
        import mpi4py
        cores = os.cpu_count() or 1
        shared = f"; {g} ranks share {cores} cores" if g > cores and self.facts["nodes"] == 1 else ""
        return [f"{title} over MPI · {g} ranks · {n:,} {self.args.dtype} elements per rank "
                f"({bytes_text(n * self.itemsize)})",
                f"{library} · mpi4py {mpi4py.__version__} · {plural(self.facts['nodes'], 'node')}{shared}",
                f"Messages: {self.done.transport}. Rank r plays GPU r+1"
                f"{self._switch_players()}; times are the slowest rank's, each step started "
                "together (a barrier between steps)."]

    def _switch_players(self) -> str:
        """', and rank 0 the switch' where the plan has one (its buffer lives in that rank)."""
        if not self.switch_hosts:
            return ""
        if len(self.switch_hosts) == 1:
            return f", and rank {self.switch_hosts[0]} also plays the switch"
        return ", and ranks " + ", ".join(map(str, self.switch_hosts)) + " also play the switches"

    def print_text(self) -> None:
        """Print the run in words: each step's time and bytes, each rank's bytes beside the
        ledger, and the checks against MPI_Allreduce and ringsim.allreduce."""
        say("\n".join(self._header()))
        state = self._state()
        phase = None
        for index, step in enumerate(self.plan.steps):
            if step.phase != phase:
                phase = step.phase
                say(f"\n{phase}")
            rows = self.table[:, index]
            say(f"  {phase_text(step)} · {format_seconds(rows[:, 0].max())} · {self._moved(rows)}")
            if state is not None:
                for text in sentences(step, state, self.layout):
                    say(f"    {text}")
                state.apply(step)
        say(f"\nBytes per rank, measured from the messages beside the ledger ({self.itemsize} B per element)")
        for r in range(self.plan.gpus):
            say(f"  rank {r} (GPU{r + 1}): sent {format_number(self.sent[r])} (ledger "
                f"{format_number(self.ledger_sent[r])}), received {format_number(self.received[r])} "
                f"(ledger {format_number(self.ledger_received[r])})")
        for w, r in enumerate(self.switch_hosts):
            name = "the switch" if len(self.switch_hosts) == 1 else f"switch {w + 1}"
            say(f"  {name} (played by rank {r}): sent {format_number(self.switch_sent[w])} (ledger "
                f"{format_number(self.ledger_switch_sent[w])}), received "
                f"{format_number(self.switch_received[w])} (ledger "
                f"{format_number(self.ledger_switch_received[w])}), over the GPUs' links")
        say(f"  measured bytes equal the ledger: {'yes' if self.bytes_match else 'NO'}")
        say(f"\nEvery rank holds the same bits: {_yes(self.facts['every_rank_same_bits'])}")
        say(f"Against MPI_Allreduce on the same data: {self.facts['mpi_allreduce']['text']}")
        say("Against ringsim.allreduce in one process (NumericExecutor, same addition order): "
            f"{'bitwise equal' if self.facts['bitwise_equal_to_ringsim'] else 'NOT bitwise equal'}")

    def _state(self) -> SymbolicState | None:
        """The symbolic buffers walk's sentences read (GPUs and switches), for small runs."""
        if self.plan.gpus > SYMBOLIC_MAX_GPUS:
            return None
        return SymbolicState(self.plan.gpus, self.plan.segments, self.plan.switches)

    def _moved(self, rows: np.ndarray) -> str:
        sent, received = rows[:, 1].astype(np.int64), rows[:, 2].astype(np.int64)
        if (sent == sent[0]).all() and (received == received[0]).all():
            text = f"each rank sent {bytes_text(sent[0])}, received {bytes_text(received[0])}"
        else:
            text = ("sent " + ", ".join(bytes_text(v) for v in sent) + " · received "
                    + ", ".join(bytes_text(v) for v in received) + " (rank 0 first)")
        switch_sent, switch_received = rows[:, 3].sum(), rows[:, 4].sum()
        if switch_sent or switch_received:
            text += (f" · the switch sent {bytes_text(switch_sent)}, received "
                     f"{bytes_text(switch_received)}")
        return text

    def print_json(self) -> None:
        """Print the run as JSON lines: one object per step, then the summary."""
        state = self._state()
        for index, step in enumerate(self.plan.steps):
            rows = self.table[:, index]
            counts = self.layout.spans(step.first, step.last).tolist()
            texts = sentences(step, state, self.layout) if state is not None else [None] * len(counts)
            if state is not None:
                state.apply(step)
            print(json.dumps({
                "type": "step", "step": index + 1, "phase": step.phase, "iteration": step.iteration,
                "seconds": float(rows[:, 0].max()), "sent_bytes": rows[:, 1].astype(int).tolist(),
                "received_bytes": rows[:, 2].astype(int).tolist(),
                "switch_sent_bytes": int(rows[:, 3].sum()),
                "switch_received_bytes": int(rows[:, 4].sum()),
                "transfers": [{"src": t.src + 1, "dst": t.dst + 1, "segment": t.first + 1,
                               **({"last_segment": t.last + 1} if t.last != t.first else {}),
                               "op": t.op, "elements": n, "sentence": text}
                              for t, n, text in zip(step.transfers(), counts, texts)],
            }, ensure_ascii=False))
        print(json.dumps({
            "type": "summary", "algorithm": self.plan.algorithm, "ranks": self.plan.gpus,
            "elements_per_rank": self.layout.elements, "dtype": self.args.dtype,
            "transport": self.done.transport, "mpi_library": library_name(self.MPI),
            "sent_bytes": self.sent.tolist(), "received_bytes": self.received.tolist(),
            "ledger_sent_bytes": self.ledger_sent.tolist(),
            "ledger_received_bytes": self.ledger_received.tolist(),
            "switch_ranks": self.switch_hosts, "switch_sent_bytes": self.switch_sent,
            "switch_received_bytes": self.switch_received,
            "ledger_switch_sent_bytes": self.ledger_switch_sent,
            "ledger_switch_received_bytes": self.ledger_switch_received,
            "bytes_equal_ledger": self.bytes_match,
            "every_rank_same_bits": self.facts["every_rank_same_bits"],
            "bitwise_equal_to_ringsim": self.facts["bitwise_equal_to_ringsim"],
            "equal_to_mpi_allreduce": self.facts["mpi_allreduce"]["equal"],
            "mpi_allreduce_exact": self.facts["mpi_allreduce"]["exact"],
            "seconds": float(self.table[:, :, 0].max(axis=0).sum()), "correct": self.ok,
        }, ensure_ascii=False))


def library_name(MPI: Any) -> str:
    """The MPI library's first line of self-description, spaces tidied: 'MPICH Version: 5.0.2'."""
    return " ".join(MPI.Get_library_version().strip().splitlines()[0].split())


def _yes(flag: bool) -> str:
    return "yes" if flag else "NO"
