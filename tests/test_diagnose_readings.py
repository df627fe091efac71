"""`ringsim diagnose` on runs whose fault is known: NVLS off, only the out-of-place column slow,
sizes that dip below their neighbours, and NCCL's own table expecting what was measured
(tests/data/nccl_outputs/synthetic/README.md says how each was made)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from test_diagnose_cli import OUT

from ringsim.cli import main
from ringsim.studies import ncclrun, nccltests

# diagnose compares with NCCL's model (ringsim.studies.predict); without it these cannot run
predict = pytest.importorskip("ringsim.studies.predict",
                              reason="the NCCL model is not in this ringsim").predict

MADE = OUT / "synthetic"
NVLS0 = str(MADE / "h100_2node_ring_nvls_enable0.txt")
NVLS_NA = str(MADE / "h100_2node_ring_nvls_unavailable.txt")
OOP = str(MADE / "h100_2node_out_of_place_slow.txt")
DIPS = str(MADE / "h100_2node_dips.txt")
HALF = str(MADE / "h100_2node_half_network.txt")
HALF_LOG = str(MADE / "h100_2node_half_network_tuning.log")
MIB = 1 << 20


def run(capsys, *argv):
    """diagnose's exit status and standard output, with standard error when it fails."""
    code = main(["diagnose", *argv])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def records(capsys, *argv):
    """diagnose --json: the size records, the tuning record (or None) and the summary."""
    code, out = run(capsys, *argv, "--json")
    assert code == 0, out
    found = [json.loads(line) for line in out.splitlines()]
    tuning = next((r for r in found if r["type"] == "nccl_tuning"), None)
    return [r for r in found if r["type"] == "size"], tuning, found[-1]


# NVLS off -------------------------------------------------------------------------------------

@pytest.mark.parametrize("line, said", [
    ("h:1:1 [0] NCCL INFO NCCL_NVLS_ENABLE set by environment to 0.",
     "NCCL_NVLS_ENABLE set by environment to 0"),
    ("h:1:2 [3] NCCL INFO NVLS multicast support is not available on dev 3",
     "NVLS multicast support is not available on dev 3"),
    ("mpirun -x NCCL_NVLS_ENABLE=0 ./all_reduce_perf -b 8 -e 8G", "NCCL_NVLS_ENABLE=0"),
    ("h:1:2 [0] NCCL INFO NVLS multicast support is available on dev 0", None),
    ("h:1:1 [0] NCCL INFO NCCL_NVLS_ENABLE set by environment to 1.", None),
    ("mpirun -x NCCL_NVLS_ENABLE=2 ./all_reduce_perf", None),
])
def test_nccls_own_words_that_nvls_is_off_are_read(line, said):
    assert nccltests.nvls_off([line]) == said


def test_nvls_off_keeps_nvls_out_of_an_nccl_algo_setting():
    assert ncclrun.without_nvls(None) == "^NVLS,NVLSTree"
    assert ncclrun.without_nvls("Ring,NVLS") == "Ring"
    assert ncclrun.without_nvls("^tree") == "^tree,NVLS,NVLSTree"
    # nothing left, or a form ringsim does not read: the setting stands as it was
    assert ncclrun.without_nvls("nvls") == "nvls"
    assert ncclrun.without_nvls("allreduce:tree;allgather:ring") == "allreduce:tree;allgather:ring"


@pytest.mark.parametrize("paste, line", [
    (NVLS0, "NCCL_NVLS_ENABLE set by environment to 0"),
    (NVLS_NA, "NVLS multicast support is not available on dev 0"),
])
def test_a_paste_that_ran_without_nvls_is_modelled_without_it(capsys, paste, line):
    # A healthy ring run: priced with NVLSTree it looked 17-20% slow and was flagged at 64 MiB.
    sizes, _, summary = records(capsys, paste)
    assert summary["nvls_off"] == line
    assert not {s["algorithm"] for s in sizes} & {"NVLS", "NVLSTree"}
    assert summary["flagged_sizes"] == []
    big = [s for s in sizes if s["bytes"] >= 1 << 30]
    assert all(s["algorithm"] == "Ring" and 0.99 < s["ratio"] < 1.01 for s in big)
    assert f"{line} in the paste: NCCL ran without NVLS and NVLSTree, and so does the model" \
        in summary["notes"]
    _, out = run(capsys, paste, "--no-plot")
    assert "Model: NCCL's algorithm and protocol choice without NVLS or NVLSTree" in out
    assert "NCCL_ALGO=Ring" not in out
    assert out.count("NCCL ran without NVLS") == 1


def test_nvls_off_in_the_nccl_log_counts_as_in_the_paste(capsys):
    sizes, tuning, summary = records(capsys, HALF, "--nccl-log", HALF_LOG)
    assert summary["nvls_off"] == "NVLS multicast support is not available on dev 0"
    assert any(n.startswith("NVLS multicast support is not available on dev 0 in the NCCL log")
               for n in summary["notes"])
    assert not {s["algorithm"] for s in sizes} & {"NVLS", "NVLSTree"}
    # NCCL's logged choice at 1 GiB is the model's
    assert [c["same"] for c in tuning["choices"]] == [True]


