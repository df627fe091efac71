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
    with pytest.raises(RingsimError, match="cpu must be one of intel, intel-broadwell, "
                       "intel-skylake, intel-sapphire-rapids, intel-emerald-rapids, amd, arm, "
                       "power, got 'sparc'"):
        parse('cpu = "sparc"\n' + base, "t")
    # The presets whose sources name their CPUs: DGX A100's AMD EPYC 7742, DGX H100's and
    # DGX H200's Intel Xeon Platinum 8480C, a Sapphire Rapids.
    assert load("dgx-a100").cpu == "amd"
    assert load("dgx-h100").cpu == load("dgx-h200").cpu == "intel-sapphire-rapids"


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
    from ringsim.cost.nccl_tuner import versions
    assert {"2.18.5", "2.19.4", "2.22.3", "2.23.4", "2.24.3", "2.28.9", "2.29.7",
            "2.30.4"} <= set(versions())
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
    # and NCCL_ALGO=NVLS leaves 2.18 its ring (v2.18.6-1:296-297: "Never disable ring for
    # non-allreduce operations", `if (a == NCCL_ALGO_RING && c != ncclFuncAllReduce) continue;`)
    assert choice("dgx-h100", 8, BIG, "all-gather", algo="NVLS",
                  nccl="2.18.5").algorithm == "Ring"
    assert choice("dgx-h100", 8, BIG, "all-gather", algo="NVLS").algorithm == "NVLS"


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


# Machines the audit of each release worked through, written out here: NVLink SHARP inside
# (in_network_reduction), `across` the NIC per GPU (InfiniBand SHARP where it reduces).
def _machine(gpus_per_node: int, arch: str, nvlink: str, nic: str, sharp: bool = False,
             plugin: str = "0us"):
    return parse(f'gpus_per_node = {gpus_per_node}\narch = "{arch}"\n'
                 f'[inside]\nkind = "nvlink"\nin_network_reduction = true\nalpha = "0.47us"\n'
                 f'bandwidth = "{nvlink}"\n[across]\nkind = "network"\n'
                 f'in_network_reduction = {str(sharp).lower()}\nalpha = "2.7us"\n'
                 f'bandwidth = "{nic}"\nnet_plugin_latency = "{plugin}"\n', "audit")


NVL72 = peers.system_file("gb200-nvl72")


def test_nvls_all_gather_ran_on_at_most_32_gpus_of_a_node_from_nccl_2_25_1():
    # enqueue.cc v2.25.1-1:1610 skips NVLS for all-gather and reduce-scatter where nRanks >
    # NCCL_MAX_NVLS_ARITY, v2.30.7-1:2004-2005 where localRanks > it (device.h v2.25.1-1:180:
    # 32); v2.21.5-1:1505 skips them only across nodes. tuning.cc still prices the cell.
    from ringsim.cost.nccl import tuning_table
    max_nvls_arity = 32
    for release in ("2.25.1", "2.27.7", None):
        assert tuning_table(NVL72, 72, release)[("AllGather", "NVLS", "Simple")][1] > 0
        for collective in ("all-gather", "reduce-scatter"):
            assert nccl_choice(NVL72, max_nvls_arity, 1 << 20, collective,
                               nccl=release).algorithm == "NVLS"
            for gpus in (max_nvls_arity + 1, 72):
                assert nccl_choice(NVL72, gpus, 1 << 20, collective, nccl=release) == (
                    nccl_choice(NVL72, gpus, 1 << 20, collective, algo="^NVLS", nccl=release))
        with pytest.raises(RingsimError, match="no algorithm"):
            nccl_choice(NVL72, 72, 1 << 20, "all-gather", algo="NVLS", nccl=release)
        # an all-reduce keeps NVLS on all 72
        assert nccl_choice(NVL72, 72, 1 << 20, nccl=release).algorithm == "NVLS"
    assert nccl_choice(NVL72, 72, 1 << 20, "all-gather", nccl="2.21.5").algorithm == "NVLS"


def test_one_gpu_per_node_trees_kept_085_from_nccl_2_18_3():
    # tuning.cc v2.18.3-1:183 (v2.21.5-1:185, v2.25.1-1:260): busBw *= .85 where the tree
    # graph's pattern is NCCL_TOPO_PATTERN_TREE, which search.cc v2.18.3-1:832 (v2.21.5-1:897)
    # sets with one GPU in the node; 2.26.2 (v2.26.2-1:261) reads comm->maxTreePattern.
    # v2.18.1-1 has no such line. Four 100 GbE nodes: the tree graph is 1 channel at 12 GB/s
    # across (4 nodes: bwInter); Tree/Simple all-reduce = min(12 x .92, perChMaxTreeBw 17.8)
    # x .85 x 1/2 = 4.692 GB/s, 5.52 without the .85.
    from ringsim.cost.nccl import tuning_table
    from ringsim.cost.nccl_tuner import versions
    bus = min(1 * 12.0 * 0.92, 1 * 17.8)
    for release in versions():
        expected = bus * (1.0 if release == "2.18.1" else 0.85) * 0.5
        assert tuning_table("ethernet-100g", 4, release)[
            ("AllReduce", "Tree", "Simple")][1] == pytest.approx(expected)
    # 16 nodes, 2.21.5: with the 0.85 the trees lose 256 KiB to Ring/LL, 512 KiB to Ring/LL128
    # and 8 MiB to Ring/Simple.
    for size, pick in ((256 << 10, ("Ring", "LL")), (512 << 10, ("Ring", "LL128")),
                       (8 << 20, ("Ring", "Simple"))):
        choice = nccl_choice("ethernet-100g", 16, size, nccl="2.21.5")
        assert (choice.algorithm, choice.protocol) == pick


def test_nvls_all_gather_kept_5_6_of_its_bus_bandwidth_until_nccl_2_23():
    # tuning.cc v2.19.3-1:196-201 converts every algorithm's bus bandwidth (NVLS: 5.0/6.0);
    # v2.21.5-1:213 exempts CollNetDirect's all-gather and reduce-scatter only; v2.25.1-1:289
    # (as v2.23.4-1:221) every algorithm but the ring's. Eight H100s: the NVLS graph has 8
    # heads at 40 GB/s inside, 60 across (one node): 8 x min(40, 60) = 320 GB/s of bus bandwidth.
    from ringsim.cost.nccl import tuning_table
    bus = 8 * min(40.0, 60.0)
    for release, ratio in (("2.19.3", 5 / 6), ("2.20.5", 5 / 6), ("2.21.5", 5 / 6),
                           ("2.25.1", 1.0), ("2.26.2", 1.0)):
        table = tuning_table("dgx-h100", 8, release)
        for func in ("AllGather", "ReduceScatter"):
            assert table[(func, "NVLS", "Simple")][1] == pytest.approx(bus * ratio)
    # So 2.19.4 runs a 4 MiB all-gather on the ring (LL128), not on NVLS.
    for collective in ("all-gather", "reduce-scatter"):
        choice = nccl_choice("dgx-h100", 8, 4 << 20, collective, nccl="2.19.4")
        assert (choice.algorithm, choice.protocol) == ("Ring", "LL128")


def test_nccl_2_27_priced_nvls_all_gather_by_its_own_formula():
    # tuning.cc v2.27.3-1:267-274 (to v2.27.7-1): an all-reduce takes min(bwIntra, bwInter),
    # an all-gather or reduce-scatter min(bwIntra x (ppn - 1) / ppn, bwInter x 0.9), with no
    # bus-to-algorithm ratio (v2.27.3-1:321). Eight H100s: 8 heads, 40 GB/s inside, 60 across.
    from ringsim.cost.nccl import tuning_table
    heads, intra, inter, ppn = 8, 40.0, 60.0, 8
    for release in ("2.27.3", "2.27.7"):
        table = tuning_table("dgx-h100", 8, release)
        assert table[("AllGather", "NVLS", "Simple")][1] == pytest.approx(
            heads * min(intra * (ppn - 1) / ppn, inter * 0.9))  # 280
        assert table[("AllReduce", "NVLS", "Simple")][1] == pytest.approx(
            heads * min(intra, inter) * 5 / 6)
    assert tuning_table("dgx-h100", 8, "2.26.2")[("AllGather", "NVLS", "Simple")][1] == (
        pytest.approx(heads * min(intra, inter)))  # 320


