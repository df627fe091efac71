"""Published runs like the user's (ringsim/studies/peers.py), and diagnose setting them beside
a paste: which runs count as alike, the arithmetic of each size's range, and the words."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from ringsim.cli import main
from ringsim.cost.topology import load
from ringsim.studies import peers

from nccl_pastes import all_reduce_perf

OUT = Path(__file__).resolve().parent / "data" / "nccl_outputs"


def test_alike_means_healthy_unforced_runs_with_the_same_gpus_nodes_and_links():
    # Written from the data file's own words: of its 2 × 8 Hopper systems on NVSwitch, h20-2x8-ndr
    # is reported slow, nccltests319/290 too, h20-2x8-ndr-nvlstree and nccltests309-…-ring
    # forced NCCL_ALGO, datacrunch-h200-2x8-g8 is unverified, and the A3 Mega pair has 200 Gb/s
    # of network per GPU, not 400; A100 and B200 pairs are other architectures. Of the nine
    # left, seven run on InfiniBand and RoCE; the p5 pairs run on EFA, whose plugin reports
    # 75 µs of latency to NCCL, so they stand beside each other only: of them the Slurm pair
    # let NCCL choose, while the three 2024 EKS runs set NCCL_BUFFSIZE=8388608 (one also with
    # AWS's tuner plugin picking for NCCL) and the 2023 EKS pair's image set NCCL_PROTO=Simple.
    ids = {p.id for p in peers.peers(load("dgx-h100"), 16, 2)}
    assert ids == {"oci-h100-2x8-roce", "nccltests309-hgx-h100-2x8-ib",
                   "nebius-h100-2x8-ib", "nebius-h100-2x8-ib-mk8s", "oci-h200-2x8-rdma",
                   "coreweave-h200-2x8-ib", "together-h100-2x8-ib"}
    efa = peers.topology("systems/p5-efa.toml")
    assert {p.id for p in peers.peers(efa, 16, 2)} == {"aws-p5-2x8-efa"}
    assert peers.likeness(efa, 2) == ("Hopper GPUs, NVLink inside a node through a switch that "
                                      "adds (NVLink SHARP), 400 Gb/s of network per GPU with a "
                                      "latency of 75.00 µs reported by its net plugin and 21.85 "
                                      "µs measured")
    # On one node the network does not count: a p5 is a DGX H100 there.
    assert "aws-p5-h100-1x8-batch" in {p.id for p in peers.peers(load("dgx-h100"), 8, 1)}
    # The A3 Mega pair ran with Google's NCCL_ALGO=Ring,Tree, NCCL_PROTO=Simple and tuner plugin:
    # like no run, not even on its own topology.
    tcpxo = peers.topology("systems/a3mega-tcpxo.toml")
    assert peers.peers(tcpxo, 16, 2) == []
    # A100 pairs at 200 Gb/s per GPU (p4de's EFA is 50), one process per GPU (OCI's BM.GPU4.8
    # pair prints -g 8 in its command but "nGpus 1" and 16 processes in its output); none ran -g 8.
    assert {p.id for p in peers.peers(load("dgx-a100"), 16, 2)} == {
        "oci-a100-40g-2x8-roce-vf", "azure-ndmv4-a100-2x8-aks", "oci-a100-2x8-roce"}
    assert peers.peers(load("dgx-a100"), 16, 2, 8) == []
    # One node of eight: the runs on one NVSwitch box, none of the two-node ones.
    one = {p.id for p in peers.peers(load("dgx-h100"), 8, 1)}
    assert "azure-nd-h100-v5" not in one  # it forced NCCL_ALGO=NVLS on every size
    assert one and not one & ids
    assert peers.peers(load("flat"), 3, 1) == []  # no published run of three GPUs
    # flat says Ampere on NVLink, as the one published four-A100 board without NVSwitch is
    # (a -g 4 run).
    assert [p.id for p in peers.peers(load("flat"), 4, 1, 4)] == ["stanage-a100sxm4-4-nvlink"]
    assert peers.peers(load("flat"), 16, 2) == []  # a flat topology given for two nodes: no network
    # A run is set beside runs of the same test only: four H100 with -g 4 have two all-reduces
    # published, and one all-gather and one reduce-scatter (waynehacking8's quiet runs).
    four = {ran: [p.id for p in peers.peers(load("dgx-h100"), 4, 1, 4, ran)]
            for ran in ("all-reduce", "all-gather", "reduce-scatter", "broadcast")}
    assert four == {"all-reduce": ["lambda-h100sxm-4-nvlink-vm", "wh8-h100-4of8-nvswitch"],
                    "all-gather": ["wh8-h100-4of8-nvswitch-ag"],
                    "reduce-scatter": ["wh8-h100-4of8-nvswitch-rs"], "broadcast": []}
    assert peers.collectives() == ("all-reduce", "all-gather", "reduce-scatter")
    switch = "Hopper GPUs, NVLink inside a node through a switch that adds (NVLink SHARP)"
    assert peers.likeness(load("dgx-h100"), 1) == switch
    assert peers.likeness(load("dgx-h100"), 2) == f"{switch}, 400 Gb/s of network per GPU"
    # Four H100s of an NVSwitch box are not four GH200s joined pair by pair (no NVLS there)
    four = {p.id for p in peers.peers(load("dgx-h100"), 4, 1)}
    pairs = {p.id for p in peers.peers(peers.topology("systems/gh200-4-slingshot.toml"), 4, 1)}
    assert "xxrjun-h100-4of8-nvswitch" in four and "cscs-alps-gh200-1x4-slingshot-ofi1130" in pairs
    assert not four & pairs
    # Two DGX Sparks, one GPU each: nothing inside a node to match; their one published pair.
    spark = peers.topology("systems/gb10-pair.toml")
    assert peers.likeness(spark, 2) == "Blackwell GPUs, one GPU per node, 200 Gb/s of network per GPU"
    assert [p.id for p in peers.peers(spark, 2, 2)] == ["gb10-2-roce-mtu9000"]


def test_a_run_stands_beside_runs_of_an_element_type_nccl_runs_alike():
    # NVLink SHARP adds float, half, bfloat16, double and 32/64-bit integers but no 8-bit type
    # (ncclNvlsSupported), so on a machine that has it NCCL runs an int8 all-reduce without
    # NVLS where a float one may use it: there the two stand apart. Without it, as on GH200
    # nodes joined pair by pair, bytes are bytes: Olivia's int8 pair stands beside float runs.
    gh = peers.topology("systems/gh200-4-slingshot.toml")
    floats = {p.id for p in peers.peers(gh, 8, 2)}
    assert "olivia-gh200-2x4-slingshot-int8" in floats
    assert {p.id for p in peers.peers(gh, 8, 2, dtype="int8")} == floats
    assert "elements" not in peers.likeness(gh, 2, "int8")
    # One H100 node has NVLink SHARP: its float and double runs stand together, not beside
    # an int8 run (none is published), and the likeness says what was matched.
    doubles = {p.id for p in peers.peers(load("dgx-h100"), 8, 1, dtype="double")}
    assert "xxrjun-h100-1x8-nvswitch" in doubles
    assert doubles == {p.id for p in peers.peers(load("dgx-h100"), 8, 1)}
    assert peers.peers(load("dgx-h100"), 8, 1, dtype="int8") == []
    assert peers.peers(load("dgx-h100"), 8, 1, dtype="char") == []  # nccl-tests' old int8 name
    assert peers.likeness(load("dgx-h100"), 1, "int8").endswith(
        ", int8 elements or others NVLink SHARP cannot add")
    assert "elements" not in peers.likeness(load("dgx-h100"), 1, "half")
    # The list says which ran another type.
    xx = next(p for p in peers.peers(load("dgx-h100"), 8, 1) if p.id == "xxrjun-h100-1x8-nvswitch")
    assert "(-g 1, -d double)" in " ".join(peers.describe([xx], 200))


def test_a_run_of_several_gpus_per_process_stands_beside_runs_of_as_many():
    # One thread issuing each call to 8 GPUs sets the small sizes' time: a -g 8 run beside
    # -g 1 runs would look slow where it is healthy. Runs whose source shows no command count
    # as -g 1.
    ones = peers.peers(load("dgx-h100"), 8, 1)
    eights = peers.peers(load("dgx-h100"), 8, 1, 8)
    assert ones and eights and all(p.gpus_per_process in (1, None) for p in ones)
    assert all(p.gpus_per_process == 8 for p in eights)
    assert "nccltests290-h100-1x8" in {p.id for p in eights} - {p.id for p in ones}
    assert {p.id for p in peers.peers(load("dgx-h100"), 16, 2)} >= {"oci-h100-2x8-roce"}  # no -g shown
    assert {p.id for p in peers.peers(peers.topology("systems/p5-efa.toml"), 16, 2)} >= {
        "aws-p5-2x8-efa"}
    assert peers.peers(load("dgx-h100"), 16, 2, 2) == []


def test_diagnose_sets_a_g8_run_beside_g8_runs_only(tmp_path, capsys):
    # A healthy -g 8 run (the model's times, 40 µs and up with one thread per 8 GPUs) is not
    # "longer than every published run" at its small sizes, as it would be beside -g 1 runs.
    from ringsim.studies.predict import predict
    sizes = [8 << k for k in range(31)]
    times = {r.bytes: r.seconds * 1e6 * 1.02 for r in predict("dgx-h100", 8, sizes, gpus_per_process=8)}
    paste = all_reduce_perf(tmp_path / "g8.txt", times, "NVIDIA H100 80GB HBM3", ["node0"] * 8, 8)
    code, out, err = _run(capsys, "diagnose", str(paste), "--json")
    assert code == 0, err
    summary = json.loads(out.splitlines()[-1])
    assert summary["gpus_per_process"] == 8 and summary["published_peers"]
    assert all(p["gpus_per_process"] == 8 for p in summary["published_peers"])
    assert not any(s["slower_than_all"] for s in summary["published_sizes"])
    code, out, err = _run(capsys, "diagnose", str(paste), "--no-plot")
    assert "(8 GPUs in one node, 8 GPUs per process; Hopper GPUs" in " ".join(out.split())


def test_a_quoted_busbw_becomes_the_time_nccl_tests_would_have_printed():
    # busbw = size / time × 2(G−1)/G: Azure's 1 KiB at 0.07 GB/s on 8 GPUs is 1024 × 1.75 / 0.07e9 s.
    assert peers.measured_seconds({"bytes": 1024, "busbw_GBps": 0.07}, 8) == pytest.approx(25.6e-6)
    assert peers.measured_seconds({"bytes": 8, "time_us": 25.2}, 16) == pytest.approx(25.2e-6)


def test_each_size_shows_the_fastest_median_and_slowest_run_and_whether_yours_is_slower():
    a = peers.Peer("a", "", "", 1, {8: 20e-6, 1024: 30e-6})
    b = peers.Peer("b", "", "", 1, {8: 30e-6, 1024: 40e-6})
    c = peers.Peer("c", "", "", 1, {8: 40e-6})
    rows = peers.beside([(8, 50e-6), (1024, 35e-6), (4096, 1e-3)], [a, b, c])
    assert [(r.bytes, r.low, r.median, r.high, r.systems, r.slower_than_all) for r in rows] == [
        (8, 20e-6, 30e-6, 40e-6, 3, True), (1024, 30e-6, pytest.approx(35e-6), 40e-6, 2, False)]
    assert [r.ratio for r in rows] == [pytest.approx(5 / 3), pytest.approx(1.0)]
    # One published run is no range: slower than it is not "slower than all".
    assert not peers.beside([(8, 1.0)], [a])[0].slower_than_all
    # The same run, as published: every shared size within 1%, and at least three of them.
    assert peers.same_run(peers.Peer("d", "", "", 1, {8: 1.0, 16: 2.0, 32: 3.0}),
                          {8: 1.0015, 16: 2.0, 32: 2.997, 64: 9.0})
    # A copy made from a quoted busbw is good to about 1%; a printed time to its digits.
    assert peers.same_run(peers.Peer("d", "", "", 1, {8: 1.0, 16: 2.0, 32: 3.0}, frozenset({8, 32})),
                          {8: 1.005, 16: 2.0, 32: 2.99})
    assert not peers.same_run(peers.Peer("d", "", "", 1, {8: 1.0, 16: 2.0, 32: 3.0}),
                              {8: 1.005, 16: 2.0, 32: 2.99})
    assert not peers.same_run(peers.Peer("d", "", "", 1, {8: 1.0, 16: 2.0}), {8: 1.0, 16: 2.0})
    assert not peers.same_run(peers.Peer("d", "", "", 1, {8: 1.0, 16: 2.0, 32: 3.0}),
                              {8: 1.0, 16: 2.0, 32: 3.1})
    # Two healthy machines of one type agree within 1% at their largest sizes, not within
    # a printout's rounding: Nebius's pair of H100 nodes is not OCI's.
    oci = next(p for p in peers.peers(load("dgx-h100"), 16, 2) if p.id == "oci-h100-2x8-roce")
    nebius = {p["bytes"]: peers.measured_seconds(p, 16) for p in peers.data()["point"]
              if p["system"] == "nebius-h100-2x8-ib"}
    assert len(set(oci.times) & set(nebius)) >= 3 and not peers.same_run(oci, nebius)


def _paste(tmp_path: Path, system: str, scale: float) -> Path:
    """A published two-node run's times × `scale`, as all_reduce_perf prints them (16 ranks,
    8 on each of two hosts, H100s)."""
    times = {p["bytes"]: p["time_us"] * scale for p in peers.data()["point"] if p["system"] == system}
    return all_reduce_perf(tmp_path / f"{system}.txt", times, "NVIDIA H100 80GB HBM3",
                           ["node0"] * 8 + ["node1"] * 8)


def size_records(out: str) -> list[dict]:
    """The per-size records of `diagnose --json`."""
    return [r for r in map(json.loads, out.splitlines()) if r.get("type") == "size"]


def _run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _a3mega_but_8gib(tmp_path: Path) -> str:
    """The A3 Mega paste without its 8 GiB row: a run like that pair's, no longer a copy of it."""
    lines = (OUT / "a3mega_h100_2node_all_reduce.txt").read_text().splitlines()
    paste = tmp_path / "a3mega_to_4gib.txt"
    paste.write_text("\n".join(x for x in lines if not x.strip().startswith("8589934592 ")) + "\n")
    return str(paste)


