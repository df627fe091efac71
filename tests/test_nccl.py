"""NCCL's model: its tuning arithmetic worked by hand from src/graph/tuning.cc, the choice and
its restrictions, `predict`, the topology fields it reads, and the published measurements."""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from pathlib import Path

import pytest

from ringsim.core.errors import RingsimError
from ringsim.cost.nccl import nccl_choice, nvls_link_rates, tuning_table
from ringsim.cost.nccl_tuner import versions
from ringsim.cost.topology import load, parse
from ringsim.studies import peers
from ringsim.studies.predict import predict

from nccl_validation import checks, fraction, healthy, markdown, markdown_others, others

ROOT = Path(__file__).resolve().parent.parent


# Hand-worked cases. The constants are NCCL 2.30.7's (tuning.cc), written out here from the
# source, not read from ringsim's data file, so a slip in either shows.

def test_ring_ll_latency_on_one_h100_node_is_base_plus_steps_times_hop():
    # baseLat[Ring][LL] = 6.6 µs, hwLat[NVLINK][Ring][LL] = 0.6 µs, 2(G-1) = 14 steps.
    choice = nccl_choice("dgx-h100", 8, 8, algo="Ring", proto="LL")
    assert choice.latency == pytest.approx((6.6 + 14 * 0.6) * 1e-6)


def test_ring_latency_across_nodes_charges_the_network_on_the_node_crossings_only():
    # 2 nodes: 30 steps, 2(nNodes-1) = 2 of them cross the network at hwLat[NET][Ring][LL]
    # = 2.7 µs; the other 28 pay max(hwLat[NVLINK][Ring][LL] = 0.6, net overhead 1.0) µs.
    choice = nccl_choice("dgx-h100", 16, 8, algo="Ring", proto="LL")
    assert choice.latency == pytest.approx((6.6 + 28 * 1.0 + 2 * 2.7) * 1e-6)


def test_tree_latency_is_a_chain_in_the_node_and_log2_nodes_across():
    # baseLat[Tree][LL] 6.8 + 2 × ((8 − 1) × 0.6 + log2(2) × hwLat[NET][Tree][LL] 5.0).
    choice = nccl_choice("dgx-h100", 16, 8, algo="Tree", proto="LL")
    assert choice.latency == pytest.approx((6.8 + 2 * (7 * 0.6 + 1 * 5.0)) * 1e-6)


def test_ll_halves_the_ring_bandwidth_where_its_cap_does_not_bind():
    # PCIe 4.0: NCCL rates x16 at 24 GB/s; the ring graph is 2 channels × 12 GB/s. Simple
    # keeps 24 GB/s of bus bandwidth, LL min(llMaxBw 87.7, 24 × 0.5) = 12.
    ll = nccl_choice("pcie-gen4", 8, 1 << 30, algo="Ring", proto="LL")
    simple = nccl_choice("pcie-gen4", 8, 1 << 30, algo="Ring", proto="Simple")
    assert simple.bandwidth == pytest.approx(24e9 * 8 / 14)
    assert ll.bandwidth == pytest.approx(simple.bandwidth / 2)


def test_nvls_all_reduce_factor_on_one_h100_node():
    # 8 NVLS heads at 40 GB/s inside, 60 GB/s multicast: min(40 × nvlsEfficiency 0.85 ×
    # 7/8 × 2 (all-reduce pipelines two operations), 60) = 59.5 per channel, × 8 = 476 GB/s
    # of bus bandwidth, × nRanks / nsteps = 8 / 14 for the algorithm bandwidth.
    latency, bandwidth = tuning_table("dgx-h100", 8)[("AllReduce", "NVLS", "Simple")]
    assert bandwidth == pytest.approx(8 * 40 * 0.85 * 7 / 8 * 2 * 8 / 14)
    assert latency == pytest.approx(25.0)  # hwLat[NVLINK][NVLS][Simple]


@pytest.mark.parametrize("gpus, own", [(2, 102.0), (4, 160.0), (8, 272.0)])
def test_one_nodes_nvls_all_reduce_runs_at_what_its_links_carry(gpus, own):
    # NCCL's search gives each GPU one channel, capped at its fastest listed speed (60 GB/s on
    # Hopper): 2 × 60 × 0.85 × 1/2 × 2 × 2/2 = 102 GB/s for 2 GPUs. Each GPU sends and
    # receives N (G + 1) / G over its 18 NVLinks (370.8 GB/s as NCCL rates them), so the call
    # moves 370.8 × 0.85 × G / (G + 1): 210 GB/s on 2 GPUs, 252 on 4, 280 on 8, which one
    # host measured as 205, 248 and 274 with NCCL_ALGO=NVLS (waynehacking8's logs,
    # ringsim/studies/published). NCCL still chooses on its own figure.
    assert tuning_table("dgx-h100", gpus)[("AllReduce", "NVLS", "Simple")][1] == pytest.approx(own)
    choice = nccl_choice("dgx-h100", gpus, 1 << 33, algo="NVLS")
    assert choice.bandwidth == pytest.approx(370.8e9 * 0.85 * gpus / (gpus + 1))
    assert nvls_link_rates("dgx-h100", gpus) == pytest.approx(
        (own * 1e9, 370.8e9 * 0.85 * gpus / (gpus + 1)))
    # on 4 GPUs NCCL's own figure (160 GB/s) loses to the ring at 1 GiB, so NCCL runs Ring
    assert nccl_choice("dgx-h100", 4, 1 << 30).algorithm == "Ring"