def test_nvls_needed_three_gpus_in_a_node_until_nccl_2_28_7():
    # transport/nvls.cc v2.27.7-1:160 (v2.18.3-1:239, v2.28.3-1:160): `gpuCount <= 2` leaves
    # nvlsSupport 0, so init.cc (v2.27.7-1:883-890) leaves the NVLS graph zeroed, unsearched:
    # tuning.cc v2.27.7-1:246 `intraHw[a] = graphs[a]->typeIntra == LINK_NVL ? NCCL_HW_NVLINK :
    # NCCL_HW_PCI` reads the PCIe row, `/* NVLS */ { 0, 0, 0 }` (:151), so the cell prints
    # 0.0/0.0 (as NCCL 2.27.7 did for the NVLink pair of A100s in tests/data/nccl_tuning.toml),
    # and from 2.28.3 tuning.cc skips it (fewer than two channels). v2.28.7-1:161: `gpuCount
    # < 2`. Two H100s under 2.28.7: 2 heads at 60 GB/s: min(60 x nvlsEfficiency .85 x (2 - 1)
    # / 2 x 2, 60) x 2 heads x 2 / 2.
    from ringsim.cost.nccl import tuning_table
    assert tuning_table("dgx-h100", 2, "2.27.7")[("AllReduce", "NVLS", "Simple")] == (0.0, 0.0)
    # With NVLS (eight GPUs) the same cell has the NVLink hop, 25 us.
    assert tuning_table("dgx-h100", 8, "2.27.7")[("AllReduce", "NVLS", "Simple")][0] == 25.0
    assert tuning_table("dgx-h100", 2, "2.28.3")[("AllReduce", "NVLS", "Simple")] == (0.0, 0.0)
    assert tuning_table("dgx-h100", 2, "2.28.7")[("AllReduce", "NVLS", "Simple")][1] == (
        pytest.approx(min(60 * 0.85 * (2 - 1) / 2 * 2, 60) * 2 * 2 / 2))
    # Two H100s per node on 400 Gb/s: no NVLSTree before 2.28.7, and the rings keep their
    # 2 x 4 graph channels rather than NVLS's 16 in 2.25.1.
    pairs = _machine(2, "hopper", "450GB/s", "400Gb/s")
    for release, has in (("2.21.5", False), ("2.27.7", False), ("2.28.7", True)):
        cell = tuning_table(pairs, 4, release)[("AllReduce", "NVLSTree", "Simple")]
        assert (cell[1] > 0) == has
    assert nccl_choice(pairs, 4, BIG, algo="Ring", nccl="2.25.1").channels == 2 * 4


def test_ll128_was_off_by_default_for_blackwell_up_to_nccl_2_21():
    # tuning.cc v2.21.5-1:311-316: `switch (minCompCap) { case 70: case 80: case 90: ...
    # default: pEnable &= 0; }`; v2.25.1-1:435-436 add `case 100:` and `case 120:`. A B200 is
    # compute capability 10.0, so 2.21.5 leaves LL128 off (NCCL_PROTO=LL128 still turns it on).
    from ringsim.cost.nccl import tuning_table
    old, new = tuning_table(B200, 16, "2.21.5"), tuning_table(B200, 16, "2.25.1")
    for algo in ("Tree", "Ring"):
        assert old[("AllReduce", algo, "LL128")][1] == 0.0
        assert old[("AllReduce", algo, "LL128")][0] > 0
    # 2.25.1, two nodes: min(min(8 x 48 x .92, 8 x perChMaxTreeBw 82.8) x 120/128, 8 x
    # perChMaxTreeLL128Bw 73.4) x 1/2
    assert new[("AllReduce", "Tree", "LL128")][1] == pytest.approx(
        min(min(8 * 48 * 0.92, 8 * 82.8) * 120 / 128, 8 * 73.4) / 2)
    assert nccl_choice(B200, 16, 256 << 10, nccl="2.21.5").protocol != "LL128"
    assert nccl_choice(B200, 16, 256 << 10, nccl="2.25.1").protocol == "LL128"
    assert nccl_choice(B200, 16, 256 << 10, proto="LL128", nccl="2.21.5").protocol == "LL128"


def test_collnet_adds_half_the_channels_before_the_second_doubling():
    # connect.cc v2.30.7-1:466-468 (v2.18.3-1:397-399, v2.25.1-1:458-460): with CollNet, where
    # the CollNetChain graph is faster inside than across and a node has more than one GPU,
    # nChannels + nChannels / 2; then v2.30.7-1:481 doubles again across nodes while the
    # ring's bwIntra > 45 and nChannels < 16. Six B200s per node, 400 Gb/s NICs: the ring
    # graph has 6 channels at 48 GB/s, the CollNetChain graph 86 GB/s inside, 48 across.
    ring = 6
    plain = 2 * ring
    plain = 2 * plain if plain < 16 else plain      # 24
    sharp = 2 * ring + (2 * ring) // 2              # 18
    sharp = 2 * sharp if sharp < 16 else sharp      # 18: not doubled
    for nic_sharp, channels in ((False, plain), (True, sharp)):
        machine = _machine(6, "blackwell", "900GB/s", "400Gb/s", sharp=nic_sharp)
        assert nccl_choice(machine, 12, BIG, algo="Ring", proto="Simple").channels == channels
    # DGX H100s with 200 Gb/s SHARP NICs, 16 GPUs: 8 ring channels at 24 GB/s, CollNetChain
    # 45 inside, 24 across: 2 x 8 + 8 = 24 channels. A 16 KiB Ring/Simple all-reduce: 16384 /
    # (24 x 16) = 42 bytes < 64, so no ring plateau: 8.4 + 28 x max(3.4, 3 x 1.0) + 2 x 14 us.
    dgx = _machine(8, "hopper", "450GB/s", "200Gb/s", sharp=True)
    assert nccl_choice(dgx, 16, BIG, algo="Ring", proto="Simple").channels == 24
    small = nccl_choice(dgx, 16, 16384, algo="Ring", proto="Simple")
    assert small.latency * 1e6 == pytest.approx(8.4 + 28 * max(3.4, 3 * 1.0) + 2 * 14.0)


def test_collnet_with_more_than_8_gpus_in_a_node_by_release():
    # init.cc v2.21.5-1:1197-1199: more than NCCL_MAX_DIRECT_ARITY + 1 (device.h: 7 + 1) GPUs
    # in a node turn CollNet off, and with it NVLS across nodes (tuning.cc v2.21.5-1:287-290).
    # From 2.25.1 tuning.cc prices both CollNet cells; enqueue.cc v2.25.1-1:1606 skips
    # CollNetDirect, v2.28.3-1:1784 CollNetChain too. Two NVL72 racks joined by SHARP NICs.
    from ringsim.cost.nccl import tuning_table
    racks = _machine(72, "blackwell", "900GB/s", "400Gb/s", sharp=True)
    for release in ("2.21.5", "2.22.3"):  # init.cc v2.22.3-1:1036-1039 as v2.21.5-1
        old = tuning_table(racks, 144, release)
        for algo in ("CollNetDirect", "CollNetChain", "NVLS"):
            assert old[("AllReduce", algo, "Simple")][1] == 0.0
        # The check comes after init.cc searched CollNet's graph (v2.21.5-1:1068-1070), so
        # tuning.cc v2.21.5-1:225-252 still prints its latency, on the NVLink row:
        # CollNetDirect 2 x (min(1, 71) x 3.7 + 71 x 0.4) + 31 us.
        assert old[("AllReduce", "CollNetDirect", "Simple")][0] == pytest.approx(
            2 * (3.7 + 71 * 0.4) + 31.0)
        # With CollNet off, NCCL_ALGO=CollNetChain names none of Ring, Tree and NVLSTree, so
        # tuning.cc v2.21.5-1:291-296 turns Ring and Tree back on: "If user has hard set
        # NCCL_ALGO=COLLNET, ignore it".
        assert nccl_choice(racks, 144, BIG, algo="CollNetChain",
                           nccl=release).algorithm in ("Ring", "Tree")
    # 2.23.4 keeps CollNet on (its init.cc has no such check) and enqueue.cc v2.23.4-1:1793
    # skips CollNetDirect only: `comm->maxLocalRanks > NCCL_MAX_DIRECT_ARITY+1`. NCCL_ALGO=
    # CollNetDirect then leaves the call nothing it runs, and enqueue.cc (v2.23.4-1:1846-1853)
    # takes the ring's backup bandwidth (tuning.cc v2.23.4-1:446-450, comm->ringbdw).
    assert nccl_choice(racks, 144, BIG, algo="CollNetChain", nccl="2.23.4").seconds > 0
    assert nccl_choice(racks, 144, BIG, algo="CollNetDirect", nccl="2.23.4").algorithm == "Ring"
    # 2.25.1, CollNetChain: 2 x (72 - 1) x hwLat NVLink 2.8 + hwLat NET 30 us; the graph's 15
    # channels x 48 GB/s inside x 1/2.
    assert tuning_table(racks, 144, "2.25.1")[("AllReduce", "CollNetChain", "Simple")] == (
        pytest.approx((2 * 71 * 2.8 + 30.0, 15 * 48.0 * 0.5)))
    assert nccl_choice(racks, 144, BIG, algo="CollNetChain", nccl="2.25.1").seconds > 0
    assert nccl_choice(racks, 144, BIG, algo="CollNetChain", nccl="2.27.7").seconds > 0
    for release in ("2.25.1", None):
        with pytest.raises(RingsimError, match="no algorithm"):
            nccl_choice(racks, 144, BIG, algo="CollNetDirect", nccl=release)
    assert tuning_table(racks, 144)[("AllReduce", "CollNetChain", "Simple")][1] > 0
    with pytest.raises(RingsimError, match="no algorithm"):
        nccl_choice(racks, 144, BIG, algo="CollNetChain")