def test_diagnose_sets_a_run_beside_published_runs_like_it(tmp_path, capsys):
    # A run like the A3 Mega pair's (GPUDirect-TCPXO) but not that published run (no 8 GiB row),
    # read on the dgx-h100 preset its GPUs pick: beside the seven healthy two-node Hopper runs at
    # 400 Gb/s per GPU over InfiniBand and RoCE it takes almost four times their median time,
    # and is the longest at every size.
    paste = _a3mega_but_8gib(tmp_path)
    code, out, err = _run(capsys, "diagnose", paste, "--json")
    assert code == 0, err
    summary = json.loads(out.splitlines()[-1])
    assert len(summary["published_peers"]) == 7 and summary["notes"] == []
    assert all(p["source"].startswith("https://") for p in summary["published_peers"])
    sizes = summary["published_sizes"]
    assert len(sizes) == 30 and all(s["slower_than_all"] for s in sizes)
    eight = next(s for s in sizes if s["bytes"] == 8)
    # Published at 8 B: 45.72 (Nebius) and 68.52 µs (#309); this run 135.8.
    assert (eight["published_fastest"], eight["published_median"], eight["published_slowest"]) \
        == pytest.approx((45.72e-6, 57.12e-6, 68.52e-6), rel=1e-3)
    assert eight["over_median"] == pytest.approx(135.8 / 57.12, rel=1e-3)
    assert summary["verdicts"][-1] == (
        "Beside 7 published healthy runs on machines like this one, at the 30 sizes they share: "
        "this run takes 3.97× their median time over the 22 latency-bound sizes and 1.71× over "
        "the 8 bandwidth-bound sizes (the median of each), longer than every one of them at "
        "every size; of the 29 sizes flagged against the model, 0 are within 30% of their median "
        "or faster: machines like this one are faster there, so this run falls short of them too")
    code, out, err = _run(capsys, "diagnose", paste, "--no-plot")
    assert "Published all_reduce_perf runs on machines like this one (16 GPUs in 2 nodes;" in out
    assert "https://github.com/NVIDIA/nccl-tests/issues/309" in out
    assert out.count("◀ longest") == 30


