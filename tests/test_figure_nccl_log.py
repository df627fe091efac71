"""`ringsim figure --nccl-log`: the rings NCCL built, drawn step by step as walk steps through them."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

pytest.importorskip("drawsvg")

from ringsim.cli import build_parser  # noqa: E402
from ringsim.figures.theme import lane_colour  # noqa: E402

LOGS = Path(__file__).resolve().parent / "data" / "nccl_logs"
# The fixtures whose rings are complete: (file, ranks, channels, the first ring's order).
WALKABLE = [
    ("eks_efa_t4_2node_full.log", 2, 2, [1, 2]),
    ("deepspeed4715_2node_channel_hops_excerpt.log", 8, 1, [1, 4, 3, 2, 5, 8, 7, 6]),
    ("nccl1706_single_node_4gpu_channels_trees_excerpt.log", 4, 14, [1, 2, 3, 4]),
]


def ringsim(*argv):
    proc = subprocess.run([sys.executable, "-m", "ringsim", *argv], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "PYTHONIOENCODING": "utf-8"})
    return proc.returncode, proc.stdout, proc.stderr


def classed(svg: str, name: str) -> list[ET.Element]:
    return [e for e in ET.fromstring(svg).iter() if name in (e.get("class") or "").split()]


def draw(tmp_path: Path, log: str, step: int) -> str:
    """The SVG `ringsim figure --nccl-log LOG --step K` writes, run in this process."""
    out = tmp_path / f"step{step}.svg"
    args = build_parser().parse_args(["figure", str(out), "--nccl-log", str(LOGS / log),
                                      "--step", str(step)])
    assert args.run(args) == 0
    return out.read_text(encoding="utf-8")


def walk_steps(log: str) -> list[dict]:
    code, out, err = ringsim("walk", "--nccl-log", str(LOGS / log), "--json")
    assert code == 0, err
    return [json.loads(line) for line in out.splitlines()][1:-1]


@pytest.mark.parametrize("log, ranks, channels, order", WALKABLE)
def test_every_step_draws_the_transfers_walk_makes_of_the_same_log(tmp_path, log, ranks, channels, order):
    steps = walk_steps(log)
    assert len(steps) == 2 * (ranks - 1)
    segments = channels * ranks
    for k, step in enumerate(steps, start=1):
        svg = draw(tmp_path, log, k)
        assert len(classed(svg, "gpu")) == ranks
        assert len(classed(svg, "segment")) == ranks * segments
        drawn = sorted((int(e.get("data-src")), int(e.get("data-dst")), int(e.get("data-first")),
                        e.get("data-op")) for e in classed(svg, "transfer"))
        walked = sorted((t["src"], t["dst"], t["segment"], t["op"]) for t in step["transfers"])
        assert drawn == walked, f"step {k}"
        assert all(1 <= src <= ranks and 1 <= dst <= ranks for src, dst, _, _ in drawn)


@pytest.mark.parametrize("log, ranks, channels, order", WALKABLE)
def test_channels_are_coloured_lanes_and_the_ring_sits_in_the_logs_order(tmp_path, log, ranks, channels, order):
    svg = draw(tmp_path, log, 1)
    per_lane = ranks  # each channel owns a block of S/K = G segments
    for t in classed(svg, "transfer"):
        lane = (int(t.get("data-first")) - 1) // per_lane
        stroke = re.search(r'stroke="(#[0-9a-f]+)" stroke-width="(?:2\.2|1\.1)"',
                           ET.tostring(t, encoding="unicode")).group(1)
        if channels > 1:
            assert stroke == lane_colour(lane)
    colours = {re.search(r'stroke="(#[0-9a-f]+)" stroke-width="(?:2\.2|1\.1)"',
                         ET.tostring(t, encoding="unicode")).group(1) for t in classed(svg, "transfer")}
    assert len(colours) == (min(channels, 6) if channels > 1 else 1)
    # The ring as a loop: its first half left to right on the top row, the rest back below.
    boxes = {int(g.get("data-gpu")): g.find("{http://www.w3.org/2000/svg}rect") for g in classed(svg, "gpu")}
    x = {k: float(r.get("x")) for k, r in boxes.items()}
    y = {k: float(r.get("y")) for k, r in boxes.items()}
    half = (ranks + 1) // 2 if ranks > 2 else ranks  # two GPUs: side by side
    top, bottom = order[:half], order[half:][::-1]
    assert sorted(top, key=x.get) == top and len({y[k] for k in top}) == 1
    if bottom:
        assert sorted(bottom, key=x.get) == bottom and min(y[k] for k in bottom) > y[top[0]]


def test_the_command_says_which_rings_it_drew_and_labels_the_sums(tmp_path):
    out = tmp_path / "nccl.svg"
    code, text, err = ringsim("figure", str(out), "--nccl-log",
                              str(LOGS / "deepspeed4715_2node_channel_hops_excerpt.log"))
    assert code == 0, err
    assert "channel 01: 1 → 4 → 3 → 2 ⇒ 5 → 8 → 7 → 6 ⇒ 1" in text and "wrote " in text
    svg = out.read_text(encoding="utf-8")
    labels = {(int(c.get("data-gpu")), int(c.get("data-segment"))): "".join(c.itertext()).strip()
              for c in classed(svg, "segment")}
    assert labels[(4, 1)] == "a₁+d₁" and labels[(5, 4)] == "b₄+e₄" and labels[(3, 3)] == "c₃"
    assert "ring order 1,4,3,2,5,8,7,6" in svg


@pytest.mark.parametrize("argv, message", [
    (["--nccl-log", str(LOGS / "nccltests29_ring_old_form_4node_excerpt.log")], "no complete ring"),
    (["--nccl-log", str(LOGS / "eks_efa_t4_2node_full.log"), "-g", "4"], "disagrees with the log's 2 ranks"),
    (["--nccl-log", str(LOGS / "eks_efa_t4_2node_full.log"), "--ring-order", "1,2"], "leave out --ring-order"),
    (["--nccl-ranks", "4"], "give --nccl-log too"),
    (["--nccl-log", str(LOGS / "eks_efa_t4_2node_full.log"), "-a", "tree"], "leave out -a"),
    (["--nccl-log", str(LOGS / "eks_efa_t4_2node_full.log"), "--algorithm", "ring"], "--nccl-algo Tree"),
])
def test_bad_logs_and_clashing_options_exit_2_with_one_line(tmp_path, argv, message):
    code, out, err = ringsim("figure", str(tmp_path / "x.svg"), *argv)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1 and not out
    assert not (tmp_path / "x.svg").exists()


def test_all_refuses_a_log(tmp_path):
    code, _, err = ringsim("figure", "--all", str(tmp_path), "--nccl-log", str(LOGS / "eks_efa_t4_2node_full.log"))
    assert code == 2 and "--nccl-log needs a FILE" in err