def test_nccl_2_20_and_2_21_judged_the_ring_plateau_on_the_raised_channels():
    # connect.cc v2.21.5-1:472-479 (v2.20.5-1:471-475): collChannels = nChannels, then
    # nChannels is raised to nvlsChannels (16); enqueue.cc v2.21.5-1:1568 starts from
    # collChannels, tuning.cc v2.21.5-1:438 tests the plateau on nChannels. Two nodes of four
    # H100s on 200 Gb/s: the ring graph has 4 channels at 24 GB/s, so collChannels = 8.
    quads = _machine(4, "hopper", "450GB/s", "200Gb/s")
    nvls_channels, coll_channels = 16, 2 * 4
    assert nccl_choice(quads, 8, BIG, algo="Ring", proto="Simple", nccl="2.21.5").channels == (
        coll_channels)
    # 4 KiB: 4096 / (16 x 8) = 32 bytes < 64: no x 1.4. 2.21.5's ring latency: 8.4 + (14 -
    # 2 nNodes) x max(3.4, 3 x 1.0) + 2 nNodes x 14 us.
    assert 4096 // (nvls_channels * 8) < 64 <= 4096 // (coll_channels * 8)
    for release in ("2.20.5", "2.21.5"):
        small = nccl_choice(quads, 8, 4096, algo="Ring", proto="Simple", nccl=release)
        assert small.latency * 1e6 == pytest.approx(8.4 + 10 * 3.4 + 4 * 14.0)


def test_hoppers_second_channel_doubling_wanted_compute_capability_9_0_up_to_2_21():
    # connect.cc v2.19.3-1:410 (v2.18.3-1:405, v2.21.5-1:457): `comm->minCompCap == 90 &&
    # nNodes > 1 && ring bwIntra > 45.0 && 2*nChannels <= MAXCHANNELS (32)`; v2.25.1-1:466:
    # `>= 90`. Two nodes, ring graph 8 channels at 48 GB/s: an H100 gets 2 x 2 x 8, a B200
    # (compute capability 10.0) 2 x 8.
    assert nccl_choice("dgx-h100", 16, BIG, algo="Ring", nccl="2.19.4").channels == 32
    assert nccl_choice(B200, 16, BIG, algo="Ring", nccl="2.19.4").channels == 16
    for release in ("2.18.6", "2.19.4"):
        assert nccl_choice("dgx-h100", 16, BIG, "all-gather", nccl=release).channels == 32
        assert nccl_choice(B200, 16, BIG, "all-gather", nccl=release).channels == 16


def test_multi_node_nvls_all_gather_was_priced_but_never_run_until_nccl_2_27_3():
    # tuning.cc zeroes NVLS all-gather and reduce-scatter across nodes only from
    # v2.27.3-1:299-318 (no CollNet plugin with them); before, with CollNet on (v2.25.1-1:
    # 413-416) it prices them, and enqueue.cc v2.25.1-1:1610 (v2.19.3-1:1172) never runs them.
    # Two DGX H100s with SHARP: NVLS graph 8 heads at 40 inside, 48 across; latency hwLat
    # NVLink NVLS 25 (23 in 2.19) + NET 18 us.
    from ringsim.cost.nccl import tuning_table
    sharp = peers.system_file("h100-ndr-sharp")
    bus = 8 * min(40.0, 48.0)
    for release, latency, ratio in (("2.19.4", 23.0 + 18.0, 5 / 6), ("2.21.5", 25.0 + 18.0, 5 / 6),
                                    ("2.25.1", 25.0 + 18.0, 1.0), ("2.26.2", 25.0 + 18.0, 1.0)):
        cell = tuning_table(sharp, 16, release)[("AllGather", "NVLS", "Simple")]
        assert cell == pytest.approx((latency, bus * ratio))
        if release < "2.24":
            # the table has NVLS, so tuning.cc restores nothing, but enqueue.cc falls back
            # to the ring's backup bandwidth (v2.19.3-1:1194-1201)
            assert nccl_choice(sharp, 16, BIG, "all-gather", algo="NVLS",
                               nccl=release).algorithm == "Ring"
        else:
            with pytest.raises(RingsimError, match="no algorithm"):
                nccl_choice(sharp, 16, BIG, "all-gather", algo="NVLS", nccl=release)
    assert tuning_table(sharp, 16, "2.27.3")[("AllGather", "NVLS", "Simple")][1] == 0.0


def test_calls_under_64_bytes_took_the_first_tree_correction_until_nccl_2_22():
    # utils.h v2.21.5-1:46-50: log2i(0) = 0, so tuning.cc v2.21.5-1:434-435 multiplies a
    # 32-byte Tree call by treeCorrectionFactor[Simple][0] = .9 as a 64-byte one; from 2.22.3
    # log2Down(0) = -1 (bitops.h v2.22.3-1:130-131) and `logSize >= 0` skips it.
    first = 0.9
    for release, ratio in (("2.21.5", 1.0), ("2.18.6", 1.0), ("2.22.3", 1 / first),
                           ("2.25.1", 1 / first)):
        tiny = nccl_choice("dgx-a100", 16, 32, algo="Tree", proto="Simple", nccl=release)
        line = nccl_choice("dgx-a100", 16, 64, algo="Tree", proto="Simple", nccl=release)
        assert tiny.channels == line.channels == 1
        assert tiny.bandwidth == pytest.approx(line.bandwidth * ratio)


def test_nccl_2_22_3_kept_2_21_5s_tables_and_ran_rings_on_nvls_channels():
    from ringsim.cost.nccl import tuning_table
    # Two DGX H100s, Tree/Simple all-reduce latency. tuning.cc v2.22.3-1:57 `{  6.8, 14.0,
    # 0 }, ...  // Tree, Ring`, :67 NVLink Tree `{ .6, 1.25, 28 }`, :75 NET Tree `{ 5.0, 8.5,
    # 28 }`, :249-250 `2 * ((nRanks/nNodes-1) * intraLat + log2i(nNodes) * interLat)`:
    # 0 + 2 x (7 x 28 + 1 x 28) = 448 us, as 2.21.5; v2.23.4-1:57, 67, 75 (8.4; 4.0; 14):
    # 8.4 + 2 x (7 x 4 + 1 x 14) = 92.4 us.
    for release, expected in (("2.21.5", 2 * (7 * 28 + 28)), ("2.22.3", 2 * (7 * 28 + 28)),
                              ("2.23.4", 8.4 + 2 * (7 * 4.0 + 14.0))):
        assert tuning_table("dgx-h100", 16, release)[("AllReduce", "Tree", "Simple")][0] == (
            pytest.approx(expected))
    # enqueue.cc v2.22.3-1:1617 `int nc = comm->nChannels;`, which connect.cc v2.22.3-1:493-494
    # raised to nvlsChannels (16) after collChannels (:487); v2.21.5-1:1568 started from
    # `comm->collChannels`. Two nodes of four H100s: ring graph 4 channels, so 8 against 16.
    quads = _machine(4, "hopper", "450GB/s", "200Gb/s")
    for release, channels in (("2.21.5", 8), ("2.22.3", 16)):
        for algo in ("Ring", "Tree"):
            assert nccl_choice(quads, 8, BIG, algo=algo, proto="Simple",
                               nccl=release).channels == channels