A3MEGA_NOTE = (
    "this run is the published gcp-a3mega-2x8-tcpxo (https://github.com/lessizzmore/"
    "create-a3mega-ztan-fork/blob/346b825ad3b527ffbd6ba511a09d39df08f04be0/"
    "ztan-NCCL-test-result.markdown), which its source ran with NCCL_ALGO=Ring,Tree and "
    "NCCL_PROTO=Simple, with a tuner plugin")


def test_a_published_run_with_settings_its_paste_hides_is_named_and_set_beside_none(capsys):
    # The A3 Mega pair itself: its data file entry records Google's TCPXO settings, which the
    # paste does not show. Set beside runs where NCCL chose, it would look four times too slow.
    paste = str(OUT / "a3mega_h100_2node_all_reduce.txt")
    for topology in ([], ["--topology", peers.system_file("a3mega-tcpxo")]):
        code, out, err = _run(capsys, "diagnose", paste, "--json", *topology)
        summary = json.loads(out.splitlines()[-1])
        assert summary["published_peers"] == [] and summary["published_sizes"] == []
        assert summary["notes"] == [
            A3MEGA_NOTE + ": the paste does not show it, --algo Ring,Tree --proto Simple holds the "
            "model to it, and the published runs where NCCL chose are not set beside it (ringsim "
            "models no tuner plugin)"]
    # Held to them as asked, the note keeps to what the run was.
    code, out, err = _run(capsys, "diagnose", paste, "--json", "--algo", "Ring,Tree",
                          "--proto", "Simple")
    notes = json.loads(out.splitlines()[-1])["notes"]
    assert notes[0] == A3MEGA_NOTE + " (ringsim models no tuner plugin)"
    assert notes[1].startswith("this run was held to NCCL_ALGO=Ring,Tree, NCCL_PROTO=Simple")
    code, out, err = _run(capsys, "diagnose", paste, "--no-plot")
    assert "Note: " + A3MEGA_NOTE in out and "◀ longest" not in out