def test_nvls_across_nodes_and_other_collectives_keep_nccls_rate():
    assert nvls_link_rates("dgx-a100", 8) is None
    assert nvls_link_rates("dgx-h100", 4, algo="Ring") is None
    assert nvls_link_rates("dgx-h100", 4, proto="LL") is None
    gather = nccl_choice("dgx-h100", 8, 1 << 30, "all-gather", algo="NVLS")
    assert gather.bandwidth == pytest.approx(
        tuning_table("dgx-h100", 8)[("AllGather", "NVLS", "Simple")][1] * 1e9)


def test_nccl_picks_ll_for_small_and_nvls_for_large_on_an_h100_node():
    assert (nccl_choice("dgx-h100", 8, 8).algorithm, nccl_choice("dgx-h100", 8, 8).protocol) \
        == ("Ring", "LL")
    assert nccl_choice("dgx-h100", 8, 1 << 30).algorithm == "NVLS"
    assert nccl_choice("dgx-a100", 8, 1 << 30).algorithm == "Ring"  # no NVLink SHARP on A100


def test_restrictions_are_nccl_spelled_in_any_case_and_unknown_names_list_the_valid_ones():
    assert nccl_choice("dgx-h100", 8, 1 << 30, algo="ring").algorithm == "Ring"
    assert nccl_choice("dgx-h100", 8, 1 << 30, algo="^nvls").algorithm != "NVLS"
    assert nccl_choice("dgx-h100", 8, 8, proto="simple").protocol == "Simple"
    with pytest.raises(RingsimError, match="valid: Tree, Ring, CollNetDirect"):
        nccl_choice("dgx-h100", 8, 8, algo="halving-doubling")
    with pytest.raises(RingsimError, match="valid: LL, LL128, Simple"):
        nccl_choice("dgx-h100", 8, 8, proto="LL64")
    with pytest.raises(RingsimError, match="no algorithm"):
        nccl_choice("dgx-a100", 8, 8, algo="NVLS")


def test_all_gather_on_one_gpu_per_node_can_use_pat_and_never_uses_trees():
    picks = {nccl_choice("ethernet-100g", 64, n, "all-gather").algorithm
             for n in (8, 1 << 20, 1 << 30)}
    assert picks <= {"Ring", "PAT"} and "Tree" not in picks
    with pytest.raises(RingsimError, match="no algorithm"):
        nccl_choice("dgx-h100", 16, 8, "reduce-scatter", algo="Tree")


def test_a_million_gpus_is_a_closed_form():
    choice = nccl_choice("dgx-h100", 1_000_000, 1 << 30)
    assert choice.seconds > nccl_choice("dgx-h100", 1024, 1 << 30).seconds


def test_predict_rows_carry_nccl_tests_columns_and_bus_factors():
    rows = predict("dgx-h100", 16, "8B..1GiB:x1024")
    assert [r.bytes for r in rows] == [8, 8192, 8 << 20]
    for r in rows:
        assert r.count == r.bytes // 4 and r.dtype == "float"
        assert r.algbw == pytest.approx(r.bytes / r.seconds)
        assert r.busbw == pytest.approx(r.algbw * 2 * 15 / 16)
        assert set(r.to_json()) >= {"bytes", "seconds", "algbw", "busbw", "algorithm",
                                    "protocol", "channels"}
    gather = predict("dgx-h100", 8, [1 << 20], "all-gather")[0]
    assert gather.busbw == pytest.approx(gather.algbw * 7 / 8)


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "ringsim", "predict", *args],
                          capture_output=True, text=True, cwd=ROOT, timeout=60)


def test_cli_json_and_table_and_one_line_errors():
    out = _cli("--topology", "dgx-h100", "--gpus", "16", "--sizes", "8B,1GiB", "--json")
    assert out.returncode == 0
    rows = [json.loads(line) for line in out.stdout.splitlines()]
    assert [r["bytes"] for r in rows] == [8, 1 << 30]
    table = _cli("--sizes", "8B..8GiB")
    lines = table.stdout.splitlines()
    assert any(re.search(r"#\s+size\s+count\s+type\s+time\s+algbw\s+busbw\s+algorithm\s+protocol",
                         line) for line in lines[:3])
    rows = [line for line in lines if not line.startswith("#")]
    assert len(rows) == 31  # 8 B to 8 GiB doubling, as -b 8 -e 8G -f 2
    for bad in (("--algo", "bogus"), ("--gpus", "1"), ("--sizes", "8B..1B"),
                ("--topology", "nowhere.toml")):
        err = _cli(*bad)
        assert err.returncode == 2 and len(err.stderr.strip().splitlines()) == 1, bad


def test_a_list_of_sizes_out_of_order_or_repeated_is_said_so():
    out = _cli("--sizes", "1GiB,1GiB,8B").stdout.splitlines()
    assert ("# the sizes asked for are printed in increasing order, each once, as nccl-tests "
            "prints them (1 repeated size left out)") in out
    rows = [line.split()[0] for line in out if not line.startswith("#")]
    assert rows == ["8", "1073741824"]
    for sizes in ("8B,1GiB", "8B..1GiB"):  # as given: no such line
        assert "increasing order" not in _cli("--sizes", sizes).stdout


