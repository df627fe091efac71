"""The plan as events: each transfer starts when what it sends is ready and its ports are free.

Ports are the cost model's (ringsim/cost/ports.py): one out port and one in port per GPU and
level. A transfer keeps its sender's out port busy for α + b·β and its receiver's in port
for that plus b·γ when it reduces; both prices come from `CostModel.transfer`. A port
serves its transfers one at a time in plan order (NCCL runs a channel's steps in order);
within one step, transfers that share a port queue in the staggered order of a pairwise
exchange — offset (dst − src) mod G first, per level — so an all-to-all runs as G−1 rounds
of disjoint pairs (Thakur, Rabenseifner & Gropp 2005, §3, pairwise exchange).

A transfer waits for (1) every earlier step's transfer into its sender's segments to have
arrived — including the sender's own earlier reduces, (2) the transfer before it on its
out port to have left, (3) the one before it on its in port to have arrived, and (4) both
GPUs to have joined. Receives land in a staging buffer, as NCCL's FIFOs, so a transfer
never waits for its receiver to finish sending the old value. Transfers of 0 bytes are not
sent (the cost model prices them at 0). Without faults, when each port serves one transfer
a step, every transfer of step k ends by the lockstep model's end of step k, so the event
time never exceeds `cost.price`; with one chunk and equal segments it equals it
(tests/test_timeline.py checks every registered algorithm). Pipelined chunks beat lockstep
steps when levels differ in speed, and can trail them when a port's queue mixes sizes.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property, partial

import numpy as np

from ..algorithms import ALGORITHMS, named_with_options
from ..algorithms.timing import check_timed
from ..core.checks import check_count, check_timed_elements, echo
from ..core.errors import RingsimError
from ..core.layout import Layout
from ..core.naming import participant_name, plural
from ..core.plan import OPS, REDUCE, Plan, check_plan
from ..core.units import format_seconds
from ..cost.model import CostModel, given_model, price
from ..cost.ports import IN, OUT, PORTS_PER_GPU, crosses, port_keys
from ..cost.topology_model import LEVELS
from . import budget, sweep
from .engine import Engine
from .faults import Fault
from .sweep import ports_distinct

TIE = 1e-9  # ends this close to the total, as a share of it, arrive together (float rounding)

# Why a transfer started when it did.
JOINED, SENDER_PORT, RECEIVER_PORT, DATA = "joined", "out port", "in port", "data"
REASONS = ("", DATA, SENDER_PORT, RECEIVER_PORT, JOINED)  # stored as codes 0..4


@dataclass(frozen=True, eq=False)
class Timeline:
    """Every sent transfer's start and end, what held it up, and the total time."""

    plan: Plan
    elements: int
    model: CostModel
    faults: tuple[Fault, ...]
    step: np.ndarray       # 0-based plan step of each sent transfer
    src: np.ndarray
    dst: np.ndarray
    first: np.ndarray
    last: np.ndarray
    ops: np.ndarray
    sizes: np.ndarray      # elements moved
    level: np.ndarray      # 0 inside, 1 across
    start: np.ndarray
    sent: np.ndarray       # the out port is free again (α + b·β after start)
    end: np.ndarray        # arrived, reduced when it reduces
    cause: np.ndarray      # the transfer whose finish let this one start (−1: none)
    reasons: np.ndarray    # why it started then: an index into REASONS
    events: int = 0

    @cached_property
    def lockstep(self) -> float:
        """The lockstep model's time for the plan without faults (cost.price)."""
        return price(self.plan, self.elements, self.model).seconds

    @property
    def seconds(self) -> float:
        """When the last transfer arrived (0 when nothing is sent)."""
        return float(self.end.max()) if len(self.end) else 0.0

    def __len__(self) -> int:
        return len(self.start)

    def __repr__(self) -> str:
        """One line, not every column: '<Timeline of ring · 8 GPUs · 16 transfers · 1.2 ms>'."""
        faults = f" · {plural(len(self.faults), 'fault')}" if self.faults else ""
        return (f"<Timeline of {named_with_options(self.plan.algorithm, self.plan)} · {plural(self.plan.gpus, 'GPU')} · "
                f"{plural(self.elements, 'element')} per GPU{faults} · "
                f"{plural(len(self), 'transfer')} · {format_seconds(self.seconds)}>")

    def name(self, participant: int) -> str:
        """A participant as users see it: 'GPU3', or 'the switch' for a plan's switch."""
        return participant_name(participant, self.plan.gpus, self.plan.switches)

    def last_arrivals(self) -> np.ndarray:
        """The transfers that arrive at the total time, in plan order: each ends one chain of
        waits as long as the total (a symmetric plan has several; faults usually leave one).
        Ends that differ by float rounding alone (a billionth of the total) count as one time."""
        if not len(self.end):
            return np.zeros(0, np.int64)
        total = float(self.end.max())
        return np.flatnonzero(self.end >= total - TIE * total)

    def critical_path(self) -> list[int]:
        """Indices of the transfers whose chain of waits sets the total time, first to last:
        of the chains that tie (`last_arrivals`), the one ending first in plan order."""
        if not len(self.end):
            return []
        path = [int(self.last_arrivals()[0])]
        while self.cause[path[-1]] >= 0:
            path.append(int(self.cause[path[-1]]))
        return path[::-1]

    def bytes(self) -> np.ndarray:
        """Bytes each transfer moves."""
        return self.sizes * self.model.itemsize

    def record(self, i: int) -> dict:
        """Transfer i as a JSON-ready dict (participants and segments 1-based, switches after the GPUs)."""
        step = self.plan.steps[int(self.step[i])]
        src, dst = int(self.src[i]), int(self.dst[i])
        return {"type": "transfer", "step": int(self.step[i]) + 1, "phase": step.phase,
                "src": src + 1, "dst": dst + 1, "src_name": self.name(src), "dst_name": self.name(dst),
                "first": int(self.first[i]) + 1, "last": int(self.last[i]) + 1,
                "op": OPS[int(self.ops[i])], "elements": int(self.sizes[i]),
                "bytes": int(self.sizes[i]) * self.model.itemsize, "level": LEVELS[int(self.level[i])],
                "start": float(self.start[i]), "sent": float(self.sent[i]), "end": float(self.end[i]),
                "waited_for": self.reason(i)}

    def reason(self, i: int) -> str:
        """What transfer i waited for last: 'data', 'out port', 'in port', 'joined' or ''."""
        return REASONS[int(self.reasons[i])]

    def _repr_svg_(self) -> str | None:
        """Jupyter shows the timeline as a chart, a bar per transfer (with the figures extra)."""
        from ..figures.timeline_chart import notebook_timeline_svg  # drawn only when asked
        return notebook_timeline_svg(self)