def test_a_run_five_percent_slower_than_a_published_one_is_read_by_its_median(tmp_path, capsys):
    # nccl-tests#309's bare-metal pair, 5% slower everywhere: no longer the same run, so set
    # beside the other six and its own copy. Its time is about their median in both regimes
    # (0.97× and 1.04×), yet the longest at 13: from 32 MiB up, where the runs that go that far lie within
    # 5% of each other, and at three small sizes where only Nebius's pair is beside it. The
    # median says more than the longest.
    code, out, err = _run(capsys, "diagnose", str(_paste(tmp_path, "nccltests309-hgx-h100-2x8-ib",
                                                         1.05)), "--json")
    assert code == 0, err
    summary = json.loads(out.splitlines()[-1])
    assert len(summary["published_peers"]) == 7
    sizes = summary["published_sizes"]
    assert len(sizes) == 32
    assert [s["bytes"] for s in sizes if s["slower_than_all"]] == [8, 256, 512] + [
        32 << 20 << k for k in range(10)]
    eight = next(s for s in sizes if s["bytes"] == 8)
    assert eight["seconds"] == pytest.approx(68.5e-6 * 1.05, rel=1e-3)
    assert eight["published_systems"] == 2  # only two of the seven printed 8 B
    # The model flags five of its sizes; four are within 30% of what runs like it measure.
    assert sum(s["flag"] for s in size_records(out)) == 5
    assert summary["verdicts"][-1] == (
        "Beside 7 published healthy runs on machines like this one, at the 32 sizes they share: "
        "this run takes 0.97× their median time over the 20 latency-bound sizes and 1.04× over "
        "the 12 bandwidth-bound sizes (the median of each), longer than every one of them at 13 "
        "(8B, 256B, 512B, 32MiB, 64MiB, 128MiB, 256MiB, 512MiB, …); of the 5 sizes "
        "flagged against the model, 4 are within 30% of their median or faster: the other one "
        "takes longer than machines like this one do, so look at it first")


