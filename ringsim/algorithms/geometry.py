"""A plan's shape as both front ends draw it: its lanes (rings or trees sharing the segments),
the first ring's GPU order and the first tree's parents.

Everything is read off the plan: a ring's order is its `ring_order` option (1-based, as users
give it), a tree's parents are the destinations of its reduce transfers, and a lane (a channel,
or the second tree of a double tree) is the block of segments a transfer moves. The TUI's shape
pane and the figures both import these, so that the two draw one shape.
"""

from __future__ import annotations

from ..core.plan import Plan
from . import ALGORITHMS, algorithm, checked_options
from .collectives import ALL_REDUCE, Collective
from .spec import AlgorithmSpec


def spec_of(plan: Plan, collective: Collective = ALL_REDUCE) -> AlgorithmSpec:
    """The registered algorithm that built the plan: a reduce-scatter's or all-gather's plan is
    named for its collective, so it is the first algorithm the collective is built by."""
    if plan.algorithm in ALGORITHMS:
        return ALGORITHMS[plan.algorithm]
    return algorithm(collective.algorithms[0])


def lane_count(plan: Plan, collective: Collective = ALL_REDUCE) -> int:
    """How many rings or trees share the segments (each takes a block of S/lanes)."""
    return spec_of(plan, collective).lanes(**checked_options(plan))


def lane_of(segments: int, lanes: int, segment: int) -> int:
    """The ring or tree that owns a segment."""
    return min(segment * lanes // max(segments, 1), lanes - 1)


def ring_order(plan: Plan) -> list[int]:
    """The first ring's GPU order (0-based): the ring_order option, else 0, 1, …, G−1."""
    orders = plan.options.get("ring_order")
    if orders:
        return [g - 1 for g in orders[0]]
    return list(range(plan.gpus))


def tree_parents(plan: Plan, lanes: int) -> list[int]:
    """Each GPU's parent in the first tree (−1 for the root): where its reduces go."""
    parents = [-1] * plan.gpus
    for step in plan.steps:
        for t in step.transfers():
            if t.op == "reduce" and lane_of(plan.segments, lanes, t.first) == 0:
                parents[t.src] = t.dst
    return parents
