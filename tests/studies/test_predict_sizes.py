"""predict reads a size as nccl-tests does: count = size / wordSize in integer division
(nccl-tests src/common.cu, setupArgs), so a size that is not whole elements is rounded down,
timed and printed as count × wordSize bytes, and the table says so; all_gather_perf and
reduce_scatter_perf split it into one share per GPU; an empty call is not priced; the table's
fields never run together."""

from __future__ import annotations

import json
import re

import pytest

from ringsim.cli import main
from ringsim.core.errors import RingsimError
from ringsim.studies.nccltests import parse
from ringsim.studies.nccltests_counts import nccl_tests_size, whole_elements
from ringsim.studies.predict import predict
from ringsim.studies.textfile import read_text

OUTPUTS = __import__("pathlib").Path(__file__).parents[1] / "data" / "nccl_outputs"


def test_the_count_is_integer_division_as_nccl_tests_does():
    assert whole_elements(6, 4) == (1, 4) and whole_elements(7, 4) == (1, 4)
    assert whole_elements(3, 4) == (0, 0) and whole_elements(8, 4) == (2, 8)
    # Exact at any size, where a float would round: 2**60 + 3 bytes of float is 2**58 elements.
    assert whole_elements((1 << 60) + 3, 4) == (1 << 58, 1 << 60)
    assert whole_elements((1 << 60) + 9, 8) == ((1 << 57) + 1, (1 << 60) + 8)


def test_a_rounded_size_is_timed_as_the_bytes_nccl_tests_would_move():
    six, four = predict("dgx-h100", 8, [6, 4])
    assert (six.bytes, six.count, six.requested) == (4, 1, 6)
    assert (four.bytes, four.count, four.requested) == (4, 1, None)
    assert six.seconds == four.seconds and six.algbw == four.algbw == 4 / four.seconds
    half = predict("dgx-h100", 8, [1 << 20 | 1], dtype="half")[0]
    assert (half.bytes, half.count, half.requested) == (1 << 20, 1 << 19, (1 << 20) + 1)
    with pytest.raises(RingsimError, match="whole numbers of bytes"):
        predict("dgx-h100", 8, [6.0])


