"""Step times without a plan: the pieces the algorithms' `seconds` hooks share.

The model is ringsim.cost's (Thakur, Rabenseifner & Gropp, IJHPCA 2005, §2): ports,
transfer prices and the busiest port come from ringsim.cost.ports. The hooks never build a
Plan: they describe each step by few columns (representative transfers, or whole rings at
once), price them with `ports.port_seconds`, and sum the steps here as `PlanCost` sums them.
"""

from __future__ import annotations

import math

import numpy as np

from ..cost.model import Estimate, dominant_level
from ..cost.ports import ACROSS, INSIDE, crosses, port_seconds, slower_level, step_seconds
from ..cost.topology_model import LEVELS

EXPAND = 1 << 16  # Clock: equal steps kept one by one up to this many (see Clock.estimate)


class Clock:
    """Step times and bottleneck levels, summed as PlanCost sums them."""

    def __init__(self) -> None:
        self.parts: list[tuple[np.ndarray, np.ndarray]] = []

    def add(self, seconds, level, count: int = 1) -> None:
        """One step (or arrays of steps; `count` equal steps at once)."""
        seconds = np.atleast_1d(np.asarray(seconds, np.float64))
        if count != 1 and count * len(seconds) <= EXPAND:
            seconds, count = np.repeat(seconds, count), 1
        level = np.atleast_1d(np.asarray(-1 if level is None else level)).astype(np.int8, copy=False)
        self.parts.append((seconds, np.broadcast_to(level, seconds.shape), count))

    def add_moving(self, inside, across) -> None:
        """Steps priced by the slower of their levels' times; steps that move nothing are left out."""
        seconds, level = slower_level(inside, across)
        moved = level >= 0
        if moved.any():
            self.add(seconds[moved], level[moved])

    def estimate(self, ports: str = ""):
        """The Estimate: total seconds and the level that held the bottleneck longest (across on ties).

        Up to EXPAND equal steps are summed one by one, rounding exactly as PlanCost's sums
        over priced steps do; more are summed as count × seconds (O(1) memory; the sum may
        then differ from a step-by-step sum in its last bits).
        """
        if not self.parts:
            return Estimate(0.0, None)
        seconds = np.concatenate([s if c == 1 else s * c for s, _, c in self.parts])
        level = np.concatenate([lv for _, lv, _ in self.parts])
        by_level = {}
        for code, key in ((INSIDE, "inside"), (ACROSS, "across")):
            chosen = seconds[level == code]
            if len(chosen):
                by_level[key] = math.fsum(chosen) if len(chosen) < 4096 else float(chosen.sum())
        total = math.fsum(seconds) if len(seconds) < 4096 else float(seconds.sum())
        return Estimate(total, dominant_level(by_level), ports)


def window_max(values: np.ndarray, width: int) -> np.ndarray:
    """For every start i, the max of values[i], …, values[i+width−1] taken cyclically (−inf if width is 0)."""
    n = len(values)
    if width <= 0 or n == 0:
        return np.full(n, -np.inf)
    if width >= n:
        return np.full(n, values.max())
    if width == 1:
        return values
    if width <= 8:  # a few shifted copies beat the two passes of blocks below
        out = values.copy()
        for shift in range(1, width):
            np.maximum(out, np.roll(values, -shift), out=out)
        return out
    # Van Herk / Gil-Werman: maxima from the left and from the right inside blocks of `width`.
    doubled = np.concatenate([values, values[:width - 1]])
    pad = -len(doubled) % width
    padded = np.concatenate([doubled, np.full(pad, -np.inf)]).reshape(-1, width)
    left = np.maximum.accumulate(padded, axis=1).reshape(-1)
    right = np.maximum.accumulate(padded[:, ::-1], axis=1)[:, ::-1].reshape(-1)
    start = np.arange(n)
    return np.maximum(right[start], left[start + width - 1])


