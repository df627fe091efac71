"""predict for broadcast_perf and reduce_perf: NCCL tunes Broadcast and Reduce on the ring only
(src/graph/tuning.cc), prices a call of the whole buffer (enqueue.cc, ncclFuncMaxSendRecvCount:
count for both), and nccl-tests prints busbw = algbw for them (src/broadcast.cu, BroadcastGetBw;
src/reduce.cu, ReduceGetBw)."""

from __future__ import annotations

import json

import pytest
from nccl_reference import OWN, Reference

from ringsim.cli import main
from ringsim.core.errors import RingsimError
from ringsim.cost.nccl import nccl_choice, nccl_choices, tuning_table
from ringsim.cost.nccl_tuner import versions
from ringsim.cost.topology import load
from ringsim.studies.predict import BUS_FACTORS, predict

ROOTED = ("broadcast", "reduce")
SIZES = [8, 4096, 256 << 10, 4 << 20, 256 << 20, 8 << 30]


def _rows(out: str) -> list[list[str]]:
    return [line.split() for line in out.splitlines() if line and not line.startswith("#")]


@pytest.mark.parametrize("collective", ROOTED)
def test_busbw_is_algbw_and_the_count_is_the_whole_buffer(collective):
    assert BUS_FACTORS[collective](16) == 1.0
    rows = predict("dgx-h100", 16, [7, 1 << 20, 1 << 30], collective)
    # as all_reduce_perf does: count = size / wordSize, no share per GPU as all_gather_perf has
    assert [(r.bytes, r.count, r.requested) for r in rows] == [
        (4, 1, 7), (1 << 20, 1 << 18, None), (1 << 30, 1 << 28, None)]
    assert all(r.busbw == r.algbw == r.bytes / r.seconds for r in rows)
    assert {r.algorithm for r in rows} == {"Ring"}


@pytest.mark.parametrize("collective, func", [("broadcast", "Broadcast"), ("reduce", "Reduce")])
def test_the_time_is_nccls_latency_plus_bytes_over_its_ring_bandwidth(collective, func):
    # 8 GiB on a DGX H100: Ring/Simple on all 24 channels, priced as ncclTopoGetAlgoTime does,
    # latency + nBytes / (1000 × bandwidth) with the table's cell for that function.
    lat, bw = tuning_table("dgx-h100", 8)[(func, "Ring", "Simple")]
    assert (lat, bw) == pytest.approx((11.8, 360.0))  # 8.4 + one NVLink hop of 3.4; 24 × 15
    pick = nccl_choice("dgx-h100", 8, 8 << 30, collective)
    assert (pick.algorithm, pick.protocol, pick.channels) == ("Ring", "Simple", 24)
    # NCCL prices one hop; the data crosses all 7 of the ring's hops, so the call's time adds
    # the other 6 NVLink hops of 3.4 µs (the all-gather ring's 8.4 + 7 × 3.4 = 32.2 µs).
    assert pick.fill == pytest.approx(6 * 3.4e-6) and pick.latency == pytest.approx(11.8e-6)
    assert pick.seconds == pytest.approx((lat + (8 << 30) / (1000 * bw)) * 1e-6 + pick.fill)
    # 4 KiB: LL, cut to one channel (4 KiB < 2 × 512 threads × 8 B × 8 ranks)
    small = nccl_choice("dgx-h100", 8, 4096, collective)
    assert (small.algorithm, small.protocol, small.channels) == ("Ring", "LL", 1)


def test_reduce_and_broadcast_part_where_nccl_prices_their_ll_rings_apart():
    # Before 2.21, one node's LL ring ran at a third of the graph's rate for a broadcast and a
    # quarter for a reduce (tuning.cc); from 2.21 both at half.
    old = [nccl_choice("pcie-gen4", 4, 64 << 10, c, proto="LL", nccl="2.20.5") for c in ROOTED]
    assert old[0].bandwidth == pytest.approx(old[1].bandwidth * 4 / 3)
    new = [nccl_choice("pcie-gen4", 4, 64 << 10, c, proto="LL") for c in ROOTED]
    assert new[0].bandwidth == new[1].bandwidth and new[0].seconds == new[1].seconds


@pytest.mark.parametrize("name, gpus", [("dgx-h100", 8), ("dgx-h100", 16), ("dgx-a100", 16),
                                        ("pcie-gen4", 4), ("ethernet-100g", 4)])
