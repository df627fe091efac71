"""NCCL_BUFFSIZE: Simple's buffer, so the size of one of its steps, and the wait for a call's
first step to cross the pipeline.

From NCCL 2.30.7: src/init.cc, computeBuffSizes, takes comm->buffSizes[NCCL_PROTO_SIMPLE] from
NCCL_BUFFSIZE (default DEFAULT_BUFFSIZE, 4 MiB); src/enqueue.cc, calcCollChunking: stepSize =
comm->buffSizes[protocol] / NCCL_STEPS (8), a tree's Simple chunk one step. LL and LL128 have
buffers of their own (NCCL_LL_BUFFSIZE, NCCL_LL128_BUFFSIZE)."""

from __future__ import annotations

import json

import pytest

from ringsim.cli import main
from ringsim.cost.nccl import nccl_choices
from ringsim.cost.nccl_pipeline import chunk_bytes
from ringsim.cost.topology import load
from ringsim.core.errors import RingsimError

MiB, GiB = 1 << 20, 1 << 30
H100 = load("dgx-h100")


def test_a_simple_step_is_an_eighth_of_nccl_buffsize():
    assert chunk_bytes("Tree", "Simple", GiB, 16, 1) == 4 * MiB // 8
    assert chunk_bytes("Tree", "Simple", GiB, 16, 1, buffsize=16 * MiB) == 16 * MiB // 8
    assert chunk_bytes("Tree", "Simple", GiB, 16, 1, buffsize=MiB) == MiB // 8
    # LL keeps its own buffer: 8 lines x 512 threads x 8 steps x 16 bytes, half of each data
    assert chunk_bytes("Tree", "LL", MiB, 16, 1, buffsize=16 * MiB) == 32768


def test_a_larger_step_waits_longer_to_fill_a_trees_pipeline():
    # the first step crosses the same stages, four times as large: four times the wait
    plain, large = (nccl_choices(H100, 16, [GiB], algo="Tree", proto="Simple", buffsize=b)[0]
                    for b in (None, 16 * MiB))
    assert plain.fill > 0 and large.fill == pytest.approx(4 * plain.fill)
    assert large.seconds - plain.seconds == pytest.approx(large.fill - plain.fill)
    assert large.nccl_seconds == plain.nccl_seconds  # NCCL's own model has no step size
    with pytest.raises(RingsimError, match="NCCL_BUFFSIZE"):
        nccl_choices(H100, 16, [GiB], buffsize=0)


def test_predict_and_diagnose_take_buffsize(tmp_path, capsys):
    args = ["predict", "--nodes", "2", "--sizes", "1GiB", "--json", "--algo", "Tree",
            "--proto", "Simple"]
    assert main(args + ["--buffsize", "16MiB"]) == 0
    row = json.loads(capsys.readouterr().out)
    assert row["buffsize"] == 16 * MiB
    assert row["fill"] == pytest.approx(nccl_choices(H100, 16, [GiB], algo="Tree", proto="Simple",
                                                     buffsize=16 * MiB)[0].fill)
    text = open("tests/data/nccl_outputs/a3mega_h100_2node_all_reduce.txt").read()
    paste = tmp_path / "run.txt"
    paste.write_text("NCCL INFO NCCL_BUFFSIZE set by environment to 16777216.\n" + text)
    assert main(["diagnose", "--no-plot", "--json", "--algo", "Tree", "--proto", "Simple",
                 str(paste)]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    at_1g = next(r for r in rows if r["type"] == "size" and r["bytes"] == GiB)
    assert at_1g["predicted_seconds"] == pytest.approx(nccl_choices(
        H100, 16, [GiB], algo="Tree", proto="Simple", buffsize=16 * MiB)[0].seconds)
    notes = " ".join(rows[-1]["notes"])
    assert "NCCL_BUFFSIZE=16,777,216 in the paste" in notes and "not modelled" not in notes