def test_nccl_2_23_4_added_pat_and_priced_one_gpu_per_node_with_the_tree_row():
    from ringsim.cost.nccl import tuning_table
    # Four 100 GbE nodes, one GPU each: the tree graph (PAT's) is 1 channel at 12 GB/s.
    # tuning.cc v2.23.4-1:193 `if (a == NCCL_ALGO_PAT) busBw *= .85;`, and no bus-to-algorithm
    # ratio for an all-gather but the ring's: 12 x .85 = 10.2 GB/s; v2.24.3-1:256 `.75`: 9.0.
    # Latency :278-280 `8 + log2i(nNodes) * (interLat/3.5) + nRanks * 2.8` with :236 `interLat =
    # ppn == 1 ? hwLat[NCCL_HW_NET][NCCL_ALGO_TREE][p]` (14 us): 8 + 2 x 4 + 4 x 2.8 = 27.2.
    pat = {r: tuning_table("ethernet-100g", 4, r).get(("AllGather", "PAT", "Simple"))
           for r in ("2.22.3", "2.23.4", "2.24.3")}
    assert pat["2.22.3"] is None  # no PAT column before 2.23
    assert pat["2.23.4"] == pytest.approx((8 + 2 * 14.0 / 3.5 + 4 * 2.8, 12 * 0.85))
    assert pat["2.24.3"] == pytest.approx((8 + 2 * 14.0 / 3.5 + 4 * 2.8, 12 * 0.75))
    # Ring/LL all-reduce: v2.23.4-1:258 `nInterSteps = ... 2*(nNodes-1)`, all 6 steps at the
    # Tree row's network hop 5.0: 6.6 + 6 x 5.0 = 36.6 us. v2.22.3-1:159 `2*nNodes` (8) steps
    # at the ring's 2.7, the other 6 - 8 at max(hwLat PCIe Ring LL 1.0, netOverhead 1.0):
    # 6.6 - 2 x 1.0 + 8 x 2.7 = 26.2 us. Ring/LL128: 12 x 0.92 (v2.23.4-1:188; 0.7 with one
    # GPU per node in v2.22.3-1:179) x nRanks / nsteps 4 / 6.
    old = tuning_table("ethernet-100g", 4, "2.22.3")
    new = tuning_table("ethernet-100g", 4, "2.23.4")
    assert old[("AllReduce", "Ring", "LL")][0] == pytest.approx(6.6 - 2 * 1.0 + 8 * 2.7)
    assert new[("AllReduce", "Ring", "LL")][0] == pytest.approx(6.6 + 6 * 5.0)
    assert old[("AllReduce", "Ring", "LL128")][1] == pytest.approx(12 * 0.7 * 4 / 6)
    assert new[("AllReduce", "Ring", "LL128")][1] == pytest.approx(12 * 0.92 * 4 / 6)


def test_nccl_2_24_3_kept_the_plugins_latency_in_whole_us_and_had_no_blackwell():
    from ringsim.cost.nccl import tuning_table
    # A plugin that reports 2.5 us: topo.cc v2.23.4-1:798 `xmlInitAttrFloat(netNode, "latency",
    # props.latency)` keeps 2.5, v2.24.3-1:1170 `xmlInitAttrInt(...)` keeps 2. Two nodes of
    # eight H100s, Ring/Simple all-gather: 8.4 + 14 x max(3.4, 3 x 1.0) + 1 x (14 + 2 x that),
    # the plugin's latency added twice with Simple (tuning.cc v2.24.3-1:295-298).
    plugin = _machine(8, "hopper", "450GB/s", "400Gb/s", plugin="2.5us")
    for release, latency in (("2.23.4", 2.5), ("2.24.3", 2.0), ("2.25.1", 2.0)):
        assert tuning_table(plugin, 16, release)[("AllGather", "Ring", "Simple")][0] == (
            pytest.approx(8.4 + 14 * 3.4 + 14.0 + 2 * latency))
    # A B200 (compute capability 10.0): v2.24.3-1:210 stops compCapIndex at Hopper and :429-430
    # leave LL128 off (`default: pEnable &= 0`); v2.25.1-1:435-436 add `case 100:`. Two B200
    # nodes, Ring/LL128 all-reduce: 8 graph channels at 48 GB/s x 0.92, capped at 8 x 36.7
    # (Hopper's perChMaxRingLL128Bw) in 2.24.3 but zeroed, 8 x 73.4 in 2.25.1, x 16 / 30.
    old, new = tuning_table(B200, 16, "2.24.3"), tuning_table(B200, 16, "2.25.1")
    assert old[("AllReduce", "Ring", "LL128")][1] == 0.0
    assert new[("AllReduce", "Ring", "LL128")][1] == pytest.approx(
        min(8 * 48 * 0.92, 8 * 73.4) * 16 / 30)


def _far(topology, path: str, cpu: str | None = None):
    """A topology whose GPUs reach their NIC by `path` (nic_path), on another host CPU."""
    topo = load(topology) if isinstance(topology, str) else topology
    across = replace(topo.level("across"), nic_path=path)
    return replace(topo, levels={**topo.levels, "across": across}, cpu=cpu or topo.cpu)


def test_ll128_across_nodes_needs_a_near_nic_in_every_release():
    from ringsim.cost.nccl import tuning_table
    # tuning.cc v2.18.6-1:285 (to v2.26.6-1:429): `pEnable &= (graphs[a]->typeInter <=
    # PATH_PXB || (minCompCap >= 90 && graphs[a]->typeInter <= PATH_PXN));` PHB and SYS are
    # past both. Two DGX A100 nodes: the ring's LL128 is 8 channels x 24 GB/s x 0.92, capped
    # at 8 x 20 (perChMaxRingLL128Bws, Ampere, two nodes), x nRanks / nsteps = 16 / 30.
    for release in ("2.18.6", "2.24.3", None):
        near = tuning_table(_far("dgx-a100", "pix"), 16, release)
        assert near[("AllReduce", "Ring", "LL128")][1] == pytest.approx(8 * 20.0 * 16 / 30)
        assert tuning_table("dgx-a100", 16, release) == near  # pxb, the default, as pix
        for path in ("phb", "sys"):
            far = tuning_table(_far("dgx-a100", path), 16, release)
            ring128 = ("AllReduce", "Ring", "LL128")
            assert far[ring128] == (near[ring128][0], 0.0)
            assert far[("AllReduce", "Tree", "LL128")][1] == 0.0
    # One node crosses no NIC: search.cc leaves typeInter at PATH_PIX, LL128 stays on.
    one = tuning_table(_far("dgx-h100", "sys"), 8)
    assert one[("AllReduce", "Ring", "LL128")][1] > 0
    # Hopper with PHB: past PATH_PXN too, in every release (v2.30.7-1:522).
    for release in ("2.21.5", "2.27.3", None):
        assert tuning_table(_far("dgx-h100", "phb"), 16, release)[
            ("AllReduce", "Ring", "LL128")][1] == 0.0
    assert nccl_choice(_far("dgx-h100", "phb"), 16, 1 << 20).protocol != "LL128"


