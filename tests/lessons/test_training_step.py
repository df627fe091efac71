"""Lessons 14–16 (one slow link, overlap, ZeRO) at G ∈ {2, 3, 4, 5, 8}: each number against a reference.

The references are written from the sources, not from ringsim's code: the ring's per-step
time α + ⌈N/G⌉·β (Thakur, Rabenseifner & Gropp 2005) and the rule that every step crosses
the slow link (so a link at F× speed stretches a bandwidth-bound ring by 1/F); PyTorch DDP's
rebuilt buckets (filled in gradient-ready order, first bucket 1 MiB, then bucket_cap_mb,
launched in that order on one stream: reducer.cpp Reducer::rebuild_buckets); the ZeRO paper's
formulas (2Ψ/3Ψ per GPU, (2 + 2 + 12)Ψ bytes and its shards, Figure 1).
"""

from __future__ import annotations

import math
import re

import pytest

from ringsim.core.errors import RingsimError
from ringsim.lessons import Question, load_lessons
from ringsim.core.units import format_seconds

from .test_scenarios import course, flat, label, output

SCENARIOS = [(g, n) for g in (2, 3, 4, 5, 8) for n in sorted({2 * g + 1, 8})]
MIB = 1 << 20
ALPHA, BANDWIDTH, ITEM = 5e-6, 100e9, 4   # the lessons' flat machine, float32
BIG = 16_777_216                          # the 64 MiB of lesson 14
T = r"([\d.,]+ (?:s|ms|µs|ns))"             # a time as format_seconds writes it


def text_of(lesson) -> str:
    return flat(output(lesson))


def answers(lesson) -> dict[str, str]:
    return {q.prompt: q.answer for q in lesson.questions}


def find(pattern: str, text: str) -> re.Match:
    match = re.search(pattern, text)
    assert match, pattern
    return match


