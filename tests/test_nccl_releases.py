"""NCCL's model as each release computed it, and the host CPU it reads: the arithmetic worked by
hand from NVIDIA/nccl's src/graph/tuning.cc, search.cc, connect.cc and transport/nvls.cc at
each tag, with the constants written out here rather than read from ringsim's data file."""

from __future__ import annotations

from dataclasses import replace

import pytest

from ringsim.core.errors import RingsimError
from ringsim.cost.nccl import nccl_choice
from ringsim.cost.nccl_graph import constants
from ringsim.cost.topology import load, parse
from ringsim.studies import peers

B200 = peers.system_file("b200-8-ndr")
BIG = 1 << 33  # 8 GiB: past every tree correction, so the bandwidth is the tuner's own


def _cpu(topology, cpu: str):
    return replace(load(topology), cpu=cpu)


def test_nvlstree_on_two_hopper_nodes_before_and_after_nccl_2_28_3():
    # The NVLS graph of two DGX H100s: 8 heads, 40 GB/s inside, 48 GB/s across.
    # 2.26.2 (tuning.cc:252, 293): min(bwIntra 40, bwInter 48) × 8 heads × 5/6.
    old = nccl_choice("dgx-h100", 16, BIG, algo="NVLSTree", nccl="2.26.2")
    assert old.bandwidth == pytest.approx(8 * 40 * 5 / 6 * 1e9)
    # 2.30.7: min(40 × nvlsEfficiency 0.85 × 7/8 × 2, 2 × 48, perChMaxNVLSTreeBw 57.7) × 8
    # heads × nRanks / nsteps (16 / 30).
    now = nccl_choice("dgx-h100", 16, BIG, algo="NVLSTree")
    assert now.bandwidth == pytest.approx(8 * 57.7 * 16 / 30 * 1e9)


def test_nvlstree_beyond_two_nodes_halved_the_speed_across_before_nccl_2_28_3():
    # 2.26.2: min(40, 48 / 2) × 8 × 5/6; 2.30.7: min(59.5, 48, cap 45.5) × 8 × 32 / 62.
    old = nccl_choice("dgx-h100", 32, BIG, algo="NVLSTree", nccl="2.26.2")
    assert old.bandwidth == pytest.approx(8 * 24 * 5 / 6 * 1e9)
    now = nccl_choice("dgx-h100", 32, BIG, algo="NVLSTree")
    assert now.bandwidth == pytest.approx(8 * 45.5 * 32 / 62 * 1e9)


def test_blackwell_trees_had_twice_hoppers_per_channel_caps_until_nccl_2_28_3():
    # Two B200 nodes, Tree/LL128: 8 channels at 48 GB/s across × 120/128, capped at 8 ×
    # perChMaxTreeLL128Bw: 2 × 36.7 in 2.25.1 (does not bind), 31.67 in 2.30.7 (binds);
    # then × 1/2 from bus to algorithm bandwidth. 2.30.7's tree graph runs 86 GB/s inside.
    old = nccl_choice(B200, 16, BIG, algo="Tree", proto="LL128", nccl="2.25.1")
    assert old.bandwidth == pytest.approx(min(8 * 48 * 0.92 * 120 / 128, 8 * 73.4) / 2 * 1e9)
    now = nccl_choice(B200, 16, BIG, algo="Tree", proto="LL128")
    assert now.bandwidth == pytest.approx(min(8 * 86 * 0.92 * 120 / 128, 8 * 31.67) / 2 * 1e9)


def test_rings_and_trees_ran_on_nvls_channels_from_nccl_2_22_3_to_2_27_7():
    # connect.cc raised comm->nChannels to nvlsChannels (32 on Blackwell across nodes), and
    # topoGetAlgoInfo starts from it; 2.28.3 removed the raise: 2 × 8 ring channels.
    for release, channels in (("2.25.1", 32), ("2.27.7", 32), (None, 16)):
        assert nccl_choice(B200, 16, BIG, algo="Ring", proto="Simple",
                           nccl=release).channels == channels
    # Hopper's 16 NVLS channels equal its ring's 2 × 8: nothing changes there.
    assert nccl_choice("dgx-h100", 16, BIG, algo="Ring", nccl="2.26.2").channels == 16