def test_a_nic_behind_a_grace_cpu_is_p2c_from_nccl_2_27_3_and_phb_before():
    from ringsim.cost.nccl import tuning_table
    # Hopper GPUs one per node whose NIC hangs off their Grace CPU (C2C, then PCIe). 2.26:
    # topo.h has PATH_C2C (3) but no P2C, so paths.cc's path through the CPU's PCI link is
    # PATH_PHB (7): LL128 off. v2.27.3-1:460: `typeInter <= (ncclParamLl128C2c() ? PATH_P2C :
    # PATH_PXN)` with NCCL_LL128_C2C 1 (v2.27.3-1:211) and P2C 7 after PXN 6: on. v2.27.5-1:
    # 461: `typeInter <= PATH_PXN` with P2C 6 before PXN 7: on.
    grace = _far(peers.system_file("h100-1gpu-4nic"), "p2c", "arm")
    cells = {r: tuning_table(grace, 4, r)[("AllReduce", "Ring", "LL128")][1]
             for r in ("2.26.6", "2.27.3", "2.27.5", None)}
    assert cells["2.26.6"] == 0.0
    assert cells["2.27.3"] > 0 and cells["2.27.5"] > 0 and cells[None] > 0
    # the same path is no slower than a PCIe switch's: only LL128's default moves
    assert tuning_table(grace, 4)[("AllReduce", "Ring", "Simple")] == tuning_table(
        _far(peers.system_file("h100-1gpu-4nic"), "pxb", "arm"), 4)[("AllReduce", "Ring", "Simple")]


def test_a_nic_on_the_other_socket_runs_no_faster_than_the_cpus_link():
    from pathlib import Path

    from ringsim.cost.nccl import tuning_table
    # NVIDIA/nccl-tests issue 293: one A100 PCIe and one 200 Gb/s HDR NIC per node, two AMD
    # EPYC sockets, the NIC on the other socket (SYS). topo.cc ncclTopoGetInterCpuBw: AMD_BW
    # 16 GB/s (topo.h v2.21.5-1:21), so the GPU's path to the NIC is 16 GB/s, not the NIC's 25.
    # search.cc tries Ampere's speeds from the first at most 16: 15 GB/s, 1 channel (16 / 15),
    # and cannot raise it (18 > 16). Ring/Simple all-reduce: 1 x 15 x nRanks / nsteps (2 / 2).
    file = Path(__file__).parent / "data" / "topologies" / "a100pcie-1hdr.toml"
    bought = load(str(file))
    across = _far(bought, "sys", "amd")
    assert tuning_table(bought, 2, "2.21.5")[("AllReduce", "Ring", "Simple")][1] == 24.0
    assert tuning_table(across, 2, "2.21.5")[("AllReduce", "Ring", "Simple")][1] == 15.0
    # The log of that run: "2 coll channels" (connect.cc: the ring graph's 1 channel, twice).
    assert nccl_choice(across, 2, BIG, nccl="2.21.5").channels == 2
    # LL128 is off there (SYS is past PATH_PXB for compute capability 8.0)
    assert tuning_table(across, 2, "2.21.5")[("AllReduce", "Ring", "LL128")][1] == 0.0
    # 2.18 had no AMD_BW: ncclTopoGetInterCpuBw left LOC_BW (v2.18.6-1 topo.cc:63), so only
    # LL128 moves there. An Intel host's link is rated SKL_QPI_BW, 10 GB/s: 1 x 10.
    assert tuning_table(across, 2, "2.18.6")[("AllReduce", "Ring", "Simple")][1] == 24.0
    intel = _far(bought, "sys", "intel")
    assert tuning_table(intel, 2, "2.21.5")[("AllReduce", "Ring", "Simple")][1] == 10.0
    # PHB keeps the NIC's rate: ringsim has no PCIe rate for the path (docs/cost.md, deviation 3)
    assert tuning_table(_far(bought, "phb", "intel"), 2, "2.21.5")[
        ("AllReduce", "Ring", "Simple")][1] == 24.0


def test_eight_gpus_share_one_link_between_the_sockets():
    # Two DGX H100 nodes (Intel) with every NIC on the other socket: each channel crosses the
    # CPUs' link once each way, SKL_QPI_BW 10 GB/s for all of them. search.cc from the first
    # Hopper speed at most 10: 6 GB/s x 1; 3 x 3 = 9 (3 / 6 > 0.49); 2.4 x 4 = 9.6; 1.2 x 8 =
    # 9.6 (no better); 0.24 / 2.4 < 0.49 ends it; 3.0 would fit only 3 channels, so no raise.
    from ringsim.cost.nccl_graph import graphs, system
    ring = graphs(system(_far("dgx-h100", "sys", "intel"), 16))["Ring"]
    assert (ring.channels, ring.bw_intra, ring.bw_inter) == (4, 2.4, 2.4)
    # The preset's own Sapphire Rapids from 2.26.2: SRP_QPI_BW 22 GB/s. Hopper's speeds from
    # the first at most 22: 22 x 1; 20, 17.5, 15 and 12 fit one channel too (no better); 6 /
    # 22 < 0.49 ends it: one channel at 22.
    ring = graphs(system(_far("dgx-h100", "sys"), 16))["Ring"]
    assert (ring.channels, ring.bw_intra, ring.bw_inter) == (1, 22.0, 22.0)
    # 2.25.1's topo.cc knew no Sapphire Rapids: SKL_QPI_BW, as a Skylake.
    ring = graphs(system(_far("dgx-h100", "sys"), 16, "2.25.1"))["Ring"]
    assert (ring.channels, ring.bw_intra, ring.bw_inter) == (4, 2.4, 2.4)


# topo.cc's ncclTopoGetInterCpuBw and topo.h at each tag, by the file's cpu (GB/s).
SOCKET_LINKS = {
    "2.18.3": {"intel": 10.0, "intel-broadwell": 6.0, "intel-skylake": 10.0,
               "intel-sapphire-rapids": 10.0, "intel-emerald-rapids": 10.0, "amd": 5000.0,
               "arm": 6.0, "power": 32.0},
    "2.25.1": {"intel": 10.0, "intel-broadwell": 6.0, "intel-skylake": 10.0,
               "intel-sapphire-rapids": 10.0, "intel-emerald-rapids": 10.0, "amd": 16.0,
               "arm": 6.0, "power": 32.0},
    "2.26.2": {"intel": 10.0, "intel-broadwell": 6.0, "intel-skylake": 10.0,
               "intel-sapphire-rapids": 22.0, "intel-emerald-rapids": 40.0, "amd": 16.0,
               "arm": 6.0, "power": 32.0},
}


@pytest.mark.parametrize("release", [None, "2.30.4", "2.28.3", "2.27.3", "2.26.6", "2.26.2",
                                     "2.25.1", "2.24.3", "2.22.3", "2.21.5", "2.19.3", "2.18.6"])
def test_the_socket_link_is_rated_by_the_intel_generation_as_each_release_rates_it(release):
    # v2.26.2-1 topo.cc:80-85 (ncclTopoAddCpu 519-523: model 0xCF and up ERP, 0x8F SRP, 0x55
    # SKL, else BDW); v2.25.1-1 topo.cc:80 (SKL from 0x55, else QPI_BW 6); v2.18.6-1 without
    # AMD_BW (LOC_BW 5000).
    from ringsim.cost.nccl_graph import system
    number = tuple(int(x) for x in (release or "2.30.7").split("."))
    row = SOCKET_LINKS["2.26.2" if number >= (2, 26, 2) else "2.25.1" if number >= (2, 19)
                       else "2.18.3"]
    for cpu, rate in row.items():
        sys = system(_far("dgx-h100", "sys", cpu), 16, release)
        assert sys.cpu_link == rate, (cpu, release)
        # every other rule reads the vendor: an Intel generation is Intel
        assert sys.cpu == ("intel" if cpu.startswith("intel") else cpu)
    # a NIC near its GPU crosses no socket link, whatever the CPU
    assert system(_far("dgx-h100", "pxb", "intel-emerald-rapids"), 16, release).cpu_link is None


def test_an_intel_generation_changes_only_the_socket_link_not_the_tuning_elsewhere():
    from ringsim.cost.nccl import tuning_table
    # LL's cap, the network's overhead per step and Blackwell's NVLSTree correction read
    # cpuVendor, which is Intel for every generation: near NICs, every table is plain intel's.
    for cpu in ("intel-broadwell", "intel-skylake", "intel-sapphire-rapids",
                "intel-emerald-rapids"):
        for machine, gpus in (("dgx-h100", 16), ("dgx-a100", 16)):
            assert tuning_table(_far(machine, "pxb", cpu), gpus) == tuning_table(
                _far(machine, "pxb", "intel"), gpus)
    # across the sockets the generation sets the cap: 40 GB/s lets Emerald Rapids' rings run
    # faster than Skylake's 10
    slow = tuning_table(_far("dgx-h100", "sys", "intel"), 16)[("AllReduce", "Ring", "Simple")]
    fast = tuning_table(_far("dgx-h100", "sys", "intel-emerald-rapids"), 16)[
        ("AllReduce", "Ring", "Simple")]
    assert fast[1] > 3 * slow[1]


