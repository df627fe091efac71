"""The one rule both executors follow for what a reduce step adds, and in which order."""

from __future__ import annotations


def arrival_order(dst: int, sources: list[int]) -> list[int]:
    """GPUs whose pre-step values make a reduced buffer, in the order they are added.

    One arrival is written the seed's way, received value first ("d₄+a₄"). Several arrivals
    in one step (the master, the naive flood) are added in GPU order with the receiver's own
    value in its place, so every receiver adds the same values in the same order and all
    GPUs end bitwise identical. Adding two values commutes bit for bit, so "src+dst" and
    "dst+src" give the same bits and the numeric executor may add in place.
    """
    if len(sources) == 1:
        return [sources[0], dst]
    return sorted([*sources, dst])