def test_topology_files_without_the_nccl_fields_keep_working_with_the_defaults():
    old = parse('name = "old"\ngpus_per_node = 4\n[inside]\nalpha = "1us"\n'
                'bandwidth = "300GB/s"\n[across]\nalpha = "3us"\nbandwidth = "200Gb/s"\n', "old")
    assert old.arch == "ampere"
    assert (old.level("inside").kind, old.level("across").kind) == ("nvlink", "network")
    assert not old.level("inside").in_network_reduction
    assert nccl_choice(old, 8, 1 << 30).algorithm in ("Ring", "Tree")
    with pytest.raises(RingsimError, match="kind must be one of nvlink, pcie, network"):
        parse('[inside]\nalpha = "1us"\nbandwidth = "1GB/s"\nkind = "ethernet"\n', "bad")
    with pytest.raises(RingsimError, match=r"\[inside\] kind must be nvlink or pcie"):
        parse('[inside]\nalpha = "1us"\nbandwidth = "1GB/s"\nkind = "network"\n', "bad")
    with pytest.raises(RingsimError, match="arch must be one of"):
        parse('arch = "pascal"\n[inside]\nalpha = "1us"\nbandwidth = "1GB/s"\n', "bad")
    assert load("dgx-h100").level("inside").in_network_reduction
    assert load("pcie-switches").level("inside").gpus_per_switch == 4


def test_validation_set_is_at_least_40_points_from_8_machines_with_small_messages():
    found = checks()
    assert len(found) >= 40
    assert len({c.system["source"] for c in found}) >= 8
    assert any(c.point["bytes"] <= 64 << 10 for c in found)


def test_docs_print_the_validation_table_the_data_and_model_give():
    text = (ROOT / "docs" / "cost.md").read_text(encoding="utf-8")
    assert markdown(checks()) in text
    assert markdown_others(others()) in text


def test_each_collective_is_priced_and_timed_as_the_test_it_ran():
    # The all-reduce table holds all_reduce_perf runs only; the others hold their own.
    assert {c.collective for c in checks()} == {"all-reduce"}
    found = others()
    assert {c.collective for c in found} == {"all-gather", "reduce-scatter"}
    # waynehacking8's quiet all_gather_perf on 4 H100 (-g 4), 8 GiB: 18,753.6 µs as printed.
    big = next(c for c in found if c.system["id"] == "wh8-h100-4of8-nvswitch-ag"
               and c.point["bytes"] == 8 << 30)
    assert big.measured_us == pytest.approx(18753.6)
    # priced as an all-gather: the model's own all-gather time, not an all-reduce's
    assert big.predicted_us == pytest.approx(nccl_choice("dgx-h100", 4, 8 << 30, "all-gather",
                                                         nccl="2.29.2",
                                                         gpus_per_process=4).seconds * 1e6)
    # a quoted busbw turns into time with the test's own factor: (G-1)/G for an all-gather
    assert peers.measured_seconds({"bytes": 8 << 30, "busbw_GBps": 343.53}, 4, "all-gather") == \
        pytest.approx((8 << 30) * 3 / 4 / 343.53e9)
    assert peers.measured_seconds({"bytes": 8 << 30, "busbw_GBps": 343.53}, 4) == \
        pytest.approx((8 << 30) * 6 / 4 / 343.53e9)


def test_the_reading_guide_gives_diagnoses_flag_counts_on_the_validation_set():
    # docs/reading-your-numbers.md, "How far to trust a ◀", quotes the line under the table.
    line = next(x for x in markdown(checks()).splitlines() if x.startswith("`ringsim diagnose`"))
    counts = [int(n) for n in re.findall(r"\b(\d+) of (?:the )?(\d+)", line) for n in n]
    guide = (ROOT / "docs" / "reading-your-numbers.md").read_text(encoding="utf-8")
    a, b, c, d, e, f, g, h = counts
    assert (f"flags {a} of {b} points from systems their sources present as healthy ({c} of {d}"
            in guide)
    assert f"and {e} of {f} points from systems their sources\nreport slow ({g} of {h}" in guide


def test_the_reading_guide_gives_how_often_published_runs_like_it_call_a_point_long():
    # docs/reading-your-numbers.md, "Published runs like yours", quotes the line under the table.
    line = next(x for x in markdown(checks()).splitlines() if x.startswith("Set beside the other"))
    a, b, c, d = [int(n) for pair in re.findall(r"\b(\d+) of the (\d+)", line) for n in pair]
    guide = (ROOT / "docs" / "reading-your-numbers.md").read_text(encoding="utf-8")
    assert f"their size take more than 1.3× their median time ({a / b:.0%})" in guide
    assert f"{a} of the {b} healthy points" in guide and f"and {c} of the {d} such points" in guide


def test_gpus_per_process_is_read_from_the_command_and_shown_in_the_table():
    found = checks()
    stated = {c.system["id"]: c for c in found if c.per_process is not None}
    # The Azure guide's runs drive every GPU of the VM from one process (`-g 8`, `-g 4`).
    assert stated["azure-nd-a100-v4"].per_process == 8
    assert stated["azure-nd-gb200-v6"].per_process == 4
    for c in stated.values():
        g = c.system["gpus"]
        assert isinstance(c.per_process, int) and 1 <= c.per_process <= g
        assert g % c.per_process == 0, c.system["id"]
    rows = [line for line in markdown(found).splitlines() if "azure-nd-a100-v4" in line]
    assert rows and all(row.split(" | ")[4] == "8" for row in rows if row.startswith("| ["))
    unstated = next(c for c in found if c.per_process is None)
    row = next(line for line in markdown([unstated]).splitlines() if line.startswith("| ["))
    assert row.split(" | ")[4] == "?"