def test_a_function_left_no_algorithm_falls_back_to_the_ring_from_2_19_3_to_2_23_4():
    from ringsim.cost.nccl import tuning_table
    # NCCL_ALGO=Tree leaves Broadcast nothing (tuning.cc tunes it on the ring only). Eight
    # H100s: ring graph 12 channels x 30 GB/s; Simple 360, LL min(llMaxBw 141.0, 360 x 0.5),
    # LL128 min(360 x 0.92, 12 x 36.7), all x nRanks / nsteps = 1.
    ring = {"LL": 141.0, "LL128": 360 * 0.92, "Simple": 360.0}
    for release in ("2.19.3", "2.21.5", "2.22.3", "2.23.4"):
        if release == "2.19.3":  # LL: a third of the rate, llMaxBw 87.7 on one Hopper node
            ring["LL"] = min(87.7, 360 / 3)
        else:
            ring["LL"] = 141.0
        # v2.23.4-1:341-356, before the table is printed: "at least set ring algo available"
        table = tuning_table("dgx-h100", 8, release, algo="Tree")
        for p, bw in ring.items():
            assert table[("Broadcast", "Ring", p)][1] == pytest.approx(bw)
        assert table[("AllReduce", "Ring", "Simple")][1] == 0.0  # Tree has it there
        assert nccl_choice("dgx-h100", 8, BIG, "broadcast", algo="Tree",
                           nccl=release).algorithm == "Ring"
    # With NCCL_PROTO=Simple too: comm->ringbdw keeps every protocol up to 2.21.5 (it is taken
    # before any switch, v2.21.5-1:223), and from 2.22.3 is zeroed where the protocol is off
    # (v2.22.3-1:318: `if (a == NCCL_ALGO_RING && pEnable == 0) comm->ringbdw[c][p] = 0;`).
    old = tuning_table("dgx-h100", 8, "2.21.5", algo="Tree", proto="Simple")
    new = tuning_table("dgx-h100", 8, "2.22.3", algo="Tree", proto="Simple")
    assert old[("Broadcast", "Ring", "LL")][1] == pytest.approx(141.0)
    assert new[("Broadcast", "Ring", "LL")][1] == 0.0
    assert new[("Broadcast", "Ring", "Simple")][1] == pytest.approx(360.0)
    small = nccl_choice("dgx-h100", 8, 4096, "broadcast", algo="Tree", proto="Simple",
                        nccl="2.21.5")
    assert small.protocol == "LL"  # NCCL_PROTO did not hold the ring it fell back to
    # 2.24.3 and later: no fallback, enqueue.cc fails ("no algorithm/protocol available")
    later = tuning_table("dgx-h100", 8, "2.24.3", algo="Tree")
    assert later[("Broadcast", "Ring", "Simple")][1] == 0.0
    for release in ("2.24.3", None):
        with pytest.raises(RingsimError, match="NCCL tunes only Ring for broadcast"):
            nccl_choice("dgx-h100", 8, BIG, "broadcast", algo="Tree", nccl=release)


def test_nccl_algo_naming_nothing_nccl_can_run_turned_ring_and_tree_back_on_up_to_2_23_4():
    from ringsim.cost.nccl import tuning_table
    # tuning.cc v2.23.4-1:306-314: without CollNet, CollNet's algorithms (and NVLS across
    # nodes) are turned off, and if that leaves none of Ring, Tree, NVLS and NVLSTree on, Ring
    # and Tree are turned back on. NCCL_ALGO=PAT on an all-reduce (which PAT does not run):
    for release in ("2.18.6", "2.21.5", "2.23.4"):
        table = tuning_table("dgx-h100", 16, release, algo="PAT")
        assert table == tuning_table("dgx-h100", 16, release, algo="Ring,Tree")
        pick = nccl_choice("dgx-h100", 16, 4096, algo="PAT", nccl=release)
        assert pick == nccl_choice("dgx-h100", 16, 4096, algo="Ring,Tree", nccl=release)
        assert pick.algorithm == "Tree"
    # v2.24.3-1:402-416 turns them off per function and puts nothing back
    for release in ("2.24.3", None):
        with pytest.raises(RingsimError, match="no algorithm"):
            nccl_choice("dgx-h100", 16, 4096, algo="PAT", nccl=release)
    # With CollNet on there is no switch back: NCCL_ALGO=PAT leaves AllReduce nothing, and
    # 2.23.4 falls back to the ring alone (v2.23.4-1:341-356); 2.18 fails the call.
    sharp = peers.system_file("h100-ndr-sharp")
    assert nccl_choice(sharp, 16, 4096, algo="PAT", nccl="2.23.4").algorithm == "Ring"
    with pytest.raises(RingsimError, match="no algorithm"):
        nccl_choice(sharp, 16, 4096, algo="PAT", nccl="2.18.6")


INTEL = ("intel", "intel-broadwell", "intel-skylake", "intel-sapphire-rapids",
         "intel-emerald-rapids")


@pytest.mark.parametrize("cpu", INTEL)
def test_on_a_shared_socket_link_a_larger_call_never_takes_less_time(cpu):
    # Two DGX H100 nodes with every NIC across the CPUs' link: the graph's per-channel speed
    # is each channel's share of that link (4 channels x 2.4 GB/s of Skylake's 10). A call
    # cut to one channel has the whole link to itself, up to that channel's own speed (24 GB/s
    # where nothing is shared), so from 16 KiB to 1 MiB the time only grows with the size.
    from ringsim.cost.nccl import nccl_choices
    from ringsim.cost.nccl_tuner import versions
    sizes = [16 << 10 << k for k in range(7)]
    for release in versions():
        key = None if release == versions()[0] else release
        for algo in (None, "Ring", "Tree"):
            for collective in ("all-reduce", "all-gather", "broadcast"):
                if collective != "all-reduce" and algo == "Tree":
                    continue  # NCCL tunes trees for all-reduce only
                times = [c.seconds for c in nccl_choices(_far("dgx-h100", "sys", cpu), 16, sizes,
                                                         collective, algo=algo, nccl=key)]
                assert times == sorted(times), (release, algo, collective, times)


def test_a_trees_hops_inside_the_node_do_not_cross_the_shared_socket_link():
    # Four DGX H100 nodes on Emerald Rapids with every NIC across the CPUs' link: the tree
    # graph runs 2 channels at 30 GB/s inside and 20 across (40 GB/s shared), and a 4 MiB
    # Tree/Simple all-reduce runs on 4 channels. Its first 512 KiB step crosses 14 NVLink hops
    # (up and down a chain of 8) at a channel's own 48 GB/s, where nothing is shared, and 4
    # network hops at its share of the link, 0.5 x 20 = 10 GB/s; NCCL's 12.88 GB/s over 4
    # channels prices one step at 3.22 GB/s. Fill: 14 x 10.92 + 4 x 52.43 - 162.8 = 199.8 us.
    # Priced at the capped 15 GB/s the NVLink hops would add 338 us more, and an 8 MiB call
    # (Tree/Simple) would take longer than a 16 MiB one (Ring/Simple).
    from ringsim.cost.nccl import nccl_choices
    far = _far("dgx-h100", "sys", "intel-emerald-rapids")
    pick = nccl_choice(far, 32, 4 << 20)
    assert (pick.algorithm, pick.protocol, pick.channels) == ("Tree", "Simple", 4)
    step = 524288
    expected = 14 * step / 48e9 + 4 * step / 10e9 - step / (12.88e9 / 4)
    assert pick.fill == pytest.approx(expected, rel=1e-3)
    times = [c.seconds for c in nccl_choices(far, 32, [1 << k for k in range(20, 29)])]
    assert times == sorted(times)


