"""The reduction a call makes (nccl-tests' -o: sum, prod, min, max, avg) and NVLS: NVLink
SHARP adds, and takes the min or max of, only some types. From NCCL 2.30.7's
src/include/device.h, ncclNvlsSupported(devRedOp, type): int32, uint32, int64, uint64, half and
bfloat16 with ncclDevSum or ncclDevMinMax; float and double with ncclDevSum alone; nothing else.
src/enqueue.cc (ncclPrepareTasks) turns NVLS and NVLSTree off for a call it does not support,
except an all-gather, which reduces nothing; ncclAvg becomes ncclDevPreMulSum (floats) or
ncclDevSumPostDiv (integers) and ncclProd ncclDevProd (enqueue.cc, hostToDevRedOp): neither
runs on NVLS."""

from __future__ import annotations

import json

import pytest

from ringsim.cli import main
from ringsim.core.errors import RingsimError
from ringsim.cost.nccl import nccl_choices
from ringsim.cost.nccl_channels import tune
from ringsim.cost.nccl_tuner import nvls_reduces
from ringsim.cost.topology import load

H100 = load("dgx-h100")


@pytest.mark.parametrize("dtype, redop, reduces", [
    ("float", "sum", True), ("float", "max", False), ("float", "min", False),
    ("double", "max", False), ("half", "max", True), ("bfloat16", "min", True),
    ("int32", "max", True), ("uint64", "min", True), ("float", "avg", False),
    ("half", "avg", False), ("int32", "avg", False), ("half", "prod", False),
    ("int8", "sum", False)])
def test_nvls_reduces_what_ncclNvlsSupported_supports(dtype, redop, reduces):
    sys = tune(H100, 16).sys
    assert nvls_reduces(sys, "AllReduce", dtype, redop) is reduces
    assert nvls_reduces(sys, "AllGather", dtype, redop)  # an all-gather reduces nothing


def test_a_float_max_all_reduce_runs_no_nvls():
    big = 1 << 30
    assert nccl_choices(H100, 16, [big])[0].algorithm == "NVLSTree"
    float_max = nccl_choices(H100, 16, [big], redop="max")[0]
    assert float_max.algorithm not in ("NVLS", "NVLSTree")
    # the same call with NVLS and NVLSTree left out by NCCL_ALGO prices alike
    assert float_max == nccl_choices(H100, 16, [big], algo="^NVLS,NVLSTree")[0]
    assert nccl_choices(H100, 16, [big], dtype="half", redop="max")[0].algorithm == "NVLSTree"
    assert nccl_choices(H100, 8, [big], redop="avg")[0].algorithm != "NVLS"
    with pytest.raises(RingsimError, match="unknown reduction"):
        nccl_choices(H100, 16, [big], redop="xor")


def test_predict_takes_the_reduction(capsys):
    assert main(["predict", "--nodes", "2", "--sizes", "1GiB", "--json", "--op", "max"]) == 0
    row = json.loads(capsys.readouterr().out)
    assert row["algorithm"] not in ("NVLS", "NVLSTree") and row["redop"] == "max"


def test_diagnose_prices_the_pasted_reduction(tmp_path, capsys):
    text = open("tests/data/nccl_outputs/a3mega_h100_2node_all_reduce.txt").read()
    paste = tmp_path / "max.txt"
    paste.write_text(text.replace("     float     sum", "     float     max"))
    assert main(["diagnose", "--no-plot", "--json", str(paste)]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    algos = {r["algorithm"] for r in rows if r["type"] == "size"}
    assert algos and not algos & {"NVLS", "NVLSTree"}
