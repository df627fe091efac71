"""The TUI's clock: each step's modelled time on a topology (α-β-γ, ringsim.cost.model), and the
bottleneck GPU of each step, for one topology preset (key t) and one set of slow GPUs (key s).
With slow GPUs the clock follows ringsim.timeline: a step ends when its last transfer arrives."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.layout import Layout
from ..cost.model import CostModel, PlanCost, price
from ..cost.ports import bottleneck_gpus
from ..core.errors import RingsimError
from ..core.plan import Plan
from ..core.naming import gpu_name
from ..cost.topology import load, presets
from ..timeline import Fault, Timeline, simulate
from ..core.units import format_seconds, itemsize
from ..cost.nccl import NcclChoice
from ..studies.whose import nccl_for

DTYPE = "float32"


def fitting(gpus: int) -> tuple[list[str], list[str]]:
    """The presets whose nodes G fits, and those it does not."""
    fit, skip = [], []
    for name in presets():
        try:
            load(name).check_gpus(gpus)
            fit.append(name)
        except RingsimError:
            skip.append(name)
    return fit, skip


def on_machine(scenario, topology: str):
    """The scenario as the clock's topology runs it: an algorithm with nodes (the hierarchical
    ring) takes the machine's nodes rather than its default √G, as compare, sweep and timeline
    price it (algorithms.timing.machine_options); any other scenario unchanged."""
    from dataclasses import replace
    from ..algorithms.timing import machine_options
    nodes = machine_options(scenario.algorithm, scenario.gpus,
                            CostModel.of(topology, DTYPE)).get("nodes")
    if nodes is None or scenario.option("nodes") == nodes:
        return scenario
    return replace(scenario, options={**dict(scenario.options), "nodes": nodes})


def _short(fault: Fault) -> str:
    """'GPU2 ×0.5' for a slow GPU; other faults as they print."""
    return f"{gpu_name(fault.gpus[0])} ×{fault.value:g}" if fault.kind == "slow-gpu" else str(fault)


@dataclass(frozen=True)
class Reading:
    """The clock at one position: this step's time, the total so far and at the end."""

    step: float
    so_far: float
    end: float
    topology: str
    faults: tuple[Fault, ...] = ()
    nccl: str = ""  # NCCL's model's pick and time for the whole call: 'Ring/LL ×4 15.00 µs'
    nccl_short: str = ""  # the same without the channels: 'Ring/LL 15.00 µs'
    nccl_time: str = ""  # the time alone: '15.00 µs'
    untimed: str = ""  # why the topology cannot run the plan (then no time at all), '' when it can

    def wordings(self) -> list[str]:
        """The same reading from the full wording down to the shortest (for narrow terminals):
        those that set NCCL's own model beside the textbook clock first, then the clock alone."""
        return self.nccl_wordings() + self.plain_wordings()

    def nccl_wordings(self) -> list[str]:
        """The wordings that name NCCL's model's time beside the textbook (α-β-γ) clock, longest
        first; none with slow GPUs, which NCCL's model does not know, or where it has no pick."""
        if self.untimed or not self.nccl or self.faults:
            return []
        step, so_far, end = (format_seconds(v) for v in (self.step, self.so_far, self.end))
        both, topology = self._both(so_far, end), self.topology
        return [f"textbook α-β-γ: step {step} · so far {so_far} · end {end} · {topology} · "
                f"NCCL's model: {self.nccl}",
                f"α-β-γ step {step} · so far {so_far} · end {end} · {topology} · NCCL {self.nccl_short}",
                f"α-β-γ step {step} · {so_far} of {end} · {topology} · NCCL {self.nccl_short}",
                f"α-β-γ {both} · {topology} · NCCL {self.nccl_short}",
                f"α-β-γ {both} · {topology} · NCCL {self.nccl_time}"]

    def plain_wordings(self) -> list[str]:
        """The textbook clock alone (with its slow GPUs), longest first."""
        if self.untimed:
            return [f"not timed on {self.topology}: {self.untimed}", f"not timed on {self.topology}"]
        step, so_far, end = (format_seconds(v) for v in (self.step, self.so_far, self.end))
        full = "".join(f" · {f}" for f in self.faults)
        short = "".join(f" · {_short(f)}" for f in self.faults)
        both = self._both(so_far, end)
        return [f"time: step {step} · so far {so_far} · end {end} · {self.topology}{full}",
                f"step {step} · so far {so_far} · end {end} · {self.topology}{short}",
                f"step {step} · {so_far} of {end} · {self.topology}{short}",
                f"step {step} · {both} · {self.topology}{short}",
                f"{both} · {self.topology}{short}"]

    @staticmethod
    def _both(so_far: str, end: str) -> str:
        """'5.00/30.00 µs' where both share a unit, else '5.00 ms/1.20 s'."""
        number, _, unit = so_far.partition(" ")
        return f"{number}/{end}" if end.endswith(" " + unit) else f"{so_far}/{end}"

    def text(self, width: int | None = None) -> str:
        """The longest wording that fits `width` columns (None: the full one; else the shortest)."""
        wordings = self.wordings()
        return next((w for w in wordings if width is None or len(w) <= width), wordings[-1])


