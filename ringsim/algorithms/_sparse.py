"""Exact ring counts and flat-topology times at any G from a few sample GPUs, not G of them.

The rings here (the walkthrough's ring with K channels, the bidirectional ring, the hierarchical
rings) place GPU k at a position that is affine in k, and with N = q·S + r a block's long
segments change only where r falls: so a GPU's long-segment count is a step function of k
with a handful of steps. Its maximum's lowest GPU is the first GPU of some run, and every
run starts within a few places of an "anchor" (0, and where r's block sits): evaluating
those GPUs alone gives the exact busiest GPU (`Tally` counts every GPU, O(G)). Sums over
all GPUs (totals, messages) have closed forms per ring.

On the flat topology (one switch), or inside one node, every port of a ring phase carries
one transfer of every ring through its GPU, so each step costs the same: a phase is (L−1)
times one step, found from the few block sizes that occur (`_step_times.ring_phase` prices
every port, O(G)). The rings are Patarasuk & Yuan's ("Bandwidth optimal all-reduce
algorithms for clusters of workstations", JPDC 2009); tests/test_fast_forms.py holds every
figure here against the GPU-by-GPU count and the port-by-port price.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..cost.ports import ACROSS, INSIDE, port_seconds

REACH = 4  # a GPU's counts look at blocks p, p+1, p+2: runs start within 3 of an anchor


def around(anchors, size: int, reach: int = REACH) -> np.ndarray:
    """0 and every index within `reach` of an anchor, taken mod `size`, sorted and distinct."""
    anchors = np.asarray(list(anchors), dtype=np.int64).reshape(-1, 1)
    near = (anchors + np.arange(-reach, reach + 1)).ravel() % size
    return np.unique(np.concatenate([[0], near]))


@dataclass(frozen=True)
class Ring:
    """One ring (or several alike) of `length` positions over blocks of `width` segments from `base`."""

    length: int
    width: int
    base: int  # or an array of bases, one per position asked about (`longs`)

    def blocks(self, r: int, position, shift: int) -> np.ndarray:
        """Long segments in the block at (position + shift) mod length (Layout: segments below r are long)."""
        p = (np.asarray(position, np.int64) + shift) % self.length
        return np.clip(r - self.base - p * self.width, 0, self.width)

    def whole(self, r: int):
        """Long segments over all the ring's blocks (an array when `base` is one)."""
        return np.clip(r - np.asarray(self.base, np.int64), 0, self.length * self.width)

    def longs(self, r: int, position) -> tuple[np.ndarray, np.ndarray]:
        """(sent, received) long segments of the given positions over reduce-scatter and all-gather.

        Position p sends every block but p+1, then every block but p+2, and receives every
        block but p, then every block but p+1 (`Tally.add_rings`, for a few positions).
        """
        if self.length < 2:
            zero = np.zeros(np.shape(position), np.int64)
            return zero, zero
        whole = 2 * self.whole(r)
        return (whole - self.blocks(r, position, 1) - self.blocks(r, position, 2),
                whole - self.blocks(r, position, 0) - self.blocks(r, position, 1))

    def segments_moved(self) -> int:
        """Segments each position sends (and receives): every block but one, twice."""
        return 2 * (self.length - 1) * self.width if self.length >= 2 else 0

    def long_sent_total(self, r: int) -> int:
        """Long segments all positions send together: each block leaves L−1 positions, twice."""
        return 2 * (self.length - 1) * int(self.whole(r)) if self.length >= 2 else 0

    def messages(self, q: int, r: int) -> int:
        """Transfers that carry an element: 2·(L−1) per block that holds one."""
        if self.length < 2:
            return 0
        filled = self.length if q > 0 else min(self.length, max(0, -(-(r - self.base) // self.width)))
        return 2 * (self.length - 1) * filled


def busiest(q: int, moved: int, longs: np.ndarray, candidates: np.ndarray) -> tuple[int, int]:
    """(q·moved + the most long segments, the lowest such candidate GPU): every GPU moves `moved` segments."""
    if len(candidates) == 0:
        return 0, 0
    best = int(np.argmax(longs))  # the first maximum: candidates are sorted
    return max(q * moved + int(longs[best]), 0), int(candidates[best])


# --- one level: every step of a ring phase costs the same ------------------------------------

def block_sizes(ring: Ring, q: int, r: int) -> list[int]:
    """Distinct block sizes in elements, as `ring_phase` classes them: long, partly long, short."""
    full = min(max((r - ring.base) // ring.width, 0), ring.length)  # Python ints: exact, quick
    part = max(0, r - ring.base - full * ring.width) if full < ring.length else 0
    short = ring.length - full - (part > 0)
    sizes = [(q * ring.width + ring.width, full), (q * ring.width + part, int(part > 0)),
             (q * ring.width, short)]
    return [size for size, count in sizes if count > 0]


def flat_phase(model, rings: list[Ring], q: int, r: int, reduce: bool, complete: bool,
               across: bool = False):
    """(seconds, level code) of every step of one ring phase on one level, or None (not covered).
    `across`: every hop crosses nodes (rings of the topology's own nodes' GPUs), else none does.

    `complete`: every ring visits every GPU (K channels, the bidirectional ring), so each
    port queues one transfer of each ring; otherwise the rings visit disjoint GPUs (one
    ring per GPU: hierarchical), and `rings` need only hold one ring of each kind. Each
    block size occurs in every step (blocks turn round the ring), so each step's busiest
    port is the same: a ring of varying blocks contributes its largest cost, the others
    their one size, summed ring by ring as `_step_times.ring_phase` sums a port's queue.
    """
    sized = [(ring, block_sizes(ring, q, r)) for ring in rings if ring.length >= 2]
    if not sized:
        return None
    prices = [port_seconds(model, np.array(sizes, dtype=np.float64), across, reduce)
              for _, sizes in sized]
    if complete:
        varying = [k for k, (_, sizes) in enumerate(sized) if len(sizes) > 1]
        if len(varying) > 1:
            return None
        out_c = in_c = 0.0
        for k, (wire, arrive) in enumerate(prices):
            if k not in varying:
                out_c, in_c = out_c + float(wire[0]), in_c + float(arrive[0])
        if varying:
            wire, arrive = prices[varying[0]]
            best = max(max(out_c + float(w), in_c + float(a)) for w, a in zip(wire, arrive))
        else:
            best = max(out_c, in_c)
    else:
        best = max(max(float(wire.max()), float(arrive.max())) for wire, arrive in prices)
    return (best, ACROSS if across else INSIDE) if best > 0 else (0.0, -1)