# In place and out of place ------------------------------------------------------------------

def test_only_the_out_of_place_column_slow_is_named_before_the_links(capsys):
    _, _, summary = records(capsys, OOP)
    check = summary["in_place_check"]
    assert check["slower"] == "out-of-place" and check["out_of"] == 12
    assert check["sizes"] == [8 * MIB << k for k in range(12)]
    assert check["median_ratio"] == pytest.approx(2.0, abs=0.01)
    assert check["in_place_as_modelled"] and 0.9 < check["in_place_of_model"] < 1.0
    bandwidth = next(v for v in summary["verdicts"] if v.startswith("Bandwidth-bound"))
    assert "The links move less than modelled" not in bandwidth
    assert "the in-place calls beside them do not fall short" in bandwidth
    said = summary["verdicts"][summary["verdicts"].index(bandwidth) + 1]
    assert said.startswith("At 12 of the 12 flagged bandwidth-bound sizes (8MiB, 16MiB, ")
    assert "the out-of-place time is 2.00× the in-place time" in said
    assert "so the links are unlikely to be the cause" in said
    assert "may be registered with NCCL" in said and "first touched inside the timed loop" in said


def test_an_in_place_column_slower_than_the_one_diagnose_reads_is_named(tmp_path, capsys):
    # The same run with its two columns swapped: out of place as measured, in place doubled.
    rows = []
    for line in Path(OOP).read_text(encoding="utf-8").splitlines():
        cells = line.split()
        if len(cells) == 13 and cells[0].isdigit():
            cells = cells[:5] + cells[9:12] + [cells[8]] + cells[5:8] + [cells[12]]
            line = " ".join(cells)
        rows.append(line)
    swapped = tmp_path / "swapped.txt"
    swapped.write_text("\n".join(rows) + "\n", encoding="utf-8")
    _, _, summary = records(capsys, str(swapped))
    check = summary["in_place_check"]
    assert check["slower"] == "in-place" and len(check["sizes"]) == 12
    assert not any(s >= 8 * MIB for s in summary["flagged_sizes"])
    assert any(v.startswith("At 12 of the 12 bandwidth-bound sizes (8MiB, 16MiB, ") and
               "the in-place time is 2.00× the out-of-place time (median); diagnose reads the "
               "out-of-place column" in v for v in summary["verdicts"])


def test_a_run_whose_two_columns_agree_says_nothing_of_them(capsys):
    _, _, summary = records(capsys, NVLS0)
    assert summary["in_place_check"] is None
    assert not any("in-place" in v for v in summary["verdicts"])


# Dips -----------------------------------------------------------------------------------------

def test_sizes_slower_than_both_neighbours_point_at_noise_not_capacity(capsys):
    _, _, summary = records(capsys, DIPS)
    assert summary["dips"] == [256, 16 * MIB, 128 * MIB, 1 << 30, 4 << 30]
    said = next(v for v in summary["verdicts"] if "dip" in v)
    assert said.startswith("5 of the 6 flagged sizes (256B, 16MiB, 128MiB, 1GiB, 4GiB) are dips: "
                           "busbw more than 30% below both neighbouring sizes")
    assert "noise or contention" in said and "flapping link" in said
    assert "nccl-tests -n 100 -w 20" in said and "other jobs" in said


def test_a_shortfall_at_every_large_size_is_no_dip(capsys):
    _, _, summary = records(capsys, OOP)
    assert len(summary["dips"]) <= 1 and not any("dip" in v for v in summary["verdicts"])


# Links at their rate, calls costing more ------------------------------------------------------

def test_a_fitted_bandwidth_as_modelled_clears_the_links_of_a_mid_size_shortfall(tmp_path, capsys):
    # The model's own times on two DGX H100s, with 1.5 ms more on every call from 16 MiB up:
    # the sizes up to 512 MiB fall short, but the slope of time over bytes is the model's.
    from nccl_pastes import all_reduce_perf
    sizes = [1 << k for k in range(3, 34)]
    model = {p.bytes: p.seconds * 1e6 for p in predict("dgx-h100", 16, sizes)}
    times = {n: t + 1500 * (n >= 16 * MIB) for n, t in model.items()}
    paste = all_reduce_perf(tmp_path / "run.txt", times, "NVIDIA H100 80GB HBM3",
                            ["node0"] * 8 + ["node1"] * 8)
    _, _, summary = records(capsys, str(paste))
    said = next(v for v in summary["verdicts"] if v.startswith("Bandwidth-bound"))
    assert summary["measured_fit_busbw"] == pytest.approx(summary["model_fit_busbw"], rel=0.01)
    assert "measured busbw is" in said and "flagged" in said
    assert "The links move less than modelled" not in said
    assert ("the fitted bus bandwidth is within 30% of the model's, so the links reach their "
            "rate as the sizes grow: what falls short is a cost each call pays beyond its "
            "bytes") in said
    # the same run with its network at half its rate is still the links'
    half = {n: t + (t - model[8]) * (n >= 16 * MIB) for n, t in model.items()}
    paste = all_reduce_perf(tmp_path / "half.txt", half, "NVIDIA H100 80GB HBM3",
                            ["node0"] * 8 + ["node1"] * 8)
    _, _, summary = records(capsys, str(paste))
    said = next(v for v in summary["verdicts"] if v.startswith("Bandwidth-bound"))
    assert "The links move less than modelled across nodes" in said


