"""What a timeline means, in words: the critical path, what each fault costs, the slow-link lesson."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.naming import gpu_name, plural
from ..algorithms import make_plan
from ..cost.model import CostModel
from ..core.plan import Plan
from ..core.units import format_seconds
from .faults import Fault
from .model import Timeline, simulate


@dataclass(frozen=True)
class FaultCost:
    """A fault and the seconds it adds: the total with every fault minus the total without this one."""

    fault: Fault
    seconds: float


def fault_costs(timeline: Timeline) -> list[FaultCost]:
    """Each fault's cost, all other faults kept (one more run per fault)."""
    out = []
    for fault in timeline.faults:
        others = tuple(f for f in timeline.faults if f is not fault)
        without = simulate(timeline.plan, timeline.elements, timeline.model, others).seconds
        out.append(FaultCost(fault, timeline.seconds - without))
    return out


def path_links(timeline: Timeline, path: list[int]) -> list[tuple[int, int, int, float]]:
    """(src, dst, transfers, seconds busy) per link on the critical path, busiest first."""
    busy: dict[tuple[int, int], list[float]] = {}
    for i in path:
        key = (int(timeline.src[i]), int(timeline.dst[i]))
        busy.setdefault(key, []).append(float(timeline.end[i] - timeline.start[i]))
    rows = [(s, d, len(v), sum(v)) for (s, d), v in busy.items()]
    return sorted(rows, key=lambda r: (-r[3], r[0], r[1]))


def _describe(timeline: Timeline, i: int) -> str:
    step = timeline.plan.steps[int(timeline.step[i])]
    first, last = int(timeline.first[i]) + 1, int(timeline.last[i]) + 1
    segs = f"seg {first}" if first == last else f"seg {first}–{last}"
    return (f"{timeline.name(int(timeline.src[i]))} → {timeline.name(int(timeline.dst[i]))} {segs} "
            f"({step.phase} {step.iteration}) {format_seconds(float(timeline.start[i]))} – "
            f"{format_seconds(float(timeline.end[i]))}, waited for {timeline.reason(i) or 'nothing'}")


def path_lines(timeline: Timeline, shown: int = 6) -> list[str]:
    """The critical path: its length, the links it spends its time on, its first and last transfers."""
    path = timeline.critical_path()
    if not path:
        return ["Critical path: nothing is sent."]
    lines = [f"Critical path: {plural(len(path), 'transfer')}, the chain of waits that "
             f"sets the total."]
    ties = len(timeline.last_arrivals())
    if ties > 1:  # a symmetric plan: every GPU's last arrival ends a chain as long
        lines.append(f"(One of {ties:,} chains that end together, the first in plan order.)")
    for s, d, count, seconds in path_links(timeline, path)[:3]:
        lines.append(f"  {timeline.name(s)} → {timeline.name(d)}: {plural(count, 'transfer')}, "
                     f"{format_seconds(seconds)} of it")
    head = path if len(path) <= shown else path[:shown // 2] + [-1] + path[-(shown // 2):]
    for i in head:
        lines.append("    …" if i < 0 else "    " + _describe(timeline, i))
    return lines


def route_around(gpus: int, a: int, b: int) -> tuple[int, ...] | None:
    """A ring order (1-based) in which GPUs a and b (0-based) are not neighbours; None when G < 4."""
    if gpus < 4:
        return None
    order = list(range(gpus))
    for j in range(gpus):  # move b to the first place that is not next to a
        trial = [g for g in order if g != b]
        trial.insert(j, b)
        pos = trial.index(a), trial.index(b)
        if (pos[0] - pos[1]) % gpus not in (1, gpus - 1):
            return tuple(g + 1 for g in trial)
    return None


TREE_CHUNKS = 16  # NCCL pipelines its trees; 16 chunks keep the pipeline's fill short
# The schedules `alternatives` runs, in its order, by the key the lessons name each with:
# the ring, the double binary tree, two rings the second around the slow link (where there
# is one to route around), and two rings in the same order (NCCL's channels).
SCHEDULES = ("ring", "tree", "around", "channels")


@dataclass(frozen=True)
class Alternative:
    """A schedule's time with and without the same faults."""

    key: str  # which of SCHEDULES it is
    label: str
    healthy: float
    faulty: float


def alternatives(gpus: int, elements: int, model: CostModel, faults: tuple[Fault, ...]) -> list[Alternative]:
    """The ring, the double binary tree, and two rings (the second routed around a slow link)."""
    plans: list[tuple[str, str, Plan]] = [
        ("ring", "ring", make_plan("ring", gpus)),
        ("tree", f"double binary tree, {TREE_CHUNKS} chunks",
         make_plan("double-tree", gpus, chunks=TREE_CHUNKS))]
    links = [f for f in faults if f.kind == "slow-link"]
    if links:
        around = route_around(gpus, *links[0].gpus)
        if around is not None:
            plans.append(("around", "two rings, the second around the slow link",
                          make_plan("ring", gpus, channels=2,
                                    ring_order=(tuple(range(1, gpus + 1)), around))))
    plans.append(("channels", "two rings (NCCL channels, same order)",
                  make_plan("ring", gpus, channels=2)))
    return [Alternative(key, label, simulate(p, elements, model).seconds,
                        simulate(p, elements, model, faults).seconds) for key, label, p in plans]


def lesson_lines(alts: list[Alternative]) -> list[str]:
    """The lesson: a ring is as slow as its slowest link; what the others do with the same faults."""
    lines = ["The lesson: every segment of a ring crosses every link, and every GPU waits each",
             "step for the segment it needs, so a ring runs at the pace of its slowest link or GPU.",
             "The same faults on other schedules:"]
    width = max(len(a.label) for a in alts)
    for a in alts:
        ratio = a.faulty / a.healthy if a.healthy > 0 else float("nan")
        lines.append(f"  {a.label.ljust(width)}  {format_seconds(a.healthy):>10} healthy, "
                     f"{format_seconds(a.faulty):>10} with the faults ({ratio:.2f}×)")
    return lines


def strip(timeline: Timeline, width: int = 60) -> list[str]:
    """A Gantt strip per GPU: '█' while its out port sends, '·' while idle (G ≤ 32)."""
    total = timeline.seconds
    if total <= 0 or timeline.plan.gpus > 32:
        return []
    lines = []
    for g in range(timeline.plan.gpus):
        cells = np.zeros(width, bool)
        mine = np.flatnonzero(timeline.src == g)
        for i in mine.tolist():
            a = int(timeline.start[i] / total * width)
            b = max(a + 1, int(np.ceil(timeline.sent[i] / total * width)))
            cells[a:min(b, width)] = True
        lines.append(f"  {gpu_name(g):>6} " + "".join("█" if c else "·" for c in cells))
    return lines
