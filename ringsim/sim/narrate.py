"""Sentences for a step: the walkthrough's 'GPU1 sends a₁ to GPU2, where it is added to b₁', each
algorithm's own words ('GPU3 sends (c₁+d₁) up the tree to GPU1', 'GPU2 and GPU4 swap halves: …'),
and what held a timed step up ('bottleneck GPU3 receiving inside a node (NVLink 4 via NVSwitch)')."""

from __future__ import annotations

from ..core.layout import Layout
from ..core.naming import gpu_name, participant_name
from ..core.plan import Step, Transfer
from ..cost.ports import Port
from ..cost.topology_model import LEVEL_WORDS, Topology
from ..execute.symbolic import SymbolicState


def held(state: SymbolicState, gpu: int, first: int, last: int, max_terms: int = 6,
         parens: bool = True) -> str:
    """What a GPU's segments first..last hold; sums in parentheses, as the walkthrough writes them."""
    def one(segment: int) -> str:
        text = state.label(gpu, segment, max_terms=max_terms)
        return f"({text})" if parens and "+" in text else text
    if first == last:
        return one(first)
    return f"{one(first)}{', ' if last == first + 1 else '…'}{one(last)}"


def sentence(t: Transfer, state: SymbolicState, elements: int | None = None, max_terms: int = 6,
             route: str = "", swap: str = "") -> str:
    """One transfer in the walkthrough's words, labels read from the state before the step.

    `route` goes between what is sent and where ("up the tree"); `swap`, when the
    receiver sends to the sender in the same step, opens the sentence ("GPU2 and GPU4
    swap halves: ").
    """
    sent = held(state, t.src, t.first, t.last, max_terms)
    kept = held(state, t.dst, t.first, t.last, max_terms)
    many = t.first != t.last
    if t.op == "reduce":
        tail = f"where they are added to {kept}" if many else f"where it is added to {kept}"
    else:
        tail = f"where they replace {kept}" if many else f"where it replaces {kept}"
    way = f" {route}" if route else ""
    switches = getattr(state, "switches", 0)
    src, dst = (participant_name(x, state.gpus, switches) for x in (t.src, t.dst))
    if t.dst >= state.gpus and t.op == "reduce":  # a switch adds what the GPUs push into it
        what = "them" if many else "it"
        tail = f"which adds {what} to {kept}" if state.held[t.dst][t.first] else \
            f"which adds {what} up with what the other GPUs send"
    text = f"{src[0].upper()}{src[1:]} sends {sent}{way} to {dst}, {tail}"
    if swap:
        low, high = sorted((t.src, t.dst))
        text = f"{gpu_name(low)} and {gpu_name(high)} swap {swap}: {text}"
    if elements == 0:
        text += " (an empty segment: nothing moves)"
    return text


def sentences(step: Step, state: SymbolicState, layout: Layout, max_terms: int = 6) -> list[str]:
    """Every transfer of the step in the walkthrough's words (state: before the step)."""
    counts = layout.spans(step.first, step.last).tolist()
    pairs = set(zip(step.src.tolist(), step.dst.tolist())) if step.swap else set()
    return [sentence(t, state, n, max_terms, step.route[t.op == "copy"],
                     step.swap if (t.dst, t.src) in pairs else "")
            for t, n in zip(step.transfers(), counts)]


def step_words(timing, index: int) -> str:
    """'bottleneck GPU3 receiving (one switch)', '…, as busy: GPU9', or 'ports evenly
    loaded (one switch)' where every GPU of the step is as busy as the busiest. `timing` is a
    plan priced step by step on a cost model (the walk's Timing): its step_bottleneck(index),
    its cost's steps and its model's topology are read."""
    topology = timing.model.topology
    port, tied = timing.step_bottleneck(index)
    if port is not None:
        others = [gpu_name(g) for g in tied if g != port.gpu]
        return f"bottleneck {port_words(port, topology)}" + (
            f", as busy: {', '.join(others)}" if others else "")
    busiest = timing.cost.steps[index].port
    if busiest is None:
        return "nothing moved"
    where = f" {LEVEL_WORDS[busiest.level]}" if topology.gpus_per_node else ""
    return f"ports evenly loaded{where} ({topology.level(busiest.level).name})"


def port_words(port: Port | None, topology: Topology) -> str:
    """'GPU3 receiving inside a node (NVLink 4 via NVSwitch)', or 'nothing moved'."""
    if port is None:
        return "nothing moved"
    verb = "sending" if port.direction == "out" else "receiving"
    where = f" {LEVEL_WORDS[port.level]}" if topology.gpus_per_node else ""
    return f"{gpu_name(port.gpu)} {verb}{where} ({topology.level(port.level).name})"