def test_a_call_cut_to_one_channel_gets_the_whole_shared_link():
    # The audit's case: Ring/LL at 64 KiB on one of the 8 channels. NCCL's own estimate for the
    # call (its --tuning cell, AllReduce Ring LL: 40.0 us, 2.56 GB/s of algorithm bandwidth =
    # min(llMaxBw 39.0, 4 x 2.4 x 0.5) x 16 / 30) is 40.0 + 65536 B / 2.56 GB/s = 65.6 us; the
    # lone channel moves what all eight would, so the model's time is that, not 2.0 times it.
    from ringsim.cost.nccl import tuning_table
    sys_path = _far("dgx-h100", "sys", "intel")
    lat, bw = tuning_table(sys_path, 16)[("AllReduce", "Ring", "LL")]
    assert (lat, bw) == (pytest.approx(40.0), pytest.approx(4 * 2.4 * 0.5 * 16 / 30))
    pick = nccl_choice(sys_path, 16, 65536, algo="Ring")
    assert (pick.algorithm, pick.protocol, pick.channels) == ("Ring", "LL", 1)
    assert pick.seconds == pytest.approx((40.0 + 65536 / (1000 * bw)) * 1e-6)
    # where nothing is shared each channel keeps its speed: a call on 1 of the 16 rings of the
    # preset's near NICs moves a sixteenth of what all 16 do
    near = nccl_choice(_far("dgx-h100", "pxb", "intel"), 16, 65536, algo="Ring")
    full = tuning_table(_far("dgx-h100", "pxb", "intel"), 16)[("AllReduce", "Ring", "LL")]
    assert near.channels == 1 and near.bandwidth < full[1] * 1e9


def test_a_far_nic_is_said_once_with_the_socket_links_rate_and_its_source():
    from ringsim.cost.nccl_notes import path_note
    note = path_note(_far("dgx-h100", "sys"), 16)
    assert note == ("nic_path sys: each GPU's NIC is on the other CPU socket, so NCCL 2.30.7 "
                    "turns LL128 off across nodes (src/graph/tuning.cc), and every channel of a "
                    "node crosses the link between the sockets, which they share: 22 GB/s each "
                    "way, NCCL 2.30.7's SRP_QPI_BW for cpu = \"intel-sapphire-rapids\" "
                    "(src/graph/topo.cc, ncclTopoGetInterCpuBw)")
    # before 2.26.2 the same CPU is a Skylake to topo.cc
    assert ("10 GB/s each way, NCCL 2.25.1's SKL_QPI_BW for cpu = \"intel-sapphire-rapids\" "
            "(src/graph/topo.cc, ncclTopoGetInterCpuBw); later releases rate it 22 GB/s "
            "(SRP_QPI_BW)") in path_note(_far("dgx-h100", "sys"), 16, "2.25.1")
    # a plain intel says which rate it took and how to name the generation
    assert "a plain \"intel\" names no generation and is rated as a Skylake" in path_note(
        _far("dgx-h100", "sys", "intel"), 16)
    assert path_note(_far("dgx-a100", "phb"), 16) == (
        "nic_path phb: each GPU reaches its NIC through its CPU's root complex, so NCCL 2.30.7 "
        "turns LL128 off across nodes (src/graph/tuning.cc); the NIC keeps its rate")
    # a Grace GPU's C2C path is PHB to a release without PATH_P2C
    grace = _far(peers.system_file("h100-1gpu-4nic"), "p2c", "arm")
    assert path_note(grace, 4, "2.26.6").startswith("nic_path p2c (which NCCL 2.26.6 names phb)")
    assert path_note(grace, 4) is None
    # one node crosses no NIC; a near NIC changes nothing
    assert path_note(_far("dgx-h100", "sys"), 8) is None and path_note("dgx-h100", 16) is None


def test_an_algorithm_nccl_turns_off_is_named_with_the_reason():
    from ringsim.cost.nccl_notes import algo_note
    # tuning.cc v2.23.4-1:305-314: NVLS is off across nodes without CollNet, which leaves
    # NCCL_ALGO=NVLS none of Ring, Tree, NVLS and NVLSTree, so Ring and Tree come back
    note = algo_note("dgx-h100", 16, "all-gather", "NVLS", nccl="2.23.4")
    assert note.startswith("# --algo NVLS: NCCL 2.23.4 runs none of what it names here (NVLS "
                           "runs across nodes only with CollNet, on a network that reduces, "
                           "in_network_reduction = true in [across]); with none of Ring, Tree, "
                           "NVLS and NVLSTree left and no CollNet, its src/graph/tuning.cc turns "
                           "Ring and Tree back on")
    # from 2.24.3 nothing comes back: the refusal says why CollNet has nothing
    with pytest.raises(RingsimError) as caught:
        nccl_choice("dgx-h100", 16, 1 << 20, algo="CollNetDirect", nccl="2.24.3")
    assert str(caught.value) == (
        "NCCL has no algorithm and protocol for this on that topology with the --algo/--proto "
        "given: CollNetDirect needs at least two nodes and a network that reduces, InfiniBand "
        "SHARP, which a topology file states with in_network_reduction = true in [across]")
    with pytest.raises(RingsimError, match="NVLSTree needs more than one node$"):
        nccl_choice("dgx-h100", 8, 1 << 20, algo="NVLSTree")
    with pytest.raises(RingsimError, match=r"NVLS needs Hopper or later GPUs \(arch = "):
        nccl_choice("dgx-a100", 8, 1 << 20, algo="NVLS")


def test_up_to_2_21_5_collnet_direct_is_priced_with_the_chains_graph():
    # init.cc v2.21.5-1:906 `graphs[] = { &treeGraph, &ringGraph, &collNetGraph, &collNetGraph,
    # ...}`: both CollNet algorithms read one graph, a tree searched on the ring's 8 channels
    # (48 GB/s inside, 24 across). v2.22.3-1:871 searches CollNetDirect's own: on 4 GPUs per
    # node, 4 channels of 48. tuning.cc prices CollNetDirect as nChannels × bwIntra (two
    # nodes) / (f - (f - 1) / 2) with f = ppn / nChannels, × 0.85 on Hopper, × ½:
    # 2.21.5: 8 × 48 / 0.75 × 0.85 / 2 = 217.6; 2.22.3: 4 × 48 / 1 × 0.85 / 2 = 81.6.
    from ringsim.cost.nccl import tuning_table
    from ringsim.cost.nccl_graph import Graph, graphs, system
    four = replace(load(peers.system_file("h100-ndr-sharp")), gpus_per_node=4)
    old, new = graphs(system(four, 8, "2.21.5")), graphs(system(four, 8, "2.22.3"))
    assert old["CollNetDirect"] == old["CollNetChain"] == Graph(8, 48.0, 24.0)
    assert new["CollNetDirect"] == Graph(4, 48.0, 48.0)
    cell = ("AllReduce", "CollNetDirect", "Simple")
    assert tuning_table(four, 8, "2.21.5")[cell][1] == pytest.approx(8 * 48 / 0.75 * 0.85 / 2)
    assert tuning_table(four, 8, "2.22.3")[cell][1] == pytest.approx(4 * 48 * 0.85 / 2)
    for release in ("2.18.6", "2.19.3", "2.20.5"):
        found = graphs(system(four, 8, release))
        assert found["CollNetDirect"] == found["CollNetChain"], release


@pytest.mark.parametrize("nbytes, channels", [(1 << 30, 16), (4 << 20, 5), (512 << 10, 1)])
def test_collnet_direct_runs_on_the_communicators_channels_cut_in_stages(nbytes, channels):
    # enqueue.cc (v2.30.7-1:2073, topoGetAlgoInfo, "CollNet channel tuning"): nc starts at
    # comm->nChannels (16 for two H100 nodes with SHARP) and drops while nBytes < nc × 640
    # threads × 8 heads × threshold (512, halved as nc passes 12, 6, 3), not below 16, 8, 4,
    # 2, 1 in turn. 4 MiB: 16 stays at the floor of 16; to 8 (12 halves it to 256); at 6 it
    # halves to 128 and 5 × 640 × 8 × 128 = 3,276,800 B is under 4 MiB: 5 channels.
    pick = nccl_choice(peers.system_file("h100-ndr-sharp"), 16, nbytes, algo="CollNetDirect")
    assert (pick.algorithm, pick.channels) == ("CollNetDirect", channels)
    # each channel drives all 8 heads, so a cut call keeps NCCL's own time
    assert pick.seconds == pytest.approx(pick.latency + nbytes / pick.bandwidth)


