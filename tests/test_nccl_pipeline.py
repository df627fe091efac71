"""The wait for a call's first chunk to cross its pipeline, which NCCL's model leaves out.

The chunk sizes below are worked by hand from NCCL 2.30.7's calcCollChunking (src/enqueue.cc):
NCCL_NVLS_CHUNKSIZE = 128 KiB, shrunk to 64, 32 and 16 KiB while the call is under 64, 8 and 2
times channels × heads × the chunk; a Simple step is DEFAULT_BUFFSIZE / NCCL_STEPS = 512 KiB.
"""


import pytest

from ringsim.cost.nccl import nccl_choice
from ringsim.cost.nccl_graph import graphs, system
from ringsim.cost.nccl_pipeline import chunk_bytes, fill_seconds
from ringsim.cost.topology import load
from ringsim.studies import peers
from ringsim.studies.predict import predict

MiB, GiB = 1 << 20, 1 << 30


@pytest.mark.parametrize("nbytes, chunk", [
    (1 * MiB, 16384),     # under 2 × 16 × 8 × 32 KiB = 8 MiB
    (8 * MiB, 32768),     # under 8 × 16 × 8 × 64 KiB = 64 MiB, not under 8 MiB
    (64 * MiB, 65536),    # under 64 × 16 × 8 × 128 KiB = 1 GiB, not under 64 MiB
    (2 * GiB, 131072),    # NCCL_NVLS_CHUNKSIZE itself
])
def test_nvls_chunks_are_nccls_on_sixteen_channels_and_eight_heads(nbytes, chunk):
    assert chunk_bytes("NVLS", "Simple", nbytes, 16, 8) == chunk


def test_a_trees_step_is_one_of_the_protocols_buffer():
    assert chunk_bytes("Tree", "Simple", 1 * GiB, 16, 1) == 4 * MiB // 8
    # LL: 8 lines × 512 threads × 8 steps × 16 bytes, half of each line data
    assert chunk_bytes("Tree", "LL", 1 * MiB, 16, 1) == 32768


@pytest.mark.parametrize("nbytes, chunk", [
    # LL128's step: 120 × 640 × 8 bytes, 15 of each 16 words data: 576,000 bytes; on 2 nodes of
    # 8, halved while under (1 + 1 + 0.8) × 64 / 8 = 22.4 steps a channel (to 72,000), then
    # while under 5.6 (to 36,000 at 4 MiB: 7 steps; to 18,000 at 512 KiB, the floor).
    (512 * 1024, 18000),
    (4 * MiB, 36000),
    (1 * GiB, 576000),
])
def test_an_ll128_trees_step_shrinks_as_calccollchunking_does(nbytes, chunk):
    assert chunk_bytes("Tree", "LL128", nbytes, 16, 1, ranks=16, nodes=2) == chunk


def test_a_pipeline_waits_for_its_first_step_to_cross_every_stage_but_the_steady_one():
    # Three stages of 10 B/s carrying 100 B steps: 30 s for the first, NCCL prices 10 of them.
    assert fill_seconds(100, [10.0, 10.0, 10.0], 10.0) == pytest.approx(20.0)
    assert fill_seconds(100, [10.0, 20.0], 10.0) == pytest.approx(5.0)
    assert fill_seconds(100, [40.0], 10.0) == 0.0     # never less than NCCL's own time
    assert fill_seconds(100, [], 10.0) == 0.0


def test_nvls_on_one_h100_node_waits_two_steps_at_8_mib():
    # 8 H100, 8 MiB: NVLS/Simple on 16 channels; NCCL's bandwidth formula at the links' speed
    # (8 heads × 370.8/9 GB/s × 0.85 × 7/8 × 2 × 8/14 = 280.16 GB/s), 17.5 GB/s a channel. A
    # step is 8 heads × 32 KiB = 256 KiB and crosses three stages (copy in, the switch, copy
    # out) at that rate: 2 × 14.97 µs more.
    pick = nccl_choice("dgx-h100", 8, 8 * MiB)
    assert (pick.algorithm, pick.protocol, pick.channels) == ("NVLS", "Simple", 16)
    assert pick.bandwidth == pytest.approx(280.16e9)
    step = 8 * 32768 / (280.16e9 / 16)
    assert pick.fill == pytest.approx(2 * step)
    assert pick.seconds == pytest.approx(25e-6 + 8 * MiB / 280.16e9 + 2 * step)


def test_the_fill_fades_at_large_sizes():
    pick = nccl_choice("dgx-h100", 8, 4 * GiB)
    assert 0 < pick.fill < 0.01 * pick.seconds


def test_a_simple_tree_fills_one_chunk_per_hop():
    topo = load("dgx-a100")
    pick = nccl_choice(topo, 16, 1 * GiB, algo="Tree", proto="Simple")
    tree = graphs(system(topo, 16))["Tree"]
    # Every running channel has the speed of graph channels / running channels of the graph.
    share = tree.channels / pick.channels
    inside, across = share * tree.bw_intra * 1e9, share * tree.bw_inter * 1e9
    chunk = 512 * 1024
    hops = 2 * 7 * chunk / inside + 2 * 1 * chunk / across
    assert pick.fill == pytest.approx(hops - chunk / (pick.bandwidth / pick.channels))
    assert pick.fill > 0