def test_every_system_says_its_health_as_its_source_states_it():
    found = checks()
    for c in found:
        h = c.system["health"]
        assert h == "healthy" or h.split(": ", 1)[0] in ("reported slow", "unverified"), h
        assert h == "healthy" or len(h.split(": ", 1)[1]) > 10, h
    good = healthy(found)
    assert len(good) >= 40 and len({c.system["source"] for c in good}) >= 6
    assert any(c.point["bytes"] <= 64 << 10 for c in good)


# The target is 85% of healthy points within ±25%; NCCL's own tuning model, each point priced
# with the tuner of the release it ran, with ringsim's host term, one measured network latency,
# the pipeline's fill and one node's NVLS at its links' rate, held to the NCCL settings each
# source's run used, reaches 64.6% (782 of 1,211) today, and docs/cost.md says where and why it
# falls short.
# Until the model earns the target, this test holds what it has reached, so that no change can
# lose agreement with the published numbers unnoticed. Raise FLOOR whenever the model improves;
# lower it only when published runs are added, never when the model changes.
TARGET, FLOOR = 0.85, 0.645


def test_nccl_model_keeps_its_agreement_with_published_points():
    # Healthy systems only: one whose own source reports it slow is diagnose's to flag.
    found = healthy(checks())
    share = fraction(found)
    worst = sorted(found, key=lambda c: -abs(c.ratio - 1))[:5]
    print(f"NCCL model within ±25%: {share:.0%} of {len(found)} healthy points "
          f"(target {TARGET:.0%})")
    assert share >= FLOOR, (f"{share:.0%} within ±25%, below the {FLOOR:.0%} reached before; "
                            "worst: " + "; ".join(
        f"{c.system['id']} {c.point['bytes']} B model/measured {c.ratio:.2f}" for c in worst))


# The all-gather and reduce-scatter runs were added with no change to the model: 145 of 265
# healthy points within ±25% (all-gather 92 of 209, reduce-scatter 53 of 56). The same rule as
# FLOOR: raise it when the model improves, lower it only when published runs are added.
OTHERS_FLOOR = 0.545


def test_nccl_model_keeps_its_agreement_on_the_other_collectives():
    found = healthy(others())
    share = fraction(found)
    print(f"NCCL model within ±25% on all-gather and reduce-scatter: {share:.0%} of "
          f"{len(found)} healthy points")
    assert len(found) >= 40 and len({c.system["source"] for c in found}) >= 5
    assert share >= OTHERS_FLOOR, f"{share:.0%} within ±25%, below the {OTHERS_FLOOR:.0%} reached before"


def test_docs_show_what_predict_prints():
    args = ("--topology", "dgx-h100", "--gpus", "16", "--sizes", "8B..8GiB:x32")
    out = _cli(*args)
    block = f"$ ringsim predict {' '.join(args)}\n{out.stdout}```"

    def trimmed(text: str) -> str:  # trailing spaces are not shown, nor kept by editors
        return "\n".join(line.rstrip() for line in text.splitlines())
    assert trimmed(block) in trimmed((ROOT / "docs" / "cost.md").read_text(encoding="utf-8"))


def test_a_slower_shared_pcie_uplink_bounds_the_ring_and_a_files_name_is_printed_safely(tmp_path):
    text = ('name = "x\\u001b[31m"\narch = "ampere"\ngpus_per_node = 8\n[inside]\nkind = "pcie"\n'
            'alpha = "1us"\nbandwidth = "31.5GB/s"\ngpus_per_switch = 4\nuplink = "{}"\n')
    fast, slow = (tmp_path / "fast.toml", tmp_path / "slow.toml")
    fast.write_text(text.format("31.5GB/s"))
    slow.write_text(text.format("15.75GB/s"))  # an x8 uplink
    big = 1 << 30
    assert nccl_choice(parse(fast.read_text(), "f"), 8, big).seconds == pytest.approx(
        nccl_choice("pcie-gen4", 8, big).seconds)
    assert nccl_choice(parse(slow.read_text(), "s"), 8, big).seconds > \
        1.5 * nccl_choice("pcie-gen4", 8, big).seconds
    out = _cli("--topology", str(slow), "--sizes", "1MiB")
    assert out.returncode == 0 and "\x1b" not in out.stdout
    assert nccl_choice(parse(fast.read_text(), "f"), 8, 8).to_json()["protocol"] == "LL"


def test_the_constants_file_is_keyed_by_nccls_names():
    from ringsim.cost.nccl import ALGORITHMS, PROTOCOLS
    from ringsim.cost.nccl_graph import constants
    c = constants()
    assert c["version"]["nccl"] == "2.30.7-1"
    for table in (c["base_latency"], *c["hw_latency"].values()):
        assert tuple(table) == ALGORITHMS
        assert all(len(row) == len(PROTOCOLS) for row in table.values())
    assert tuple(c["tree_correction"]) == PROTOCOLS


def test_in_network_reduction_across_nodes_opens_collnet_and_nvls_across_nodes():
    from dataclasses import replace
    topo = load("dgx-h100")
    sharp = replace(topo, levels={**topo.levels, "across": replace(
        topo.level("across"), in_network_reduction=True)})
    assert nccl_choice(sharp, 64, 1 << 30, algo="CollNetChain").algorithm == "CollNetChain"
    assert nccl_choice(sharp, 64, 8, algo="NVLS").algorithm == "NVLS"
    # NVLS across nodes: hwLat[NVLINK][NVLS][Simple] 25 + hwLat[NET][NVLS][Simple] 18 µs.
    assert nccl_choice(sharp, 64, 8, algo="NVLS").latency == pytest.approx(43e-6)
    for algo in ("CollNetChain", "CollNetDirect"):
        with pytest.raises(RingsimError, match="no algorithm"):
            nccl_choice(topo, 64, 1 << 30, algo=algo)


