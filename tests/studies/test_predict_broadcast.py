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
    assert pick.seconds == pytest.approx((lat + (8 << 30) / (1000 * bw)) * 1e-6)
    assert pick.fill == 0.0 and pick.latency == pytest.approx(11.8e-6)
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
def test_an_algorithm_set_without_the_ring_is_refused(algo, collective):
    with pytest.raises(RingsimError, match=f"NCCL tunes only Ring for {collective}"):
        nccl_choice("dgx-h100", 8, 1 << 20, collective, algo=algo)
    with pytest.raises(RingsimError, match=f"NCCL tunes only Ring for {collective}"):
        predict("dgx-h100", 8, [0], collective, algo=algo)  # even where no call is made


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
    assert rows[-1][3:] == ["23873", "359.82", "359.82", "Ring", "Simple", "24"]


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
    (["--collective", "reduce", "--published"], "--published sets all_reduce_perf runs"),
    (["--collective", "reduce", "--sizes", "2PiB"], "sizes: NCCL's model prices 0 B to 1PiB")])
def test_bad_input_is_one_line(argv, message, capsys):
    assert main(["predict", *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "\n" not in err and "Traceback" not in err
