"""Several rings at once, each on its share of the segments (NCCL's channels, the bidirectional ring).

Ring c of K visits the GPUs in its own order and works on segments c·G … c·G+G−1 of
S = K·G, so each ring carries 1/K of the data. Every iteration holds all K rings'
transfers; each ring follows the walkthrough's rule on its positions. (Patarasuk & Yuan, JPDC
2009, show the ring's 2·(G−1)·N/G per GPU is the bandwidth optimum; K rings keep it.)
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from ..core.formula import ClosedForm
from ..core.plan import Plan, Step
from ..cost.ports import one_level
from ._counts import Tally, from_counts, from_tally
from ._sparse import Ring, around, busiest, flat_phase


def build(name: str, gpus: int, orders: np.ndarray, options: dict) -> Plan:
    """The plan of K rings side by side: K·(G) transfers in each of 2·(G−1) iterations.

    The columns are `_phases.ring_iterations`' for all steps at once: every step shares
    the same read-only src and dst, and each takes its row of one (2·(G−1), K·G) array of
    first segments (ring c's position p sends block (p+1−s) mod G, or p+2−s in all-gather).
    """
    channels = len(orders)
    rounds = gpus - 1
    steps = []
    if rounds >= 1:
        src = np.ascontiguousarray(orders, dtype=np.int64).reshape(-1).copy()
        dst = np.roll(np.asarray(orders, dtype=np.int64), -1, axis=1).reshape(-1)
        p, s = np.arange(gpus, dtype=np.int64), np.arange(1, gpus, dtype=np.int64)
        bases = (np.arange(channels, dtype=np.int64) * gpus)[None, :, None]
        for gather, phase, op in ((False, "Reduce-scatter", "reduce"), (True, "All-gather", "copy")):
            block = (p[None, :] + (2 if gather else 1) - s[:, None]) % gpus  # one mod for all rings
            first = (bases + block[:, None, :]).reshape(rounds, -1)
            for i in range(rounds):
                steps.append(Step.build(phase, i + 1, rounds, op, src, dst, first[i],
                                        handed_over=True))
    return Plan(name, gpus, tuple(steps), options, segments=channels * gpus)


TEXTS = {"total": "2·(G−1)·N", "sent": "2·(G−1)·N/G", "received": "2·(G−1)·N/G",
         "steps": "2·(G−1)", "messages": "2·(G−1)·min(N,K·G)"}


def closed_form(gpus: int, elements: int, orders) -> ClosedForm:
    """Exact counts of K rings: 2·(G−1)·N in all, 2·(G−1)·N/G per GPU when K·G divides N.

    `orders` is the (K, G) array of GPU orders, or a tuple of directions (+1: GPU1 → GPU2 →
    …, −1: the reverse) for rings that visit the GPUs in or against their numbering: those
    are counted at a few GPUs (`_sparse`), any G at once; arrays of orders GPU by GPU, O(K·G).
    """
    textbook = Fraction(2 * (gpus - 1) * elements, gpus)
    steps, textbooks = 2 * (gpus - 1), {"sent": textbook, "received": textbook}
    if isinstance(orders, tuple):
        rings, q, r, cands, sent, received = _affine(gpus, elements, orders)
        moved = sum(ring.segments_moved() for ring in rings)
        total = q * gpus * moved + sum(ring.long_sent_total(r) for ring in rings)
        messages = sum(ring.messages(q, r) for ring in rings)
        return from_counts(total, busiest(q, moved, sent, cands), busiest(q, moved, received, cands),
                           messages, TEXTS, steps, textbooks)
    return from_tally(_tally(gpus, elements, orders), TEXTS, steps, textbooks)


def _affine(gpus: int, elements: int, directions: tuple[int, ...]):
    """Rings in or against GPU order: (rings, q, r, candidate GPUs, their long segments sent, received)."""
    channels = len(directions)
    q, r = divmod(elements, channels * gpus)
    rings = [Ring(gpus, 1, c * gpus) for c in range(channels)]
    anchors = []
    for ring, way in zip(rings, directions):
        edge = int(np.clip(r - ring.base, 0, gpus))  # the first block that is not long
        anchors += [0, edge] if way > 0 else [gpus - 1, gpus - 1 - edge]
    cands = around(anchors, gpus)
    sent, received = np.zeros(len(cands), np.int64), np.zeros(len(cands), np.int64)
    for ring, way in zip(rings, directions):
        s, v = ring.longs(r, cands if way > 0 else gpus - 1 - cands)
        sent, received = sent + s, received + v
    return rings, q, r, cands, sent, received


def transfers(gpus: int, channels: int) -> int:
    """K·G transfers in each of the 2·(G−1) iterations."""
    return 2 * (gpus - 1) * channels * gpus


def seconds(gpus: int, elements: int, model, orders, gathers=(False, True)):
    """α-β-γ time of K rings side by side, no plan (`orders` as for `closed_form`); `gathers`
    names the phases priced (False: the reduce-scatter, True: the all-gather), both by default.

    On one level with K·G dividing N every step moves N/(K·G) per ring on each port:
    2(G−1)·(K·α + N/G·β) + (G−1)·N/G·γ, the textbook ring's bandwidth terms with K·α per step.
    On one level every step costs the same (`_sparse.flat_phase`, O(K)); across nodes rings
    in or against GPU order are priced at O(K·P) GPUs (`_step_times.affine_phase`, O(G) to lay out
    the steps), other orders port by port as `_step_times.ring_phase` prices them: O(K·G) once
    per orders (`_PortLoads`), then O(G) per size.
    """
    from ._step_times import Clock, affine_phase, ring_phase
    clock = Clock()
    channels = len(orders)
    q, r = divmod(elements, channels * gpus)
    rings = [Ring(gpus, 1, c * gpus) for c in range(channels)]
    for gather in gathers:
        step = flat_phase(model, rings, q, r, not gather, True) if one_level(model, gpus) else None
        if step is not None:
            clock.add(*step, count=gpus - 1)
            continue
        fast = affine_phase(model, gpus, orders, elements, gather) if isinstance(orders, tuple) else None
        if fast is not None:
            clock.add(*fast)
            continue
        if isinstance(orders, tuple) or len(orders) > 64:  # more rings than a mask has bits
            clock.add(*ring_phase(model, as_array(gpus, orders), np.arange(channels) * gpus, 1,
                                  channels * gpus, elements, gather))
        else:
            clock.add(*_port_loads(model, orders).phase(model, elements, gather))
    return clock.estimate("every GPU's ports")


class _PortLoads:
    """`_step_times.ring_phase` of K rings on the segments c·G … c·G+G−1 (blocks of one
    segment), with what does not depend on N worked out once.

    ring_phase adds every steady ring's transfer to its ports' queues, O(K·G) each time. But
    a port's queue only depends on which rings use it (and its level): ports alike in that
    are one "profile", and the steady rings' queues are summed once per profile, in
    ring_phase's order, so every sum is the same to the last bit. Then only the one ring whose
    blocks are partly long (the "varying" ring) is looked at position by position, O(G).
    """

    def __init__(self, model, orders: np.ndarray) -> None:
        from ..cost.ports import crosses
        rings, length = orders.shape
        self.rings, self.length = rings, length
        self.orders = orders
        self.batch = max(1, (1 << 18) // length)  # ring_phase's batches of rings
        masks = {"out": np.zeros(2 * length, np.uint64), "in": np.zeros(2 * length, np.uint64)}
        for c in range(rings):  # one ring at a time: no (K, G) temporaries
            row = orders[c]
            nxt = np.roll(row, -1)
            level = crosses(model, row, nxt).astype(np.int64)
            masks["out"][row * 2 + level] |= np.uint64(1 << c)
            masks["in"][nxt * 2 + level] |= np.uint64(1 << c)
        # Profiles: (level, which rings use the port), numbered densely; port GPU·2 + level.
        self.profile, self.members, self.level = {}, {}, {}
        for side, mask in masks.items():
            ids = np.empty(2 * length, np.int64)
            members, levels, count = [], [], 0
            for code in (0, 1):
                used, inverse = np.unique(mask[code::2], return_inverse=True)
                ids[code::2] = inverse.reshape(-1) + count
                count += len(used)
                members.append(used)
                levels.append(np.full(len(used), code))
            self.profile[side] = ids
            bits = np.concatenate(members)
            self.members[side] = ((bits[:, None] >> np.arange(rings, dtype=np.uint64))
                                  & np.uint64(1)).astype(bool)
            self.level[side] = np.concatenate(levels)
        self._varying: dict = {}

    def _ring(self, model, v: int):
        """Ring v's positions in kinds: (kind of each position, and per kind its level, out
        profile and in profile). A position's queues follow from its kind, so each size prices
        the few kinds, not the G positions; kept for every ring (at most K·G numbers in all)."""
        if v not in self._varying:
            from ..cost.ports import crosses
            row = self.orders[v]
            nxt = np.roll(row, -1)
            level = crosses(model, row, nxt).astype(np.int64)
            out_id = self.profile["out"][row * 2 + level]
            in_id = self.profile["in"][nxt * 2 + level]
            ins = len(self.level["in"])
            kinds, kind = np.unique((out_id * ins + in_id) * 2 + level, return_inverse=True)
            self._varying[v] = (kind.reshape(-1).astype(np.int32), kinds % 2,
                                kinds // 2 // ins, kinds // 2 % ins)
        return self._varying[v]

    def _queues(self, side: str, steady: np.ndarray, wire: np.ndarray) -> np.ndarray:
        """Each profile's queue of the steady rings, summed as ring_phase's bincounts sum it:
        ring by ring from 0 within a batch of rings, then batch by batch."""
        members, level = self.members[side], self.level[side]
        total = np.zeros(len(level))
        rows = np.flatnonzero(steady)
        for at in range(0, len(rows), self.batch):
            part = np.zeros(len(level))
            for c in rows[at:at + self.batch]:
                part = np.where(members[:, c], part + wire[c, level], part)
            total = total + part
        return total

    def phase(self, model, elements: int, gather: bool):
        """(seconds, levels) per step of the reduce-scatter (or all-gather), as ring_phase."""
        from ..cost.ports import ACROSS, INSIDE, port_seconds, slower_level
        from ._step_times import window_max
        rings, length = self.rings, self.length
        if length < 2:
            return np.zeros(0), np.zeros(0, np.int64)
        q, r = divmod(elements, rings * length)
        full = np.clip(r - np.arange(rings) * length, 0, length)
        varying = (full > 0) & (full < length)
        size = np.where(full == length, q + 1, q)
        out_price, in_price = port_seconds(model, size[:, None] * np.ones((1, 2)),
                                           np.array([[False, True]]), not gather)
        const = {"out": self._queues("out", ~varying, out_price),
                 "in": self._queues("in", ~varying, in_price)}
        v = int(np.flatnonzero(varying)[0]) if varying.any() else None
        steps = np.arange(1, length)
        best = []
        for side in ("out", "in"):
            free = self.members[side].any(axis=1)            # ports some ring uses …
            if v is not None:
                free &= ~self.members[side][:, v]            # … but not the varying ring
            for code in (INSIDE, ACROSS):
                chosen = free & (self.level[side] == code)
                top = const[side][chosen].max() if chosen.any() else -np.inf
                if len(best) < 2:
                    best.append(np.full(len(steps), top))
                else:
                    best[code] = np.maximum(best[code], top)
        if v is not None:
            shift = 2 if gather else 1
            f = int(full[v])
            kind, level, out_id, in_id = self._ring(model, v)
            out_q, in_q = const["out"][out_id], const["in"][in_id]
            for elements_c, count, offset in ((q + 1, f, 0), (q, length - f, f)):
                wire, arrive = port_seconds(model, np.full((1, 2), elements_c),
                                            np.array([[False, True]]), not gather)
                value = np.maximum(out_q + wire[0, level], in_q + arrive[0, level])  # per kind
                for code in (INSIDE, ACROSS):
                    mine = np.where(level == code, value, -np.inf)
                    if elements_c == q:  # the smallest class: its plain max (as ring_phase)
                        best[code] = np.maximum(best[code], mine.max())
                        continue
                    # Step s takes the window from position (s − shift + offset) mod G: the
                    # window maxima turned round, steps 1 … G−1.
                    top = window_max(mine[kind], count)
                    first = (1 - shift + offset) % length
                    turned = np.concatenate([top[first:], top[:first]])[:len(steps)]
                    best[code] = np.maximum(best[code], turned)
        return slower_level(best[INSIDE], best[ACROSS])


def _port_loads(model, orders: np.ndarray) -> "_PortLoads":
    """The port profiles of these orders on the model's nodes, kept for the same orders and P."""
    key = model.topology.gpus_per_node
    for seen, seen_key, loads in _LOADS:
        if seen is orders and seen_key == key:
            return loads
    loads = _PortLoads(model, np.asarray(orders, np.int64))
    _LOADS[:] = [(orders, key, loads)]  # holding `orders` keeps its id its own
    return loads