def test_every_choice_is_the_reference_reading_of_nccl(name, gpus):
    # tests/nccl_reference.py re-reads tuning.cc and enqueue.cc at every carried release, the
    # channel cut included; each release's pick, channels, latency and bandwidth must agree.
    topology = load(name)
    found = []
    for release in versions():
        ref = Reference(topology, gpus, release)
        key = None if release == OWN else release
        for collective in ROOTED:
            # LL128 alone is left out: the reference zeroes it where it is off by default,
            # where NCCL_PROTO=LL128 turns it on (as ringsim's --proto LL128 does)
            for proto in (None, "LL", "Simple"):
                try:
                    picks = nccl_choices(topology, gpus, SIZES, collective, proto=proto, nccl=key)
                except RingsimError:
                    picks = [None] * len(SIZES)
                for size, pick in zip(SIZES, picks):
                    want = ref.choice(size, collective, None, proto)
                    if want is None or pick is None:
                        if (want, pick) != (None, None):
                            found.append((release, collective, proto, size, want, pick))
                        continue
                    algo, protocol, channels, lat, bw, full = want
                    got = (pick.algorithm, pick.protocol, pick.channels)
                    same = (got == (algo, protocol, channels)
                            and pick.latency * 1e6 == pytest.approx(lat)
                            and (channels != full or pick.bandwidth / 1e9 == pytest.approx(bw)))
                    if not same:
                        found.append((release, collective, proto, size, want, got))
    assert not found, found[:5]


@pytest.mark.parametrize("algo", ["Tree", "nvls", "^ring", "tree,NVLS"])
@pytest.mark.parametrize("collective", ROOTED)
@pytest.mark.parametrize("release", [None, "2.24.3"])
def test_an_algorithm_set_without_the_ring_is_refused(algo, collective, release):
    # from 2.24.3 enqueue.cc fails such a call: "no algorithm/protocol available"
    with pytest.raises(RingsimError, match=f"NCCL tunes only Ring for {collective}"):
        nccl_choice("dgx-h100", 8, 1 << 20, collective, algo=algo, nccl=release)
    with pytest.raises(RingsimError, match=f"NCCL tunes only Ring for {collective}"):
        predict("dgx-h100", 8, [0], collective, algo=algo, nccl=release)  # even with no call


@pytest.mark.parametrize("algo", ["Tree", "nvls", "^ring", "tree,NVLS"])
@pytest.mark.parametrize("collective", ROOTED)
@pytest.mark.parametrize("release", ["2.18.6", "2.19.3", "2.21.5", "2.22.3", "2.23.4"])
def test_releases_up_to_2_23_4_run_the_ring_where_the_set_leaves_it_out(algo, collective,
                                                                      release):
    # 2.19.3 to 2.23.4: tuning.cc "at least set ring algo available"; 2.18: "Never disable ring
    # for non-allreduce operations". With LL128 on by default on H100s, the ring's three
    # protocols are the ones NCCL_ALGO unset gives, so the pick is the same.
    for size in (4096, 1 << 20, 1 << 30):
        pick = nccl_choice("dgx-h100", 8, size, collective, algo=algo, nccl=release)
        assert pick == nccl_choice("dgx-h100", 8, size, collective, nccl=release)
        assert pick.algorithm == "Ring"