def ring_phase(model, orders, bases, width: int, segments: int, elements: int,
               gather: bool) -> tuple[np.ndarray, np.ndarray]:
    """Every step of R rings' reduce-scatter (or all-gather) at once: (seconds, levels) per step.

    The rings are `_phases.ring_iterations`': position p of ring i sends block
    (p+1−s) mod L (all-gather: p+2−s) of `width` segments from segment bases[i]. With
    N = q·S + r a block holds q·width elements plus its long segments, so along a ring the
    blocks are long, then one partly long, then short: a ring whose blocks differ is
    "varying", and its long blocks sit in a window of positions that turns with s. Every
    port's queue is then a constant (rings whose blocks all match) plus at most one varying
    transfer, and the busiest port of each step is a sliding-window maximum: O(R·L) in all.
    """
    orders = np.atleast_2d(np.asarray(orders, np.int64))
    rings, length = orders.shape
    if length < 2:
        return np.zeros(0), np.zeros(0, np.int64)
    bases = np.broadcast_to(np.asarray(bases, np.int64), (rings,))
    q, r = divmod(elements, segments)
    full = np.clip((r - bases) // width, 0, length)            # fully long blocks per ring
    part = np.where((full < length) & (r - bases - full * width > 0), r - bases - full * width, 0)
    varying = ~((full == length) | ((full == 0) & (part == 0)))
    if len(np.unique(bases[varying])) > 1:
        return _ring_phase_steps(model, orders, bases, width, q, r, gather)
    gpus = int(orders.max()) + 1
    dst = np.roll(orders, -1, axis=1)
    level = crosses(model, orders, dst).astype(np.int8)
    if gpus > 4 * orders.size:  # a sample of rings (`_sparse.sample_rings`): number its GPUs 0, 1, …
        used, inverse = np.unique(orders, return_inverse=True)
        orders, dst = inverse.reshape(orders.shape), np.roll(inverse.reshape(orders.shape), -1, axis=1)
        gpus = len(used)
    out_key, in_key = orders * 2 + level, dst * 2 + level      # ports: GPU·2 + level
    del dst
    # Constant rings: every block the same size; their ports' queues do not change with s.
    steady = ~varying
    size = np.where(full == length, q * width + width, q * width)[:, None]
    const_out, const_in = np.zeros(2 * gpus), np.zeros(2 * gpus)
    rows = np.flatnonzero(steady)
    batch = max(1, (1 << 18) // length)  # a few rings at a time: bounded temporaries
    for at in range(0, len(rows), batch):
        some = rows[at:at + batch]
        wire, arrive = _by_level(model, size[some], level[some], not gather)
        const_out += np.bincount(out_key[some].ravel(), wire.ravel(), 2 * gpus)
        const_in += np.bincount(in_key[some].ravel(), arrive.ravel(), 2 * gpus)
        del wire, arrive
    steps = np.arange(1, length)
    best = []
    for const, keys in ((const_out, out_key), (const_in, in_key)):
        free = np.zeros(2 * gpus, bool)
        free[keys.ravel()] = True
        if varying.any():
            free[keys[varying].ravel()] = False   # ports with a varying transfer: below
        for code in (INSIDE, ACROSS):
            chosen = free.reshape(gpus, 2)[:, code]
            top = const.reshape(gpus, 2)[:, code][chosen].max() if chosen.any() else -np.inf
            if len(best) < 2:
                best.append(np.full(len(steps), top))
            else:
                best[code] = np.maximum(best[code], top)
    if varying.any():
        shift = 2 if gather else 1
        v = int(np.flatnonzero(varying)[0])
        f, p_size = int(full[v]), int(part[v])
        classes = [(q * width + width, f, 0), (q * width + p_size, int(p_size > 0), f),
                   (q * width, length - f - int(p_size > 0), f + int(p_size > 0))]
        lv, ok, ik = level[varying], out_key[varying], in_key[varying]
        # Every varying position holds one class in each step, and a port's queue only grows
        # with the size of its transfer: so in every step some position is at least as busy
        # as the smallest class makes it anywhere. That class's window max can be its plain
        # max, which spares the widest window (the short blocks, nearly the whole ring).
        smallest = min(elements_c for elements_c, count, _ in classes if count)
        for elements_c, count, offset in classes:
            if count == 0:
                continue
            w, a = _by_level(model, np.full((len(lv), 1), elements_c), lv, not gather)
            value = np.maximum(const_out[ok] + w, const_in[ik] + a)
            start = (steps - shift + offset) % length   # first position holding this class
            for code in (INSIDE, ACROSS):
                per_pos = np.where(lv == code, value, -np.inf).max(axis=0)
                if elements_c == smallest:
                    best[code] = np.maximum(best[code], per_pos.max())
                else:
                    best[code] = np.maximum(best[code], window_max(per_pos, count)[start])
    return slower_level(best[INSIDE], best[ACROSS])


def _by_level(model, elements: np.ndarray, level: np.ndarray, reduce: bool):
    """`port_seconds` of rings whose transfers carry one size per ring: (R, 1) sizes, (R, L) levels
    (0/1). Each ring's size is priced on both levels once and looked up, not priced per transfer."""
    wire, arrive = port_seconds(model, elements * np.ones((1, 2)), np.array([[False, True]]), reduce)
    rows = np.arange(len(level))[:, None]
    return wire[rows, level], arrive[rows, level]


def _ring_phase_steps(model, orders, bases, width, q, r, gather):
    """The same, step by step (rings with different long windows: O(R·L) per step)."""
    rings, length = orders.shape
    p = np.arange(length)
    src, dst = orders.ravel(), np.roll(orders, -1, axis=1).ravel()
    seconds, levels = [], []
    for s in range(1, length):
        first = bases[:, None] + ((p + (2 if gather else 1) - s) % length) * width
        elements = q * width + np.clip(r - first, 0, width).ravel()
        t, port = step_seconds(model, src, dst, elements, not gather)
        seconds.append(t)
        levels.append(-1 if port is None else LEVELS.index(port.level))
    return np.array(seconds), np.array(levels, np.int64)


def pair_candidates(count: int, mask: int, rem: int, per_node: int | None) -> np.ndarray:
    """New ranks n whose swaps with n XOR mask show every case a whole step holds.

    Ranks play GPUs 2n+1 (n < rem) or n+rem (n ≥ rem) (`_fold.real_ranks`); whether a swap
    crosses nodes, and which block it carries, repeat with period lcm(2·mask, P) inside each
    of the two runs, so one period from the start of each run and around the seam suffices.
    """
    span = 2 * mask if per_node is None else math.lcm(2 * mask, per_node) + 2 * mask
    if span >= count:
        return np.arange(count, dtype=np.int64)
    picks = [np.arange(0, span), np.arange(max(0, rem - span), min(count, rem + span)),
             np.arange(count - span, count)]
    return np.unique(np.concatenate(picks)).astype(np.int64)


# --- rings in or against GPU order on two levels: a few GPUs per step, not G ------------------

WRAP = 3  # positions this close to the ring's seam (GPU 0 / G−1) break the node period


def affine_phase(model, gpus: int, directions, elements: int, gather: bool):
    """`ring_phase` of K rings in (+1) or against (−1) GPU order on blocks of one segment from
    c·G, as (seconds, levels) per step to the last bit, from O(K·P) GPUs and O(G) array fills;
    None when G is too small for it (then `ring_phase` is cheap).

    Whether a hop crosses the topology's nodes of P GPUs, and so every port's queue of the
    rings whose blocks all match, depends on k mod P except next to the seam (k near 0 or
    G−1). So the only varying ring's value at position p is periodic in p away from the seam,
    and its long blocks' window maximum, as a function of the window's start, is periodic
    between a few break points (where the window meets the seam, or its part inside the
    periodic stretch grows past P): each stretch is priced at P starts and repeated.
    """
    per = model.topology.gpus_per_node
    length = gpus
    if per is None or per > 128 or length < 2 * WRAP + 2 * per + 2:
        return None  # one level, or P² tables too large to pay, or G too small to need it
    rings = len(directions)
    q, r = divmod(elements, rings * gpus)
    full = np.clip(r - np.arange(rings) * gpus, 0, length)
    varying = (full > 0) & (full < length)
    size = np.where(full == length, q + 1, q)
    wire, arrive = port_seconds(model, size[:, None] * np.ones((1, 2)), np.array([[False, True]]), not gather)
    ways = np.asarray(directions, np.int64)
    # GPUs that show every case: both sides of the seam and one node period next to each.
    sample = np.unique(np.concatenate([np.arange(WRAP + per), np.arange(length - WRAP - per, length)]))

    def hops(k, way):  # level of the hop out of GPU k (way +1 / −1) and into GPU k
        k = np.asarray(k, np.int64)
        return (crosses(model, k, (k + way) % gpus).astype(np.int64),
                crosses(model, (k - way) % gpus, k).astype(np.int64))

    def constants(k):
        """(out, in) queue of the steady rings at GPUs k, (len(k), 2) per level, summed as
        ring_phase's bincounts sum them: ring by ring within a batch, batch by batch."""
        out, into = np.zeros((len(k), 2)), np.zeros((len(k), 2))
        rows = np.flatnonzero(~varying)
        batch = max(1, (1 << 18) // length)
        for at in range(0, len(rows), batch):
            part_out, part_in = np.zeros((len(k), 2)), np.zeros((len(k), 2))
            for c in rows[at:at + batch]:
                lo, li = hops(k, ways[c])
                for code in (INSIDE, ACROSS):
                    part_out[:, code] += np.where(lo == code, wire[c, code], 0.0)
                    part_in[:, code] += np.where(li == code, arrive[c, code], 0.0)
            out += part_out
            into += part_in
        return out, into

    const_out, const_in = constants(sample)
    used_out, used_in = np.zeros((len(sample), 2), bool), np.zeros((len(sample), 2), bool)
    for way in ways:
        lo, li = hops(sample, way)
        used_out[np.arange(len(sample)), lo] = True
        used_in[np.arange(len(sample)), li] = True
    best = [-np.inf, -np.inf]
    shift = 2 if gather else 1
    v = int(np.flatnonzero(varying)[0]) if varying.any() else None
    if v is not None:
        lo, li = hops(sample, ways[v])
        used_out[np.arange(len(sample)), lo] = False  # the varying ring's ports: priced below
        used_in[np.arange(len(sample)), li] = False
    for code in (INSIDE, ACROSS):
        for const, free in ((const_out, used_out), (const_in, used_in)):
            if free[:, code].any():
                best[code] = max(best[code], float(const[free[:, code], code].max()))
    steps = length - 1
    if v is None:
        seconds, level = slower_level(np.full(steps, best[INSIDE]), np.full(steps, best[ACROSS]))
        return seconds, level.astype(np.int8)
    way = int(ways[v])

    def values(p, elements_c):
        """The varying ring's (inside, across) value at positions p for blocks of elements_c."""
        k = p if way > 0 else length - 1 - p
        nxt = (k + way) % gpus
        lv = crosses(model, k, nxt).astype(np.int64)
        w, a = port_seconds(model, np.full((len(p), 1), elements_c) * np.ones((1, 2)),
                     np.array([[False, True]]), not gather)
        out_q, _ = constants(k)
        _, in_q = constants(nxt)
        rows = np.arange(len(p))
        value = np.maximum(out_q[rows, lv] + w[rows, lv], in_q[rows, lv] + a[rows, lv])
        return np.where(lv[:, None] == np.array([INSIDE, ACROSS]), value[:, None], -np.inf)

    f = int(full[v])
    short = values(sample, q).max(axis=0)   # the smallest class: its plain max (as ring_phase)
    for code in (INSIDE, ACROSS):
        best[code] = max(best[code], float(short[code]))
    # Long blocks: window of f positions from (s − shift) mod L. Periodic stretch [WRAP, L−WRAP).
    lo_b, hi_b = WRAP, length - WRAP
    seam = np.concatenate([np.arange(WRAP), np.arange(hi_b, length)])
    seam_v = values(seam, q + 1)                              # (2·WRAP, 2)
    period = values(lo_b + np.arange(per), q + 1)             # position lo_b + i: residue i
    top = period.max(axis=0)
    # table[ln, res]: max of the period's values at residues res … res+ln−1 (mod P)
    table = np.full((per + 1, per, 2), -np.inf)
    for ln in range(1, per + 1):
        table[ln] = np.maximum(table[ln - 1], np.roll(period, -(ln - 1), axis=0))

    def window(starts):
        """Max over positions start … start+f−1 (mod L) per level, for an array of starts."""
        starts = np.asarray(starts, np.int64)
        out = np.full((len(starts), 2), -np.inf)
        inside = ((seam[None, :] - starts[:, None]) % length) < f
        out = np.maximum(out, np.where(inside[:, :, None], seam_v[None], -np.inf).max(axis=1))
        for a, b in ((starts, np.minimum(starts + f, length)), (np.zeros_like(starts),
                                                               np.maximum(starts + f - length, 0))):
            a, b = np.maximum(a, lo_b), np.minimum(b, hi_b)
            ln = np.clip(b - a, 0, per)
            got = np.where((ln >= per)[:, None], top[None], table[ln, (a - lo_b) % per])
            out = np.maximum(out, got)
        return out

    marks = {0}
    for x in (0, lo_b, hi_b, length):
        for d in range(-per - 2, per + 3):
            marks.update(((x + d) % length, (x - f + d) % length))
    for e in seam:
        for d in (-1, 0, 1):
            marks.update(((e + 1 + d) % length, (e - f + 1 + d) % length))
    marks = np.array(sorted(marks), np.int64)
    ends = np.append(marks[1:], length)
    heads = np.concatenate([m + np.arange(min(per, e - m)) for m, e in zip(marks, ends)])
    head_w = np.concatenate([window(heads[at:at + (1 << 16)]) for at in range(0, len(heads), 1 << 16)])
    # Step s (index s−1) takes the window from (s − shift) mod L: lay the starts out in step
    # order, each stretch repeating its first P values, then price every step in place.
    by_step = np.empty((2, length))
    at = 0
    for m, e in zip(marks, ends):
        n = min(per, e - m)
        first = (m - 1 + shift) % length
        for code in (INSIDE, ACROSS):
            _fill_cyclic(by_step[code], first, head_w[at:at + n, code], e - m)
        at += n
    inside_w, across_w = by_step[INSIDE, :steps], by_step[ACROSS, :steps]
    np.maximum(inside_w, best[INSIDE], out=inside_w)
    np.maximum(across_w, best[ACROSS], out=across_w)
    level = np.where(across_w >= inside_w, ACROSS, INSIDE).astype(np.int8)   # as `slower_level`, one byte a step
    seconds = np.maximum(inside_w, across_w)
    del by_step, inside_w, across_w
    idle = seconds <= 0
    seconds[idle], level[idle] = 0.0, -1
    return seconds, level


def _fill_cyclic(out: np.ndarray, first: int, head: np.ndarray, count: int) -> None:
    """out[first], out[first+1], … (wrapping round out's end) = head repeated to `count` values."""
    if (head == head[0]).all():
        head = head[:1]  # one value: filled without a copy
    for start, stop, offset in ((first, min(len(out), first + count), 0),
                                (0, first + count - len(out), len(out) - first)):
        if stop <= start:
            continue
        if len(head) == 1:
            out[start:stop] = head[0]
        else:
            period = np.roll(head, -(offset % len(head)))
            out[start:stop] = np.tile(period, -(-(stop - start) // len(head)))[:stop - start]