def test_an_older_nccl_release_is_priced_with_its_own_latency_tables():
    # Two nodes of 8 on NVLSTree: NVLink hop 25 µs + 2 × log2(2 nodes) × the network hop,
    # 20.9 µs in 2.30.7 and 14 µs in 2.21.5 (src/graph/tuning.cc at each tag).
    now = nccl_choice("dgx-h100", 16, 8, algo="NVLSTree")
    old = nccl_choice("dgx-h100", 16, 8, algo="NVLSTree", nccl="2.21.5")
    assert now.seconds * 1e6 == pytest.approx(25 + 2 * 20.9, abs=0.01)
    assert old.seconds * 1e6 == pytest.approx(25 + 2 * 14.0, abs=0.01)
    # 2.20.5 had no PAT (one GPU per node is where PAT runs): NCCL_ALGO=PAT names nothing it
    # knows, and without CollNet tuning.cc turns Ring and Tree back on, so the ring runs the
    # all-gather; an unknown release is an error.
    assert "2.30.7" in versions() and "2.20.5" in versions()
    one_per_node = peers.system_file("h100-1gpu-4nic")
    assert nccl_choice(str(one_per_node), 4, 1 << 20, "all-gather", algo="PAT").algorithm == "PAT"
    assert nccl_choice(str(one_per_node), 4, 1 << 20, "all-gather", algo="PAT",
                       nccl="2.20.5").algorithm == "Ring"
    with pytest.raises(RingsimError, match="tuning tables of NCCL"):
        nccl_choice("dgx-h100", 8, 8, nccl="2.99.0")


# A net plugin's latency (aws-ofi-nccl reports 75 µs on p4de and p5, platform-aws.cpp):
# tuning.cc adds the graph's latencyInter to the network hop, twice with Simple.
P4DE = peers.system_file("p4de-efa")


def test_a_net_plugins_latency_is_added_to_every_network_hop_and_twice_with_simple():
    # Tree LL: 6.8 + 2 × ((8 − 1) × 0.6 + log2(2) × (5.0 + 75)) = 175.2 µs.
    assert nccl_choice(P4DE, 16, 8, algo="Tree", proto="LL").latency * 1e6 == \
        pytest.approx(175.2)
    # Tree Simple: 8.4 + 2 × (7 × 4.0 + (14.0 + 75 + 75)) = 392.4 µs.
    assert nccl_choice(P4DE, 16, 8, algo="Tree", proto="Simple").latency * 1e6 == \
        pytest.approx(392.4)
    # Ring LL: 6.6 + 28 steps × max(0.6, net overhead 1.0) + 2 crossings × (2.7 + 75) = 190.0.
    assert nccl_choice(P4DE, 16, 8, algo="Ring", proto="LL").latency * 1e6 == \
        pytest.approx(190.0)
    # topo.cc stores the figure as an integer attribute: 75.9 µs counts as 75.
    base = open(P4DE, encoding="utf-8").read().replace('"75us"', '"75.9us"')
    assert nccl_choice(parse(base, "p4de"), 16, 8, algo="Tree", proto="LL").latency * 1e6 == \
        pytest.approx(175.2)
    # One node crosses no NIC: the plugin's figure is not paid (6.6 + 14 × 0.6 = 15.0 µs).
    assert nccl_choice(P4DE, 8, 8, algo="Ring", proto="LL").latency * 1e6 == pytest.approx(15.0)


def test_net_plugin_latency_is_an_across_field_with_a_zero_default_and_a_bound():
    base = 'gpus_per_node = 8\n[inside]\nalpha = "1us"\nbandwidth = "300GB/s"\n'
    across = '[across]\nalpha = "3us"\nbandwidth = "200Gb/s"\n'
    assert parse(base + across, "ib").level("across").net_plugin_latency == 0.0
    assert parse(base + across + 'net_plugin_latency = "35us"\n', "efa").level(
        "across").net_plugin_latency == pytest.approx(35e-6)
    with pytest.raises(RingsimError, match=r"\[inside\] net_plugin_latency: only the \[across\]"):
        parse(base + 'net_plugin_latency = "75us"\n' + across, "bad")
    for bad in ('"1s"', '"-5us"', '"fast"'):
        with pytest.raises(RingsimError, match="net_plugin_latency"):
            parse(base + across + f"net_plugin_latency = {bad}\n", "bad")
    # The field's own bound is the one named, however far past it the value is.
    for far in ("20ms", "1e9s"):
        with pytest.raises(RingsimError, match=rf"net_plugin_latency must be from 0 to 10 ms, got '{far}'$"):
            parse(base + across + f'net_plugin_latency = "{far}"\n', "bad")
    with pytest.raises(RingsimError, match=r"net_latency must be from 0 to 10 ms, got '1e9s'$"):
        parse(base + across + 'net_latency = "1e9s"\n', "bad")