def _columns(plan: Plan, elements: int, model: CostModel):
    """Every transfer that moves bytes, as flat columns in plan order."""
    layout = Layout(plan.segments, check_timed_elements(elements))
    steps = [s for s in plan.steps if len(s)]
    if not steps:
        empty = np.zeros(0, np.int64)
        return (empty,) * 5 + (np.zeros(0, np.int8), empty)
    number = np.repeat(np.array([k for k, s in enumerate(plan.steps) if len(s)]),
                       [len(s) for s in steps])
    cols = [np.concatenate([getattr(s, name) for s in steps])
            for name in ("src", "dst", "first", "last", "ops")]
    size = layout.spans(cols[2], cols[3])
    keep = size > 0
    return (number[keep], *(c[keep] for c in cols), size[keep])


def durations(src, dst, ops, sizes, model: CostModel, faults=(),
              gpus: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per transfer: its level (0/1), the out-port time α + b·β, and the reduce time b·γ, faults applied.

    `gpus` (G) marks participants from G on as switches, priced as cost/ports.step_seconds
    prices them: their links on the inside level when the G GPUs share a node, no γ (the
    switch adds)."""
    level = crosses(model, src, dst).astype(np.int64)
    nbytes = sizes * model.itemsize
    wire = np.zeros(len(src))
    extra = np.zeros(len(src))
    reduce = ops == REDUCE
    if gpus is not None:
        per = model.topology.gpus_per_node
        level = np.where((src >= gpus) | (dst >= gpus), int(per is not None and gpus > per), level)
        reduce = reduce & (dst < gpus)
    # CostModel.transfer prices one transfer; a plan has few distinct (level, bytes) pairs.
    for lv in (0, 1):
        on = np.flatnonzero(level == lv)
        if not len(on):
            continue
        sizes_here, inverse = np.unique(nbytes[on], return_inverse=True)
        key = LEVELS[lv]
        out = np.array([model.transfer(key, float(b)) for b in sizes_here])
        more = np.array([model.transfer(key, float(b), reduce=True) for b in sizes_here]) - out
        wire[on] = out[inverse]
        extra[on] = np.where(reduce[on], more[inverse], 0.0)
    for fault in faults:
        if fault.kind == "slow-gpu":
            wire[src == fault.gpus[0]] /= fault.value
            extra[dst == fault.gpus[0]] /= fault.value
        elif fault.kind == "slow-link":
            a, b = fault.gpus
            wire[((src == a) & (dst == b)) | ((src == b) & (dst == a))] /= fault.value
    return level, wire, extra


# Up to this many transfers the engine runs the plan event by event; above, the same times
# come from the step-by-step pass of sweep.py (tests hold the two equal).
EVENT_TRANSFERS = 20_000


def simulate(plan: Plan, elements: int, model: CostModel | None = None,
             faults: tuple[Fault, ...] | list = (), method: str = "auto", runs: int = 1) -> Timeline:
    """Each transfer's start, end and what it waited for: on the event engine ('events'), by
    the step-by-step pass ('sweep'), or the engine up to EVENT_TRANSFERS transfers ('auto').

    Work past the limits of budget.py is refused before it starts; `runs` is how many runs
    of this size the caller makes in all (one more per fault whose cost it reports)."""
    check_plan(plan)
    runs = check_count(runs, "the number of runs", minimum=1)
    model = given_model(model)
    model.topology.check_gpus(plan.gpus)
    if plan.algorithm in ALGORITHMS:
        # A plan whose hardware cannot run it (NVLS where no switch adds) has no time to show.
        check_timed(plan.algorithm, model, plan.gpus)
    if method not in ("auto", "events", "sweep"):
        raise RingsimError(f"method must be auto, events or sweep, got {method!r}")
    faults = check_faults(faults, plan.gpus)
    step, src, dst, first, last, ops, sizes = _columns(plan, elements, model)
    level, wire, extra = durations(src, dst, ops, sizes, model, faults,
                                   plan.gpus if plan.switches else None)
    joined = np.zeros(plan.participants)
    for fault in faults:
        if fault.kind == "delay":
            joined[fault.gpus[0]] = max(joined[fault.gpus[0]], fault.value)
    keys = _queue_keys(plan.gpus, src, dst, level, model.topology.gpus_per_node)
    out_key, in_key = port_keys(src, level, OUT), port_keys(dst, level, IN)
    ports_of = plan.gpus
    if plan.switches:
        # A switch has a port for every GPU: the one facing GPU g queues only g's link,
        # numbered as participant P + g would be (P: GPUs and switches).
        ports_of = plan.participants + plan.gpus
        out_key = np.where(src >= plan.gpus, port_keys(plan.participants + dst, level, OUT), out_key)
        in_key = np.where(dst >= plan.gpus, port_keys(plan.participants + src, level, IN), in_key)
    work = _work(plan, step, first, last, out_key, in_key, ports_of)
    budget.check(work.times(runs), f"a timeline of {plan.algorithm} on {plan.gpus:,} GPUs"
                 + (f", run {runs:,} times for the faults' costs," if runs > 1 else ""))
    if method == "events" and work.touches > 10 * budget.EVENT_TOUCHES:
        raise RingsimError(f"the event engine keeps every wait: at most "
                           f"{10 * budget.EVENT_TOUCHES:,} segments covered, this plan covers "
                           f"{work.touches:,} (method='sweep' gives the same times)")
    if method == "sweep" or (method == "auto" and (len(src) > EVENT_TRANSFERS
                                                   or work.touches > budget.EVENT_TOUCHES)):
        start, cause, reason = sweep.run(ports_of, plan.segments, step, src, dst, first, last,
                                         out_key, in_key, wire, extra, joined, keys)
        events = 0
    else:
        waits_sent, waits_end, remaining = _dependencies(keys, step, src, dst, first, last, out_key, in_key)
        run = _Run(src, dst, wire, extra, joined, waits_sent, waits_end, remaining)
        run.go()
        start, cause, events = run.start, run.cause, run.engine.processed
        reason = np.array([REASONS.index(r) for r in run.reason], np.int8)
    return Timeline(plan, elements, model, faults, step, src, dst, first, last, ops, sizes, level,
                    start, start + wire, start + wire + extra, cause, reason, events)


def check_faults(faults, gpus: int) -> tuple[Fault, ...]:
    """The faults as a tuple, each checked against G; refused past MAX_FAULTS or when one GPU
    or link is named twice for the same kind of fault (say one factor or delay per GPU)."""
    if isinstance(faults, (str, bytes)) or not hasattr(faults, "__iter__"):
        raise RingsimError(f"faults must be a list of faults (ringsim.timeline Fault), got "
                           f"{echo(faults)}")
    faults = tuple(faults)
    if len(faults) > budget.MAX_FAULTS:
        raise RingsimError(f"at most {budget.MAX_FAULTS} faults (each one's cost is another run "
                           f"of the timeline), got {len(faults):,}")
    seen = set()
    for fault in faults:
        if not isinstance(fault, Fault):
            raise RingsimError(f"a fault is a ringsim.timeline Fault, got {type(fault).__name__}")
        fault.check(gpus)
        if (fault.kind, fault.gpus) in seen:
            raise RingsimError(f"{fault.flag()}: {fault.kind} is given twice for the same "
                               f"{'link' if len(fault.gpus) == 2 else 'GPU'}; give it once")
        seen.add((fault.kind, fault.gpus))
    return faults


def _work(plan: Plan, step, first, last, out_key, in_key, ports_of: int | None = None) -> budget.Work:
    """The estimated size of one run over these columns (budget.py); `ports_of`: the owners of
    port numbers (the GPUs, and a switch's port per GPU)."""
    n = len(step)
    if not n:
        return budget.estimate(plan.gpus, plan.segments, np.zeros(0, np.int64), step, 0)
    cuts = np.concatenate([[0], np.flatnonzero(np.diff(step)) + 1, [n]])
    distinct = ports_distinct(step, out_key, in_key, cuts, PORTS_PER_GPU * (ports_of or plan.gpus))
    shared = int(np.diff(cuts)[~distinct].sum())
    dense = np.repeat(np.arange(len(cuts) - 1), np.diff(cuts))
    return budget.estimate(plan.gpus, plan.segments, last - first + 1, dense, shared)


def _queue_keys(gpus: int, src, dst, level, per_node: int | None) -> np.ndarray:
    """The order in which a step's transfers queue on shared ports: the pairwise-exchange round.

    Inside a node the round is the offset (dst − src) mod the node's size; across nodes it
    is the offset between nodes, then between positions in the node, so that every round
    is a set of disjoint pairs on each level.
    """
    per = gpus if per_node is None else per_node
    nodes = -(-gpus // per)
    node_offset = (dst // per - src // per) % nodes
    local_offset = (dst % per - src % per) % per
    return (level * nodes + node_offset) * per + local_offset


def _dependencies(keys, step, src, dst, first, last, out_key, in_key):
    """Who waits for whom: for each transfer, the transfers whose leaving (out port) or
    arrival (in port, data) it waits for; and how many it waits for."""
    n = len(src)
    waits_sent: list[list[int]] = [[] for _ in range(n)]  # successors released when i has left
    waits_end: list[list[tuple[int, str]]] = [[] for _ in range(n)]  # … when i has arrived
    remaining = np.zeros(n, np.int64)
    last_on_port: dict[int, int] = {}
    writers: dict[int, list[int]] = {}
    segments_per_gpu = int(last.max()) + 1 if n else 1
    cuts = np.flatnonzero(np.diff(step)) + 1
    for block in np.split(np.arange(n), cuts) if n else []:
        # Ports serve a step's transfers in the staggered order of a pairwise exchange.
        order = block[np.lexsort((block, src[block], keys[block]))]
        for i in order.tolist():
            s = int(src[i])
            before = set()
            for seg in range(int(first[i]), int(last[i]) + 1):
                before.update(writers.get(s * segments_per_gpu + seg, ()))
            for w in before:
                waits_end[w].append((i, DATA))
            out_port, in_port = int(out_key[i]), int(in_key[i])
            prev = last_on_port.get(out_port)
            if prev is not None:
                waits_sent[prev].append(i)
            prev_in = last_on_port.get(in_port)
            if prev_in is not None:
                waits_end[prev_in].append((i, RECEIVER_PORT))
            remaining[i] = len(before) + (prev is not None) + (prev_in is not None)
            last_on_port[out_port] = last_on_port[in_port] = i
        for i in block.tolist():  # this step's writes are seen from the next step on
            d = int(dst[i])
            for seg in range(int(first[i]), int(last[i]) + 1):
                writers.setdefault(d * segments_per_gpu + seg, []).append(i)
    return waits_sent, waits_end, remaining


class _Run:
    """One run of the engine over the dependency graph."""

    def __init__(self, src, dst, wire, extra, joined, waits_sent, waits_end, remaining):
        self.engine = Engine()
        self.src, self.dst, self.wire, self.extra, self.joined = src, dst, wire, extra, joined
        self.waits_sent, self.waits_end, self.remaining = waits_sent, waits_end, remaining.copy()
        n = len(src)
        self.start = np.full(n, np.nan)
        self.cause = np.full(n, -1, np.int64)
        self.reason = [""] * n

    def go(self) -> None:
        for i in np.flatnonzero(self.remaining == 0).tolist():
            self._ready(i, -1, "")
        self.engine.run()
        if np.isnan(self.start).any():  # a dependency cycle would leave transfers unstarted
            raise AssertionError("the timeline left transfers unstarted")

    def _ready(self, i: int, by: int, why: str) -> None:
        self.cause[i], self.reason[i] = by, why
        join = max(self.joined[self.src[i]], self.joined[self.dst[i]])
        if join > self.engine.now:
            self.cause[i], self.reason[i] = -1, JOINED
            self.engine.at(join, partial(self._begin, i))
        else:
            self._begin(i)

    def _begin(self, i: int) -> None:
        now = self.engine.now
        self.start[i] = now
        self.engine.at(now + self.wire[i], partial(self._left, i))
        self.engine.at(now + self.wire[i] + self.extra[i], partial(self._arrived, i))

    def _release(self, j: int, by: int, why: str) -> None:
        self.remaining[j] -= 1
        if self.remaining[j] == 0:
            self._ready(j, by, why)

    def _left(self, i: int) -> None:
        for j in self.waits_sent[i]:
            self._release(j, i, SENDER_PORT)

    def _arrived(self, i: int) -> None:
        for j, why in self.waits_end[i]:
            self._release(j, i, why)
