"""Where simulated GPUs live on D devices, and the per-stream schedule a step becomes there.

Simulated GPU g lives on device g mod D and owns one CUDA stream. A step becomes, per
stream, a list of operations in two phases: every receiver first fetches what it receives
into staging buffers on its own device (a device-to-device copy, peer-to-peer when the
sender lives elsewhere), after waiting for the sender's last write; then every receiver
waits until everyone who read its buffer has finished reading, and combines its staged
arrivals into its buffer in `arrival_order`, the same additions in the same order as
NumericExecutor. Events order the streams. Everything here is pure Python, so the schedule
is checked on the CPU (tests/gpu/test_placement.py) by running it with NumPy and by
proving every conflicting pair of operations is ordered by a stream or an event.
"""

from __future__ import annotations

from collections import defaultdict, deque
from typing import NamedTuple, Union

import numpy as np

from ...core.order import arrival_order
from ...core.plan import Plan, Step


D1_NOTE = ("all simulated GPUs share one device: the speed measured is that device's memory, "
           "not an interconnect")


def device_of(gpu: int, devices: int) -> int:
    """The device (0..D−1) simulated GPU `gpu` (0-based) lives on."""
    return gpu % devices


def placement(gpus: int, devices: int) -> np.ndarray:
    """Every simulated GPU's device, GPU order."""
    return np.arange(gpus, dtype=np.int64) % devices


def crossing(step: Step, devices: int) -> np.ndarray:
    """For each transfer of the step: True when it moves data between two devices."""
    return (step.src % devices) != (step.dst % devices)


def peer_pairs(plan: Plan, devices: int) -> list[tuple[int, int]]:
    """The (source device, destination device) pairs the plan's transfers cross, sorted."""
    pairs: set[tuple[int, int]] = set()
    for step in plan.steps:
        mask = crossing(step, devices)
        pairs.update(zip((step.src[mask] % devices).tolist(), (step.dst[mask] % devices).tolist()))
    return sorted(pairs)


def combine(dst: int, arrivals: list[tuple[int, str]]) -> tuple[str, list[int]]:
    """How buffer `dst` combines its arrivals (source GPU, op) of one step: ('copy', [source])
    when a copy lands (plans allow one copy per buffer and step), else ('reduce', the GPUs
    whose values are added, in `arrival_order`)."""
    for src, op in arrivals:
        if op == "copy":
            return "copy", [src]
    return "reduce", arrival_order(dst, [src for src, _ in arrivals])


def segment_blocks(gpus: int, elements: int) -> list[tuple[slice, int, slice]]:
    """How a GPU's flat gradient maps onto its (G, W) segment buffers: (segment rows, width,
    flat range) for the longer segments, then the shorter ones; empty blocks left out."""
    q, r = divmod(elements, gpus)
    blocks = [(slice(0, r), q + 1, slice(0, r * (q + 1))),
              (slice(r, gpus), q, slice(r * (q + 1), elements))]
    return [b for b in blocks if b[0].stop > b[0].start and b[1] > 0]


# --- the schedule ---------------------------------------------------------------------
# Operands of a combine: a GPU's buffer rows, a staged arrival, or a partial sum.
class Rows(NamedTuple):
    """Rows first..last of simulated GPU `gpu`'s (G, W) buffer."""
    gpu: int
    first: int
    last: int


class Stage(NamedTuple):
    """Staging buffer `key` of this step, on the device of the stream that fetched it."""
    key: int


class Partial(NamedTuple):
    """A partial sum `key` of this step, on the stream's device."""
    key: int


Operand = Union[Rows, Stage, Partial]


class Wait(NamedTuple):
    """Stream `stream` waits for the latest record of event `event` = (kind 'E'|'F', gpu)."""
    stream: int
    event: tuple[str, int]


class Record(NamedTuple):
    """Stream `stream` records event `event`."""
    stream: int
    event: tuple[str, int]


class Fetch(NamedTuple):
    """Stream `stream` copies rows first..last of GPU `src` into new staging buffer `key`."""
    stream: int
    key: int
    src: int
    first: int
    last: int


class Copy(NamedTuple):
    """Stream `stream` sets `target` to `source`."""
    stream: int
    target: Rows
    source: Operand


class Add(NamedTuple):
    """Stream `stream` computes out = a + b (a new Partial, or in place into Rows)."""
    stream: int
    out: Operand
    a: Operand
    b: Operand


Op = Union[Wait, Record, Fetch, Copy, Add]


class Scheduler:
    """Turns steps into per-stream operations, tracking which events each write must await.

    Event ('E', g) is recorded after GPU g's latest write to its buffer; ('F', g) after g's
    latest fetches. CUDA waits on an event's most recent record, which here is always at
    or after the one needed, so one event of each kind per GPU suffices.
    """

    def __init__(self, gpus: int) -> None:
        self.gpus = gpus
        self.reset()

    def reset(self) -> None:
        """Forget all pending work (the buffers were just loaded and synchronised)."""
        self.written: set[int] = set()                      # GPUs with a recorded ('E', g)
        self.readers: dict[int, set[int]] = defaultdict(set)  # g → GPUs that read g since

    def step(self, step: Step) -> list[Op]:
        """The operations of one step, in issue order."""
        ops: list[Op] = []
        transfers = list(step.transfers())
        # Phase 1: receivers fetch what arrives, once the sender's last write is done.
        staged: dict[tuple[int, int, int], list[tuple[int, int, str]]] = defaultdict(list)
        waited: set[tuple[int, int]] = set()
        fetchers: dict[int, None] = {}
        for key, t in enumerate(transfers):
            if t.src in self.written and (t.dst, t.src) not in waited:
                waited.add((t.dst, t.src))
                ops.append(Wait(t.dst, ("E", t.src)))
            ops.append(Fetch(t.dst, key, t.src, t.first, t.last))
            staged[(t.dst, t.first, t.last)].append((t.src, key, t.op))
            fetchers.setdefault(t.dst)
            self.readers[t.src].add(t.dst)
        for d in fetchers:
            ops.append(Record(d, ("F", d)))
        # Phase 2: each receiver, once its readers are done, combines its arrivals in order.
        partials = 0
        by_dst: dict[int, list[tuple[int, int, int]]] = defaultdict(list)
        for group in staged:
            by_dst[group[0]].append(group)
        for d, groups in by_dst.items():
            ops.extend(Wait(d, ("F", x)) for x in sorted(self.readers.pop(d, set())) if x != d)
            for (_, first, last) in groups:
                target = Rows(d, first, last)
                arrivals = staged[(d, first, last)]
                keys: dict[int, deque[int]] = defaultdict(deque)
                for src, key, _ in arrivals:
                    keys[src].append(key)
                how, order = combine(d, [(src, op) for src, _, op in arrivals])
                if how == "copy":
                    ops.append(Copy(d, target, Stage(keys[order[0]][0])))
                    continue
                operand = [target if g == d else Stage(keys[g].popleft()) for g in order]
                # The same left fold in arrival order as NumericExecutor: one arrival is
                # received + own, added in place (a + b and b + a are the same bits).
                if len(operand) == 2:
                    ops.append(Add(d, target, target, operand[1] if operand[0] is target else operand[0]))
                    continue
                partial = Partial(partials)
                partials += 1
                ops.append(Add(d, partial, operand[0], operand[1]))
                ops.extend(Add(d, partial, partial, x) for x in operand[2:])
                ops.append(Copy(d, target, partial))
            ops.append(Record(d, ("E", d)))
            self.written.add(d)
        return ops
