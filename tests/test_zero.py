"""ZeRO: volumes and memory against Rajbhandari et al. (SC'20), and the sharded update run for real."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings, strategies as st

from ringsim import RingsimError
from ringsim.algorithms import collectives as C
from ringsim.cli import main
from ringsim.core.layout import Layout
from ringsim.execute.ledger import measure
from ringsim.core.units import parse_params
from ringsim.training.zero import memory, paper_memory, step
from ringsim.training.zero_train import train_zero


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 64), st.integers(1, 10**6), st.sampled_from([0, 1, 2, 3]))
def test_memory_and_volume_follow_the_paper(gpus, per_gpu, stage):
    psi = gpus * per_gpu  # N_d divides Ψ, as the paper's formulas assume
    z = step(stage, psi, gpus)
    assert z.memory.total == paper_memory(stage, psi, gpus)
    # Unsharded: (2 + 2 + 12)Ψ bytes; each stage shards one more of the three.
    assert paper_memory(0, psi, gpus) == 16 * psi
    collectives_per_step = 3 if stage == 3 else 2  # 2Ψ, or 3Ψ for stage 3: 1.5×
    assert z.paper_elements == collectives_per_step * psi
    assert z.sent == z.received == collectives_per_step * (gpus - 1) * per_gpu


def test_figure_1_of_the_paper():
    # Ψ = 7.5B, N_d = 64: 120 GB, 31.4 GB, 16.6 GB, 1.9 GB per GPU.
    psi = 7_500_000_000
    assert [round(memory(s, psi, 64).total / 1e9, 1) for s in range(4)] == [120.0, 31.4, 16.6, 1.9]


@pytest.mark.parametrize("gpus, psi", [(3, 10), (4, 9), (5, 5), (7, 3), (1, 4)])
def test_elements_against_the_ledgers_of_the_plans(gpus, psi):
    # Independent of zero.py's arithmetic: add up the plans' own ledgers GPU by GPU.
    layout = Layout(gpus, psi)
    rs = measure(C.REDUCE_SCATTER.plan(gpus), layout).sent
    ag = measure(C.ALL_GATHER.plan(gpus), layout).sent
    assert step(1, psi, gpus).sent == max(rs + ag) == step(0, psi, gpus).sent
    assert step(3, psi, gpus).sent == max(rs + 2 * ag)


def test_parse_params_and_errors():
    assert parse_params("7.5B") == 7_500_000_000 and parse_params("125M") == 125_000_000
    assert parse_params("1.3e9") == 1_300_000_000 and parse_params("350,000") == 350_000
    for bad in ("7.5X", "0", "1.5", "-3"):
        with pytest.raises(RingsimError):
            parse_params(bad)
    with pytest.raises(RingsimError):
        step(4, 10, 2)


@pytest.mark.parametrize("stage", [1, 2, 3])
def test_sharded_training_matches_data_parallelism(stage):
    run = train_zero(5, stage, 2, samples=512, features=11, batch=64)
    assert run.identical and all(e.difference == 0 for e in run.epochs)
    assert run.epochs[-1].loss < 0.69  # it learned (log 2 is the untrained loss)
    assert run.sent_per_step == (3 if stage == 3 else 2) * (12 - 12 // 5)
    assert run.kept["optimizer"] == 2 * 3 < run.dp_kept["optimizer"]


def test_cli_zero_json_and_train(capsys):
    assert main(["zero", "--params", "7.5B", "--gpus", "64", "--stage", "3", "--json"]) == 0
    row = json.loads(capsys.readouterr().out)
    assert row["memory_bytes_per_gpu"] == 1_875_000_000
    assert row["elements_sent_per_gpu"] == 3 * 63 * 7_500_000_000 // 64
    assert main(["zero", "--params", "1B", "--topology", "dgx-h100", "--nodes", "2"]) == 0
    out = capsys.readouterr().out
    assert "16 GPUs" in out and "FSDP full shard" in out
    assert main(["train", "--zero", "2", "--epochs", "1", "--backend", "numpy"]) == 0
    assert "bit for bit: yes" in capsys.readouterr().out
    assert main(["train", "--zero", "2", "--no-sync"]) == 2
    assert main(["zero", "--params", "lots"]) == 2
