"""`ringsim walk --nccl-log` and `ringsim tui --nccl-log`: the rings NCCL built, stepped and priced."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ringsim.cli import build_parser
from ringsim.cli._view_args import check_scenario

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
    assert "(--nccl-algo Tree walks these trees instead of the rings)" in out
    assert "Ring all-reduce (2 channels, ring order 1,2;1,2) · 2 GPUs · 4 elements per GPU" in out
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
    from ringsim.cli._view_args import make_app
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


# --- the trees NCCL built: --nccl-algo Tree -------------------------------------------------

EKS = LOGS / "eks_efa_t4_2node_full.log"


def run_here(capsys, *argv):
    """`ringsim ARGV` in this process: (status, stdout, stderr)."""
    from ringsim.cli import main
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_the_trees_lines_read_as_the_log_prints_them():
    from ringsim.studies import ncclplan
    # eks: rank 1 prints `Trees [0] -1/-1/-1->1->0 [1] 0/-1/-1->1->-1`, rank 0
    # `Trees [0] 1/-1/-1->0->-1 [1] -1/-1/-1->0->1`: (parent, children) per channel and rank.
    assert ncclplan.load(str(EKS)).trees == {0: {0: (-1, (1,)), 1: (0, ())},
                                             1: {0: (1, ()), 1: (-1, (0,))}}
    # 1706: only rank 2's line, `3/-1/-1->2->1` on each of its 16 channels.
    log = ncclplan.load(str(LOGS / "nccl1706_single_node_4gpu_channels_trees_excerpt.log"))
    assert log.trees == {c: {2: (1, (3,))} for c in range(16)}
    # 820: only rank 0's line: `[0] 1/16/-1->0->-1 [1] 2/-1/-1->0->1 [2] 1/-1/-1->0->7 … [15] 1/-1/-1->0->6`.
    text = (LOGS / "nccl820_channel_list_24rank_trees_excerpt.log").read_text()
    from ringsim.studies.ncclog import parse
    from ringsim.studies.textfile import Text
    trees = parse(Text("820", tuple(text.splitlines()), 0), need_rings=False).trees
    expected = {0: (-1, (1, 16)), 1: (1, (2,)), 2: (7, (1,)), 3: (7, (1,)), 4: (7, (1,)),
                5: (7, (1,)), 6: (7, (1,)), 7: (6, (1,)), 8: (8, (1,)), 9: (1, (2,)),
                10: (7, (1,)), 11: (7, (1,)), 12: (7, (1,)), 13: (7, (1,)), 14: (7, (1,)),
                15: (6, (1,))}
    assert trees == {c: {0: tree} for c, tree in expected.items()}


def test_nccls_older_tree_forms_read_the_same_trees():
    from ringsim.studies.ncclog import parse
    from ringsim.studies.textfile import Text
    lines = ["h:1:1 [0] NCCL INFO Trees [0] -1->0->1/-1/-1",             # 2.4: up -> rank -> downs
             "h:1:2 [1] NCCL INFO Trees [0] 0->1->-1/-1/-1",
             "h:1:1 [0] NCCL INFO Trees [1] 1/-1/-1->0->-1|-1->0->1/-1/-1",  # 2.5–2.7: reduce|broadcast
             "h:1:2 [1] NCCL INFO Trees [1] -1/-1/-1->1->0|0->1->-1/-1/-1"]
    log = parse(Text("old", tuple(lines), 0), need_rings=False)
    assert log.nranks == 2 and not log.tree_clashes
    assert log.trees == {0: {0: (-1, (1,)), 1: (0, ())}, 1: {0: (-1, (1,)), 1: (0, ())}}
    split = parse(Text("split", ("h:1:1 [0] NCCL INFO Trees [0] 1/-1/-1->0->-1|1->0->-1/-1/-1",), 0),
                  need_rings=False)
    assert "reduces on one tree and broadcasts on another" in split.tree_clashes[0]


def test_the_two_node_log_replays_its_two_trees_over_the_network(capsys):
    code, out, err = run_here(capsys, "walk", "--nccl-log", str(EKS), "--nccl-algo", "tree",
                              "--json", "--elements", "10", "--time")
    assert code == 0, err
    first, *steps, summary = [json.loads(line) for line in out.splitlines()]
    assert first["replay"] == "Tree" and first["tree_channels"] == [0, 1]
    assert first["tree_parents"] == [[0, 1], [2, 0]]  # channel 00: root GPU1; channel 01: root GPU2
    assert [(h["channel"], h["src"], h["dst"], h["via"], h["crosses_nodes"]) for h in first["hops"]] == [
        (0, 2, 1, "NET/AWS Libfabric/0", True), (0, 1, 2, "NET/AWS Libfabric/0", True),
        (1, 1, 2, "NET/AWS Libfabric/0", True), (1, 2, 1, "NET/AWS Libfabric/0", True)]
    assert first["hops_crossing_nodes"] == 4
    # Step 1 reduces up each channel's tree, step 2 broadcasts back down (5 elements per channel).
    assert [[(t["src"], t["dst"], t["segment"], t["op"], t["elements"]) for t in s["transfers"]]
            for s in steps] == [[(1, 2, 2, "reduce", 5), (2, 1, 1, "reduce", 5)],
                                [(1, 2, 1, "copy", 5), (2, 1, 2, "copy", 5)]]
    assert summary["algorithm"] == "nccl-tree" and summary["correct"]
    assert summary["sent"] == [10, 10] and summary["received"] == [10, 10]
    assert summary["total_elements"] == summary["formula_total"] == 20 and summary["messages"] == 4
    from ringsim.algorithms.timing import estimate
    from ringsim.cost.model import CostModel
    from ringsim.cost.topology import load
    hook = estimate("nccl-tree", 2, 10, CostModel(load("flat"), 4), tree_parents="0,1;2,0")
    assert summary["seconds"] == pytest.approx(hook.seconds, rel=1e-12) and summary["seconds"] > 0


def test_the_tree_preface_names_each_tree_and_its_links(capsys):
    code, out, err = run_here(capsys, "walk", "--nccl-log", str(EKS), "--nccl-algo", "TREE")
    assert code == 0, err
    lines = out.splitlines()
    assert "2 ranks on 2 nodes, 2 channels, each a tree" in lines[0]
    assert lines[1:3] == ["  channel 00: root 1; 1 ⇒ 2", "  channel 01: root 2; 2 ⇒ 1"]
    assert "Tree hops (up and down) that cross nodes: 4 of 4, over NET/AWS Libfabric/0 (4)" in out
    assert "NCCL tree all-reduce (2 given trees 0,1;2,0) · 2 GPUs" in out
    assert "Tree reduce" in out and "Broadcast" in out and "Every GPU holds the sum: yes" in out


def _two_node_log(tmp_path, edit=lambda lines: lines) -> str:
    """An NCCL 2.2x-style log of 2 nodes × 4 GPUs whose Trees lines are NCCL's own trees for it
    (ringsim's nccl-tree, which follows src/graph/connect.cc), hop lines P2P inside a node and
    NET/IB across: every line in NCCL's format."""
    from ringsim.algorithms.nccl_tree import parents
    trees = [parents(8, 4, second) for second in (False, True)]
    host = lambda r: "nodeA" if r < 4 else "nodeB"  # noqa: E731
    lines = [f"{host(r)}:10{r}:20{r} [{r % 4}] NCCL INFO comm 0x{r + 1:x} rank {r} nRanks 8 nNodes 2 "
             f"localRanks 4 localRank {r % 4} MNNVL 0" for r in range(8)]
    lines += [f"nodeA:100:200 [0] NCCL INFO Channel {c:02d}/02 :    0   1   2   3   4   5   6   7"
              for c in range(2)]
    for r in range(8):
        items = []
        for c, up in enumerate(trees):
            kids = [int(k) for k in np.flatnonzero(up == r)] + [-1, -1, -1]
            items.append(f"[{c}] {kids[0]}/{kids[1]}/{kids[2]}->{r}->{int(up[r])}")
        lines.append(f"{host(r)}:10{r}:20{r} [{r % 4}] NCCL INFO Trees " + " ".join(items))
    for c, up in enumerate(trees):
        for child in range(8):
            if up[child] >= 0:
                for a, b in ((child, int(up[child])), (int(up[child]), child)):
                    via = "NET/IB/0/GDRDMA" if host(a) != host(b) else "P2P/IPC/read"
                    side = " [send]" if host(a) != host(b) else ""
                    lines.append(f"{host(a)}:10{a}:20{a} [{a % 4}] NCCL INFO Channel {c:02d}/0 : "
                                 f"{a}[{a}] -> {b}[{b}]{side} via {via}")
    path = tmp_path / "two_nodes.log"
    path.write_text("\n".join(edit(lines)) + "\n")
    return str(path)


def test_nccls_own_trees_replay_as_nccls_tree_plan(tmp_path, capsys):
    from ringsim.algorithms import make_plan
    code, out, err = run_here(capsys, "walk", "--nccl-log", _two_node_log(tmp_path), "--nccl-algo",
                              "Tree", "--json", "--elements", "16")
    assert code == 0, err
    first, *steps, summary = [json.loads(line) for line in out.splitlines()]
    nccl = make_plan("nccl-tree", 8, gpus_per_node=4)
    assert len(steps) == len(nccl.steps)
    for mine, theirs in zip(steps, nccl.steps):
        assert [(t["src"] - 1, t["dst"] - 1, t["segment"] - 1) for t in mine["transfers"]] == \
            list(zip(theirs.src.tolist(), theirs.dst.tolist(), theirs.first.tolist()))
    crossing = {(h["src"], h["dst"]) for h in first["hops"] if h["crosses_nodes"]}
    assert crossing and all((a <= 4) != (b <= 4) for a, b in crossing)
    assert {h["via"] for h in first["hops"] if h["crosses_nodes"]} == {"NET/IB/0/GDRDMA"}
    assert {h["via"] for h in first["hops"] if not h["crosses_nodes"]} == {"P2P/IPC/read"}
    assert summary["correct"] and summary["total_elements"] == 2 * 7 * 16


def _rank_line(lines, rank):
    return next(i for i, line in enumerate(lines) if "Trees" in line and "] NCCL INFO Trees" in line
                and f"->{rank}->" in line.split("Trees", 1)[1].split(" [1]")[0])


def _swap(lines, rank, new):
    i = _rank_line(lines, rank)
    return lines[:i] + [lines[i].split("Trees")[0] + "Trees " + new] + lines[i + 1:]


@pytest.mark.parametrize("edit, message", [
    (lambda ls: [line for line in ls if "->5->" not in line.split("Trees", 1)[-1][:40]
                 or "Trees" not in line], "channel 00's tree misses rank 5 of 0..7"),
    (lambda ls: [line[:line.index(" [1]") + 9] if "->3->" in line and "Trees" in line else line
                 for line in ls], "channel 01's tree misses rank 3 of 0..7"),
    (lambda ls: _swap(ls, 1, "[0] 2/-1/-1->1->3 [1] 2/-1/-1->1->0"),
     "channel 00: rank 0 lists rank 1 as a child, but rank 1 names rank 3 its parent"),
    (lambda ls: _swap(ls, 7, "[0] 5/-1/-1->7->6 [1] -1/-1/-1->7->6"),
     "channel 00: rank 7 lists rank 5 as a child, but rank 5 names rank 4 its parent"),
    (lambda ls: _swap(ls, 9 - 9, "[0] 1/-1/-1->0->12 [1] 1/-1/-1->0->4"), "names rank 12, but the communicator has 8 ranks"),
])
def test_trees_missing_or_disagreeing_are_named_in_one_line(tmp_path, capsys, edit, message):
    code, out, err = run_here(capsys, "walk", "--nccl-log", _two_node_log(tmp_path, edit),
                              "--nccl-algo", "Tree")
    assert code == 2 and not out and message in err and len(err.strip().splitlines()) == 1, err


def test_a_cycle_in_the_trees_is_named(tmp_path, capsys):
    lines = EKS.read_text().splitlines()
    # Rank 0 now names rank 1 its parent on channel 00, and rank 1 lists 0 as its child: each
    # end agrees with the other, but the two ranks go round with no root.
    lines = [line.replace("Trees [0] 1/-1/-1->0->-1", "Trees [0] 1/-1/-1->0->1")
                 .replace("Trees [0] -1/-1/-1->1->0", "Trees [0] 0/-1/-1->1->0") for line in lines]
    path = tmp_path / "cycle.log"
    path.write_text("\n".join(lines) + "\n")
    code, out, err = run_here(capsys, "walk", "--nccl-log", str(path), "--nccl-algo", "Tree")
    assert code == 2 and not out
    assert "channel 00: the trees' links go round in a cycle, rank 0 → rank 1 → rank 0" in err


def test_a_trees_line_cut_by_a_paste_is_named(tmp_path, capsys):
    lines = EKS.read_text().splitlines()
    lines = [line.replace("Trees [0] -1/-1/-1->1->0 [1] 0/-1/-1->1->-1", "Trees [0] -1/-1/-1->1->0 [1] 0/-")
             for line in lines]
    path = tmp_path / "cut.log"
    path.write_text("\n".join(lines) + "\n")
    code, out, err = run_here(capsys, "walk", "--nccl-log", str(path), "--nccl-algo", "Tree")
    assert code == 2 and not out
    assert "channel 01's tree misses rank 1 of 0..1" in err and "line 29, is cut short" in err


def test_lines_nccl_itself_cut_leave_their_last_channels_out_with_a_note(tmp_path, capsys):
    # 64 channels' trees are longer than the 1,023 characters NCCL prints of them.
    items = lambda r: " ".join(f"[{c}] {1 - r}/-1/-1->{r}->-1" if r == 0 else f"[{c}] -1/-1/-1->{r}->0"  # noqa: E731
                               for c in range(64))
    lines = [f"h:1:{r} [{r}] NCCL INFO Trees {items(r)}"[:1040] for r in range(2)]
    lines += [f"h:1:0 [0] NCCL INFO comm 0x1 rank {r} nRanks 2 nNodes 1" for r in range(2)]
    path = tmp_path / "long.log"
    path.write_text("\n".join(lines) + "\n")
    code, out, err = run_here(capsys, "walk", "--nccl-log", str(path), "--nccl-algo", "Tree", "--json")
    assert code == 0, err
    first = json.loads(out.splitlines()[0])
    assert 40 < first["channels"] < 64 and first["tree_channels"] == list(range(first["channels"]))
    assert any("NCCL cut some ranks' Trees lines at 1,023 characters" in note for note in first["notes"])


@pytest.mark.parametrize("argv, message", [
    (["--nccl-log", str(LOGS / "nccltests29_ring_old_form_4node_excerpt.log"), "--nccl-algo", "Tree"],
     "has no 'Trees [0] …' lines to replay"),
    (["--nccl-log", str(LOGS / "nccl1706_single_node_4gpu_channels_trees_excerpt.log"), "--nccl-algo", "Tree"],
     "channel 00's tree misses ranks 0, 1, 3 of 0..3"),
    (["--nccl-log", str(LOGS / "nccl820_channel_list_24rank_trees_excerpt.log"), "--nccl-algo", "Tree"],
     "channel 00's tree misses ranks 1, 2, 3, 4, 5, 6, 7, 8 and 15 more of 0..23"),
    (["--nccl-algo", "Tree"], "--nccl-algo chooses which plan of --nccl-log to replay; give --nccl-log too"),
    (["--nccl-log", str(EKS), "--nccl-algo", "Tree", "--tree-parents", "0,1"], "leave out --tree-parents"),
    (["--nccl-log", str(EKS), "--nccl-algo", "NVLS"], "--nccl-algo must be Ring or Tree"),
])
def test_tree_replays_that_cannot_be_exit_2_with_one_line(capsys, argv, message):
    code, out, err = run_here(capsys, "walk", *argv)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1 and not out, err


def test_the_tui_and_figure_open_on_the_trees_of_the_log(tmp_path, capsys):
    args = build_parser().parse_args(["tui", "--nccl-log", str(EKS), "--nccl-algo", "Tree"])
    sim = check_scenario(args)
    assert sim.plan.algorithm == "nccl-tree" and sim.plan.gpus == 2 and sim.plan.segments == 2
    assert args.tree_parents == "0,1;2,0"
    pytest.importorskip("drawsvg")
    svg = tmp_path / "trees.svg"
    code, out, err = run_here(capsys, "figure", str(svg), "--nccl-log", str(EKS), "--nccl-algo",
                              "Tree", "--step", "1")
    assert code == 0, err
    assert "each a tree" in out and 'data-op="reduce"' in svg.read_text()


def test_a_trees_line_of_a_million_characters_is_refused_in_one_line(tmp_path, capsys):
    items = " ".join(f"[{c}] -1/-1/-1->0->-1" for c in range(60_000))  # cut at MAX_LINE when read
    path = tmp_path / "huge.log"
    path.write_text(f"h:1:1 [0] NCCL INFO Trees {items}\n" + "NCCL INFO Trees [0] 1/-\n" * 1000)
    code, out, err = run_here(capsys, "walk", "--nccl-log", str(path), "--nccl-algo", "Tree")
    assert code == 2 and not out and "names channel 64; NCCL has at most 64 channels" in err
    assert len(err.strip().splitlines()) == 1


def test_the_tui_steps_through_the_logs_trees():
    import asyncio
    from ringsim.cli._view_args import make_app
    from ringsim.tui.widgets.transfer_list import TransferList
    app = make_app(build_parser().parse_args(["tui", "--nccl-log", str(EKS), "--nccl-algo", "Tree"]))

    async def first_step():
        async with app.run_test(size=(140, 44)) as pilot:
            await pilot.press("n")
            return list(app.screen.query_one(TransferList).lines)

    assert asyncio.run(first_step()) == ["GPU1 sends a₂ up the tree to GPU2, where it is added to b₂",
                                         "GPU2 sends b₁ up the tree to GPU1, where it is added to a₁"]


def test_two_communicators_trees_in_one_log_are_named(tmp_path, capsys):
    text = EKS.read_text()
    # The same ranks print a second, different tree for channel 00 (another communicator's).
    path = tmp_path / "two.log"
    path.write_text(text + "[1,0]<stdout>:test-nccl-efa-worker-0:21:27 [0] NCCL INFO Trees "
                    "[0] -1/-1/-1->0->1 [1] -1/-1/-1->0->1\n")
    code, out, err = run_here(capsys, "walk", "--nccl-log", str(path), "--nccl-algo", "Tree")
    assert code == 2 and not out
    assert "rank 0 printed two different trees for channel 00" in err and "mixes communicators" in err
    code, out, _ = run_here(capsys, "walk", "--nccl-log", str(path))  # the rings are still walked
    assert code == 0 and "each a ring" in out


@pytest.mark.parametrize("command", ["walk", "tui", "figure"])
def test_an_algorithm_beside_a_log_is_refused_not_overridden(command, capsys):
    # The log decides what is replayed (its rings, or its trees with --nccl-algo Tree): an -a
    # it would override silently is refused, in every command that reads a log.
    from ringsim.cli import main
    log = str(Path(__file__).parent / "data" / "nccl_logs" / "eks_efa_t4_2node_full.log")
    argv = [command, *(["x.svg"] if command == "figure" else []), "--nccl-log", log, "-a", "tree"]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].endswith("leave out -a")


@pytest.mark.parametrize("command", ["walk", "figure"])
def test_a_log_replays_an_all_reduce_only(command, capsys):
    from ringsim.cli import main
    log = str(Path(__file__).parent / "data" / "nccl_logs" / "eks_efa_t4_2node_full.log")
    argv = [command, *(["x.svg"] if command == "figure" else []), "--nccl-log", log,
            "--collective", "all-gather"]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].endswith("leave out --collective all-gather")