def test_the_table_says_which_sizes_were_rounded_down(capsys):
    assert main(["predict", "--gpus", "8", "--sizes", "6B,7B,8B,9B"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1] == ("# 3 sizes that are not whole float elements (4 B each) were rounded down, "
                        "as nccl-tests does (count = size / wordSize): 6 B → 4 B, 7 B → 4 B, 9 B → 8 B")
    rows = [line for line in lines[4:] if not line.startswith("#")]
    assert [line.split()[:2] for line in rows] == [["4", "1"], ["4", "1"], ["8", "2"], ["8", "2"]]
    assert main(["predict", "--gpus", "8", "--sizes", "8B..64B"]) == 0
    assert "rounded" not in capsys.readouterr().out  # whole elements: no note
    assert main(["predict", "--gpus", "8", "--sizes", "1B..64B:x3", "--dtype", "double"]) == 0
    out = capsys.readouterr().out
    assert "# 4 sizes that are not whole double elements (8 B each) were rounded down" in out
    assert "1 B → 0 B, 3 B → 0 B, 9 B → 8 B, 27 B → 24 B" in out
    assert main(["predict", "--gpus", "8", "--sizes", "1B,2B,3B,5B,6B,7B", "--dtype", "double"]) == 0
    assert "1 B → 0 B, 2 B → 0 B, 3 B → 0 B, 5 B → 0 B and 2 more" in capsys.readouterr().out


def test_json_keeps_the_size_asked_for(capsys):
    assert main(["predict", "--gpus", "8", "--sizes", "6B,8B", "--json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(r["bytes"], r["count"], r["requested_bytes"]) for r in rows] == [(4, 1, 6), (8, 2, 8)]


def test_all_gather_and_reduce_scatter_count_one_share_per_gpu():
    # nccl-tests' *GetCollByteCount: base = (count/nranks) rounded down to 16 bytes; the count
    # column prints base, the size column base × nranks × wordSize.
    assert nccl_tests_size(1024, 4, "all-gather", 8) == (32, 1024)
    assert nccl_tests_size(1000, 4, "all-gather", 8) == (28, 896)
    assert nccl_tests_size(1000, 8, "reduce-scatter", 8) == (14, 896)
    assert nccl_tests_size(1 << 20, 1, "all-gather", 3) == (349520, 1048560)
    assert nccl_tests_size(8, 4, "reduce-scatter", 8) == (0, 0)
    assert nccl_tests_size(1000, 4, "all-reduce", 8) == (250, 1000)
    # nccl-tests issue 128, reduce_scatter_perf on 2 × 4 GPUs: 5 empty rows, then 128 B of 4
    printed = parse(read_text(str(OUTPUTS / "nccltests128_reduce_scatter_2node_excerpt.txt"), "x"))
    rows = predict("dgx-h100", 8, [4 << k for k in range(7)], "reduce-scatter")
    assert [(r.bytes, r.count) for r in rows] == [(r.bytes, r.count) for r in printed.rows[:7]]
    # nccl issue 1435, all_gather_perf -d bfloat16 on 2 GPUs: count is each GPU's share
    printed = parse(read_text(str(OUTPUTS / "nccl1435_all_gather_bf16_excerpt.txt"), "x"))
    rows = predict("pcie-gen4", 2, [r.bytes for r in printed.rows], "all-gather", dtype="bfloat16")
    assert [(r.bytes, r.count) for r in rows] == [(r.bytes, r.count) for r in printed.rows]


def test_the_all_gather_table_prints_what_all_gather_perf_would(capsys):
    assert main(["predict", "--gpus", "8", "--collective", "all-gather", "--sizes",
                 "8B,1000B,1024"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].startswith("# 2 sizes were rounded down as all_gather_perf does: each GPU's "
                               "share (the count column) is size / wordSize / 8 GPUs, rounded "
                               "down to a multiple of 4 float elements (16 B)")
    assert lines[1].endswith("8 B → 0 B, 1,000 B → 896 B")
    rows = [line.split()[:2] for line in lines if not line.startswith("#")]
    assert rows == [["0", "0"], ["896", "28"], ["1024", "32"]]
    # the one published all_gather_perf of 8 H100 is named under the table
    assert lines[-1].startswith("# 1 published healthy all_gather_perf run on machines like this")
    assert main(["predict", "--gpus", "8", "--collective", "reduce-scatter", "--sizes", "1000B",
                 "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert (record["bytes"], record["count"], record["requested_bytes"]) == (896, 28, 1000)


def test_an_empty_call_is_not_priced(capsys):
    # NCCL discards a call of 0 elements (src/enqueue.cc, taskAppend): no algorithm, no time.
    empty, one = predict("dgx-h100", 16, [0, 8], dtype="double")
    assert (empty.seconds, empty.algorithm, empty.protocol, empty.channels) == (None, None, None, 0)
    assert (empty.algbw, empty.busbw) == (0.0, 0.0) and one.seconds > 0 and one.algorithm
    assert main(["predict", "--gpus", "16", "--sizes", "0,1B,8B", "--dtype", "double"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[2].startswith("# the 2 rows of 0 B: NCCL discards an empty call and launches "
                               "nothing (src/enqueue.cc, taskAppend)")
    rows = [line for line in lines if not line.startswith("#")]
    assert rows[-3].split() == rows[-2].split() == ["0", "0", "double", "-", "0.00", "0.00",
                                                    "-", "-", "-"]
    assert main(["predict", "--gpus", "16", "--sizes", "0", "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert (record["seconds"], record["algorithm"], record["protocol"]) == (None, None, None)


@pytest.mark.parametrize("argv, width", [
    (["--dtype", "bfloat16", "--sizes", "1GiB,512GiB,1PiB"], 2),
    (["--dtype", "int8", "--sizes", "1B..1PiB:x32"], 1), (["--sizes", "1PiB", "--published"], 4)])
def test_the_table_never_runs_fields_together(argv, width, capsys):
    # 1 PiB is the largest size --sizes takes: its size, count and time are the longest cells.
    assert main(["predict", "--gpus", "16", *argv]) == 0
    lines = capsys.readouterr().out.splitlines()
    top = next(i for i, line in enumerate(lines) if line.startswith("#") and " count " in line)
    rows = [line for line in lines[top + 2:] if not line.startswith("#")]
    assert rows[-1].split()[:2] == [str(1 << 50), str((1 << 50) // width)]

    def ends(line: str) -> list[int]:
        return [m.end() for m in re.finditer(r"\S+", line)]
    # every field ends under its header (right-aligned), two spaces at least from the one before
    for line in rows:
        assert ends(line) == ends(lines[top])[1:], line
        assert min(len(gap) for gap in re.findall(r"(?<=\S) +(?=\S)", line)) >= 2, line


def test_sizes_nccl_tests_printed_are_priced_as_they_are():
    # an all_gather_perf -d half from before nccl-tests 2.13.12 rounded each share to 4
    # elements, so it ran and printed 64 B on 8 GPUs; a newer one would round that to nothing
    asked, printed = (predict("dgx-h100", 8, [64], "all-gather", dtype="half", printed=p)[0]
                      for p in (False, True))
    assert (asked.bytes, asked.count, asked.seconds) == (0, 0, None)
    assert (printed.bytes, printed.count, printed.requested) == (64, 4, None)
    assert printed.seconds > 0 and printed.algorithm


@pytest.mark.parametrize("topology, gpus, nodes", [
    ("dgx-h100", 8, 1), ("flat", 8, 1),
    (str(OUTPUTS.parent / "topologies" / "h100-4gpu-4x200g.toml"), 4, 1)])
def test_without_gpus_predict_prices_one_node_of_the_machine(capsys, topology, gpus, nodes):
    assert main(["predict", "--topology", topology, "--sizes", "1GiB", "--json"]) == 0
    row = json.loads(capsys.readouterr().out.splitlines()[0])
    assert main(["predict", "--topology", topology, "--sizes", "1GiB", "--json",
                 "--gpus", str(gpus)]) == 0
    assert json.loads(capsys.readouterr().out.splitlines()[0]) == row
    assert main(["predict", "--topology", topology, "--sizes", "1GiB"]) == 0
    assert f"{gpus} GPUs in {nodes} node" in capsys.readouterr().out


def test_a_step_range_runs_the_rows_nccl_tests_i_runs(capsys):
    # nccl-tests' TimeTest loops size = minbytes; size <= maxbytes; size += stepbytes
    # (src/common.cu): -b 1M -e 8M -i 3M runs 1, 4 and 7 MiB, never the end it cannot land on.
    assert main(["predict", "--gpus", "8", "--sizes", "1M..8M:+3M", "--json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [row["bytes"] for row in rows] == [1 << 20, 4 << 20, 7 << 20]
    # Each row is rounded as it is run, after the step: a 1-byte step of float repeats a size.
    assert main(["predict", "--gpus", "8", "--sizes", "8..16:+1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    rows = [line.split()[0] for line in lines if line.strip() and not line.startswith("#")]
    assert rows == ["8"] * 4 + ["12"] * 4 + ["16"]


@pytest.mark.parametrize("sizes, words", [
    ("8B..8GiB:+1", "--sizes: at most 200 sizes, got 8,589,934,585 (steps of 1B from 8B to 8GiB)"),
    ("8..64:+0", "--sizes: the step after :+ must be at least 1 byte (nccl-tests' -i), got '0'"),
    ("64..8:+1", "--sizes: the range '64..8:+1' must go up from at least 1 byte"),
    ("8..64:+1.5", "is not a whole number of bytes")])
def test_a_step_range_that_cannot_run_is_one_line(capsys, sizes, words):
    assert main(["predict", "--sizes", sizes]) == 2
    err = capsys.readouterr().err
    assert words in err and err.count("\n") == 1
