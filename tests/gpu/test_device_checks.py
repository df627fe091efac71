"""The first-device checks (ringsim/studies/gpu_selfcheck.py) on a real GPU, and the one-command
script benchmarks/gpu_check.py run end to end on the CPU against the CuPy stand-in."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ringsim.studies import gpu_selfcheck as selfcheck

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.gpu
def test_race_stress_is_bitwise_numpy_every_repeat(cupy):
    """ring, master, naive · G = 8, N = 2²² + 3 · int32, float32 · fused, streams · 3 repeats."""
    records = list(selfcheck.race_stress(cupy))
    assert len(records) == 3 * 2 * 2
    assert all(r["ok"] for r in records), [r for r in records if not r["ok"]]


@pytest.mark.gpu
def test_past_two_to_the_31_elements(cupy):
    """uint8, G = 2 and 3, N = 2³¹ + 3, the last elements included (skips if memory is short)."""
    records = list(selfcheck.big_index(cupy))
    ran = [r for r in records if r["ok"] is not None]
    if not ran:
        pytest.skip(records[0]["skipped"])
    assert all(r["ok"] for r in ran), ran
    assert all(r["probes"][-1] == 2**31 + 2 for r in ran)


@pytest.mark.gpu
def test_subnormals_signed_zeros_and_nans(cupy):
    records = list(selfcheck.float_specials(cupy))
    assert all(r["ok"] for r in records), [r for r in records if not r["ok"]]


def test_specials_hold_every_corner_case():
    """The inputs really contain what the check claims (CPU)."""
    for dtype in ("float16", "float32", "float64"):
        data = selfcheck.specials(dtype, 8, 4099)
        info = np.finfo(data.dtype)
        finite = data[abs(data) < float("inf")]
        assert ((finite != 0) & (abs(finite) < info.tiny)).any()            # subnormals
        assert (data == 0).any() and np.signbit(data[data == 0]).any()
        bits = data.view(f"u{data.itemsize}")
        nans = bits[data != data]
        assert len(set(nans.tolist())) == 3                                  # three NaN payloads


def test_gpu_check_script_runs_end_to_end_on_the_standin():
    """The device script's plumbing, before any device: every line JSON, every check there,
    each labelled as a stand-in run (NOT a GPU result)."""
    done = subprocess.run([sys.executable, "benchmarks/gpu_check.py", "--standin"], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    records = [json.loads(line) for line in done.stdout.splitlines()]
    assert {r["check"] for r in records} == {"environment", "race-stress", "big-index",
                                             "float-specials", "bench", "summary"}
    assert all(r["standin"] is True and "NOT a GPU result" in r["standin_note"] for r in records)
    assert records[-1] == {**records[-1], "check": "summary", "ok": True, "failed": []}
    assert sum(r["check"] == "race-stress" for r in records) == 12
    assert sum(r["check"] == "float-specials" for r in records) == 18
    assert all(r["ok"] for r in records)


def test_a_check_that_raises_is_reported_and_the_rest_still_run(monkeypatch, capsys):
    import importlib.util
    spec = importlib.util.spec_from_file_location("gpu_check", ROOT / "benchmarks" / "gpu_check.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)

    def broken(xp, **options):
        raise MemoryError("out of memory allocating 8,589,934,592 bytes")
    monkeypatch.setattr(selfcheck, "race_stress", broken)
    assert script.main(["--standin", "--only", "environment", "race-stress", "big-index"]) == 1
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["check"] for r in records] == ["environment", "race-stress", "big-index",
                                             "big-index", "big-index", "big-index", "summary"]
    assert records[1]["ok"] is False and records[1]["error"].startswith("MemoryError: out of memory")
    assert records[-1]["ok"] is False and records[-1]["failed"] == ["race-stress"]