_LOADS: list = []


def busiest_gpu(gpus: int, elements: int, orders) -> int:
    """The lowest GPU sending plus receiving the most elements, from the exact per-GPU counts."""
    if isinstance(orders, tuple):
        rings, q, r, cands, sent, received = _affine(gpus, elements, orders)
        return busiest(q, 2 * sum(ring.segments_moved() for ring in rings), sent + received, cands)[1]
    return moved_most(_tally(gpus, elements, orders))


def _tally(gpus: int, elements: int, orders: np.ndarray) -> Tally:
    """The per-GPU counts of K rings, kept for the same orders, G and N (compare asks for the
    closed form and then the busiest GPU). Counted one ring at a time: the same integers, with
    temporaries of G numbers, not K·G (K·G = 16,000,000 took GBs at once)."""
    for seen, seen_gpus, seen_elements, tally in _TALLY:
        if seen is orders and (seen_gpus, seen_elements) == (gpus, elements):
            return tally
    tally = Tally(gpus, len(orders) * gpus, elements)
    for c in range(len(orders)):
        tally.add_rings(orders[c:c + 1], c * gpus, 1)
    _TALLY[:] = [(orders, gpus, elements, tally)]  # holding `orders` keeps its id its own
    return tally


_TALLY: list = []


def as_array(gpus: int, orders) -> np.ndarray:
    """The (K, G) array of 0-based orders (directions +1 / −1 spelled out)."""
    if not isinstance(orders, tuple):
        return orders
    forward = np.arange(gpus, dtype=np.int64)
    return np.stack([forward if way > 0 else forward[::-1] for way in orders])


def moved_most(tally: Tally) -> int:
    """The lowest GPU with the largest q·(sent + received) + its long segments, exactly."""
    count = tally.sent + tally.received
    long = tally.sent_long + tally.received_long
    return tally.busiest(count, long)[1]