def test_blackwells_nvls_channels_by_release_and_by_nccl_2_30s_own_tuning():
    # One node: NVLS_NCHANNELS_SM100 32 in 2.25.1, NVLS_NCHANNELS_SM100_NVL 24 from 2.27.3.
    assert nccl_choice(B200, 8, BIG, algo="NVLS", nccl="2.25.1").channels == 32
    assert nccl_choice(B200, 8, BIG, algo="NVLS", nccl="2.27.3").channels == 24
    # Across nodes, ncclNvlsTreeSm100Tuning (2.30.3 on): two nodes with a NIC of 50 GB/s
    # (at least 48) keep 32; three take 24 (a NIC from 48 to 96 GB/s); 2.27.7 keeps 32.
    assert nccl_choice(B200, 16, BIG, algo="NVLSTree").channels == 32
    assert nccl_choice(B200, 24, BIG, algo="NVLSTree").channels == 24
    assert nccl_choice(B200, 24, BIG, algo="NVLSTree", nccl="2.27.7").channels == 32


def test_nccl_2_20_5_gave_the_ring_a_quarter_of_the_rate_with_ll():
    # PCIe 4.0 ring graph: 2 channels × 12 GB/s; LL ×1/4 in 2.20.5 (×1/2 since), × 8/14.
    old = nccl_choice("pcie-gen4", 8, BIG, algo="Ring", proto="LL", nccl="2.20.5")
    now = nccl_choice("pcie-gen4", 8, BIG, algo="Ring", proto="LL")
    assert old.bandwidth == pytest.approx(24 * 0.25 * 8 / 14 * 1e9)
    assert now.bandwidth == pytest.approx(24 * 0.5 * 8 / 14 * 1e9)


def test_a_release_without_blackwell_reads_it_as_hopper():
    # 2.21.5 has no sm100 row: a B200 takes Hopper's speeds, caps and 20.6 GB/s per link.
    assert constants("2.21.5")["caps"]["arch_index"]["blackwell"] == 2
    assert constants("2.21.5")["link_rates"]["nvlink_nccl"]["blackwell"] == 20.6
    # So a B200's 18 NVLink 5 links price as a Hopper's 18 NVLink 4 links (450 GB/s each way).
    b200 = load(B200)
    hopper = replace(b200, arch="hopper", levels={**b200.levels, "inside": replace(
        b200.level("inside"), bandwidth=450e9)})
    for algo in ("Ring", "NVLS"):
        old = nccl_choice(b200, 8, BIG, algo=algo, nccl="2.21.5")
        assert old.bandwidth == pytest.approx(nccl_choice(hopper, 8, BIG, algo=algo,
                                                          nccl="2.21.5").bandwidth)
        assert old.bandwidth < nccl_choice(b200, 8, BIG, algo=algo).bandwidth


def test_a_release_is_its_base_with_its_own_entries_laid_over():
    # 2.27.7 starts from 2.27.6, which starts from 2.27.5, 2.27.3 and 2.25.1.
    c = constants("2.27.7")
    assert c["speeds"]["inter"]["blackwell"][:3] == [96.0, 48.0, 45.1]
    assert c["link_rates"]["nvlink_nccl"]["blackwell"] == 40.1
    assert c["caps"]["per_channel_tree"][3] == [77.4, 82.8, 72.0]
    assert c["caps"]["per_channel_tree"][2] == constants()["caps"]["per_channel_tree"][2]
    assert c["rules"]["nvls_bandwidth"] == "min" and c["rules"]["absent"] == []
    assert constants("2.20.5")["rules"]["absent"] == ["PAT"]  # from 2.21.5
    assert constants("2.20.5")["hw_latency"]["nvlink"]["NVLS"] == [0.0, 0.0, 23.0]