def test_the_network_s_measured_latency_prices_the_call_nccl_chose_on_the_plugin_s():
    # Two p5: aws-ofi-nccl reports 75 µs, a tuning value; osu_latency measures 21.85 µs.
    # NCCL still chooses Tree/LL on the 75 µs; the call's 2 network hops (up and down the
    # tree across 2 nodes) then take 21.85 µs each in place of 75: 106.3 µs less.
    p5 = load(peers.system_file("p5-efa"))
    believed = parse(open(peers.system_file("p5-efa"), encoding="utf-8").read()
                     .replace('net_latency = "21.85us"', ""), "p5-believed")
    assert believed.level("across").net_latency is None and p5.level("across").net_latency == \
        pytest.approx(21.85e-6)
    small, as_believed = nccl_choice(p5, 16, 8), nccl_choice(believed, 16, 8)
    assert (small.algorithm, small.protocol) == (as_believed.algorithm, as_believed.protocol) == \
        ("Tree", "LL")
    assert (as_believed.latency - small.latency) * 1e6 == pytest.approx(2 * (75 - 21.85))
    # Simple pays the plugin's figure twice (the flush), and so the measured one.
    big, big_believed = (nccl_choice(t, 16, 1 << 30, algo="Tree", proto="Simple") for t in (p5, believed))
    assert (big_believed.latency - big.latency) * 1e6 == pytest.approx(2 * 2 * (75 - 21.85))


def test_net_latency_is_an_across_field_with_a_bound():
    base = 'gpus_per_node = 8\n[inside]\nalpha = "1us"\nbandwidth = "300GB/s"\n'
    across = '[across]\nalpha = "3us"\nbandwidth = "200Gb/s"\n'
    assert parse(base + across, "ib").level("across").net_latency is None
    with pytest.raises(RingsimError, match=r"\[inside\] net_latency: only the \[across\]"):
        parse(base + 'net_latency = "20us"\n' + across, "bad")
    for bad in ('"1s"', '"-5us"', '"fast"', "1e400"):
        with pytest.raises(RingsimError, match="net_latency"):
            parse(base + across + f"net_latency = {bad}\n", "bad")


# topoGetAlgoInfo (enqueue.cc): while nBytes < nc × nt × threadThreshold, one channel fewer.

def test_small_calls_run_on_fewer_channels_as_enqueue_cc_counts_them():
    # dgx-a100, 8 GPUs, Ring LL: 24 channels; threshold 8 × nRanks 8 = 64 B per thread,
    # 512 threads: 32,768 B per channel.
    def channels(n):
        return nccl_choice("dgx-a100", 8, n, algo="Ring", proto="LL").channels
    assert [channels(n) for n in (8, 65536, 786431, 786432, 1 << 30)] == [1, 2, 23, 24, 24]
    # Tree LL128 on two H100 nodes: threshold 8, 640 threads: 5,120 B per channel.
    assert nccl_choice("dgx-h100", 16, 10240, algo="Tree", proto="LL128").channels == 2
    # NVLS runs on nvlsChannels (16 on Hopper) at every size.
    assert nccl_choice("dgx-h100", 8, 8, algo="NVLS").channels == 16


def test_a_call_on_fewer_channels_moves_its_bytes_at_their_share_of_the_bandwidth():
    # dgx-a100 Ring LL, 64 KiB on 2 of 24 channels: one graph channel of 12 at 20 GB/s,
    # LL min(llMaxBw 87.7, 20 × 0.5) = 10 GB/s of bus bandwidth, × 8/14 for algbw;
    # latency 6.6 + 14 × 0.6 = 15.0 µs.
    small = nccl_choice("dgx-a100", 8, 65536, algo="Ring", proto="LL")
    assert small.bandwidth == pytest.approx(10e9 * 8 / 14)
    assert small.seconds * 1e6 == pytest.approx(15.0 + 65536 / (10e3 * 8 / 14))
    # On all 24 channels (from 768 KiB) the cap binds: min(87.7, 12 × 20 × 0.5) = 87.7 GB/s.
    big = nccl_choice("dgx-a100", 8, 786432, algo="Ring", proto="LL")
    assert big.bandwidth == pytest.approx(87.7e9 * 8 / 14)


def test_nvls_adds_no_8_bit_type_so_nccl_runs_something_else():
    # src/include/device.h, ncclNvlsSupported: the switch adds no int8 or uint8, and enqueue.cc
    # then turns NVLS and NVLSTree off for the call (every release carried)
    assert nccl_choice("dgx-h100", 8, 1 << 30).algorithm == "NVLS"
    for dtype in ("int8", "uint8"):
        assert nccl_choice("dgx-h100", 8, 1 << 30, dtype=dtype).algorithm == "Ring"
        assert nccl_choice("dgx-h100", 16, 1 << 30, dtype=dtype).algorithm not in ("NVLS", "NVLSTree")
    for dtype in ("int32", "half", "bfloat16", "double"):
        assert nccl_choice("dgx-h100", 8, 1 << 30, dtype=dtype).algorithm == "NVLS"
    # an all-gather adds nothing: from 2.22.3 it runs NVLS whatever its type; 2.21.5 falls back
    gather = dict(collective="all-gather", algo="NVLS", dtype="int8")
    assert nccl_choice("dgx-h100", 8, 1 << 30, **gather).algorithm == "NVLS"
    assert nccl_choice("dgx-h100", 8, 1 << 30, nccl="2.21.5", **gather).algorithm == "Ring"
    with pytest.raises(RingsimError, match="unknown data type 'float32'"):
        nccl_choice("dgx-h100", 8, 1 << 30, dtype="float32")


@pytest.mark.parametrize("kwargs, why", [
    (dict(gpus=8, algo="NVLS", dtype="int8"), "NVLS cannot add int8: the switch adds only"),
    (dict(gpus=8, algo="NVLS", proto="LL"), "NVLS runs the Simple protocol only"),
    (dict(gpus=2, algo="NVLS", nccl="2.26.2"), "NVLS needs at least 3 GPUs in every node in this release"),
])
def test_a_refused_nvls_says_why(kwargs, why):
    with pytest.raises(RingsimError, match=why):
        nccl_choice("dgx-h100", nbytes=1 << 30, **kwargs)