def test_an_ll128_tree_waits_only_where_the_network_sends_whole_steps():
    # Two p4de (EFA): 4 MiB on Tree/LL128, 36,000-byte steps. Inside a node LL128 hands on each
    # line; each of the 2 network hops (up, down) sends a whole step, at the channel's share of
    # the network, of which 15/16 is data.
    topo = load(peers.system_file("p4de-efa"))
    pick = nccl_choice(topo, 16, 4 * MiB, algo="Tree", proto="LL128")
    tree = graphs(system(topo, 16))["Tree"]
    across = tree.channels / pick.channels * tree.bw_inter * 1e9 * 15 / 16
    steady = 36000 / (pick.bandwidth / pick.channels)
    assert pick.fill == pytest.approx(2 * min(36000 / across, steady) - steady)
    assert pick.fill > 0
    one_node = nccl_choice("dgx-h100", 8, 4 * MiB, algo="Tree", proto="LL128")
    assert one_node.fill == 0.0


@pytest.mark.parametrize("topology, gpus, nbytes, kwargs", [
    ("dgx-a100", 8, 32 * MiB, {}),                                  # a ring keeps every link busy
    ("dgx-h100", 8, 1 * MiB, {"algo": "Tree", "proto": "LL"}),      # LL hands on each line
    ("dgx-h100", 16, 64 * MiB, {"algo": "NVLSTree"}),               # across nodes: not known
    ("dgx-h100", 8, 8 * MiB, {"collective": "reduce-scatter"}),     # all-reduce only
])
def test_no_fill_where_nothing_waits_or_ringsim_does_not_know(topology, gpus, nbytes, kwargs):
    assert nccl_choice(topology, gpus, nbytes, **kwargs).fill == 0.0


def test_predict_json_says_the_fill_and_nccls_own_estimate():
    row = predict("dgx-h100", 8, [8 * MiB])[0].to_json()
    assert row["fill"] == pytest.approx(2 * 8 * 32768 / (280.16e9 / 16))
    # NCCL chose on 25 µs + 8 MiB at its own 272 GB/s; the call runs at the links' 280.16 GB/s
    # and waits for its pipeline to fill
    assert row["nccl_seconds"] == pytest.approx(25e-6 + 8 * MiB / 272e9)
    assert row["seconds"] == pytest.approx(25e-6 + 8 * MiB / 280.16e9 + row["fill"])
    # where ringsim adds nothing, the two agree
    plain = predict("dgx-h100", 16, [64 * 1024])[0].to_json()
    assert plain["seconds"] == plain["nccl_seconds"] and plain["fill"] == 0.0


def test_predict_says_why_a_larger_call_takes_less_time(capsys):
    from ringsim.cli import main
    # NCCL 2.18.6 on 8 H100s runs 256 KiB as Ring/LL on 8 of its channels (its model priced
    # all of them) and 512 KiB as NVLS/Simple: the larger call is the faster one.
    assert main(["predict", "--topology", "dgx-h100", "--gpus", "8", "--nccl", "2.18.6",
                 "--sizes", "128KiB..1MiB"]) == 0
    out = capsys.readouterr().out
    rows = {int(r.split()[0]): float(r.split()[3]) for r in out.splitlines() if r[:1] != "#"}
    assert rows[1 << 19] < rows[1 << 18]
    note = [line for line in out.splitlines() if "takes less time than" in line]
    assert note == [f"# 512KiB takes less time than 256KiB ({rows[1 << 19]:.2f} µs against "
                    f"{rows[1 << 18]:.2f} µs): NCCL chooses Ring/LL at 256KiB on its model of "
                    "every channel it has, and the call runs on fewer, or meets the network's "
                    "measured latency, which ringsim times"]
    # where time only grows there is no such line
    assert main(["predict", "--topology", "dgx-h100", "--gpus", "8"]) == 0
    assert "takes less time than" not in capsys.readouterr().out


def test_the_fill_nccls_choice_leaves_out_is_named_where_time_falls():
    from ringsim.studies.predict import falls_note
    # 64 GPUs of DGX H100 on Emerald Rapids with the NICs across the sockets: NCCL picks
    # Tree/Simple at 512 KiB, whose first step fills the pipeline for 59.88 µs.
    from dataclasses import replace
    topo = load("dgx-h100")
    across = replace(topo.level("across"), nic_path="sys")
    far = replace(topo, levels={**topo.levels, "across": across}, cpu="intel-emerald-rapids")
    rows = predict(far, 64, [512 << 10, 1 << 20])
    small, large = rows
    assert (small.algorithm, small.protocol) == ("Tree", "Simple") and small.fill > 0
    assert large.seconds < small.seconds
    assert falls_note(rows) == (
        f"# 1MiB takes less time than 512KiB ({large.seconds * 1e6:.2f} µs against "
        f"{small.seconds * 1e6:.2f} µs): NCCL chooses Tree/Simple at 512KiB on its own model, "
        f"which leaves out the {small.fill * 1e6:.2f} µs its first step takes to fill the "
        "pipeline (ringsim adds it: docs/cost.md, deviation 12)")
    assert falls_note(list(reversed(rows))) == falls_note(rows)  # rows in any order


def test_every_fall_of_time_with_size_is_named():
    from ringsim.studies.predict import falls_note
    # 64 RTX 5090 ranks over sockets: Tree/Simple's fill makes 512 KiB and 2 MiB slower than the
    # next size up; the note explains the first and names the second
    rows = predict(peers.system_file("rtx5090-socket-pair"), 64,
                   [64 << 10 << k for k in range(9)])
    times = {r.bytes: r.seconds for r in rows}
    assert times[1 << 20] < times[512 << 10] and times[4 << 20] < times[2 << 20]
    note = falls_note(rows)
    assert note.startswith("# 1MiB takes less time than 512KiB")
    assert note.endswith("; time falls again at 4MiB")