def ring_seconds(g: int, n: int, alpha: float) -> float:
    """The ring all-reduce: 2(G−1) steps of α + ⌈N/G⌉ elements at the link's rate."""
    return 2 * (g - 1) * (alpha + -(-n // g) * ITEM / BANDWIDTH)


# --- lesson 14: one slow link ---------------------------------------------------------------
@pytest.mark.parametrize("g, n", SCENARIOS)
def test_one_slow_link_stretches_the_ring_by_one_over_f(g, n):
    lesson = course(g, n)[14]
    text, got = text_of(lesson), answers(lesson)
    f = 0.5
    assert got[next(p for p in got if p.startswith("Predict: a ring of"))] == f"{1 / f:g}"
    assert got[next(p for p in got if p.startswith("Apply it: a ring of 16"))] == f"{1 / 0.2:g}"
    m = find(rf"Healthy, the ring takes {T}; with the slow link, {T}: ([\d.]+)× as long", text)
    assert m[3] == "2"
    if BIG % g == 0:   # equal segments: exact
        healthy = ring_seconds(g, BIG, 0.0)
        assert (m[1], m[2]) == (format_seconds(healthy), format_seconds(healthy / f))
        assert "exactly, since G divides N" in text
    else:
        assert "very nearly, since G does not divide N" in text
    # GPU1 sends over the slow link in every step, so its strip has no gap.
    strip = re.search(r"GPU1 ([█·]+)", output(lesson))[1]
    assert set(strip) == {"█"}
    assert ("GPU1 never rests" in text) == (g > 2) and ("neither GPU rests" in text) == (g == 2)
    # The critical path: one transfer per step, all on the slow link.
    m = find(r"Here it holds (\d+) transfers, one per step of the ring's 2·\(G−1\) = (\d+), every one on "
             r"GPU1 → GPU2\.", text)
    assert int(m[1]) == int(m[2]) == 2 * (g - 1)


def test_one_slow_link_on_eight_gpus_against_the_reference():
    text, got = text_of(course(4, 8)[14]), answers(course(4, 8)[14])
    healthy = ring_seconds(8, BIG, ALPHA)
    m = find(rf"Both faults: ([\d.]+)× the healthy {T}\. Mend the link alone and the ring saves {T}; "
             rf"mend GPU5 alone and it saves {T}\.", text)
    # Two ports at half speed: each step still waits for one port at half speed.
    assert (m[1], m[2], m[3], m[4]) == ("2", format_seconds(healthy), "0 s", "0 s")
    assert got["Predict: with both faults, how many times longer than healthy does the ring take?"] == "2"
    # A GPU that joins late holds back every step after it: the whole ring ends that much later.
    assert find(rf"ring ends {T} later", text)[1] == format_seconds(100e-6)
    # Half the data crosses the slow link at 1/F, half avoids it: (1/F + 1)/2 on GPU1's port.
    around = next(p for p in got if p.startswith("Two rings side by side"))
    assert got[around] == "1.5"
    assert find(r"ring sends half each way round, and stretches ([\d.]+)×", text)[1] == "1.5"
    rows = find(rf"schedule healthy faulty stretch ring {T} {T} 2× double binary tree, 16 chunks", text)
    assert rows[1] == format_seconds(healthy) and rows[2] == format_seconds(2 * healthy)
    assert "two rings (NCCL channels, same order)" in text


# --- lesson 15: overlap ----------------------------------------------------------------------
def ddp_buckets(sizes: list[int], cap_mb: float) -> list[tuple[int, int]]:
    """PyTorch DDP's compute_bucket_assignment_by_size over the tensors in gradient-ready order
    (last defined first), as Reducer::rebuild_buckets calls it: (first tensor, elements) per
    bucket, in launch order; a bucket's first tensor is its lowest, the one ready last."""
    out, nbytes, count, limit = [], 0, 0, 1 * MIB
    for i in range(len(sizes) - 1, -1, -1):
        nbytes += sizes[i] * ITEM
        count += sizes[i]
        if nbytes >= limit or i == 0:
            out.append((i, count))
            nbytes, count, limit = 0, 0, cap_mb * MIB
    return out


def ddp_step(g: int, cap_mb: float) -> tuple[float, float, int]:
    """Step time, exposed seconds and buckets: backward last layer first, a layer's tensors last
    first with its time split by elements, a bucket ready with its last gradient, one stream."""
    from ringsim.training.models import resnet_50
    net = resnet_50()
    forward = [layer.flops * net.batch / 400e12 for layer in net.layers]
    ready: list[float] = []
    now = sum(forward)
    for layer, seconds in zip(reversed(net.layers), reversed(forward)):
        begin, now = now, now + 2 * seconds
        share = 0
        for size in reversed(layer.tensors):
            share += size
            ready.append(begin + 2 * seconds * share / sum(layer.tensors))
    ready.reverse()   # definition order
    end = now
    stream = 0.0
    sizes = [size for layer in net.layers for size in layer.tensors]
    buckets = ddp_buckets(sizes, cap_mb)
    for first, count in buckets:
        stream = max(stream, ready[first]) + ring_seconds(g, count, ALPHA)
    exposed = max(0.0, stream - end)
    return end + exposed, exposed, len(buckets)


@pytest.mark.parametrize("g, n", SCENARIOS)
def test_overlap_matches_ddps_rule(g, n):
    lesson = course(g, n)[15]
    text, got = text_of(lesson), answers(lesson)
    step, exposed, count = ddp_step(g, 25)
    assert got["Predict: how many buckets does DDP make for this model at the default cap?"] == str(count)
    m = find(rf"(\d+) all-reduces, .+? exposed \((\d+)% of it\); - step {T}, against", text)
    assert int(m[1]) == count and m[3] == format_seconds(step)
    one = ddp_step(g, math.inf)
    assert got[next(p for p in got if p.startswith("Predict: with no cap"))] == str(one[2]) == "2"
    assert find(rf"late in the backward pass: {T} exposed, step {T}\.", text)[2] == format_seconds(one[0])


def test_overlap_best_bucket_at_64_gpus():
    got = answers(course(4, 8)[15])
    sizes = (1, 2, 5, 10, 25, 50, 100, 250, 1000, math.inf)
    best = min(sizes, key=lambda mb: (ddp_step(64, mb)[0], -mb))
    assert got[next(p for p in got if p.startswith("Apply it: at 64 GPUs"))] == f"{best:g} MiB"
    assert Question("q", "50 MiB").check("50") and Question("q", "1.9 GB").check("1.9 gb")
    assert not Question("q", "50 MiB").check("25")


# --- lesson 16: ZeRO and FSDP ---------------------------------------------------------------------
@pytest.mark.parametrize("g, n", SCENARIOS)
def test_zero_lesson_against_the_paper(g, n):
    lesson = course(g, n)[16]
    text, got = text_of(lesson), answers(lesson)
    everyone = list(range(1, g + 1))
    assert find(r"leaves GPU1 with (\S+);", text)[1] == label(everyone, 1, g)
    assert got[f"Predict: after the all-gather, what will GPU{g}'s segment 2 hold?"] == label(everyone, 2, g)
    m = find(r"Reduce-scatter moves \(G−1\)·N = ([\d,]+) elements, all-gather \(G−1\)·N = ([\d,]+); the ring "
             r"all-reduce 2·\(G−1\)·N = ([\d,]+)\.", text)
    assert [int(x.replace(",", "")) for x in m.groups()] == [(g - 1) * n, (g - 1) * n, 2 * (g - 1) * n]
    assert "and traffic: yes." in text
    # Figure 1 of the paper: Ψ = 7.5B, N_d = 64, K = 12.
    psi, nd = 7_500_000_000, 64
    paper = [16 * psi, 4 * psi + 12 * psi / nd, 2 * psi + 14 * psi / nd, 16 * psi / nd]
    shown = find(r"data parallelism (\S+) GB, stage 1 (\S+) GB, stage 2 (\S+) GB, stage 3 (\S+) GB", text)
    assert [float(x) for x in shown.groups()] == [round(b / 1e9, 1) for b in paper] == [120, 31.4, 16.6, 1.9]
    assert got[next(p for p in got if p.startswith("Predict: Ψ = 7.5 billion"))] == f"{16 * psi // nd:,}"
    assert got[next(p for p in got if p.startswith("Predict: stage 3 runs"))] == f"{3 / 2:g}"
    moves = re.findall(r"([0-3]) ([\d,]+) ([\d.]+) ([\d.]+ GB)", text)
    ring = lambda collectives: collectives * (nd - 1) * psi // nd  # noqa: E731  (G−1)/G·Ψ each
    assert [(int(s), int(v.replace(",", ""))) for s, v, _, _ in moves] == \
        [(0, ring(2)), (1, ring(2)), (2, ring(2)), (3, ring(3))]
    # Sharded Adam on the demo's 9 parameters equals data parallelism, bit for bit.
    assert got[next(p for p in got if p.startswith("Predict: `ringsim train --zero 3 --gpus"))] == "0"
    m = find(r"identical bit for bit: yes\. .*? the busiest GPU sent (\d+) elements with stage 3, (\d+) with "
             r"data parallelism", text)
    k = min(g, 8)      # the lesson trains on at most 8 GPUs
    per = 9 - 9 // k   # a ring reduce-scatter or all-gather: every segment but one
    assert (int(m[1]), int(m[2])) == (3 * per, 2 * per)


@pytest.mark.parametrize("placeholder, reason", [
    ("{{timeline.stretch slow_link=1-9:0.5}}", "GPU 9 is outside 1..4"),
    ("{{timeline.stretch slow_link=oops}}", "expected A-B:F"),
    ("{{timeline.stretch}}", "name one"),
    ("{{timeline.seconds gpus=512}}", "at most 256"),
    ("{{overlap.step model=gpt-9}}", "unknown model"),
    ("{{overlap.step bucket_mb=0}}", "bucket_mb must be above 0"),
    ("{{zero.sent stage=4}}", "stage must be 0, 1, 2 or 3"),
    ("{{zero.sent params=lots}}", "a parameter count looks like"),
    ("{{collective.total}}", "needs collective="),
    ("{{collective.total collective=broadcast}}", "unknown collective"),
    ("{{zero.train.identical stage=0}}", "stage 1, 2 or 3"),
    ("{{timeline.cost.delay slow_link=1-2:0.5}}", "no delay fault"),
])
def test_bad_training_step_placeholders_get_one_line(tmp_path, placeholder, reason):
    (tmp_path / "01-x.md").write_text(f"---\ntitle: T\ngpus: 4\nelements: 8\n---\n{placeholder}\n",
                                      encoding="utf-8")
    with pytest.raises(RingsimError, match=re.escape(reason)):
        load_lessons(tmp_path)
