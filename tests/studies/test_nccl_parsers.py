"""The nccl-tests and NCCL_DEBUG parsers on every real fixture, and on hostile input."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
import tracemalloc
from pathlib import Path

import pytest

from ringsim.core.errors import RingsimError
from ringsim.studies import ncclog, nccltests, nccltests_counts
from ringsim.studies.textfile import MAX_LINE, Text, clean, read_text

DATA = Path(__file__).resolve().parents[1] / "data"
OUTPUTS = sorted((DATA / "nccl_outputs").glob("*.txt"))
LOGS = sorted((DATA / "nccl_logs").glob("*.log"))


def output(name: str) -> nccltests.Output:
    return nccltests.parse(read_text(str(DATA / "nccl_outputs" / name), "nccl-tests output"))


def log(name: str, nranks=None) -> ncclog.Log:
    return ncclog.parse(read_text(str(DATA / "nccl_logs" / name), "NCCL log"), nranks)


def test_every_fixture_is_named_with_its_source_in_the_readmes():
    assert len(OUTPUTS) >= 8 and len(LOGS) >= 4
    for folder, files in (("nccl_outputs", OUTPUTS), ("nccl_logs", LOGS)):
        readme = (DATA / folder / "README.md").read_text()
        for path in files:
            line = next(l for l in readme.splitlines() if f"`{path.name}`" in l)
            assert "https://github.com/" in line


# What each real output holds: rows read, first and last size, G, hosts, GPU, rows it had to skip.
EXPECTED = {
    "a3mega_h100_2node_all_reduce.txt": (31, 8, 8589934592, 16, 2, "NVIDIA H100 80GB HBM3", 0),
    "eks_efa_t4_2node_mpirun.txt": (31, 0, 1073741824, 2, 2, "Tesla T4", 0),
    "nccl1184_h100_wrong_results_excerpt.txt": (3, 8, 524288, None, 0, None, 0),
    "nccl1435_all_gather_bf16_excerpt.txt": (7, 16777216, 117440512, None, 0, None, 0),
    "nccl1453_h100_3node_bracket_prefix_excerpt.txt": (10, 1048576, 536870912, None, 0, None, 0),
    "nccl1530_rtx4090_pcie_header_excerpt.txt": (1, 8, 8, 8, 1, "NVIDIA GeForce RTX 4090", 0),
    "nccl340_nccl2.6_no_root_column_excerpt.txt": (12, 8, 16384, None, 0, None, 0),
    "nccl652_a100_32node_error_column_excerpt.txt": (8, 0, 128, None, 0, None, 0),
    "nccltests128_reduce_scatter_2node_excerpt.txt": (7, 0, 256, None, 0, None, 1),
    "nccltests152_a100_2node_after_fix_partial.txt": (6, 33554432, 1073741824, None, 0, None, 1),
    "nccltests252_h100_2node_after_acs_fix_ring.txt": (5, 536870912, 8589934592, None, 0, None, 0),
    "nccltests293_a100pcie_2node_after_nps4.txt": (28, 8, 1073741824, 2, 2, "NVIDIA A100-PCIE-40GB", 0),
    "nccltests293_a100pcie_2node_nps1_gdr_across_sockets.txt": (28, 8, 1073741824, 2, 2,
                                                                "NVIDIA A100-PCIE-40GB", 0),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_real_output_parses_to_its_rows_and_header(name):
    rows, first, last, gpus, hosts, gpu, skipped = EXPECTED[name]
    out = output(name)
    assert (len(out.rows), out.rows[0].bytes, out.rows[-1].bytes) == (rows, first, last)
    assert out.gpus == gpus and len(out.hosts) == hosts and out.skipped == skipped
    assert (out.gpu_names[0] if out.gpu_names else None) == gpu
    assert all(r.seconds > 0 for r in out.rows)


def test_rows_keep_times_bandwidths_and_wrong_counts_of_every_layout():
    big = output("a3mega_h100_2node_all_reduce.txt").rows[-1]
    assert big.seconds == pytest.approx(47535e-6) and big.busbw == pytest.approx(338.82e9)
    assert big.in_place_seconds == pytest.approx(47743e-6) and big.redop == "sum"
    # #wrong 237858 out of place and 238038 in place: the larger is kept
    assert output("nccl1184_h100_wrong_results_excerpt.txt").rows[-1].wrong == 238038
    old = output("nccl652_a100_32node_error_column_excerpt.txt").rows[2]
    assert (old.bytes, old.seconds, old.wrong) == (4, pytest.approx(70.95e-6), 5e-07)
    prefixed = output("nccl1453_h100_3node_bracket_prefix_excerpt.txt").rows[6]
    assert (prefixed.bytes, prefixed.seconds) == (67108864, pytest.approx(24410e-6))
    gather = output("nccl1435_all_gather_bf16_excerpt.txt").rows[0]
    assert (gather.dtype, gather.redop) == ("bfloat16", "none")
    efa = output("eks_efa_t4_2node_mpirun.txt")
    assert efa.nccl_version == "2.12.7" and efa.avg_busbw == pytest.approx(1.15327e9)
    assert efa.env == {"NCCL_PROTO": "simple"}  # the AWS OFI plugin's "Setting NCCL_PROTO to"
    assert output("nccl1530_rtx4090_pcie_header_excerpt.txt").env == {"NCCL_ALGO": "TREE"}


def test_two_one_rank_runs_pasted_together_are_named_as_such():
    with pytest.raises(RingsimError, match="rank 0 twice .* built with MPI=1"):
        output("nccltests107_v100_old_header_no_rows.txt")


def test_each_real_log_gives_its_rings_or_names_what_is_missing():
    efa = log("eks_efa_t4_2node_full.log")
    assert efa.orders() == [(1, 2), (1, 2)] and efa.via(0, 0, 1) == "NET/AWS Libfabric/0"
    assert efa.crosses(0, 0, 1) and efa.trees[0] == {1: (0, ()), 0: (-1, (1,))}
    single = log("nccl1706_single_node_4gpu_channels_trees_excerpt.log")
    assert sorted(single.rings) == list(range(1, 15)) and single.channels_declared == 16
    assert any("channel 00, 15 missing" in note for note in single.notes)
    assert any("cut short (line 17)" in note for note in single.notes)
    hops = log("deepspeed4715_2node_channel_hops_excerpt.log")
    assert hops.from_hops and hops.orders() == [(1, 4, 3, 2, 5, 8, 7, 6)]
    assert hops.via(1, 5, 0) == "NET/IBext/0" and hops.via(1, 0, 3) == "P2P/IPC/read"
    assert any("channel 00 (no hop from rank 0, 2, 5)" in note for note in hops.notes)
    with pytest.raises(RingsimError, match="first 20 ranks of channel 05's ring"):
        log("nccl1453_h100_3node_channels_excerpt.log")
    with pytest.raises(RingsimError, match="no complete ring: .*channel 00 \\(no hop from rank 0, 2, 3"):
        log("nccltests29_ring_old_form_4node_excerpt.log")
    with pytest.raises(RingsimError, match="no complete ring"):
        log("nvpeermem56_ring_old_form_2node_ib_excerpt.log")
    with pytest.raises(RingsimError, match="no complete ring"):
        log("nccl820_channel_list_24rank_trees_excerpt.log")


def _text(tmp_path, body: str, name="x.log"):
    path = tmp_path / name
    path.write_text(body)
    return read_text(str(path), "NCCL log")


def test_several_communicators_and_broken_rings_get_one_line_each(tmp_path):
    two = ("h:1:1 [0] NCCL INFO Channel 00/01 :    0   1\n"
           "h:1:1 [0] NCCL INFO Channel 00/01 :    0   1   2   3\n")
    with pytest.raises(RingsimError, match="several communicators \\(of 2, 4 ranks\\); choose one with --nccl-ranks"):
        ncclog.parse(_text(tmp_path, two))
    assert ncclog.parse(_text(tmp_path, two), 4).orders() == [(1, 2, 3, 4)]
    with pytest.raises(RingsimError, match="no communicator of 3 ranks \\(it has 2, 4\\)"):
        ncclog.parse(_text(tmp_path, two), 3)
    twice = "h:1:1 [0] NCCL INFO Channel 00/01 :    0   1   1\n"
    with pytest.raises(RingsimError, match="ring misses rank 2 of 0..2"):
        ncclog.parse(_text(tmp_path, twice))
    with pytest.raises(RingsimError, match="at most 64 channels"):
        ncclog.parse(_text(tmp_path, "h:1:1 [0] NCCL INFO Channel 99/99 :    0   1\n"))
    huge = "h:1:1 [0] NCCL INFO Channel 00/0 : 999999999[0] -> 1[1] via P2P/IPC\n"
    with pytest.raises(RingsimError, match="line 1 names rank 999,999,999; .* at most 4,096 ranks"):
        ncclog.parse(_text(tmp_path, huge))
    with pytest.raises(RingsimError, match="at most 4,096 ranks"):
        ncclog.parse(_text(tmp_path, "h:1:1 [0] NCCL INFO comm 0x1 rank 0 nranks 123456789 - Init\n"))
    with pytest.raises(RingsimError, match="names rank 88,888,888"):
        ncclog.parse(_text(tmp_path, "h:1:1 [0] NCCL INFO Channel 00/01 :    0   88888888\n"))
    with pytest.raises(RingsimError, match="shows no rings: it needs NCCL_DEBUG=INFO"):
        ncclog.parse(_text(tmp_path, "nothing to see\n"))


def test_a_log_with_a_communicator_but_no_ring_or_hop_lines_shows_no_rings(tmp_path):
    # Init lines alone (NCCL_DEBUG_SUBSYS=INIT, or a few lines pasted) name the communicator's
    # size but no hop: that is a log without rings, not one whose rings are broken.
    body = ("n0:1:1 [0] NCCL INFO NCCL version 2.21.5+cuda12.4\n"
            "n0:1:9 [0] NCCL INFO comm 0x55 rank 0 nranks 16 cudaDev 0 nvmlDev 0 busId 18000 "
            "commId 0xabc - Init COMPLETE\n")
    with pytest.raises(RingsimError, match="shows no rings: it needs NCCL_DEBUG=INFO"):
        ncclog.parse(_text(tmp_path, body))


@pytest.mark.parametrize("body, message", [
    (b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 40, "looks binary"),
    (b"", "no nccl-tests rows"),
    (b"# nThread 1 nGpus 8 minBytes 8\n#  Rank  0 Group  0 Pid 1 on h device  0 [0x1] X\n",
     "its header, but no rows"),
])
def test_hostile_outputs_get_one_line_errors(tmp_path, body, message):
    path = tmp_path / "out.txt"
    path.write_bytes(body)
    with pytest.raises(RingsimError, match=message) as error:
        nccltests.parse(read_text(str(path), "nccl-tests output"))
    assert "\n" not in str(error.value)


def test_100_mb_of_noise_is_refused_from_its_size_without_reading_it(tmp_path):
    path = tmp_path / "noise.txt"
    with open(path, "wb") as handle:
        handle.truncate(100 * 1024 * 1024)  # sparse: 100 MB on paper, nothing read
    tracemalloc.start()
    start = time.perf_counter()
    with pytest.raises(RingsimError, match="holds 100 MiB, more than 32 MiB"):
        read_text(str(path), "nccl-tests output")
    took = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 1024 * 1024 and took < 5


def test_noise_under_the_limit_is_read_once_and_found_empty(tmp_path):
    path = tmp_path / "noise.txt"
    words = b"lorem 12 ipsum 3.5 float sum -1 NCCL INFO Channel 00/0 :\n"
    path.write_bytes(words * (20 * 1024 * 1024 // len(words)))
    text = read_text(str(path), "nccl-tests output")
    with pytest.raises(RingsimError, match="no nccl-tests rows"):
        nccltests.parse(text)


def test_a_line_of_a_million_characters_is_cut_and_the_rest_still_read(tmp_path):
    path = tmp_path / "long.txt"
    good = (DATA / "nccl_outputs" / "a3mega_h100_2node_all_reduce.txt").read_text()
    path.write_text("1" * 1_000_000 + "\n" + "NCCL INFO Channel 00/01 :" + " 0" * 500_000 + "\n" + good)
    text = read_text(str(path), "nccl-tests output")
    assert text.cut_lines == 2 and max(len(line) for line in text.lines) == MAX_LINE
    assert len(nccltests.parse(text).rows) == 31


def test_a_fifo_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    result = {}

    def attempt():
        try:
            read_text(str(fifo), "NCCL log")
        except RingsimError as exc:
            result["error"] = str(exc)

    worker = threading.Thread(target=attempt, daemon=True)
    worker.start()
    worker.join(5)
    assert not worker.is_alive(), "reading a FIFO blocked"
    assert "not a regular file" in result["error"]


def test_folders_and_missing_files_are_named(tmp_path):
    with pytest.raises(RingsimError, match="is a folder"):
        read_text(str(tmp_path), "NCCL log")
    with pytest.raises(RingsimError, match="no such file"):
        read_text(str(tmp_path / "absent.log"), "NCCL log")


def test_control_characters_and_escapes_never_survive(tmp_path):
    assert clean("a\x1b[31mred\x1b[0m\x07b\x1b]0;title\x07c\u202ed") == "aredbcd"
    path = tmp_path / "evil.log"
    path.write_bytes(b"\x1b[2Jevil\x1b[1;1H:1:1 [0] NCCL INFO Channel 00/01 :    0   1\n"
                     b"evil\x1b[31m:1:1 [0] NCCL INFO comm 0x1 rank 1 nranks 2 - Init COMPLETE\n")
    parsed = ncclog.parse(read_text(str(path), "NCCL log"))
    assert all("\x1b" not in host for host in parsed.hosts.values())


def test_standard_input_is_read_with_the_same_bounds():
    good = (DATA / "nccl_outputs" / "eks_efa_t4_2node_mpirun.txt").read_bytes()
    code = ("import sys; from ringsim.studies.textfile import read_text; "
            "from ringsim.studies.nccltests import parse; "
            "print(len(parse(read_text('-', 'nccl-tests output')).rows))")
    proc = subprocess.run([sys.executable, "-c", code], input=good, capture_output=True, timeout=60)
    assert proc.stdout.strip() == b"31", proc.stderr


def _rows(*cells: str) -> nccltests.Output:
    """An output of these rows (size count type redop root time algbw busbw #wrong), no header."""
    return nccltests.parse(Text("paste", tuple(f"{c}  10.0  1.00  1.00  0" for c in cells), 0))


@pytest.mark.parametrize("cells, test", [
    (("1024  256  float  sum  -1", "2048  512  float  sum  -1"), "all-reduce"),
    (("1024  32  float  sum  -1", "2048  64  float  sum  -1"), "reduce-scatter"),
    (("1024  32  float  max  -1",), "reduce-scatter"),
    (("1024  32  float  none  -1", "2048  64  float  none  -1"), "all-gather"),
    (("1024  256  float  sum  0", "2048  512  float  sum  0"), "reduce"),
    (("1024  256  float  none  3",), "broadcast"),
    (("1024  32  float  none  0",), "gather"),
    (("1024  256  float  none  -1",), None),  # sendrecv's columns: no collective to take
    (("1024  256  float  sum  -1", "2048  64  float  sum  -1"), None),  # rows that disagree
    (("0  0  float  sum  -1",), None),  # an empty call shows nothing
])
def test_the_rows_columns_tell_which_test_ran(cells, test):
    # nccl-tests prints count as the elements each call is given: all of them for all_reduce,
    # reduce and broadcast, each rank's share for reduce_scatter, all_gather and gather; the
    # root only for the rooted tests (src/common.cu setupArgs; *GetCollByteCount).
    out = _rows(*cells)
    assert nccltests_counts.test_from_rows(out.rows, 8) == test


def test_real_outputs_read_as_the_test_they_ran():
    assert nccltests_counts.test_from_rows(output("nccl1435_all_gather_bf16_excerpt.txt").rows, 2) == "all-gather"
    assert nccltests_counts.test_from_rows(output("a3mega_h100_2node_all_reduce.txt").rows, 16) == "all-reduce"
    assert [r.root for r in output("a3mega_h100_2node_all_reduce.txt").rows[:2]] == [-1, -1]


def test_a_size_past_any_memory_is_an_unreadable_row_not_an_error():
    from ringsim.cost.nccl import MAX_BYTES
    assert nccltests.MAX_SIZE == MAX_BYTES  # the largest size the model prices
    out = _rows("1024  256  float  sum  -1", "99999999999999999999999999999  256  float  sum  -1",
                f"{MAX_BYTES}  {MAX_BYTES // 4}  float  sum  -1")
    assert [r.bytes for r in out.rows] == [1024, MAX_BYTES] and out.skipped == 1


def test_rows_past_the_limit_are_counted(monkeypatch):
    monkeypatch.setattr(nccltests, "MAX_ROWS", 2)
    out = _rows("8  2  float  sum  -1", "16  4  float  sum  -1", "32  8  float  sum  -1")
    assert len(out.rows) == 2 and out.past_limit == 1 and out.skipped == 0


def test_nccl_algo_is_kept_whole_in_every_form_nccl_takes():
    lines = ("mpirun -x NCCL_ALGO='allreduce:tree;allgather:ring' -x NCCL_PROTO=^LL128 ./all_reduce_perf",
             "8  2  float  sum  -1  10.0  0.00  0.00  0")
    out = nccltests.parse(Text("paste", lines, 0))
    assert out.env == {"NCCL_ALGO": "allreduce:tree;allgather:ring", "NCCL_PROTO": "^LL128"}
    # The shell's ';' after a value is not part of it; only the per-collective form goes on.
    for line, algo in (("export NCCL_ALGO=Ring; export NCCL_PROTO=Simple;", "Ring"),
                       ("NCCL_ALGO=Tree;NCCL_PROTO=Simple mpirun ./all_reduce_perf", "Tree"),
                       ("export NCCL_ALGO=allreduce:tree;allgather:ring;", "allreduce:tree;allgather:ring")):
        out = nccltests.parse(Text("paste", (line, lines[1]), 0))
        assert out.env["NCCL_ALGO"] == algo, line
        assert out.env.get("NCCL_PROTO") == (None if ":" in algo else "Simple"), line


def test_a_log_names_the_communicators_it_shows_whole():
    text = read_text(str(DATA / "nccl_logs" / "eks_efa_t4_2node_full.log"), "NCCL log")
    assert ncclog.communicators(text) == [2]
    hops = read_text(str(DATA / "nccl_logs" / "deepspeed4715_2node_channel_hops_excerpt.log"), "NCCL log")
    assert ncclog.communicators(hops) == []  # hop lines alone: no communicator shown whole
    cut = Text("log", ("h:1:1 [0] NCCL INFO Channel 00/02 :    0  17  16  18 ...",
                       "h:1:1 [0] NCCL INFO comm 0x1 rank 0 nRanks 24 - Init COMPLETE"), 0)
    assert ncclog.communicators(cut) == [24]  # a ring NCCL cut says nothing of its length
    # Ranks 0 to 19 in order may be the start of a longer ring an older NCCL cut at 20 ranks.
    first = " ".join(f"{r:3d}" for r in range(20))
    assert ncclog.communicators(Text("log", (f"h:1:1 [0] NCCL INFO Channel 00/02 : {first}",), 0)) == []


def _header(*numbers: int) -> nccltests.Output:
    """An output whose header lists these rank numbers, two ranks a host."""
    return nccltests.Output("paste", ranks=[nccltests.RankLine(n, f"h{n // 2}", 100 + n, n % 2, "GPU")
                                            for n in numbers])


@pytest.mark.parametrize("numbers, in_order", [
    ((0, 1, 2, 3), True),
    ((3, 1, 0, 2), True),  # the lines' order does not matter, their numbers do
    ((0, 1, 1, 2), True),  # a rank listed twice is one rank
    ((0, 7, 8, 15), False),  # lines left out of the paste
    ((1, 2, 3, 4), False),  # renumbered
    ((), False),  # no header
])
def test_the_header_says_whether_its_ranks_are_numbered_0_to_n_minus_1(numbers, in_order):
    out = _header(*numbers)
    assert out.ranks_numbered_in_order is in_order
    assert out.rank_numbers == sorted(set(numbers))


def test_a_real_header_is_numbered_0_to_n_minus_1():
    out = output("eks_efa_t4_2node_mpirun.txt")
    assert out.ranks_numbered_in_order and out.rank_numbers == list(range(out.gpus))



A3MEGA = DATA / "nccl_outputs" / "a3mega_h100_2node_all_reduce.txt"
HUGE = "9" * 5000  # past Python's 4,300 digits for int(): a ValueError if any parser read it


@pytest.mark.parametrize("old, new", [
    ("#  Rank  1 Group", f"#  Rank  {HUGE} Group"),
    ("device  1 [0000", f"device  {HUGE} [0000"),
    ("Pid   6900", f"Pid   {HUGE}"),
    ("           8             2     float", f"  {HUGE}             2     float"),
    ("           8             2     float", f"           8  {HUGE}     float"),
    ("           8             2     float", "           ²             2     float"),
    ("           8             2     float", "           8             ²     float"),
    ("sum      -1    135.8", f"sum      {HUGE}    135.8"),
    ("## NCCL TEST RESULT", f"h:1:1 [0] NCCL INFO comm 0x1 rank 0 nRanks {HUGE} nNodes 2"),
    ("## NCCL TEST RESULT", f"h:1:1 [0] NCCL INFO Channel 00/{HUGE} : 0 1 2 3"),
    ("## NCCL TEST RESULT", f"h:1:1 [0] NCCL INFO AllReduce: {HUGE} Bytes -> Algo 1 proto 2"),
], ids=range(11))
def test_a_number_no_output_prints_is_never_read_as_one(tmp_path, capsys, old, new):
    # a garbled number is a line that fits no form (a row counted as unreadable), never a
    # traceback, and never its last digits read as a number
    from ringsim.cli import main
    text = A3MEGA.read_text()
    assert old in text
    path = tmp_path / "paste.txt"
    path.write_text(text.replace(old, new, 1))
    out = nccltests.parse(read_text(str(path), "nccl-tests output"))
    numbers = [n for r in out.rows for n in (r.bytes, r.count)] + \
        [n for e in out.ranks for n in (e.rank, e.pid, e.device)]
    assert max(numbers) < 10**18
    assert main(["diagnose", "--no-plot", str(path)]) in (0, 2)
    assert main(["predict", "--tuning", "--nccl-log", str(path)]) in (0, 2)
    assert len(capsys.readouterr().err.splitlines()) <= 2


def test_a_row_of_a_garbled_size_is_counted_as_unreadable():
    out = _rows("1024  256  float  sum  -1", f"{HUGE}  256  float  sum  -1", "²  256  float  sum  -1")
    assert [r.bytes for r in out.rows] == [1024] and out.skipped == 1


@pytest.mark.parametrize("line", [
    f"h:1:1 [0] NCCL INFO Channel {'0' * 5000}1/02 : 0 1 2 3",
    f"h:1:1 [0] NCCL INFO Channel 00/01 : 0 1 2 {HUGE}",
    f"h:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> {HUGE}[1] via P2P/IPC",
    f"h:1:1 [2] NCCL INFO Trees [0] {HUGE}/-1/-1->2->1",
    f"h:1:1 [0] NCCL INFO comm 0x1 rank 0 nRanks {HUGE}",
], ids=range(5))
def test_a_log_line_with_a_number_too_long_is_no_line_of_the_log(tmp_path, capsys, line):
    from ringsim.cli import main
    text = _text(tmp_path, f"h:1:1 [0] NCCL INFO Channel 00/01 : 0 1 2 3\n{line}\n")
    assert ncclog.parse(text).rings == {0: (0, 1, 2, 3)}
    assert main(["walk", "-n", "2", "--nccl-log", str(tmp_path / "x.log")]) == 0


def test_a_channel_count_past_nccls_is_refused_before_it_is_counted_out(tmp_path):
    # 'Channel 00/NN': NN channels, each looked for in the log (18 digits: forever)
    with pytest.raises(RingsimError, match="line 1 says the communicator has "
                                           "999,999,999,999,999,999 channels; NCCL has at most 64"):
        ncclog.parse(_text(tmp_path, "h:1:1 [0] NCCL INFO Channel 00/999999999999999999 : 0 1\n"))