def test_an_amd_host_takes_ll_s_amd_cap_and_twice_the_network_overhead():
    # DGX A100 (two AMD EPYC 7742) on two nodes. Ring/LL latency: 6.6 + 28 steps ×
    # max(0.6, getNetOverhead: 2.0 on AMD, 1.0 on Intel) + 2 × 2.7 µs.
    amd = nccl_choice("dgx-a100", 16, 8, algo="Ring", proto="LL")
    intel = nccl_choice(_cpu("dgx-a100", "intel"), 16, 8, algo="Ring", proto="LL")
    assert amd.latency * 1e6 == pytest.approx(6.6 + 28 * 2.0 + 2 * 2.7)
    assert intel.latency * 1e6 == pytest.approx(6.6 + 28 * 1.0 + 2 * 2.7)
    # Tree/LL: the tree graph's 8 channels × 30 GB/s × 0.92, capped at 8 × perChMaxTreeBw
    # 23.6 = 188.8; / 3.8 = 49.7, capped by llMaxBws across two nodes: row 1 (AMD) 22.5, row 0
    # (Intel, ARM) 39.0 GB/s of bus bandwidth; × 1/2 from bus to algorithm bandwidth.
    amd = nccl_choice("dgx-a100", 16, BIG, algo="Tree", proto="LL")
    arm = nccl_choice(_cpu("dgx-a100", "arm"), 16, BIG, algo="Tree", proto="LL")
    assert amd.bandwidth == pytest.approx(22.5 / 2 * 1e9)
    assert arm.bandwidth == pytest.approx(39.0 / 2 * 1e9)


def test_blackwells_nvlstree_correction_applies_on_x86_hosts_only():
    # 2.29.2 on: treeCorrectionFactor[Simple][log2(1 MiB / 64) = 14] = 0.5 on NVLSTree's
    # bandwidth, where the host is x86; a Grace (ARM) host keeps the tuner's bandwidth.
    x86 = nccl_choice(B200, 16, 1 << 20, algo="NVLSTree")
    arm = nccl_choice(_cpu(B200, "arm"), 16, 1 << 20, algo="NVLSTree")
    assert x86.bandwidth == pytest.approx(arm.bandwidth * 0.5)
    # 2.26.2 had no such correction.
    old = nccl_choice(B200, 16, 1 << 20, algo="NVLSTree", nccl="2.26.2")
    assert old.bandwidth == pytest.approx(nccl_choice(B200, 16, BIG, algo="NVLSTree",
                                                      nccl="2.26.2").bandwidth)


def test_the_cpu_is_a_top_level_field_with_intel_by_default():
    base = 'gpus_per_node = 8\n[inside]\nalpha = "1us"\nbandwidth = "300GB/s"\n'
    assert parse(base, "t").cpu == "intel"
    assert parse('cpu = "amd"\n' + base, "t").cpu == "amd"
    with pytest.raises(RingsimError, match="cpu must be one of intel, amd, arm, power"):
        parse('cpu = "sparc"\n' + base, "t")
    assert load("dgx-a100").cpu == "amd" and load("dgx-h100").cpu == "intel"


