"""NCCL_MIN_CTAS and NCCL_MAX_CTAS (the communicator config's minCTAs / maxCTAs): the channel
bounds NCCL applies with them, as `predict --min-ctas/--max-ctas`, the API and a pasted run
take them.

From NCCL 2.30.7's source: src/graph/connect.cc (ncclTopoPostset) runs rings and trees on
nChannels = min(min(ncclMaxNchannels(), nChannels), maxCTAs), then copies them up to
max(ncclMinNchannels(), minCTAs); src/transport/nvls.cc (ncclNvlsTuning) holds NVLS's channels
to max(minCTAs, min(maxCTAs, nChannels)); src/init.cc caps both at MAXCHANNELS and sets minCTAs
to maxCTAs where it is larger."""

from __future__ import annotations

import json

import pytest

from ringsim.cli import main
from ringsim.cost.nccl import nccl_choices
from ringsim.cost.nccl_ctas import with_ctas
from ringsim.cost.topology import load

H100 = load("dgx-h100")
SIZES = [8, 1 << 16, 1 << 20, 1 << 24, 1 << 30]


def _run(gpus: int, **settings):
    """(algorithm, protocol, channels, seconds) per size."""
    return [(c.algorithm, c.protocol, c.channels, c.seconds)
            for c in nccl_choices(H100, gpus, SIZES, **settings)]


@pytest.mark.parametrize("gpus", [8, 16])
def test_max_ctas_bounds_the_rings_and_nvls_as_connect_cc_and_nvls_cc_do(gpus):
    # NVLS's own count on Hopper is 16 (NVLS_NCHANNELS_SM90); maxCTAs 4 holds it to 4, and the
    # rings to min(their count, 4): what NCCL_MAX_NCHANNELS=4 and NCCL_NVLS_NCHANNELS=4 give.
    assert with_ctas(H100, gpus, None, {}, max_ctas=4) == {"max_channels": 4, "nvls_channels": 4}
    assert _run(gpus, **with_ctas(H100, gpus, None, {}, max_ctas=4)) == _run(
        gpus, max_channels=4, nvls_channels=4)
    assert _run(gpus, max_channels=4, nvls_channels=4) != _run(gpus)


def test_min_ctas_copies_the_rings_and_raises_nvls():
    # minCTAs 32: rings copied up to max(ncclMinNchannels(), 32) = 32; NVLS 16 raised to 32
    assert with_ctas(H100, 16, None, {}, min_ctas=32) == {"min_channels": 32, "nvls_channels": 32}


def test_the_tighter_bound_wins_and_min_above_max_becomes_max():
    # min(NCCL_MAX_NCHANNELS 4, maxCTAs 8) = 4 for the rings; NVLS 16 held to 8
    assert with_ctas(H100, 16, None, {"max_channels": 4}, max_ctas=8) == {
        "max_channels": 4, "nvls_channels": 8}
    # max(NCCL_MIN_NCHANNELS 24, minCTAs 2) = 24; NVLS 16 within [2, 64]: left as NCCL's own
    assert with_ctas(H100, 16, None, {"min_channels": 24}, min_ctas=2) == {"min_channels": 24}
    # init.cc: minCTAs 12 > maxCTAs 6 sets both to 6; NVLS_NCHANNELS 20 held to 6
    assert with_ctas(H100, 16, None, {"nvls_channels": 20}, min_ctas=12, max_ctas=6) == {
        "min_channels": 6, "max_channels": 6, "nvls_channels": 6}
    # a value above MAXCHANNELS (64 in 2.30.7, 32 in 2.24.3) is capped to it
    assert with_ctas(H100, 16, "2.24.3", {}, max_ctas=40) == {"max_channels": 32}


def test_without_nvls_only_the_rings_are_bounded():
    assert with_ctas(H100, 16, None, {}, max_ctas=4, nvls=False) == {"max_channels": 4}


def test_predict_takes_min_and_max_ctas(capsys):
    args = ["predict", "--nodes", "2", "--sizes", "1GiB", "--json"]
    assert main(args + ["--max-ctas", "4"]) == 0
    ctas = json.loads(capsys.readouterr().out)
    assert main(args + ["--max-channels", "4", "--nvls-channels", "4"]) == 0
    both = json.loads(capsys.readouterr().out)
    assert ctas["seconds"] == both["seconds"] and ctas["channels"] == both["channels"] == 4
    assert ctas["max_ctas"] == 4
    assert main(["predict", "--nodes", "2", "--sizes", "1GiB", "--max-ctas", "4"]) == 0
    assert "NCCL_MAX_CTAS=4" in capsys.readouterr().out
    assert main(["predict", "--max-ctas", "0"]) == 2
    assert "NCCL_MAX_CTAS" in capsys.readouterr().err


def test_diagnose_holds_the_model_to_pasted_ctas(tmp_path, capsys):
    text = open("tests/data/nccl_outputs/a3mega_h100_2node_all_reduce.txt").read()
    paste = tmp_path / "run.txt"
    paste.write_text("NCCL INFO NCCL_MAX_CTAS set by environment to 4.\n" + text)
    assert main(["diagnose", "--no-plot", "--json", str(paste)]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    flags = tmp_path / "flags.txt"
    flags.write_text(text)
    assert main(["diagnose", "--no-plot", "--json", "--max-channels", "4", "--nvls-channels",
                 "4", str(flags)]) == 0
    held = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert ([r["predicted_seconds"] for r in rows if r["type"] == "size"]
            == [r["predicted_seconds"] for r in held if r["type"] == "size"])
    notes = " ".join(rows[-1]["notes"])
    assert "NCCL_MAX_CTAS=4" in notes and "not modelled" not in notes


def test_diagnose_flags_settle_what_the_paste_shows(tmp_path, capsys):
    # The paste says NCCL_MAX_CTAS=8 and NCCL_NTHREADS=512; the flags say 4 and 256: the model
    # is priced as predict prices the flags, and the notes name the flags.
    text = open("tests/data/nccl_outputs/a3mega_h100_2node_all_reduce.txt").read()
    paste = tmp_path / "run.txt"
    paste.write_text("NCCL INFO NCCL_MAX_CTAS set by environment to 8.\n"
                     "NCCL INFO NCCL_NTHREADS set by environment to 512.\n" + text)
    assert main(["diagnose", "--no-plot", "--json", "--max-ctas", "4", "--nthreads", "256",
                 str(paste)]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    sizes = [r["bytes"] for r in rows if r["type"] == "size"]
    summary = rows[-1]
    assert summary["topology"] == "dgx-h100" and summary["nccl_tables"] is None
    assert main(["predict", "--json", "--nodes", "2", "--gpus", "16", "--max-ctas", "4",
                 "--nthreads", "256", "--sizes", ",".join(f"{n}B" for n in sizes)]) == 0
    want = [json.loads(line)["seconds"] for line in capsys.readouterr().out.splitlines()]
    assert [r["predicted_seconds"] for r in rows if r["type"] == "size"] == want
    notes = " ".join(rows[-1]["notes"])
    assert "NCCL_MAX_CTAS=4 (--max-ctas)" in notes and "NCCL_NTHREADS=256 (--nthreads)" in notes
    assert "NCCL_MAX_CTAS=8" not in notes and "NCCL_NTHREADS=512" not in notes
