"""What a figure shows, read from the engine: each GPU's segments (who they hold and their labels,
as the walkthrough writes them), the step's transfers with their sentences, and the counters.

A frame is the state after `position` steps of a Simulation (0: the start) with the transfers
of the step that led there; nothing here draws, so tests read the same frames the pictures do.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..algorithms import plan_nodes
from ..algorithms.geometry import lane_count, lane_of, spec_of
from ..algorithms.spec import Shape
from ..core.errors import RingsimError
from ..core.plan import Plan
from ..sim.narrate import held

# A Simulation draws itself through this package, so nothing here imports sim/simulation.py
# (that would be an import circle): a simulation is what it is handed.
FIGURE_MAX_GPUS = 128  # the most GPUs a figure shows (the simulation keeps labels up to here)
MAX_TERMS = 6  # terms a label shows before '…', as the walkthrough's sentences
MAX_CELLS = 128 * 128  # GPUs × segments one figure draws
MAX_ANIMATED_CELLS = 400_000  # GPUs × segments × frames of one animation, PDF deck or GIF


@dataclass(frozen=True)
class Move:
    """One transfer of the step shown: 0-based GPUs and segments, what it carried, in words."""

    src: int
    dst: int
    first: int
    last: int
    op: str  # 'reduce' or 'copy'
    sent: str  # the label the sender's segments held, as the walkthrough writes it
    sentence: str
    lane: int


@dataclass(frozen=True)
class Frame:
    """The picture of one position: every GPU's segments and the step that led there."""

    title: str     # the scenario: 'Ring all-reduce · 4 GPUs · 8 elements per GPU'
    banner: str    # phase and iteration: 'Reduce-scatter · iteration 1 of 3'
    position: int  # steps carried out (0: the start)
    steps: int     # steps of the plan
    gpus: int
    segments: int
    shape: Shape
    lanes: int
    nodes: tuple[tuple[int, ...], ...]  # the GPUs of each node; () when the plan has no nodes
    holds: tuple[tuple[tuple[int, ...], ...], ...]  # [gpu][segment]: the GPUs summed in it
    labels: tuple[tuple[str, ...], ...]             # [gpu][segment]: 'd₄+a₄'
    complete: tuple[tuple[bool, ...], ...]
    moves: tuple[Move, ...]
    switch_labels: tuple[tuple[str, ...], ...]  # [switch][segment]: what a plan's switch holds ('' when empty)
    switch_holds: tuple[tuple[tuple[int, ...], ...], ...]  # [switch][segment]: the GPUs summed in it
    moved: int        # elements moved so far
    messages: int     # transfers so far
    busiest: int      # the 0-based GPU the whole run's ledger names busiest (the TUI's too)
    busiest_sent: int      # what that GPU has sent so far
    busiest_received: int  # and received
    busiest_total: tuple[int, int]  # what that GPU sends and receives over the whole run
    elements: int


def node_groups(plan: Plan) -> tuple[tuple[int, ...], ...]:
    """The GPUs of each node, when the plan was made for nodes of consecutive GPUs (else ()):
    M nodes (hierarchical), nodes of L GPUs (nccl-tree's chains), or a rails:P ring order's."""
    nodes = plan_nodes(plan)
    if not nodes or nodes <= 1 or plan.gpus % nodes:
        return ()
    per = plan.gpus // nodes
    return tuple(tuple(range(m * per, (m + 1) * per)) for m in range(nodes))


def check_size(sim, frames: int = 1) -> None:
    """Refuse, before drawing, a figure with more GPUs or cells than it can show."""
    g, s = sim.plan.gpus, sim.plan.segments
    if sim.symbolic is None or g > FIGURE_MAX_GPUS:
        raise RingsimError(f"a figure shows at most {FIGURE_MAX_GPUS} GPUs, got {g:,}; "
                           f"`ringsim compare --gpus {g}` gives the counts")
    if g * s > MAX_CELLS:
        raise RingsimError(f"a figure shows at most {MAX_CELLS:,} segment buffers, and "
                           f"{g:,} GPUs × {s:,} segments make {g * s:,}; use fewer GPUs, or fewer "
                           "channels or chunks, which split each GPU's data into more segments")
    if g * s * frames > MAX_ANIMATED_CELLS:
        raise RingsimError(f"{frames:,} pictures of {g * s:,} segment buffers each are more than "
                           f"the {MAX_ANIMATED_CELLS:,} one file holds; draw one step (--step K) "
                           f"or use fewer GPUs")


