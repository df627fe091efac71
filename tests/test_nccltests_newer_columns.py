"""What newer nccl-tests print beyond the classic table, as src/util.cu prints it: the NCCL
library that ran in the first header line, a timestamp after each row (-S 1, from 2.17.6), four
per-iteration statistics after each half (-I 1, from 2.19.2) and cputime columns (-C 1)."""

from __future__ import annotations

import json

from ringsim.cli import main
from ringsim.studies.nccltests import parse
from ringsim.studies.textfile import Text

HEADER = ("# nThread 1 nGpus 1 minBytes 1048576 maxBytes 2097152 step: 2(factor) warmup iters: 5 "
          "iters: 20 agg iters: 1 validation: 1 graph: 0 unalign: 0")
# the two halves of a row: time, algbw, busbw, #wrong (out of place, then in place)
OUT_OF_PLACE, IN_PLACE = ("60.10", "17.45", "32.72", "0"), ("58.20", "18.02", "33.78", "0")
PREAMBLE = ("1048576", "262144", "float", "sum", "-1")


def _text(*rows: tuple[str, ...]) -> Text:
    lines = [HEADER, "#", "#       size         count      type   redop    root     time   "
             "algbw   busbw #wrong     time   algbw   busbw #wrong"]
    lines += ["  ".join(f"{cell:>7}" for cell in row) for row in rows]
    return Text("run.txt", tuple(lines), 0)


def _read(*rows):
    row = parse(_text(*rows)).rows[0]
    return row.bytes, row.seconds, row.in_place_seconds, row.busbw, row.wrong


def test_a_timestamp_after_each_row_is_read_past():
    # -S 1: "%21s" of "%Y-%m-%d %H:%M:%S" after the in-place half
    plain = _read((*PREAMBLE, *OUT_OF_PLACE, *IN_PLACE))
    assert plain == (1048576, 60.10e-6, 58.20e-6, 32.72e9, 0)
    assert _read((*PREAMBLE, *OUT_OF_PLACE, *IN_PLACE, "2025-11-03", "10:12:33")) == plain


def test_per_iteration_statistics_after_each_half_are_read_past():
    # -I 1: i_min, i_max, i_p99 (us) and i_cv% after each half's #wrong
    stats = ("55.00", "90.00", "88.00", "4.10")
    row = (*PREAMBLE, *OUT_OF_PLACE, *stats, *IN_PLACE, *stats)
    assert _read(row) == (1048576, 60.10e-6, 58.20e-6, 32.72e9, 0)
    # a wrong count in place is kept, from its own column, not from a statistic
    wrong = (*IN_PLACE[:3], "7")
    assert _read((*PREAMBLE, *OUT_OF_PLACE, *stats, *wrong, *stats))[4] == 7


def test_diagnose_reads_a_run_with_both(tmp_path, capsys):
    stats = ("55.00", "90.00", "88.00", "4.10")
    rows = [(size, str(int(size) // 4), "float", "sum", "-1", *OUT_OF_PLACE, *stats, *IN_PLACE, *stats)
            for size in ("1048576", "2097152")]
    path = tmp_path / "run.txt"
    path.write_text("\n".join(_text(*rows).lines) + "\n")
    assert main(["diagnose", str(path), "--gpus", "16", "--topology", "dgx-h100", "--no-plot"]) == 0
    out = capsys.readouterr().out
    assert "1MiB" in out and "2MiB" in out


def test_a_table_of_cpu_times_is_refused_in_one_line(tmp_path, capsys):
    # -C 1 prints, under "cputime", the host's time to launch each call (common.cu: the timer
    # read before completeColl) while algbw and busbw still come from the whole call: its
    # times would read as a machine many times faster than it is.
    text = _text((*PREAMBLE, *OUT_OF_PLACE, *IN_PLACE))
    lines = [line.replace("     time", "  cputime") for line in text.lines]
    assert "cputime" in lines[2]
    path = tmp_path / "run.txt"
    path.write_text("\n".join(lines) + "\n")
    assert main(["diagnose", str(path), "--gpus", "16", "--topology", "dgx-h100"]) == 2
    out, err = capsys.readouterr()
    assert not out
    assert err == (f"ringsim diagnose: error: {path}'s time columns are nccl-tests' cputime "
                   "(-C 1, line 3): the host's time to launch each call, not the call's; run "
                   "it again without -C to diagnose it\n")


def test_the_nccl_library_the_header_names_sets_the_release_that_ran(tmp_path, capsys):
    # nccl-tests prints "# nccl-tests version V nccl-headers=H nccl-library=L" (util.cu), L
    # being ncclGetVersion's code of the library that ran: 2.21.5 is 22105. Without an NCCL
    # INFO line it is the only word on the release, whose tables then price the run.
    assert parse(_text((*PREAMBLE, *OUT_OF_PLACE, *IN_PLACE))).nccl_version is None
    named = Text("run.txt", ("# nccl-tests version 2.17.6 nccl-headers=22602 nccl-library=22105",
                             *_text((*PREAMBLE, *OUT_OF_PLACE, *IN_PLACE)).lines), 0)
    assert parse(named).nccl_version == "2.21.5"
    old = Text("run.txt", ("# nccl-tests version 2.17.6 nccl-headers=2708 nccl-library=2708",
                           *named.lines[1:]), 0)
    assert parse(old).nccl_version == "2.7.8"  # before 2.9 NCCL_VERSION_CODE was X*1000+Y*100+Z
    path = tmp_path / "run.txt"
    path.write_text("\n".join(named.lines) + "\n")
    assert main(["diagnose", str(path), "--gpus", "16", "--topology", "dgx-h100", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert summary["nccl_tables"] == "2.21.5"
    assert "the run used NCCL 2.21.5; the model uses that release's tuning tables" in summary["notes"]
