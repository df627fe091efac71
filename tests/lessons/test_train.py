"""The data-parallel training demo: synced replicas stay identical, unsynced ones drift."""

from __future__ import annotations

import numpy as np
import pytest

from ringsim import RingsimError, closed_form
from ringsim.algorithms import ALGORITHMS
from ringsim.cli import main
from ringsim.training.train import report_lines, synthetic_data, train


@pytest.mark.parametrize("algorithm", ["ring", "master", "naive"])
@pytest.mark.parametrize("gpus", [1, 3, 4, 7])
def test_synced_replicas_are_identical_and_match_one_gpu(algorithm, gpus):
    run = train(gpus, algorithm, epochs=2)
    assert run.weights.shape == (gpus, 9)
    assert np.array_equal(run.weights, np.broadcast_to(run.weights[0], run.weights.shape))
    assert all(e.replica_difference == 0 for e in run.epochs)
    # Same batches, same mean gradient: only the order of additions differs.
    np.testing.assert_allclose(run.weights[0], run.reference, rtol=0, atol=1e-12)
    assert run.epochs[-1].reference_difference <= 1e-12
    assert run.epochs[-1].loss < run.epochs[0].loss < np.log(2)  # it learns from log 2 at w = 0


def test_one_gpu_is_the_reference_bit_for_bit():
    run = train(1, epochs=2)
    assert np.array_equal(run.weights[0], run.reference)
    assert run.elements_moved == 0


def test_without_sync_the_replicas_drift_apart():
    synced, drifting = train(4, epochs=3), train(4, epochs=3, sync=False)
    spreads = [e.replica_difference for e in drifting.epochs]
    assert spreads[0] > 1e-2 and spreads[-1] > spreads[0]
    assert drifting.epochs[-1].reference_difference > 1e-2
    assert drifting.syncs == 0 and drifting.elements_moved == 0
    assert len({tuple(w) for w in drifting.weights}) == 4
    assert synced.epochs[-1].replica_difference == 0


def test_elements_moved_are_the_syncs_times_the_closed_form():
    run = train(5, "ring", epochs=2, samples=1000, batch=100, features=4)
    assert run.steps_per_epoch == 10 and run.syncs == 20
    per_sync = int(closed_form("ring", 5, 5).total.value)  # N = 4 features + bias
    assert run.elements_per_sync == per_sync == 2 * 4 * 5
    assert run.elements_moved == 20 * per_sync
    assert report_lines(run)[-1] == "Syncs: 20 × 2·(G−1)·N = 40 elements = 800 elements moved"


def test_the_data_are_fixed_by_the_seed():
    x1, y1 = synthetic_data(64, 3, seed=1)
    x2, y2 = synthetic_data(64, 3, seed=1)
    assert np.array_equal(x1, x2) and np.array_equal(y1, y2)
    assert set(np.unique(y1)) <= {0.0, 1.0}


@pytest.mark.parametrize("kwargs, message", [
    ({"gpus": 0}, "the number of GPUs must be from 1 to 1,000,000, got 0"),
    ({"gpus": 8, "batch": 4}, "each GPU needs at least one sample of every batch: gpus (8) must "
                              "be at most the batch size (4)"),
    ({"epochs": 0}, "the number of epochs must be from 1 to 10,000, got 0"),
    ({"lr": -1.0}, "the learning rate must be a number above 0 and at most 1,000,000, got -1.0"),
    ({"algorithm": "bogus"}, f"unknown algorithm 'bogus'; choose one of: {', '.join(ALGORITHMS)}"),
])
def test_bad_settings_are_refused(kwargs, message):
    with pytest.raises(RingsimError) as info:
        train(**kwargs)
    assert str(info.value) == message