def _frame(sim, moves: tuple[Move, ...], shape: Shape, lanes: int, nodes, known: dict) -> Frame:
    state, g, s = sim.symbolic, sim.plan.gpus, sim.plan.segments
    ledger = sim.ledger()
    banner = sim.banner
    # One GPU's two counts: the largest sent beside the largest received could be two GPUs'
    # (after the master's reduce, 8 sent by a worker and 24 received by the master).
    busiest = sim.busiest_gpu() if g else 0
    whole = sim.run_ledger() if g else None  # the busiest GPU's counts "of" the whole run's

    def label(k: int, j: int) -> str:
        # The frames of an animation repeat most labels: each is worked out once (`known`).
        key = (state.held[k][j], j)
        if key not in known:
            known[key] = state.label(k, j, max_terms=MAX_TERMS)
        return known[key]

    return Frame(
        title=sim.title, banner=banner, position=sim.position, steps=len(sim.plan),
        gpus=g, segments=s, shape=shape, lanes=lanes, nodes=nodes,
        holds=tuple(tuple(state.held[k][j] for j in range(s)) for k in range(g)),
        labels=tuple(tuple(label(k, j) for j in range(s)) for k in range(g)),
        complete=tuple(tuple(state.is_complete(k, j) for j in range(s)) for k in range(g)),
        moves=moves,
        switch_labels=tuple(tuple(label(k, j) if state.held[k][j] else "" for j in range(s))
                            for k in range(g, sim.plan.participants)),
        switch_holds=tuple(tuple(state.held[k][j] for j in range(s)) for k in range(g, sim.plan.participants)),
        moved=ledger.total, messages=ledger.messages,
        busiest=busiest,
        busiest_sent=int(ledger.sent[busiest]) if g else 0,
        busiest_received=int(ledger.received[busiest]) if g else 0,
        busiest_total=(int(whole.sent[busiest]), int(whole.received[busiest])) if g else (0, 0),
        elements=sim.layout.elements)


def check_simulation(sim: object):
    """`sim` when it is a Simulation; otherwise one RingsimError line naming what was given."""
    # Known by what the figures read, not by its class: a Simulation draws itself in Jupyter
    # with these figures, so importing its module here would have each import the other.
    if not (isinstance(getattr(sim, "plan", None), Plan) and hasattr(sim, "position")):
        raise RingsimError(f"expected a Simulation (Simulation.create gives one), got "
                           f"{type(sim).__name__}")
    return sim


def frames(sim, positions: list[int] | None = None) -> list[Frame]:
    """The frames at `positions` (default: every position, 0 to the plan's length); the
    simulation is left where it was."""
    plan = check_simulation(sim).plan
    wanted = list(range(len(plan) + 1)) if positions is None else positions
    for p in wanted:
        if isinstance(p, bool) or not isinstance(p, int) or not 0 <= p <= len(plan):
            raise RingsimError(f"the step must be a whole number from 0 (the start) to "
                               f"{len(plan)}, got {p!r}")
    check_size(sim, len(wanted))
    shape, lanes = spec_of(plan, sim.collective).shape, lane_count(plan, sim.collective)
    nodes = node_groups(plan)
    saved, out, known = sim.position, [], {}
    for p in wanted:
        moves: tuple[Move, ...] = ()
        if p:
            sim.goto(p - 1)
            before = sim.symbolic
            step = plan.steps[p - 1]
            sent = [held(before, t.src, t.first, t.last, MAX_TERMS, parens=False)
                    for t in step.transfers()]
            sim.step()
            words = sim.sentences(p - 1)
            moves = tuple(Move(t.src, t.dst, t.first, t.last, t.op, label, sentence,
                               lane_of(plan.segments, lanes, t.first))
                          for t, label, sentence in zip(step.transfers(), sent, words))
        else:
            sim.goto(0)
        out.append(_frame(sim, moves, shape, lanes, nodes, known))
    sim.goto(saved)
    return out