def test_a_run_a_little_faster_than_a_published_one_is_never_the_longest(tmp_path, capsys):
    code, out, err = _run(capsys, "diagnose", str(_paste(tmp_path, "nccltests309-hgx-h100-2x8-ib",
                                                         0.97)), "--json")
    summary = json.loads(out.splitlines()[-1])
    assert code == 0 and len(summary["published_peers"]) == 7
    assert "at the 32 sizes they share: this run takes " in summary["verdicts"][-1]
    assert ", never longer than the slowest of them" in summary["verdicts"][-1]


def test_other_collectives_have_no_published_runs_to_stand_beside(capsys, tmp_path):
    # a3mega's machine has published all-reduce runs like it; the same rows printed as
    # all_gather_perf prints them (no reduction, each rank's share as count) are an all-gather,
    # which none of them measured.
    code, out, err = _run(capsys, "diagnose", _a3mega_but_8gib(tmp_path), "--json")
    assert json.loads(out.splitlines()[-1])["published_peers"]
    rows = []
    for line in (OUT / "a3mega_h100_2node_all_reduce.txt").read_text().splitlines():
        parts = line.split()
        if "all_reduce" in line or (len(parts) >= 13 and parts[0].isdigit()
                                    and int(parts[1]) % 16):
            continue
        if len(parts) >= 13 and parts[0].isdigit():
            line = "  ".join([parts[0], str(int(parts[1]) // 16), parts[2], "none", *parts[4:]])
        rows.append(line)
    gather = tmp_path / "all_gather.txt"
    gather.write_text("\n".join(rows) + "\n")
    code, out, err = _run(capsys, "diagnose", str(gather), "--json")
    summary = json.loads(out.splitlines()[-1])
    assert summary["collective"] == "all-gather"
    assert summary["published_peers"] == [] and summary["published_sizes"] == []


def test_predict_sets_the_published_median_beside_the_models_time(capsys):
    code, out, err = _run(capsys, "predict", "--topology", "dgx-h100", "-g", "16", "--published",
                          "--sizes", "8B,1GiB,32GiB")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[1].split()[-3:] == ["published", "runs", "model/pub"]
    eight, gib, beyond = (line.split() for line in lines[3:6])
    # 8 B: 45.72 (Nebius) and 68.52 µs (#309); the model's Tree/LL 25.20 µs.
    assert eight[3] == "25.20" and eight[-3:] == ["57.12", "2", "0.44"]
    # 1 GiB: all seven runs printed it.
    median = sorted(p.times[1 << 30] for p in peers.peers(load("dgx-h100"), 16, 2))[3]
    assert gib[-3:-1] == [f"{median * 1e6:.1f}", "7"]
    assert beyond[-3:] == ["-", "0", "-"]  # no run went to 32 GiB
    assert "# published: the median time of the runs on machines like this one (Hopper GPUs, " \
           "NVLink inside a node through a switch that adds (NVLink SHARP), 400 Gb/s of network " \
           "per GPU, as ringsim's file for each describes it;" in " ".join(
               line.removeprefix("#   ") for line in out.splitlines())
    assert "#       https://github.com/NVIDIA/nccl-tests/issues/309" in out
    code, out, err = _run(capsys, "predict", "-g", "16", "--published", "--sizes", "8B,32GiB",
                          "--json")
    first, last = map(json.loads, out.splitlines())
    assert first["published"]["runs"] == 2 and last["published"] is None
    assert first["published"]["median"] == pytest.approx(57.12e-6)
    assert first["published"]["model_over_median"] == pytest.approx(first["seconds"] / 57.12e-6)


def test_predict_says_when_no_published_run_is_like_the_topology(capsys):
    code, out, err = _run(capsys, "predict", "--topology", "flat", "-g", "3", "--published",
                          "--sizes", "8B")
    assert code == 0, err
    assert out.splitlines()[-1].startswith("# no published all_reduce_perf run matches flat, "
                                           "3 GPUs in 1 node (")
    for extra, said in ((("--tuning",), "--published sets published runs beside the model's "
                                        "times: it takes no --tuning"),
                        (("--collective", "broadcast"), "--published: ringsim holds no published "
                         "broadcast_perf run; it holds all_reduce_perf, all_gather_perf and "
                         "reduce_scatter_perf runs")):
        code, out, err = _run(capsys, "predict", "--published", *extra)
        assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
        assert said in err
    code, out, err = _run(capsys, "predict", "--topology", "flat", "-g", "3", "--published",
                          "--sizes", "8B", "--collective", "all-gather")
    assert out.splitlines()[-1].startswith("# no published all_gather_perf run matches flat, ")


def test_predict_sets_published_all_gathers_beside_an_all_gather(capsys):
    # Four H100 driven by one process: waynehacking8's quiet all_gather_perf, 8 GiB in
    # 18,753.6 µs, the one published all-gather like it.
    code, out, err = _run(capsys, "predict", "-g", "4", "--gpus-per-process", "4", "--published",
                          "--collective", "all-gather", "--sizes", "8GiB")
    assert code == 0, err
    row = out.splitlines()[3].split()
    assert row[-3:-1] == ["18754", "1"]  # nccl-tests prints a time past 10,000 µs whole
    assert "wh8-h100-4of8-nvswitch-ag" in out and "wh8-h100-4of8-nvswitch:" not in out
    # without --published, the last line says the runs are there
    code, out, err = _run(capsys, "predict", "-g", "4", "--gpus-per-process", "4",
                          "--collective", "reduce-scatter", "--sizes", "8GiB")
    assert "# 1 published healthy reduce_scatter_perf run on machines like this one" in out


def test_docs_show_what_predict_published_prints(capsys):
    args = ("--topology", "dgx-h100", "--gpus", "16", "--sizes", "8B..8GiB:x32", "--published")
    code, out, err = _run(capsys, "predict", *args)
    shown = "\n".join(out.splitlines()[:12])  # the table, the list's heading and its first run
    docs = (Path(__file__).resolve().parent.parent / "docs" / "cost.md").read_text(encoding="utf-8")
    assert f"$ ringsim predict {' '.join(args)}\n{shown}\n#   …\n```" in docs


def test_predict_names_the_gpus_per_process_it_matched_on(capsys):
    code, out, err = _run(capsys, "predict", "-g", "8", "--gpus-per-process", "4", "--published",
                          "--sizes", "8")
    assert code == 0, err
    assert out.splitlines()[-1].startswith("# no published all_reduce_perf run matches dgx-h100, 8 "
                                           "GPUs in 1 node (Hopper GPUs, NVLink inside a node "
                                           "through a switch that adds (NVLink SHARP), 4 GPUs "
                                           "per process); ")


def test_a_run_held_to_one_algorithm_is_not_set_beside_runs_that_let_nccl_choose(tmp_path, capsys):
    # The same bare-metal pair's times, run with NCCL_ALGO=Ring: the model is held to the ring,
    # and the published runs (NCCL's own choice, NVLSTree at large sizes) are left out.
    paste = _paste(tmp_path, "nccltests309-hgx-h100-2x8-ib", 1.0)
    text = paste.read_text(encoding="utf-8")
    paste.write_text("mpirun -x NCCL_ALGO=Ring all_reduce_perf -b 8 -e 16G -f 2 -g 1\n" + text,
                     encoding="utf-8")
    code, out, err = _run(capsys, "diagnose", str(paste), "--json")
    summary = json.loads(out.splitlines()[-1])
    assert code == 0 and summary["published_peers"] == [] and summary["published_sizes"] == []
    assert ("this run was held to NCCL_ALGO=Ring, and the published runs like it let NCCL "
            "choose, so they are not set beside it") in summary["notes"]


def test_the_published_runs_median_is_given_per_regime(tmp_path, capsys):
    # Half the bus bandwidth at every bandwidth-bound size, the small sizes as measured: one
    # median over all 32 sizes would read about 1×; per regime it is 1× and 2×.
    times = {p["bytes"]: p["time_us"] for p in peers.data()["point"]
             if p["system"] == "nccltests309-hgx-h100-2x8-ib"}
    slow = {n: t * (2 if n >= 8 << 20 else 1) for n, t in times.items()}
    paste = all_reduce_perf(tmp_path / "half.txt", slow, "NVIDIA H100 80GB HBM3",
                            ["node0"] * 8 + ["node1"] * 8)
    code, out, err = _run(capsys, "diagnose", str(paste), "--json")
    verdict = json.loads(out.splitlines()[-1])["verdicts"][-1]
    parts = re.search(r"this run takes ([\d.]+)× their median time over the (\d+) latency-bound "
                      r"sizes and ([\d.]+)× over the (\d+) bandwidth-bound sizes", verdict)
    assert parts, verdict
    assert 0.8 < float(parts[1]) < 1.25 and 1.6 < float(parts[3]) < 2.4
    assert int(parts[2]) + int(parts[4]) == 32


def _across(topo, **changes):
    from dataclasses import replace
    return replace(topo, levels={**topo.levels,
                                 "across": replace(topo.level("across"), **changes)})


def test_a_nic_behind_the_cpu_or_across_the_sockets_is_like_no_published_near_nic_run():
    # The published two-node Hopper runs all have NICs by their GPUs (their files say no
    # nic_path): a file whose NICs sit behind the CPU or on the other socket is not like them,
    # and neither is a network of no finite rate.
    near = {p.id for p in peers.peers(load("dgx-h100"), 16, 2)}
    assert len(near) == 7
    assert {p.id for p in peers.peers(_across(load("dgx-h100"), nic_path="pix"), 16, 2)} == near
    for path in ("phb", "sys", "p2c"):
        assert peers.peers(_across(load("dgx-h100"), nic_path=path), 16, 2) == []
    assert peers.peers(_across(load("dgx-h100"), bandwidth=float("inf")), 16, 2) == []
    # on one node no NIC is crossed: the path does not matter
    assert peers.peers(_across(load("dgx-h100"), nic_path="sys"), 8, 1) == peers.peers(
        load("dgx-h100"), 8, 1)
    assert peers.likeness(_across(load("dgx-h100"), nic_path="sys"), 2).endswith(
        "400 Gb/s of network per GPU, each GPU's NIC on the other CPU socket (nic_path sys)")
    assert "a network of no finite rate (inf)" in peers.likeness(
        _across(load("dgx-h100"), bandwidth=float("inf")), 2)


def test_predicts_last_line_says_what_the_published_medians_say_of_the_model(capsys, tmp_path):
    code, out, err = _run(capsys, "predict", "--topology", "dgx-h100", "--nodes", "2",
                          "--sizes", "1MiB,1GiB")
    assert code == 0, err
    rows = {int(r.split()[0]): float(r.split()[3]) for r in out.splitlines() if r[:1] == " "}
    beside = {m.bytes: m for m in peers.beside([(n, t / 1e6) for n, t in rows.items()],
                                              peers.peers(load("dgx-h100"), 16, 2))}
    low, high = sorted(beside[n].ratio for n in rows)
    assert out.splitlines()[-1] == (
        "# 7 published healthy all_reduce_perf runs on machines like this one: --published sets "
        f"their median time beside each size (the model's time is {low:.2f} to {high:.2f} times "
        "their median at the 2 sizes they measured)")
    # NICs on the other socket: no published run is like it, so no line claims one
    far = tmp_path / "far.toml"
    far.write_text((Path(peers.__file__).parents[1] / "cost" / "topologies" / "dgx-h100.toml")
                   .read_text().replace('[across]\n', '[across]\nnic_path = "sys"\n'))
    code, out, err = _run(capsys, "predict", "--topology", str(far), "--nodes", "2")
    assert code == 0 and "published" not in out.splitlines()[-1]
    code, out, err = _run(capsys, "predict", "--topology", str(far), "--nodes", "2",
                          "--published", "--sizes", "1MiB")
    assert out.splitlines()[-1].startswith("# no published all_reduce_perf run matches dgx-h100, 16 "
                                           "GPUs in 2 nodes (Hopper GPUs, NVLink inside a node "
                                           "through a switch that adds (NVLink SHARP), "
                                           "400 Gb/s of network per GPU, each GPU's NIC on the "
                                           "other CPU socket (nic_path sys))")


def test_a_published_run_that_is_no_peer_is_named_with_its_health(tmp_path, capsys):
    # The H20 pair its reporter calls slow: like no healthy run, yet named, with its source's word.
    code, out, err = _run(capsys, "diagnose", str(_paste(tmp_path, "h20-2x8-ndr", 1.0)), "--json")
    assert code == 0, err
    notes = json.loads(out.splitlines()[-1])["notes"]
    assert any(n.startswith("this run is the published h20-2x8-ndr (https://github.com/NVIDIA/nccl/"
                            "issues/1244); its source: reported slow: ") for n in notes), notes
    # 1% slower everywhere: no longer the published copy
    code, out, err = _run(capsys, "diagnose", str(_paste(tmp_path, "h20-2x8-ndr", 1.01)), "--json")
    assert not any("this run is the published" in n
                   for n in json.loads(out.splitlines()[-1])["notes"])


def test_a_copy_is_every_size_of_one_published_run_and_no_other(tmp_path, capsys):
    # DGX Cloud's one DGX H100 from 32 MiB up, 0.3% slower (no longer that run), agrees with
    # Azure's ND H100 v5 (NVLS forced) to 0.2% at the sizes both print: a size range of another
    # machine, not a copy of it.
    times = {p["bytes"]: p["time_us"] * 1.003 for p in peers.data()["point"]
             if p["system"] == "dgxc-dgx-h100-1x8" and p["bytes"] >= 32 << 20}
    paste = all_reduce_perf(tmp_path / "part.txt", times, "NVIDIA H100 80GB HBM3", ["node0"] * 8)
    code, out, err = _run(capsys, "diagnose", str(paste), "--json")
    assert not any("this run is the published" in n for n in json.loads(out.splitlines()[-1])["notes"])
    # Two published runs alike to the digits (one host, NCCL's choice and NVLS forced) are not
    # told apart: neither is named as a copy, though the one NCCL chose stands beside it as itself.
    nvls = {p["bytes"]: p["time_us"] for p in peers.data()["point"]
            if p["system"] == "wh8-h100-6of8-nvswitch-nvls"}
    assert peers.copy_of(6, 1, 6, "float", "all-reduce", {n: t / 1e6 for n, t in nvls.items()}) is None


@pytest.mark.parametrize("setting, named", [
    ("NCCL_MAX_CTAS set by environment to 4.", "NCCL_MAX_CTAS=4"),
    ("NCCL_NTHREADS set by environment to 256.", "NCCL_NTHREADS=256"),
    ("NCCL_BUFFSIZE set by environment to 16777216.", "NCCL_BUFFSIZE=16777216"),
])
def test_a_run_held_to_any_setting_is_not_set_beside_runs_that_let_nccl_choose(
        tmp_path, capsys, setting, named):
    # The published runs kept NCCL's defaults: a run with fewer CTAs, other thread counts or
    # another buffer size is not like them, and the note names the setting as it was set.
    paste = _paste(tmp_path, "nccltests309-hgx-h100-2x8-ib", 1.0)
    paste.write_text(f"NCCL INFO {setting}\n" + paste.read_text(encoding="utf-8"),
                     encoding="utf-8")
    code, out, err = _run(capsys, "diagnose", str(paste), "--json")
    summary = json.loads(out.splitlines()[-1])
    assert code == 0 and summary["published_peers"] == []
    assert (f"this run was held to {named}, and the published runs like it let NCCL choose, so "
            "they are not set beside it") in summary["notes"]


def test_a_run_that_reduced_with_max_is_not_set_beside_runs_that_summed(tmp_path, capsys):
    paste = _paste(tmp_path, "nccltests309-hgx-h100-2x8-ib", 1.0)
    text = paste.read_text(encoding="utf-8")
    assert "     sum " in text
    paste.write_text(text.replace("     sum ", "     max "), encoding="utf-8")
    code, out, err = _run(capsys, "diagnose", str(paste), "--json")
    summary = json.loads(out.splitlines()[-1])
    assert code == 0 and summary["published_peers"] == []
    assert ("this run reduced with max, and the published runs like it summed, so they are not "
            "set beside it") in summary["notes"]


def test_a_copy_of_a_run_with_a_set_buffer_names_it_and_its_flag(tmp_path, capsys):
    # The 2024 EKS pair's log shows NCCL_BUFFSIZE=8388608 "set by environment"; a paste of its
    # table alone does not, so the note names the setting and the flag that holds the model to it.
    paste = _paste(tmp_path, "aws-p5-2x8-efa-eks-nccl2223", 1.0)
    code, out, err = _run(capsys, "diagnose", str(paste), "--json")
    notes = json.loads(out.splitlines()[-1])["notes"]
    assert code == 0
    assert any("this run is the published aws-p5-2x8-efa-eks-nccl2223" in n
               and "ran with NCCL_BUFFSIZE=8388608" in n and "--buffsize 8388608 holds the model" in n
               for n in notes), notes