def test_predict_says_when_nccl_falls_back_to_the_ring(capsys):
    argv = ["predict", "--nccl", "2.23.4", "--collective", "broadcast", "--algo", "tree", "-g", "8",
            "--sizes", "4KiB,1GiB"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert ("# --algo tree leaves NCCL 2.23.4 no algorithm for broadcast: it falls back to Ring "
            "with LL, LL128 and Simple") in out
    assert "NCCL 2.24.3 and later refuse the call" in out
    assert [r[6:8] for r in _rows(out)] == [["Ring", "LL"], ["Ring", "Simple"]]
    argv[2] = "2.24.3"
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.strip() == ("ringsim predict: error: --algo tree: NCCL tunes only Ring for broadcast "
                           "(src/graph/tuning.cc); give --algo Ring or leave --algo out")
    # 2.18 never took the ring from a broadcast
    argv[2] = "2.18.6"
    assert main(argv) == 0
    assert "# NCCL 2.18.6 never takes Ring from broadcast whatever --algo tree says" in \
        capsys.readouterr().out
    # without --algo, or with the ring in it, no such line
    assert main(["predict", "--nccl", "2.23.4", "--collective", "broadcast", "--algo", "ring,tree",
                 "--sizes", "4KiB"]) == 0
    assert "falls back" not in capsys.readouterr().out


def test_pat_on_an_all_reduce_runs_ring_and_tree_up_to_2_23_4_and_is_refused_since(capsys):
    # NCCL_ALGO=PAT on an all-reduce (PAT runs all-gather and reduce-scatter only): without
    # CollNet, tuning.cc up to 2.23.4 turns Ring and Tree back on ("If user has hard set
    # NCCL_ALGO=COLLNET, ignore it"); on one node of eight H100s the ring wins at every size.
    assert main(["predict", "--nccl", "2.23.4", "--algo", "pat", "-g", "8",
                 "--sizes", "4KiB,1MiB,1GiB"]) == 0
    out = capsys.readouterr().out
    assert "turns Ring and Tree back on" in out
    assert {r[6] for r in _rows(out)} == {"Ring"}
    picks = nccl_choices("dgx-h100", 8, [4096, 1 << 20, 1 << 30], algo="PAT", nccl="2.23.4")
    assert picks == nccl_choices("dgx-h100", 8, [4096, 1 << 20, 1 << 30], algo="Ring,Tree",
                                 nccl="2.23.4")
    assert main(["predict", "--nccl", "2.24.3", "--algo", "pat", "-g", "8"]) == 2
    assert "NCCL has no algorithm and protocol" in capsys.readouterr().err
    # the reference, NCCL's tuner re-read from its source, picks the same
    ref = Reference("dgx-h100", 8, "2.23.4")
    for size, pick in zip([4096, 1 << 20, 1 << 30], picks):
        assert ref.choice(size, "all-reduce", "PAT")[:3] == (pick.algorithm, pick.protocol,
                                                             pick.channels)
    assert Reference("dgx-h100", 8, "2.24.3").choice(4096, "all-reduce", "PAT") is None


@pytest.mark.parametrize("algo", ["Ring", "ring,tree", "^NVLS"])
def test_an_algorithm_set_with_the_ring_runs_the_ring(algo):
    # as NCCL_ALGO does: the set may name others, NCCL has only the ring for a broadcast
    pick = nccl_choice("dgx-h100", 8, 1 << 20, "broadcast", algo=algo)
    assert pick == nccl_choice("dgx-h100", 8, 1 << 20, "broadcast")


def test_the_table_prints_what_broadcast_perf_would(capsys):
    assert main(["predict", "--collective", "broadcast", "--sizes", "7,4KiB,8GiB"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# ringsim predict: NCCL's model of broadcast on dgx-h100, 8 GPUs")
    assert "# NCCL tunes broadcast on the ring only" in out and "busbw = algbw" in out
    assert "whole float elements (4 B each) was rounded down" in out
    rows = _rows(out)
    assert [r[:3] for r in rows] == [["4", "1", "float"], ["4096", "1024", "float"],
                                     ["8589934592", "2147483648", "float"]]
    assert all(r[4] == r[5] and r[6] == "Ring" for r in rows)  # algbw = busbw, the ring
    assert rows[-1][3:] == ["23893", "359.51", "359.51", "Ring", "Simple", "24"]


def test_json_names_the_collective_and_keeps_busbw_equal_to_algbw(capsys):
    assert main(["predict", "--collective", "reduce", "-g", "16", "--sizes", "1MiB", "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["collective"] == "reduce" and record["nodes"] == 2
    assert record["busbw"] == record["algbw"] == record["bytes"] / record["seconds"]
    assert (record["count"], record["algorithm"]) == (1 << 18, "Ring")


@pytest.mark.parametrize("argv, message", [
    (["--collective", "broadcst"], ("invalid choice: 'broadcst' (choose from 'all-reduce', "
                                    "'all-gather', 'reduce-scatter', 'broadcast', 'reduce')")),
    (["--collective", "broadcast", "--algo", "tree"],
     ("--algo tree: NCCL tunes only Ring for broadcast (src/graph/tuning.cc); give --algo Ring "
      "or leave --algo out")),
    (["--collective", "reduce", "--published"], "ringsim holds no published reduce_perf run"),
    (["--collective", "reduce", "--sizes", "2PiB"], "sizes: NCCL's model prices 0 B to 1PiB")])
def test_bad_input_is_one_line(argv, message, capsys):
    assert main(["predict", *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "\n" not in err and "Traceback" not in err
