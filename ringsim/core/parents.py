"""Trees written as each node's parent, the way NCCL's logs and --tree-parents give them."""

from __future__ import annotations

from collections.abc import Sequence


def find_cycle(parents: Sequence[int]) -> list[int]:
    """A cycle among 0-based parents (−1: the root): the nodes met going up, closed; [] for none."""
    state = [0] * len(parents)  # 0 unseen, 1 on the current way up, 2 known to reach the root
    for start in range(len(parents)):
        way, node = [], start
        while node >= 0 and state[node] == 0:
            state[node] = 1
            way.append(node)
            node = parents[node]
        if node >= 0 and state[node] == 1:
            loop = way[way.index(node):]
            return loop + [node]
        for k in way:
            state[k] = 2
    return []