class Clock:
    """Prices a plan once per (plan, N) on its topology, with its slow GPUs, and answers for any position."""

    def __init__(self, topology: str = "flat", slow: tuple[tuple[int, float], ...] = ()) -> None:
        self.topology = topology
        self.slow = dict(slow)  # 0-based GPU → its speed factor
        self._key: tuple | None = None
        self.cost: PlanCost | None = None
        self.times: list[float] = []
        self._timeline_key: tuple | None = None
        self._timeline: Timeline | None = None
        self._model: CostModel | None = None
        self._nccl: dict[tuple, tuple[str, str, str]] = {}  # NCCL's pick per call, worked once

    @property
    def model(self) -> CostModel:
        """The clock's cost model (its topology, float32), read once."""
        if self._model is None:
            self._model = CostModel.of(self.topology, DTYPE)
        return self._model

    @property
    def faults(self) -> tuple[Fault, ...]:
        """The slow GPUs as the timeline's faults, in GPU order."""
        return tuple(Fault("slow-gpu", (g,), f) for g, f in sorted(self.slow.items()))

    def timeline(self, plan: Plan, elements: int) -> Timeline:
        """The plan on the event timeline with the slow GPUs as faults (cached)."""
        key = (id(plan), elements)
        if key != self._timeline_key:
            self._timeline = simulate(plan, elements, self.model, self.faults)
            self._timeline_key = key
        return self._timeline

    def price(self, plan: Plan, elements: int) -> PlanCost:
        """The plan's cost on the clock's topology (cached)."""
        key = (id(plan), elements)
        if key != self._key:
            self.cost = price(plan, elements, self.model)
            self.times = self.cost.clock()
            if self.faults:  # the step ends when its last transfer has arrived
                line = self.timeline(plan, elements)
                ends = np.zeros(len(plan.steps))
                np.maximum.at(ends, line.step, line.end)
                self.times = np.maximum.accumulate(ends).tolist()
            self._key = key
        return self.cost

    def bottleneck(self, plan: Plan, elements: int, position: int) -> int | None:
        """The one 0-based GPU whose port held step `position` up; None at the start, for an
        empty step, and where no one GPU did (see `bottlenecks`)."""
        gpus = self.bottlenecks(plan, elements, position)
        return gpus[0] if len(gpus) == 1 else None

    def unavailable(self, plan: Plan) -> str:
        """Why the clock's topology cannot run the plan ('' when it can): NVLS where the switch
        only forwards. The same check as compare --time, walk --time and the sweep pane."""
        from ..algorithms.timing import unavailable
        return unavailable(plan.algorithm, self.model, plan.gpus)

    def bottlenecks(self, plan: Plan, elements: int, position: int) -> tuple[int, ...]:
        """The 0-based GPUs whose ports held step `position` up: those with a port busier than
        the rest of the step's ports. None (an empty tuple) at the start, for an empty step,
        and where every GPU of the step is loaded alike (a ring step: no GPU is the bottleneck,
        whatever GPU the tie rule of cost.ports names)."""
        if position == 0 or self.unavailable(plan):
            return ()
        port = self.price(plan, elements).steps[position - 1].port
        if port is None:
            return ()
        if self.faults:  # the step's last arrival held it up, not the lockstep port
            line = self.timeline(plan, elements)
            mine = np.flatnonzero(line.step == position - 1)
            if len(mine):
                last = mine[np.argmax(line.end[mine])]
                src, dst = int(line.src[last]), int(line.dst[last])
                return (dst if self.slow.get(dst, 1.0) < self.slow.get(src, 1.0) else src,)
        step = plan.steps[position - 1]
        spans = Layout(plan.segments, elements).spans(step.first, step.last)
        return bottleneck_gpus(self.model, step.src, step.dst, spans, step.reduces,
                               plan.gpus if plan.switches else None)

    def nccl(self, plan: Plan, elements: int, collective: str = "all-reduce") -> tuple[str, str, str]:
        """NCCL's model's pick and time for this call, with and without its channels, and the
        time alone: ('Ring/LL ×4 15.00 µs', 'Ring/LL 15.00 µs', '15.00 µs'); ('', '', '')
        where it has none. The pick is the whole call's, so each step of a run reuses it."""
        key = (plan.gpus, elements, collective)
        if key not in self._nccl:
            pick = nccl_for(self.model, plan.gpus, elements * itemsize(DTYPE), collective)
            if not isinstance(pick, NcclChoice):
                self._nccl[key] = ("", "", "")
            else:
                which, took = f"{pick.algorithm}/{pick.protocol}", format_seconds(pick.seconds)
                self._nccl[key] = (f"{which} ×{pick.channels} {took}", f"{which} {took}", took)
        return self._nccl[key]

    def reading(self, plan: Plan, elements: int, position: int,
                collective: str = "all-reduce") -> Reading:
        """This step's time, the total so far and at the end, after `position` steps, and
        what NCCL's own model would take for the whole call; or why the topology cannot run it."""
        if why := self.unavailable(plan):
            return Reading(0.0, 0.0, 0.0, self.topology, untimed=why)
        self.price(plan, elements)
        so_far_before = self.times[position - 2] if position > 1 else 0.0
        step = self.times[position - 1] - so_far_before if position else 0.0
        so_far = self.times[position - 1] if position else 0.0
        end = self.times[-1] if self.times else 0.0
        return Reading(step, so_far, end, self.topology, self.faults,
                       *self.nccl(plan, elements, collective))

    def text(self, plan: Plan, elements: int, position: int) -> str:
        """'time: step 1.20 µs · so far 3.40 µs · end 8.00 µs · flat'."""
        return self.reading(plan, elements, position).text()