def test_a_pcie_box_is_told_it_has_no_nvswitch():
    with pytest.raises(RingsimError, match="NVLS needs an NVSwitch: an \\[inside\\] level of kind"):
        nccl_choice(parse(PCIE_FILE, "pcie-h100"), 4, 1 << 30, algo="NVLS")
    # and a PCIe level that says it adds is refused as the file is read
    with pytest.raises(RingsimError, match="\\[inside\\] in_network_reduction: a PCIe switch "
                                           "forwards and adds nothing"):
        parse(PCIE_FILE.replace('kind = "pcie"', 'kind = "pcie"\nin_network_reduction = true'),
              "pcie-h100")


PCIE_FILE = """
name = "pcie-h100"
gpus_per_node = 4
arch = "hopper"
[inside]
kind = "pcie"
alpha = "1us"
bandwidth = "64GB/s"
"""


def test_predicts_nvls_note_names_the_sizes_nvls_would_speed_up():
    from ringsim.studies.predict import nvls_note, predict
    head = "# NVLS on one node: NCCL's model rates it at 188 GB/s algbw"
    one = nvls_note("dgx-h100", 5, predict("dgx-h100", 5, "1GiB"))
    assert one.startswith(head) and one.endswith("(--algo NVLS) 1GiB would take 13% less")
    gaps = nvls_note("dgx-h100", 5, predict("dgx-h100", 5, "32MiB,64MiB,128MiB"))
    assert gaps.endswith("32MiB and 128MiB would take up to 9% less")  # 64MiB gains under 5%
    # nothing where no size runs NVLS or would gain from it, and nothing for int8, which the
    # switch cannot add
    assert nvls_note("dgx-h100", 5, predict("dgx-h100", 5, "8B")) is None
    int8 = predict("dgx-h100", 5, "32MiB..1GiB", dtype="int8")
    assert {r.algorithm for r in int8} == {"Ring"} and nvls_note("dgx-h100", 5, int8) is None


def test_links_slower_than_the_search_lists_fall_back_to_one_channel_as_nccl_does(tmp_path):
    # A Blackwell box whose GPUs meet over PCIe Gen4 x8: 15.75 GB/s, 12 GB/s as NCCL rates
    # PCIe, below the 18 GB/s that ends sm100SpeedArrayIntra (src/graph/search.cc). NCCL logs
    # "falling back to simple order" and runs one channel rated 0.1 GB/s.
    text = ('gpus_per_node = 4\narch = "blackwell"\n[inside]\nkind = "pcie"\nalpha = "1us"\n'
            'bandwidth = "{}"\n')
    slow = parse(text.format("15.75GB/s"), "slow")
    choice = nccl_choice(slow, 4, 1 << 30)
    assert (choice.algorithm, choice.protocol) == ("Ring", "Simple")
    # NCCL's own estimate is made at 0.1 GB/s a channel: a ring's busbw of one channel.
    assert (1 << 30) * 1.5 / choice.nccl_seconds == pytest.approx(0.1e9, rel=0.01)
    # the call runs at the link's 12 GB/s (as NCCL rates 15.75 GB/s of PCIe)
    assert (1 << 30) * 1.5 / choice.seconds == pytest.approx(12e9, rel=0.01)
    # twice the link finds a listed speed and never falls back
    fast = nccl_choice(parse(text.format("31.5GB/s"), "fast"), 4, 1 << 30)
    assert fast.seconds < choice.seconds and fast.nccl_seconds < 0.1 * choice.nccl_seconds
    path = tmp_path / "slow.toml"
    path.write_text(text.format("15.75GB/s"))
    out = _cli("--topology", str(path), "-g", "4", "--sizes", "1GiB")
    assert out.returncode == 0, out.stderr
    assert "falls back to one channel in rank order, which it rates 0.1 GB/s" in out.stdout
    out = _cli("--topology", str(path), "-g", "4", "--algo", "NVLS")
    assert out.returncode == 2 and "with the --algo/--proto given" in out.stderr


def test_the_fallback_channel_across_nodes_goes_at_the_slower_of_its_links():
    # 8 H100 a node on NVLink, a 100 Mb/s network: no listed speed fits across nodes, and the
    # one channel crosses both, so the call goes at the network's 12.5 MB/s on 2 nodes as on 3.
    text = ('gpus_per_node = {}\narch = "hopper"\n[inside]\nalpha = "1us"\nbandwidth = "450GB/s"\n'
            '[across]\nalpha = "3us"\nbandwidth = "100Mb/s"\n')
    for ppn, gpus in ((8, 16), (8, 24), (1, 2), (1, 3)):
        choice = nccl_choice(parse(text.format(ppn), "slow-net"), gpus, 1 << 30)
        busbw = (1 << 30) * 2 * (gpus - 1) / gpus / choice.seconds
        assert busbw == pytest.approx(12.5e6, rel=0.01), (ppn, gpus)
        assert math.isfinite(choice.seconds) and choice.nccl_seconds > 0