def test_the_note_on_a_re_enabled_ring_says_what_runs_and_why_the_rest_does_not():
    from ringsim.cost.nccl_notes import algo_note
    one = parse('name = "one"\ngpus_per_node = 1\narch = "hopper"\n[across]\nalpha = "2.7us"\n'
                'bandwidth = "400Gb/s"\n', "one")
    # NCCL_ALGO=PAT names none of Ring, Tree, NVLS and NVLSTree, so 2.23.4 turns Ring and Tree
    # on beside it (tuning.cc v2.23.4-1:305-314); PAT itself runs, one GPU per node
    note = algo_note(one, 4, "all-gather", "PAT", nccl="2.23.4")
    assert note.startswith("# --algo PAT: NCCL 2.23.4 runs PAT here, and beside it Ring and "
                           "Tree: with none of Ring, Tree, NVLS and NVLSTree left")
    assert note.endswith("it picks the fastest of them")
    # 2.22.3 has no PAT at all: that is the reason, not a circular one
    note = algo_note(one, 4, "all-gather", "PAT", nccl="2.22.3")
    assert note.startswith("# --algo PAT: NCCL 2.22.3 runs none of what it names here (this "
                           "release has no PAT); with none of")


def test_nccl_2_20_3_is_priced_with_2_20_5s_tuner():
    # v2.20.3-1 to v2.20.5-1 changes no tuning.cc, connect.cc, transport/nvls.cc or topo.h,
    # and in search.cc only whitespace; init.cc only asks for the NVLink domain (MNNVL) where
    # there are nodes. So every cell of the table is 2.20.5's, e.g. LL's ring at a quarter
    # (PCIe 4.0: 2 channels x 12 GB/s x 1/4 x 8/14).
    from ringsim.cost.nccl import tuning_table
    from ringsim.cost.nccl_tuner import given_release
    assert given_release("2.20.3-1+cuda12.3") == "2.20.3"
    for topology, gpus in (("dgx-h100", 16), ("dgx-a100", 8), ("pcie-gen4", 8)):
        assert tuning_table(topology, gpus, "2.20.3") == tuning_table(topology, gpus, "2.20.5")
    ring = nccl_choice("pcie-gen4", 8, BIG, algo="Ring", proto="LL", nccl="2.20.3")
    assert ring.bandwidth == pytest.approx(24 * 0.25 * 8 / 14 * 1e9)


def test_nccl_2_18_1_priced_a_tree_simple_hop_at_28_us_on_every_link():
    # tuning.cc v2.18.1-1:69, 73, 77: hwLat Tree/Simple `28` for NVLink, PCI and NET alike (the
    # latency of a 256 kB chunk); v2.18.3-1 has 4, 6 and 14. Latency 0 + 2 x ((ppn - 1) x
    # intra + log2i(nNodes) x inter): two DGX H100s 2 x (7 x 28 + 1 x 28), one node of eight
    # PCIe 4.0 GPUs 2 x 7 x 28.
    from ringsim.cost.nccl import tuning_table
    cell = ("AllReduce", "Tree", "Simple")
    for topology, gpus, old, new in (("dgx-h100", 16, 2 * (7 * 28 + 28), 2 * (7 * 4 + 14)),
                                     ("pcie-gen4", 8, 2 * 7 * 28, 2 * 7 * 6)):
        assert tuning_table(topology, gpus, "2.18.1")[cell][0] == pytest.approx(old)
        assert tuning_table(topology, gpus, "2.18.3")[cell][0] == pytest.approx(new)


def test_nccl_2_18_1_converted_nvls_bus_bandwidth_at_three_quarters():
    # tuning.cc v2.18.1-1:187 `else if (a == NCCL_ALGO_NVLS) ratio = .75;` (v2.18.3-1:197:
    # 5.0/6.0). One DGX H100: the NVLS graph's 8 heads at 40 GB/s, from a 23 us base.
    for release, ratio in (("2.18.1", 0.75), ("2.18.3", 5 / 6)):
        nvls = nccl_choice("dgx-h100", 8, BIG, algo="NVLS", nccl=release)
        assert nvls.bandwidth == pytest.approx(8 * 40 * ratio * 1e9)
        assert nvls.latency * 1e6 == pytest.approx(23.0)
    # NVLSTree keeps 0.7 nNodes / (2 (nNodes - 1)) in both: 0.7 on two nodes.
    tree = nccl_choice("dgx-h100", 16, BIG, algo="NVLSTree", nccl="2.18.1")
    assert tree.bandwidth == pytest.approx(8 * 40 * 0.7 * 1e9)


def test_nccl_2_18_1_capped_hoppers_trees_beyond_two_nodes_by_its_own_tables():
    # Four DGX H100s: the tree graph is 8 channels at 48 GB/s across (x 1/2 to algorithm
    # bandwidth). tuning.cc v2.18.1-1:88-99: perChMaxTreeBws Hopper N4 33.0 (v2.18.3-1: 36.0),
    # and one LL128 cap for ring and tree, ll128MaxBwPerCh[Hopper] 36.7 (v2.18.3-1's
    # perChMaxTreeLL128Bws Hopper N4: 29.0).
    simple = min(8 * 48 * 0.92, 8 * 33.0)
    assert nccl_choice("dgx-h100", 32, BIG, algo="Tree", proto="Simple",
                       nccl="2.18.1").bandwidth == pytest.approx(simple / 2 * 1e9)
    assert nccl_choice("dgx-h100", 32, BIG, algo="Tree", proto="Simple",
                       nccl="2.18.3").bandwidth == pytest.approx(8 * 36.0 / 2 * 1e9)
    ll128 = min(simple * 120 / 128, 8 * 36.7)
    assert nccl_choice("dgx-h100", 32, BIG, algo="Tree", proto="LL128",
                       nccl="2.18.1").bandwidth == pytest.approx(ll128 / 2 * 1e9)
    assert nccl_choice("dgx-h100", 32, BIG, algo="Tree", proto="LL128",
                       nccl="2.18.3").bandwidth == pytest.approx(8 * 29.0 / 2 * 1e9)


def test_nccl_2_18_1_split_hopper_graphs_only_from_50_gb_s_and_no_later_gpus():
    # search.cc v2.18.1-1:954: `(ccMin <= 80 && bwIntra >= 25.0) || (ccMin <= 90 && bwIntra
    # >= 50.0)`; v2.18.3-1:968-971 also splits a graph of 25 to 50 GB/s on Hopper and later
    # where it has at most 4 channels. Two nodes of four H100s on 400 Gb/s NICs: the ring graph
    # is 4 channels at 48 GB/s, split in 2.18.3 into 8 at 24; Ring/LL128 = min(busBw x 0.92,
    # nChannels x 36.7) x 8 / 14.
    quads = _machine(4, "hopper", "450GB/s", "400Gb/s")
    for release, channels, speed in (("2.18.1", 4, 48.0), ("2.18.3", 8, 24.0)):
        ring = nccl_choice(quads, 8, BIG, algo="Ring", proto="LL128", nccl=release)
        bus = min(channels * speed * 0.92, channels * 36.7)
        assert ring.bandwidth == pytest.approx(bus * 8 / 14 * 1e9)
    # A B200 (compute capability 10.0, priced with Hopper's rows before 2.22) is never split
    # in 2.18.1: one node's tree graph keeps 6 channels at 60 GB/s, Tree/Simple = min(6 x 60
    # x 0.92, 6 x perChMaxTreeBw 38.7) x 1/2; an H100 at the same 360 GB/s splits into 12 at 30.
    b200 = nccl_choice(B200, 8, BIG, algo="Tree", proto="Simple", nccl="2.18.1")
    assert b200.bandwidth == pytest.approx(min(6 * 60 * 0.92, 6 * 38.7) / 2 * 1e9)
    h100 = nccl_choice("dgx-h100", 8, BIG, algo="Tree", proto="Simple", nccl="2.18.1")
    assert h100.bandwidth == pytest.approx(min(12 * 30 * 0.92, 12 * 38.7) / 2 * 1e9)


def test_nccl_2_18_1_is_taken_where_nccl_prints_it():
    from ringsim.cost.nccl_tuner import given_release
    assert given_release("2.18.1-1+cuda12.1") == "2.18.1"
    assert constants("2.18.1")["speeds"]["inter"]["hopper"][:8] == [
        48.0, 45.0, 42.0, 40.0, 30.0, 24.0, 15.0, 12.0]  # search.cc v2.18.1-1:782: no 20, 17.5
