"""Work that would grow without bound is estimated first and refused in one line naming what it
would need; each case runs bounded (time, address space)."""

from __future__ import annotations

import numpy as np
import pytest

from ringsim.algorithms import make_plan
from ringsim.core.errors import RingsimError
from ringsim.timeline import simulate, slow_gpu
from .conftest import bounded, refused


@pytest.mark.parametrize("args, words", [
    (["timeline", "--gpus", "16384", "-a", "halving-doubling"], ["GiB", "GPU segments kept"]),
    (["timeline", "-a", "naive", "--gpus", "2000"], ["at least", "3,998,000 transfers in 1 step"]),
    (["timeline", "-a", "naive", "--gpus", "500"], ["limits are 2.0 GiB and 30.00 s"]),
    (["timeline", "--gpus", "1000", "--trace", "t.json"], ["--trace would write", "1,998,000 transfers"]),
    (["timeline", *[f for i in range(300) for f in ("--slow-gpu", f"{i % 8 + 1}:0.5")]],
     ["at most 64 faults", "300"]),
    # argparse's own work grows with the square of the options given: 30,000 words take it
    # minutes, so the command line's length is refused before it is parsed
    (["walk", *["--json"] * 30_000], ["30,001 words", "at most 1,000"]),
    (["walk", *["--no-such-option"] * 10_000], ["10,001 words", "at most 1,000"]),
    (["timeline", *[f for i in range(3000) for f in ("--slow-gpu", f"{i % 8 + 1}:0.5")]],
     ["6,001 words", "at most 1,000"]),
    (["timeline", "--slow-gpu", "2:0.5", "--slow-gpu", "2:0.3"], ["given twice for the same GPU"]),
    (["timeline", "--slow-link", "1-2:0.5", "--slow-link", "2-1:0.3"], ["given twice for the same link"]),
    (["timeline", "--delay", "3:1us", "--delay", "3:2us"], ["given twice"]),
    (["timeline", "--gpus", "100000", "--ring-order", "rails:1000"], ["at most 64", "rails:1,000"]),
    (["train", "--epochs", "1000", "--samples", "100000", "--features", "100"], ["about 577 s", "30 s"]),
    (["train", "--zero", "2", "--epochs", "1000", "--samples", "100000", "--features", "100"], ["30 s"]),
    (["train", "--lr", "1e308"], ["at most 1,000,000"]),
    (["train", "--lr", "inf"], ["--lr"]),
])
def test_cli_refuses_before_the_work_starts(tmp_path, args, words):
    run = bounded(*args, timeout=60, cwd=tmp_path)
    refused(run, *words)
    assert list(tmp_path.iterdir()) == []  # no trace file, not even an empty one


def test_master_at_a_thousand_gpus_runs_step_by_step_in_seconds():
    # The event engine's dependency lists grow as segments × writers (a billion for master
    # at 1,000 GPUs); the same times come from the step-by-step pass.
    run = bounded("timeline", "-a", "master", "--gpus", "1000", timeout=30)
    assert run.returncode == 0 and "computed step by step" in run.stdout


def test_api_refuses_the_same_and_the_memory_estimate_allocates_nothing_large():
    with pytest.raises(RingsimError, match="GPU segments kept"):
        simulate(make_plan("halving-doubling", 16384), 1 << 24)
    with pytest.raises(RingsimError, match="at most 64 faults"):
        simulate(make_plan("ring", 8), 64, faults=[slow_gpu("2:0.5")] * 65)
    with pytest.raises(RingsimError, match="covers"):
        simulate(make_plan("naive", 200), 64, method="events")
    import ringsim
    import resource
    limit = resource.getrlimit(resource.RLIMIT_AS)
    # 200,000 empty arrays: the estimate compares step columns, never G·S booleans (37 GiB).
    resource.setrlimit(resource.RLIMIT_AS, (6 << 30, limit[1]))
    try:
        with pytest.raises(RingsimError, match="would need about"):
            ringsim.allreduce([np.ones(0)] * 200_000, "master")
    finally:
        resource.setrlimit(resource.RLIMIT_AS, limit)


def test_training_refuses_divergence_and_long_runs_through_the_api():
    from ringsim.training.train import train
    with pytest.raises(RingsimError, match="learning rate"):
        train(lr=1e308)
    with pytest.raises(RingsimError, match="30 s"):
        train(epochs=1000, samples=100_000, features=100)


def test_a_huge_lesson_file_is_refused_after_reading_its_first_256_kib(tmp_path):
    big = tmp_path / "01-big.md"
    with open(big, "w") as out:
        out.write("---\ntitle: Big\n---\n")
        out.write(("word " * 40 + "\n") * 100_000)  # 20 MB
    run = bounded("lesson", "--check", str(tmp_path), timeout=30)
    assert run.returncode == 2 and "Traceback" not in run.stderr
    assert run.stderr.strip().splitlines() == [f"{big}:1: the file holds more than 256 KiB; a lesson is at most that long"]