def test_nccl_2_18_priced_nvls_from_a_base_latency_and_its_own_ratios():
    # 2.18.5 (tuning.cc:195-238): NVLS and NVLSTree start from baseLat 23 µs; NVLSTree adds
    # 2 × (nNodes − 1) network hops of hwLat[NET][NVLSTree] 19 µs. Bandwidth: the graph's
    # speed (8 heads × 40 GB/s inside), × 5/6 for NVLS and × 0.7 nNodes / (2 (nNodes − 1))
    # for NVLSTree (0.7 on two nodes).
    nvls = nccl_choice("dgx-h100", 8, BIG, algo="NVLS", nccl="2.18.5")
    assert nvls.latency * 1e6 == pytest.approx(23.0)
    assert nvls.bandwidth == pytest.approx(8 * 40 * 5 / 6 * 1e9)
    tree = nccl_choice("dgx-h100", 16, BIG, algo="NVLSTree", nccl="2.18.5")
    assert tree.latency * 1e6 == pytest.approx(23.0 + 2 * 19.0)
    assert tree.bandwidth == pytest.approx(8 * 40 * 0.7 * 1e9)
    # Its Tree/Simple hop was 4 µs on NVLink and 14 µs across (28 in 2.20.5 and 2.21.5):
    # 0 + 2 × (7 × 4 + 1 × 14) = 84 µs.
    assert nccl_choice("dgx-h100", 16, 8, algo="Tree", proto="Simple",
                       nccl="2.18.5").latency * 1e6 == pytest.approx(84.0)


def test_nccl_2_18_and_2_19_rated_an_nvlink_4_link_at_20_gb_s():
    # topo.h: SM90_NVLINK_BW 20.0 until 2.19.4, 20.6 from 2.20.3: 18 links × 20 = 360 GB/s.
    from ringsim.cost.nccl_graph import system
    assert system(load("dgx-h100"), 8, "2.19.4").intra_bw == pytest.approx(360.0)
    assert system(load("dgx-h100"), 8, "2.20.5").intra_bw == pytest.approx(18 * 20.6)


def test_nccl_2_28_7_had_14_us_for_nvlstrees_network_hop():
    # hwLat[NET][NVLSTree][Simple]: 14 µs until 2.28.7, 20.9 from 2.28.9; 25 + 2 × hop.
    assert nccl_choice("dgx-h100", 16, 8, algo="NVLSTree",
                       nccl="2.28.7").latency * 1e6 == pytest.approx(25 + 2 * 14.0)
    assert nccl_choice("dgx-h100", 16, 8, algo="NVLSTree",
                       nccl="2.28.9").latency * 1e6 == pytest.approx(25 + 2 * 20.9)


def test_blackwells_ring_ll128_cap_by_release():
    # One B200 node: 16 ring channels × 45 GB/s × 0.92 = 662.4, capped at 16 ×
    # perChMaxRingLL128Bw: 34.5 in 2.29.2, 40.0 from 2.29.7; × 8/14.
    for release, cap in (("2.29.2", 34.5), ("2.29.7", 40.0), (None, 40.0)):
        choice = nccl_choice(B200, 8, BIG, algo="Ring", proto="LL128", nccl=release)
        assert choice.bandwidth == pytest.approx(min(16 * 45 * 0.92, 16 * cap) * 8 / 14 * 1e9)


def test_every_carried_release_prices_every_preset():
    from ringsim.cost.nccl import versions
    assert {"2.18.5", "2.19.4", "2.28.9", "2.29.7", "2.30.4"} <= set(versions())
    for release in versions():
        for topology, gpus in (("dgx-h100", 16), ("dgx-a100", 16), ("pcie-gen4", 8),
                               (B200, 16)):
            for size in (8, 1 << 20, BIG):
                assert nccl_choice(topology, gpus, size, nccl=release).seconds > 0


