"""`ringsim walk --nccl-log` and `ringsim tui --nccl-log`: the rings NCCL built, stepped and priced."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ringsim.cli import build_parser
from ringsim.cli.tui import check_scenario

LOGS = Path(__file__).resolve().parent / "data" / "nccl_logs"


def ringsim(*argv):
    proc = subprocess.run([sys.executable, "-m", "ringsim", *argv], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "PYTHONIOENCODING": "utf-8"})
    return proc.returncode, proc.stdout, proc.stderr


def test_a_two_node_log_walks_its_two_channels_and_says_every_hop_crosses_nodes():
    code, out, err = ringsim("walk", "--nccl-log", str(LOGS / "eks_efa_t4_2node_full.log"), "--time")
    assert code == 0, err
    lines = out.splitlines()
    assert "2 ranks on 2 nodes, 2 channels, each a ring" in lines[0] and "NCCL 2.12.7" in lines[0]
    assert lines[1:3] == ["  channel 00: 1 ⇒ 2 ⇒ 1", "  channel 01: 1 ⇒ 2 ⇒ 1"]
    assert "Hops that cross nodes: 4 of 4, over NET/AWS Libfabric/0 (4)" in out
    assert "Tree of channel 00 (2 of 2 ranks' lines): root 1; 1 → 2" in out
    assert "Ring all-reduce (channels 2, ring order 1,2;1,2) · 2 GPUs · 4 elements per GPU" in out
    assert "Modelled time (textbook α-β-γ):" in out and "Every GPU holds the sum: yes" in out


def test_hops_rebuilt_from_a_log_without_ring_lists_keep_their_transports():
    code, out, err = ringsim("walk", "--nccl-log", str(LOGS / "deepspeed4715_2node_channel_hops_excerpt.log"),
                             "--json")
    assert code == 0, err
    first, *steps, summary = [json.loads(line) for line in out.splitlines()]
    assert first["type"] == "nccl_log" and first["ranks"] == 8 and first["nodes"] == 2
    assert first["ring_order"] == [[1, 4, 3, 2, 5, 8, 7, 6]] and first["rings_from_hops"]
    crossing = [(h["src"], h["dst"], h["via"]) for h in first["hops"] if h["crosses_nodes"]]
    assert crossing == [(2, 5, "NET/IBext/0"), (6, 1, "NET/IBext/0")]
    assert first["transports"] == {"P2P/IPC/read": 6, "NET/IBext/0": 2}
    assert len(steps) == 14 and summary["gpus"] == 8 and summary["correct"]
    assert {(t["src"], t["dst"]) for t in steps[0]["transfers"]} == \
        {(1, 4), (4, 3), (3, 2), (2, 5), (5, 8), (8, 7), (7, 6), (6, 1)}


def test_pricing_on_a_topology_that_places_gpus_otherwise_says_so():
    code, out, _ = ringsim("walk", "--nccl-log", str(LOGS / "deepspeed4715_2node_channel_hops_excerpt.log"),
                           "--topology", "dgx-h100")
    assert code == 0
    assert "the log shows 2 nodes of 4 GPUs but topology dgx-h100 has 8 GPUs per node" in out


@pytest.mark.parametrize("argv, message", [
    (["--nccl-log", str(LOGS / "nccl1453_h100_3node_channels_excerpt.log")], "first 20 ranks of channel 05"),
    (["--nccl-log", str(LOGS / "nccltests29_ring_old_form_4node_excerpt.log")], "no complete ring"),
    (["--nccl-log", str(LOGS / "eks_efa_t4_2node_full.log"), "--gpus", "4"], "disagrees with the log's 2 ranks"),
    (["--nccl-log", str(LOGS / "eks_efa_t4_2node_full.log"), "--channels", "2"], "leave out --channels"),
    (["--nccl-ranks", "4"], "give --nccl-log too"),
    (["--nccl-log", "/dev/null"], "not a regular file"),
])
def test_bad_logs_and_clashing_options_exit_2_with_one_line(argv, message):
    code, out, err = ringsim("walk", *argv)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1 and not out


def test_the_tui_opens_on_the_rings_of_the_log():
    args = build_parser().parse_args(["tui", "--nccl-log", str(LOGS / "nccl1706_single_node_4gpu_channels_trees_excerpt.log")])
    sim = check_scenario(args)
    assert sim.plan.gpus == 4 and sim.plan.segments == 14 * 4 and args.elements == 56
    assert args.ring_order == ";".join(["1,2,3,4"] * 14)


def test_the_tui_steps_through_the_logs_ring_hop_by_hop():
    import asyncio
    from ringsim.cli.tui import make_app
    from ringsim.tui.widgets.transfer_list import TransferList
    args = build_parser().parse_args(
        ["tui", "--nccl-log", str(LOGS / "deepspeed4715_2node_channel_hops_excerpt.log")])
    app = make_app(args)

    async def first_iteration():
        async with app.run_test(size=(140, 44)) as pilot:
            await pilot.press("n")
            return list(app.screen.query_one(TransferList).lines)

    lines = asyncio.run(first_iteration())
    assert lines[0] == "GPU1 sends a₁ to GPU4, where it is added to d₁"
    assert "GPU2 sends b₄ to GPU5, where it is added to e₄" in lines  # the hop over NET/IBext/0
    assert len(lines) == 8
