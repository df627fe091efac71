"""Whole call times of NCCL's model worked by hand from NVIDIA/nccl v2.30.7-1: the latency and
bandwidth of src/graph/tuning.cc (ncclTopoTuneModel), then ncclTopoGetAlgoTime's
lat + bytes / (1000 * bw) with its tree correction and ring plateau, as NCCL picks on them."""

from __future__ import annotations

import pytest

from ringsim.cost.nccl import nccl_choice

KIB64 = 64 << 10


def _us(choice) -> float:
    """NCCL's own estimate for the call (the time it chose on), in microseconds."""
    return choice.nccl_seconds * 1e6


def test_two_dgx_h100s_at_64_kib_pick_tree_ll_by_its_corrected_bandwidth():
    # Tree/LL: latency 6.8 + 2 * (7 * 0.6 + log2i(2) * 5.0) = 25.2 us; bus bandwidth held to
    # llMaxBws[Intel][2 nodes] = 39.0 GB/s, algorithm bandwidth 0.5 of it; at 64 KiB
    # log2i(65536 >> 6) = 10 and treeCorrectionFactor[LL][10] = 0.6.
    tree = 25.2 + KIB64 / (1000 * 39.0 * 0.5 * 0.6)
    # Ring/LL: 6.6 + (30 - 2) * max(0.6, net overhead 1.0) + 2 * 2.7 = 40.0 us at 39.0 * 16 / 30.
    ring = 40.0 + KIB64 / (1000 * 39.0 * 16 / 30)
    choice = nccl_choice("dgx-h100", 16, KIB64)
    assert (choice.algorithm, choice.protocol) == ("Tree", "LL")
    assert _us(choice) == pytest.approx(tree, rel=1e-6)  # 30.80 us
    assert _us(nccl_choice("dgx-h100", 16, KIB64, algo="Ring", proto="LL")) == pytest.approx(ring, rel=1e-6)
    assert tree < ring


def test_a_forced_ring_simple_call_across_nodes_pays_the_ring_plateau():
    # NCCL_ALGO=Ring NCCL_PROTO=Simple: 8.4 + 28 * max(3.4, 3 * 1.0) + 2 * 14.0 = 131.6 us, and
    # 65536 / (16 channels * 16 ranks) = 256 >= 64 bytes, so on Hopper the latency is * 1.4;
    # the bandwidth is 16 channels * 24 GB/s * 16 / 30 = 204.8 GB/s (the table's 131.6/ 204.8).
    choice = nccl_choice("dgx-h100", 16, KIB64, algo="Ring", proto="Simple")
    assert choice.latency * 1e6 == pytest.approx(131.6 * 1.4)
    assert _us(choice) == pytest.approx(131.6 * 1.4 + KIB64 / (1000 * 204.8), rel=1e-6)  # 184.56 us


def test_eight_gpus_on_a_pcie_switch_run_rings_at_pcis_latencies():
    # One node, PCI links: Ring/LL 6.6 + 14 * 1.0 = 20.6 us, Ring/Simple 8.4 + 14 * 5.7 = 88.2 us;
    # the ring graph's 24 GB/s bus bandwidth (PCI_BW), LL half of it, both * 8 / 14 to algbw.
    ll = 20.6 + KIB64 / (1000 * 24 * 0.5 * 8 / 14)
    simple = 88.2 + (1 << 30) / (1000 * 24 * 8 / 14)
    small, large = nccl_choice("pcie-gen4", 8, KIB64), nccl_choice("pcie-gen4", 8, 1 << 30)
    assert (small.algorithm, small.protocol) == ("Ring", "LL")
    assert _us(small) == pytest.approx(ll, rel=1e-6)  # 30.16 us
    assert (large.algorithm, large.protocol) == ("Ring", "Simple")
    assert _us(large) == pytest.approx(simple, rel=1e-6)  # 78.38 ms, 23.97 GB/s busbw
