"""Lesson 13's precision story: each algorithm adds in its own order, and the ring chains G−1 adds."""

from __future__ import annotations

import math
import re

import numpy as np

from ringsim import allreduce
from ringsim.lessons import load_lessons


def ring_chain(arrays: list[np.ndarray]) -> np.ndarray:
    """The ring's sums from the story's rule: segment j starts at GPU j and gathers one GPU per hop.

    Written from the original story (segment j's partial sum leaves GPU j and each next GPU
    adds its own copy), in float32, one addition after another; G divides N here.
    """
    g, n = len(arrays), len(arrays[0])
    size = n // g
    out = np.empty(n, dtype=np.float32)
    for j in range(g):
        cut = slice(j * size, (j + 1) * size)
        total = arrays[j][cut].copy()
        for hop in range(1, g):
            total = total + arrays[(j + hop) % g][cut]      # float32 + float32 rounds to float32
        out[cut] = total
    return out


def test_the_ring_adds_each_segment_one_gpu_after_another():
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal(64).astype(np.float32) for _ in range(8)]
    ring = allreduce(arrays, "ring").outputs
    assert all(np.array_equal(out, ring_chain(arrays)) for out in ring)   # bit for bit, every GPU
    tree = allreduce(arrays, "tree").outputs[0]
    assert not np.array_equal(tree, ring[0])          # another order, other last bits
    exact = np.array([math.fsum(float(x[i]) for x in arrays) for i in range(64)])
    assert np.abs(tree - exact).max() < 1e-5 and np.abs(ring[0] - exact).max() < 1e-5


def test_lesson_13_measures_a_ring_less_precise_than_the_trees():
    lesson = next(l for l in load_lessons() if l.number == 13)
    text = "\n".join(s.text for s in lesson.sections())
    errors = {name: float(err) for name, err, _ in
              re.findall(r"^  (ring|tree|double-tree|halving-doubling)\s+([\d.e+-]+)\s+([\d,]+)$", text, re.M)}
    assert set(errors) == {"ring", "tree", "double-tree", "halving-doubling"}
    assert errors["ring"] > max(errors["tree"], errors["double-tree"], errors["halving-doubling"])
    # Each is within what G−1 float32 roundings of sums of 64 unit normals can do.
    assert all(0 < e < 63 * 2.0 ** -24 * 64 * 4 for e in errors.values())