def test_an_all_reduce_ring_crossed_the_network_2_nnodes_times_until_2_23():
    from ringsim.cost.nccl import tuning_table
    # Two DGX H100s (16 ranks, Intel hosts, InfiniBand: the plugin adds no latency), Ring/LL.
    # tuning.cc: baseLat 6.6 + (nsteps - nInterSteps) × max(hwLat NVLink 0.6, netOverhead 1.0)
    # + nInterSteps × hwLat NET 2.7, with nsteps = 2 × 15 = 30.
    # 2.21.5 (tuning.cc:161): nInterSteps = 2 × nNodes = 4.
    assert tuning_table("dgx-h100", 16, "2.21.5")[("AllReduce", "Ring", "LL")][0] == (
        pytest.approx(6.6 + 26 * 1.0 + 4 * 2.7))
    # 2.25.1 (tuning.cc:322): nInterSteps = 2 × (nNodes - 1) = 2.
    assert tuning_table("dgx-h100", 16, "2.25.1")[("AllReduce", "Ring", "LL")][0] == (
        pytest.approx(6.6 + 28 * 1.0 + 2 * 2.7))
    # an all-gather crosses nNodes - 1 = 1 boundary in both: 6.6 + 14 × 1.0 + 2.7
    for release in ("2.21.5", "2.25.1"):
        assert tuning_table("dgx-h100", 16, release)[("AllGather", "Ring", "LL")][0] == (
            pytest.approx(6.6 + 14 * 1.0 + 2.7))


def test_all_gather_had_the_ring_only_in_2_18_and_nvls_from_2_19():
    from ringsim.cost.nccl import nccl_choice as choice, tuning_table
    # tuning.cc at v2.18.6-1:168 skips every algorithm but Ring for AllGather; v2.19.3-1
    # lets NVLS in. Eight H100s of one NVSwitch box:
    assert tuning_table("dgx-h100", 8, "2.18.5")[("AllGather", "NVLS", "Simple")] == (0.0, 0.0)
    assert tuning_table("dgx-h100", 8, "2.19.4")[("AllGather", "NVLS", "Simple")][1] > 0
    assert choice("dgx-h100", 8, BIG, "all-gather", nccl="2.18.5").algorithm == "Ring"
    with pytest.raises(RingsimError, match="no algorithm"):
        choice("dgx-h100", 8, BIG, "all-gather", algo="NVLS", nccl="2.18.5")


def test_broadcast_and_reduce_rows_are_the_ring_priced_one_hop():
    from ringsim.cost.nccl import max_threads, tuning_table
    # tuning.cc (v2.30.7-1:393-402): with sameChannels, baseLat + one hwLat of the link the
    # ring starts on (the network's across nodes), and nRanks / nsteps = 1 (nsteps = nRanks).
    two = tuning_table("dgx-h100", 16)
    assert two[("Broadcast", "Ring", "LL")] == pytest.approx((6.6 + 2.7, 39.0))  # llMaxBw Intel N2
    assert two[("Reduce", "Ring", "Simple")][0] == pytest.approx(8.4 + 14.0)
    assert all(two[("Broadcast", a, p)] == (0.0, 0.0) for a in ("Tree", "NVLS", "PAT")
               for p in ("LL", "LL128", "Simple"))
    # 2.20.5's LL ring: a third of the rate for one node's broadcast, a quarter for its reduce
    one = tuning_table("pcie-gen4", 4, "2.20.5")
    assert one[("Broadcast", "Ring", "LL")][1] == pytest.approx(
        one[("Reduce", "Ring", "LL")][1] * 4 / 3)
    # threads (device.h): LL 512, LL128 640, Simple 512 (256 for a ring of at most 12 GB/s)
    assert max_threads("dgx-h100", 8)[("Ring", "Simple")] == 512
    assert max_threads("pcie-gen4", 4)[("Ring", "Simple")] == 512  # one channel of 24 GB/s
    gen3 = parse('gpus_per_node = 4\narch = "volta"\n[inside]\nkind = "pcie"\n'
                 'alpha = "1us"\nbandwidth = "15.75GB/s"\n', "gen3")  # NCCL rates it 12 GB/s
    assert max_threads(gen3, 4)[("Ring", "Simple")] == 256
    assert max_threads("dgx-h100", 8)[("NVLS", "Simple")] == 640
    assert max_threads("dgx-h100", 8)[("PAT", "Simple")] == 0
    assert ("PAT", "Simple") not in max_threads("dgx-h100", 8, "2.21.5")
