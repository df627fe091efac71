"""NCCL_NTHREADS and NCCL_LL128_NTHREADS: the threads of a Ring or Tree channel, which set how
far a small call's channels drop.

From NCCL 2.30.7's src/graph/tuning.cc, ncclTopoTuneModel: comm->maxThreads of Ring and Tree
with LL and Simple is getNthreads("NCCL_NTHREADS", env, 2 * WARP_SIZE, max, default) (max 512:
NCCL_LL_MAX_NTHREADS, NCCL_SIMPLE_MAX_NTHREADS), with LL128 getNthreads("NCCL_LL128_NTHREADS",
env, 640 / 4, 640, 640); getNthreads keeps a positive multiple of 32 within [min, max], takes
max for one that is not a multiple of 32 or above it, min below it, the default for 0 or less.
src/enqueue.cc, topoGetAlgoInfo: `while (nBytes < nc * nt * threadThreshold) nc--` (down to 1),
threadThreshold 8 for Tree LL (NCCL_LL_THREAD_THRESHOLD)."""

from __future__ import annotations

import json

import pytest

from ringsim.cli import main
from ringsim.cost.nccl import nccl_choices
from ringsim.cost.nccl_channels import channel_threads, tune
from ringsim.cost.topology import load

H100 = load("dgx-h100")


@pytest.mark.parametrize("given, ll, simple_tree", [
    (None, 512, 512), (256, 256, 256), (64, 64, 64), (32, 64, 64), (100, 512, 512),
    (1024, 512, 512), (0, 512, 512), (-5, 512, 512)])
def test_nthreads_as_getNthreads_holds_it(given, ll, simple_tree):
    tuned = tune(H100, 16, nthreads=given)
    assert channel_threads(tuned, "Tree", "LL") == ll
    assert channel_threads(tuned, "Ring", "LL") == ll
    assert channel_threads(tuned, "Tree", "Simple") == simple_tree
    assert channel_threads(tuned, "Tree", "LL128") == 640  # LL128 has its own setting


@pytest.mark.parametrize("given, threads", [(None, 640), (320, 320), (96, 160), (700, 640),
                                            (330, 640)])
def test_ll128_nthreads_as_getNthreads_holds_it(given, threads):
    tuned = tune(H100, 16, ll128_nthreads=given)
    assert channel_threads(tuned, "Ring", "LL128") == threads
    assert channel_threads(tuned, "Ring", "LL") == 512


def test_fewer_threads_keep_more_channels_for_a_small_call():
    # Tree/LL at 8 KiB: 512 threads keep 2 channels (8192 < nc * 512 * 8 until nc = 2);
    # 256 threads keep 4 (8192 < nc * 256 * 8 until nc = 4)
    plain = nccl_choices(H100, 16, [8192])[0]
    fewer = nccl_choices(H100, 16, [8192], nthreads=256)[0]
    assert (plain.algorithm, plain.protocol, plain.channels) == ("Tree", "LL", 2)
    assert (fewer.algorithm, fewer.protocol, fewer.channels) == ("Tree", "LL", 4)


def test_predict_and_diagnose_take_nthreads(tmp_path, capsys):
    assert main(["predict", "--nodes", "2", "--sizes", "8KiB", "--json", "--nthreads",
                 "256"]) == 0
    row = json.loads(capsys.readouterr().out)
    assert row["channels"] == 4 and row["nthreads"] == 256
    text = open("tests/data/nccl_outputs/a3mega_h100_2node_all_reduce.txt").read()
    paste = tmp_path / "run.txt"
    paste.write_text("NCCL INFO NCCL_NTHREADS set by environment to 256.\n" + text)
    assert main(["diagnose", "--no-plot", "--json", str(paste)]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    at_8k = next(r for r in rows if r["type"] == "size" and r["bytes"] == 8192)
    assert at_8k["predicted_seconds"] == pytest.approx(
        nccl_choices(H100, 16, [8192], nthreads=256)[0].seconds)
    notes = " ".join(rows[-1]["notes"])
    assert "NCCL_NTHREADS=256 in the paste" in notes and "NCCL_NTHREADS=256 in the paste: not" \
        " modelled" not in notes