def test_a_last_node_of_fewer_gpus_sets_every_nodes_graph():
    # init.cc aligns every rank on the worst node's graph (std::min of channels and speeds over
    # allGather3Data). A DGX H100 gives each GPU one 400 Gb/s NIC (50 GB/s), so a node that
    # holds one GPU of the call sends and receives through that NIC alone: an all-reduce of S
    # bytes moves S out of it and S into it, S / 50 GB/s at the least, whatever the algorithm.
    size = 8 << 30
    nic = 400e9 / 8
    for gpus, last in ((9, 1), (10, 2), (17, 1), (20, 4)):
        choice = nccl_choice("dgx-h100", gpus, size)
        assert choice.seconds >= size / (last * nic), (gpus, choice)
        # no more channels than the full nodes alone would give
        assert choice.channels <= nccl_choice("dgx-h100", 8 * (gpus // 8), size).channels
    # a ring passes every byte twice through the lone GPU's NIC: 2 (G-1)/G S at the least
    assert nccl_choice("dgx-h100", 17, size, algo="Ring").seconds >= 2 * 16 / 17 * size / nic
    # NVLink SHARP needs NVLS on every node: a last node of one GPU has none (NVLS needs two,
    # transport/nvls.cc), so neither NVLS nor NVLSTree runs, where two full nodes run NVLSTree.
    assert nccl_choice("dgx-h100", 16, size).algorithm == "NVLSTree"
    with pytest.raises(RingsimError):
        nccl_choice("dgx-h100", 9, size, algo="NVLSTree")
    assert nccl_choice("dgx-h100", 10, size, algo="NVLSTree").seconds > 0  # two GPUs have it
    # full nodes are as before: the partial node's search is not run
    assert nccl_choice("dgx-h100", 24, size).channels == 16
    # predict says so above its table, and only then
    from ringsim.cost.nccl_notes import last_node_note
    assert last_node_note("dgx-h100", 9).startswith("the last node holds 1 GPU of the 8 a node holds")
    assert last_node_note("dgx-h100", 16) is None and last_node_note("dgx-h100", 4) is None


def test_predict_prints_a_time_of_ten_million_seconds_and_more_in_scientific_form(tmp_path, capsys):
    from ringsim.cli import main
    topo = tmp_path / "slow.toml"
    topo.write_text('name = "slow"\ntitle = "slow"\ngpus_per_node = 4\narch = "ampere"\n'
                    '[inside]\nname = "NVLink 3"\nkind = "nvlink"\nalpha = "0.5us"\n'
                    'bandwidth = "300GB/s"\n[across]\nname = "a crawl"\nkind = "network"\n'
                    'alpha = "3us"\nbandwidth = "1B/s"\n', encoding="utf-8")
    assert main(["predict", "--topology", str(topo), "--nodes", "2", "--sizes", "1GiB"]) == 0
    row = capsys.readouterr().out.splitlines()[-1].split()
    assert re.fullmatch(r"\d\.\d{3}e\+\d\d", row[3]), row  # µs, as 1.879e+15
    assert float(row[3]) >= 1e13


def test_a_last_node_of_one_gpu_prices_every_tree_at_085_from_2_26_2():
    # search.cc: a node of one GPU can only build NCCL_TOPO_PATTERN_TREE; from 2.26.2
    # tuning.cc prices Tree at 0.85 where comm->maxTreePattern (the largest over all ranks)
    # is that pattern, before then where rank 0's own graph is. 9 DGX H100 GPUs: the ninth
    # sets it for all from 2.26.2; 2.25.1's rank 0 sits on the full node.
    def tree_simple(gpus, release):
        return tuning_table("dgx-h100", gpus, release)[("AllReduce", "Tree", "Simple")][1]
    assert tree_simple(9, "2.26.2") == pytest.approx(0.85 * tree_simple(9, "2.25.1"))
    assert tree_simple(9, "2.30.7") == pytest.approx(tree_simple(9, "2.26.2"))
    # ten GPUs leave two on the last node: no TREE pattern there, no 0.85
    assert tree_simple(10, "2.30.7") == pytest.approx(tree_simple(10, "2.25.1"))


def test_a_last_node_on_one_pcie_switch_takes_the_fewest_channels_and_slowest_speed():
    # Two PCIe switches of four GPUs a node, a 200 Gb/s NIC per GPU; 12 GPUs leave four on the
    # last node, all under one switch. Each node searches its own graph (search.cc): the model
    # gives a full node's rings one channel at 24 GB/s and a node of four two at 15. init.cc
    # then takes each field's minimum over the ranks apart (channels, speed inside, speed
    # across), so the call runs one channel at 15 GB/s, slower than either machine alone.
    from ringsim.cost.nccl_graph import graphs, system
    base = (ROOT / "ringsim" / "cost" / "topologies" / "pcie-switches.toml").read_text(encoding="utf-8")
    net = '\n[across]\nname = "net"\nkind = "network"\nalpha = "3us"\nbandwidth = "200Gb/s"\n'
    full = parse(base + net, "pcie-switches-net")
    four = parse(base.replace("gpus_per_node = 8", "gpus_per_node = 4") + net, "four-a-node")
    alone = [graphs(system(full, 16))["Ring"], graphs(system(four, 8))["Ring"]]
    mixed = graphs(system(full, 12))["Ring"]
    assert (alone[0].channels, alone[0].bw_intra) == (1, 24.0)
    assert (alone[1].channels, alone[1].bw_intra) == (2, 15.0)
    assert (mixed.channels, mixed.bw_intra, mixed.bw_inter) == (
        min(g.channels for g in alone), min(g.bw_intra for g in alone),
        min(g.bw_inter for g in alone))
    size = 1 << 30
    busbw = {g: size * 2 * (g - 1) / g / nccl_choice(t, g, size, algo="Ring").seconds
             for t, g in ((full, 12), (full, 16), (four, 8))}
    assert busbw[12] < min(busbw[16], busbw[8])
    assert busbw[12] == pytest.approx(15e9, rel=0.01)