def test_train_command_prints_the_report(capsys):
    assert main(["train", "--gpus", "3", "--algorithm", "master", "--epochs", "2"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "Data-parallel logistic regression · 3 GPUs · Single-GPU master (GPU1)"
    assert lines[2].split()[:2] == ["epoch", "loss"]
    rows = [line.split() for line in lines[3:5]]
    assert [r[0] for r in rows] == ["1", "2"] and all(r[2] == "0" for r in rows)
    # the single-GPU reference differs only by float64 rounding, shown as such
    assert all(r[3:] in (["0"], ["<", "1e-12"]) for r in rows)
    assert lines[5] == "Syncs: 32 × 2·(G−1)·N = 36 elements = 1,152 elements moved"


def test_train_command_no_sync(capsys):
    assert main(["train", "--no-sync", "--epochs", "1"]) == 0
    out = capsys.readouterr().out
    assert "· no sync" in out and "0 elements moved" in out
    assert float(out.splitlines()[3].split()[2]) > 1e-2


@pytest.mark.parametrize("argv, message", [
    (["--gpus", "0"], "ringsim train: error: argument -g/--gpus: the number of GPUs must be from 1 to 1,000,000, got 0"),
    (["--epochs", "x"], "ringsim train: error: argument -e/--epochs: expected a whole number, got 'x'"),
    (["--lr", "0"], "ringsim train: error: argument --lr: expected a number above 0 and at most 1,000,000, got '0'"),
    (["--algorithm", "bogus"], "ringsim train: error: argument -a/--algorithm: invalid choice: 'bogus' "
                               f"(choose from {', '.join(repr(a) for a in ALGORITHMS)})"),
    (["--batch", "2", "--gpus", "3"], "ringsim train: error: each GPU needs at least one sample of every "
                                      "batch: --gpus (3) must be at most the batch size (2)"),
    (["--master", "2"], "ringsim train: error: --master only applies to the master algorithm"),
    (["--seed", "-1"], "ringsim train: error: argument --seed: the seed must be from 0 to "
                       "9,223,372,036,854,775,807, got -1"),
])
def test_bad_options_exit_2_with_one_line(argv, message, capsys):
    try:
        status = main(["train", *argv])
    except SystemExit as exit_:
        status = exit_.code
    assert status == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == message + "\n"


def _independent_reference(samples, features, batch, lr, epochs, adam=False):
    """Logistic regression on one process, whole batch per step, written from the formulas
    alone: d/dw of the mean log-loss is X^T (sigmoid(Xw + b) - y) / B (and the bias the sum
    of the residuals / B); plain SGD, or Adam with Kingma & Ba's defaults (ICLR 2015,
    Algorithm 1: beta1 0.9, beta2 0.999, eps 1e-8, bias-corrected moments)."""
    x, y = synthetic_data(samples, features, 0)
    w = np.zeros(features + 1)
    m, v, t = np.zeros_like(w), np.zeros_like(w), 0
    for _ in range(epochs):
        for start in range(0, samples, batch):
            xb, yb = x[start:start + batch], y[start:start + batch]
            r = 1 / (1 + np.exp(-(xb @ w[:-1] + w[-1]))) - yb
            g = np.append(xb.T @ r, r.sum()) / len(yb)
            if not adam:
                w = w - lr * g
                continue
            t += 1
            m, v = 0.9 * m + 0.1 * g, 0.999 * v + 0.001 * g * g
            w = w - lr * (m / (1 - 0.9 ** t)) / (np.sqrt(v / (1 - 0.999 ** t)) + 1e-8)
    return w


@pytest.mark.parametrize("gpus", [1, 3, 7])
@pytest.mark.parametrize("algorithm", ["ring", "tree", "halving-doubling", "nvls"])
def test_synced_training_matches_an_independent_one_gpu_run(algorithm, gpus):
    """97 samples per batch: 3 and 7 GPUs get uneven shards, and the last batch (1,000 = 10 x
    97 + 30) is short; the summed shares must still be the whole batch's mean gradient."""
    run = train(gpus, algorithm, 3, samples=1000, features=5, batch=97, lr=0.5)
    want = _independent_reference(1000, 5, 97, 0.5, 3)
    assert np.array_equal(run.weights, np.broadcast_to(run.weights[0], run.weights.shape))
    np.testing.assert_allclose(run.weights[0], want, rtol=0, atol=1e-12)


@pytest.mark.parametrize("stage", [1, 2, 3])
@pytest.mark.parametrize("gpus", [2, 3, 7])
def test_zero_training_matches_an_independent_adam(stage, gpus):
    from ringsim.training.zero_train import train_zero
    run = train_zero(gpus, stage, 3, samples=1000, features=10, batch=97, lr=0.05)
    assert run.identical
    want = _independent_reference(1000, 10, 97, 0.05, 3, adam=True)
    np.testing.assert_allclose(run.zero_weights, np.broadcast_to(want, run.zero_weights.shape),
                               rtol=0, atol=1e-12)
