"""The host that issues a call: with nccl-tests' `-g N` one thread launches every GPU's part."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ringsim.cli import main
from ringsim.core.errors import RingsimError
from ringsim.cost.nccl import constants, host_seconds, nccl_choice
from ringsim.studies import peers

from nccl_pastes import all_reduce_perf

PER_GPU = constants()["host"]["issue_per_gpu_us"] * 1e-6


def test_eight_gpus_in_one_process_wait_for_eight_launches():
    # 8 A100, 8 B: NCCL's model says Ring/LL in 6.6 + 14 × 0.6 = 15 µs; one thread issuing
    # the call to 8 GPUs needs 8 × 5 µs, and the call can go no faster than that.
    device = nccl_choice("dgx-a100", 8, 8)
    hosted = nccl_choice("dgx-a100", 8, 8, gpus_per_process=8)
    assert device.latency == pytest.approx(15.0e-6) and not device.host_bound
    assert hosted.seconds == pytest.approx(8 * PER_GPU) == host_seconds(8)
    assert hosted.host_bound and hosted.host == pytest.approx(40e-6)
    # NCCL's pick and its own latency do not change: the host is not in NCCL's model
    assert (hosted.algorithm, hosted.protocol, hosted.latency) == (
        device.algorithm, device.protocol, device.latency)


def test_a_large_call_is_the_gpus_and_not_the_host():
    big = nccl_choice("dgx-a100", 8, 1 << 30, gpus_per_process=8)
    assert big.seconds == nccl_choice("dgx-a100", 8, 1 << 30).seconds and not big.host_bound


@pytest.mark.parametrize("per_process, message", [
    (3, "must divide the 8 GPUs"), (16, "from 1 to 8"), (0, "from 1 to 8"),
    (2.0, "whole number"), (True, "whole number")])
def test_gpus_per_process_is_checked(per_process, message):
    with pytest.raises(RingsimError, match=message):
        nccl_choice("dgx-h100", 8, 8, gpus_per_process=per_process)


def test_a_process_drives_gpus_of_one_node():
    with pytest.raises(RingsimError, match="one node"):
        nccl_choice("dgx-h100", 16, 8, gpus_per_process=16)
    assert nccl_choice("dgx-h100", 16, 8, gpus_per_process=8).host == pytest.approx(40e-6)


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_predict_says_which_sizes_the_host_sets(capsys):
    code, out, _ = run(capsys, "predict", "--topology", "dgx-a100", "--gpus", "8",
                       "--gpus-per-process", "8", "--sizes", "8B..64MiB:x8")
    assert code == 0
    note = [line for line in out.splitlines() if line.startswith("# --gpus-per-process 8")]
    assert note == ["# --gpus-per-process 8 (nccl-tests' -g 8): one thread issues each call to "
                    "8 GPUs, 40.00 µs a call (5.00 µs "
                    "per GPU, ringsim's estimate); it, not the GPUs, sets the time of 6 sizes "
                    "from 8B to 256KiB"]
    rows = [line.split() for line in out.splitlines() if not line.startswith("#")]
    assert [r[3] for r in rows[:6]] == ["40.00"] * 6 and float(rows[6][3]) > 40
    code, out, _ = run(capsys, "predict", "--topology", "dgx-a100", "--gpus", "8",
                       "--gpus-per-process", "8", "--sizes", "8B,1GiB", "--json")
    small, large = (json.loads(line) for line in out.splitlines())
    assert small["host_bound"] and small["seconds"] == pytest.approx(40e-6)
    assert not large["host_bound"]


@pytest.mark.parametrize("value", ["3", "16", "0", "1e400", "-1"])
def test_predict_refuses_a_bad_count_in_one_line(capsys, value):
    code, out, err = run(capsys, "predict", "--gpus", "8", "--gpus-per-process", value)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1


def _azure_paste(tmp_path: Path, system: str = "azure-nd-a100-v4",
                 gpu: str = "NVIDIA A100-SXM4-80GB") -> Path:
    """One of Azure's published -g 8 runs (busbw, from the validation set), as nccl-tests prints it."""
    times = {p["bytes"]: peers.measured_seconds(p, 8) * 1e6 for p in peers.data()["point"]
             if p["system"] == system}
    return all_reduce_perf(tmp_path / f"{system}.txt", times, gpu, ["ndv4host"] * 8, 8)


def test_diagnose_reads_the_processes_from_the_header_and_does_not_flag_the_host(tmp_path, capsys):
    code, out, err = run(capsys, "diagnose", str(_azure_paste(tmp_path)), "--json")
    assert code == 0, err
    *sizes, summary = [json.loads(line) for line in out.splitlines()]
    small = [s for s in sizes if s["bytes"] <= 512 << 10]
    assert len(small) == 10 and not any(s["flag"] for s in small)
    assert all(s["predicted_seconds"] == pytest.approx(40e-6) for s in small)
    assert any("one process drove 8 GPUs" in n for n in summary["notes"])
    assert summary["gpus_per_process"] == 8 and summary["host_seconds"] == pytest.approx(40e-6)
    assert "as modelled: the host's, one thread issuing each call to 8 GPUs" in summary["verdicts"][0]


def test_a_host_faster_than_the_estimate_is_said_so(tmp_path, capsys):
    # Azure ND H100 v5 (Intel Xeon): 25.6 µs at 1 KiB on 8 GPUs, under the 40 µs estimate
    paste = _azure_paste(tmp_path, "azure-nd-h100-v5", "NVIDIA H100 80GB HBM3")
    code, out, err = run(capsys, "diagnose", str(paste))
    assert code == 0, err
    verdict = next(line for line in out.splitlines() if "Latency-bound" in line)
    assert "this host issues calls faster than that; run one process per GPU" in verdict


def test_a_header_whose_gpus_per_process_do_not_fit_is_named_not_modelled(tmp_path, capsys):
    paste = _azure_paste(tmp_path)
    paste.write_text(paste.read_text(encoding="utf-8").replace("nGpus 8", "nGpus 16"),
                     encoding="utf-8")
    code, out, err = run(capsys, "diagnose", str(paste), "--json")
    assert code == 0, err
    summary = json.loads(out.splitlines()[-1])
    assert summary["gpus_per_process"] == 1 and summary["host_seconds"] == 0
    assert any("nGpus 16 (GPUs one process drove) does not fit 8 GPUs" in n
               for n in summary["notes"])