# One release, and NCCL's own table ------------------------------------------------------------

def test_the_release_the_log_names_prices_the_whole_report_and_is_named_once(capsys):
    sizes, tuning, summary = records(capsys, HALF, "--nccl-log", HALF_LOG)
    assert summary["nccl_tables"] == "2.26.2" and tuning["model_tables"] == "2.26.2"
    direct = predict("dgx-h100", 16, [s["bytes"] for s in sizes], algo="^NVLS,NVLSTree",
                     nccl="2.26.2", printed=True)
    assert [s["predicted_seconds"] for s in sizes] == [p.seconds for p in direct]
    _, out = run(capsys, HALF, "--nccl-log", HALF_LOG, "--no-plot")
    assert re.findall(r"\b2\.\d+\.\d+\b", out) == ["2.26.2"]
    assert "(NCCL 2.26.2's tables, the release the log ran, as in the rest of this report)" in out


def test_a_banner_alone_prices_the_run_with_the_release_that_ran(capsys):
    # No tuning output, but the banner names a release ringsim carries: its tables price the
    # run, as the published runs the model is checked against are priced.
    _, _, summary = records(capsys, NVLS0)
    assert summary["nccl_tables"] == "2.26.2"
    assert "the run used NCCL 2.26.2; the model uses that release's tuning tables" in summary["notes"]
    # --nccl still names another yardstick, and the note says which ran.
    _, _, summary = records(capsys, NVLS0, "--nccl", "2.30.7")
    assert summary["nccl_tables"] == "2.30.7"
    assert ("the run used NCCL 2.26.2; the model uses NCCL 2.30.7's tuning tables (--nccl 2.26.2 "
            "prices it with its own)") in summary["notes"]


def test_nccl_names_the_release_of_the_whole_report_whatever_the_log_ran(capsys):
    _, tuning, summary = records(capsys, HALF, "--nccl-log", HALF_LOG, "--nccl", "2.30.7")
    assert summary["nccl_tables"] == "2.30.7" and tuning["model_tables"] == "2.30.7"
    assert tuning["log_release"] == "2.26.2"


def test_nccls_own_table_expecting_the_measured_bandwidth_points_at_the_machine(capsys):
    _, tuning, summary = records(capsys, HALF, "--nccl-log", HALF_LOG)
    verdicts = summary["verdicts"]
    at = next(i for i, v in enumerate(verdicts) if v.startswith("Bandwidth-bound"))
    said = verdicts[at + 1]
    assert said.startswith("NCCL itself expected about this: its own table in the log rates "
                           "Ring/Simple, its choice at 1GiB, at 102.40 GB/s algbw, 192.00 GB/s "
                           "busbw, and the run measured 213.66 GB/s (111% of it, within 30%)")
    assert "topology dgx-h100 gives the same cell 204.80 GB/s" in said
    assert "NCCL found less bandwidth on this machine than the topology describes" in said
    assert tuning["nccl_expected"]["nccl_busbw"] == pytest.approx(192e9)
    _, out = run(capsys, HALF, "--nccl-log", HALF_LOG, "--no-plot")
    assert "ringsim's reading" not in out
    assert "NCCL found other links than the topology gives, or ringsim reads NCCL otherwise" in out


def test_nccls_own_table_expecting_what_the_model_does_leaves_the_verdict_alone(tmp_path, capsys):
    # NCCL rated Ring/Simple as the topology does (204.8 GB/s, 384 GB/s busbw): the run's
    # 214 GB/s is short of NCCL's own number too, so nothing clears the machine.
    log = tmp_path / "nccl.log"
    logged = Path(HALF_LOG).read_text(encoding="utf-8")
    log.write_text(logged.replace("131.6/ 102.4", "131.6/ 204.8"), encoding="utf-8")
    _, tuning, summary = records(capsys, HALF, "--nccl-log", str(log))
    assert not any(v.startswith("NCCL itself expected") for v in summary["verdicts"])
    assert "nccl_expected" not in tuning
    assert any("The links move less than modelled across nodes" in v for v in summary["verdicts"])


def test_the_run_release_is_the_first_the_lines_name_where_ringsim_has_its_tables():
    from ringsim.studies.nccltuning_log import parse_all
    from ringsim.studies.textfile import Text

    def named(*lines):
        return parse_all([Text("log", lines, 0)]).version
    assert named("x NCCL INFO NCCL version 2.21.5+cuda12.4", "NCCL version 2.26.2") == "2.21.5"
    assert named("no banner here") is None
    assert ncclrun.run_release("2.21.5+cuda12.4") == "2.21.5"
    assert ncclrun.run_release("2.12.7+cuda11.4") is None  # ringsim has no tables of it
