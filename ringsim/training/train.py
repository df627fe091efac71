"""Data-parallel training demo: logistic regression on G simulated GPUs, gradients all-reduced.

Every GPU holds a replica of the same model and a shard of each global batch. After each
step the GPUs' gradients are summed with the chosen algorithm through the engine's
executor, so every replica takes the same update; without sync each replica follows its
own shard and they drift apart. A one-GPU model trained on the whole batch is the yardstick.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..core.naming import plural
from ..algorithms import DEFAULT_ALGORITHM, make_plan, plan_closed_form
from ..algorithms.collectives import ALL_REDUCE
from ..execute.backend import make_executor, to_numpy
from ..core.checks import check_count, check_gpus
from ..core.arguments import argument
from ..core.errors import RingsimError
from ..core.layout import Layout
from ..execute.ledger import measure
from ..execute.memory import check_memory, train_bytes


@dataclass(frozen=True)
class Epoch:
    """What one epoch ended with: loss, spread between replicas, gap to one-GPU training."""

    number: int
    loss: float
    replica_difference: float
    reference_difference: float


@dataclass(frozen=True)
class TrainingRun:
    """A finished demo run: its settings, one row per epoch, and what the syncs moved."""

    gpus: int
    algorithm: str
    sync: bool
    samples: int
    features: int
    batch: int
    steps_per_epoch: int
    epochs: list[Epoch] = field(default_factory=list)
    syncs: int = 0
    elements_per_sync: int = 0
    formula_per_sync: str = ""
    weights: np.ndarray | None = None
    reference: np.ndarray | None = None
    title: str = ""  # what syncs the gradients, as walk titles its plan: 'Single-GPU master (GPU2)'

    @property
    def elements_moved(self) -> int:
        """Elements all the syncs moved together."""
        return self.syncs * self.elements_per_sync

    @property
    def parameters(self) -> int:
        """Model size N: the weights and the bias, which every sync all-reduces."""
        return self.features + 1


def synthetic_data(samples: int, features: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Two overlapping Gaussian classes: inputs (samples × features) and 0/1 labels."""
    rng = np.random.default_rng(seed)
    true_w = rng.normal(size=features)
    x = rng.normal(size=(samples, features))
    p = 1 / (1 + np.exp(-(x @ true_w)))
    y = (rng.random(samples) < p).astype(np.float64)
    return x, y


def gradient(w: np.ndarray, x: np.ndarray, y: np.ndarray, scale: float) -> np.ndarray:
    """Gradient of the summed log-loss over (x, y) times `scale`; last entry is the bias."""
    p = 1 / (1 + np.exp(-(x @ w[:-1] + w[-1])))
    err = (p - y) * scale
    return np.concatenate([x.T @ err, [err.sum()]])


def loss(w: np.ndarray, x: np.ndarray, y: np.ndarray) -> float:
    """The mean log-loss of the logistic model `w` over (x, y); last entry of w is the bias."""
    z = x @ w[:-1] + w[-1]
    # log(1 + e^z) − y·z, written to stay finite for large |z|
    return float(np.mean(np.logaddexp(0, z) - y * z))



MAX_SECONDS = 30.0  # a demo answers in seconds; larger runs belong to a real framework
MAX_LR = 1e6        # past this every step overflows the logistic model's float64 weights
# Measured on one core (NumPy, float64), rounded up: per sample·feature·epoch (the shard
# gradients, the one-GPU reference, the loss), per batch, per GPU of a batch, per transfer synced.
SECONDS_PER_CELL, SECONDS_PER_BATCH, SECONDS_PER_GPU, SECONDS_PER_TRANSFER = 3e-8, 1e-4, 1.5e-4, 3e-7


def training_seconds(gpus: int, epochs: int, samples: int, features: int, batch: int,
                     transfers: int, runs: int = 1) -> float:
    """Estimated seconds of a training run (`runs` models trained side by side)."""
    batches = epochs * -(-samples // batch)
    per_batch = SECONDS_PER_BATCH + gpus * SECONDS_PER_GPU + transfers * SECONDS_PER_TRANSFER
    return runs * (epochs * samples * features * SECONDS_PER_CELL + batches * per_batch)


def check_work(gpus: int, epochs: int, samples: int, features: int, batch: int,
               transfers: int, lr, runs: int = 1) -> float:
    """Refuse a learning rate outside (0, MAX_LR] or a run estimated past MAX_SECONDS; the lr."""
    if isinstance(lr, bool) or not isinstance(lr, (int, float)) or not 0 < lr <= MAX_LR:
        raise RingsimError(f"the learning rate must be a number above 0 and at most "
                           f"{MAX_LR:,.0f}, got {lr!r}")
    seconds = training_seconds(gpus, epochs, samples, features, batch, transfers, runs)
    if seconds > MAX_SECONDS:
        raise RingsimError(
            f"{epochs:,} epochs of {samples:,} samples × {features:,} features in batches of "
            f"{batch:,} on {gpus:,} GPUs would take about {seconds:,.0f} s, more than the "
            f"{MAX_SECONDS:.0f} s a demo run may take: use fewer epochs, samples or features, "
            f"or a larger batch")
    return float(lr)


def finite(values: np.ndarray, epoch: int, lr: float) -> None:
    """Refuse a run whose model left float64's range (the learning rate too large for the data)."""
    if not np.all(np.isfinite(values)):
        raise RingsimError(f"the model diverged at epoch {epoch}: its weights left float64's "
                           f"range with learning rate {lr:g}; use a smaller {argument('lr')}")


def check_training(gpus, epochs, samples, features, batch) -> tuple[int, int, int, int, int]:
    """G, epochs, samples, features and batch checked as every training run needs them."""
    gpus = check_gpus(gpus)
    epochs = check_count(epochs, "the number of epochs", minimum=1, maximum=10_000)
    samples = check_count(samples, "the number of samples", minimum=1, maximum=10_000_000)
    features = check_count(features, "the number of features", minimum=1, maximum=10_000)
    batch = check_count(batch, "the batch size", minimum=1, maximum=samples)
    if gpus > batch:
        raise RingsimError(f"each GPU needs at least one sample of every batch: {argument('gpus')} "
                           f"({gpus}) "
                           f"must be at most the batch size ({batch})")
    return gpus, epochs, samples, features, batch

def train(gpus: int = 4, algorithm: str = DEFAULT_ALGORITHM, epochs: int = 5, *, sync: bool = True,
          samples: int = 4096, features: int = 8, batch: int = 256, lr: float = 0.5, seed: int = 0,
          xp=np, options: dict | None = None) -> TrainingRun:
    """Train logistic regression data-parallel on `gpus` simulated GPUs; see the module doc.

    `options` are the algorithm's own, as make_plan takes them (master=, chunks=, channels=,
    ring_order=, nodes=).

    The model's arithmetic runs in NumPy; the gradient syncs run on `xp`'s arrays (NumPy or CuPy).
    """
    gpus, epochs, samples, features, batch = check_training(gpus, epochs, samples, features, batch)
    plan = make_plan(algorithm, gpus, **(options or {}))
    check_memory(train_bytes(plan, samples, features, batch),
                 f"training on {samples:,} samples of {features:,} features with {gpus:,} GPUs",
                 instead="fewer samples, features or GPUs; `ringsim compare` gives a sync's counts "
                         "at any size without allocating")
    lr = check_work(gpus, epochs, samples, features, batch, plan.transfer_count(), lr)
    x, y = synthetic_data(samples, features, seed)
    n = features + 1
    layout = Layout(plan.segments, n)
    executor = make_executor(plan, layout, xp, np.float64)
    per_sync = measure(plan, layout).total
    replicas = np.zeros((gpus, n))
    reference = np.zeros(n)
    starts = list(range(0, samples, batch))
    run = TrainingRun(gpus, algorithm, sync, samples, features, batch, len(starts),
                      formula_per_sync=str(plan_closed_form(plan, n).total),
                      title=ALL_REDUCE.run_title(plan))
    syncs = 0
    for number in range(1, epochs + 1):
        with np.errstate(over="ignore", invalid="ignore"):  # divergence is refused below
            _epoch(starts, x, y, batch, gpus, sync, executor, xp, replicas, reference, lr)
        syncs += len(starts) if sync else 0
        finite(replicas, number, lr)
        finite(reference, number, lr)
        spread = float(np.max(np.abs(replicas - replicas[0])))
        gap = float(np.max(np.abs(replicas - reference)))
        with np.errstate(over="ignore", invalid="ignore"):
            run.epochs.append(Epoch(number, loss(replicas[0], x, y), spread, gap))
    return _finished(run, syncs, per_sync, replicas, reference)


def _epoch(starts, x, y, batch, gpus, sync, executor, xp, replicas, reference, lr) -> None:
    """One pass over the data: every batch's step on every replica and on the reference."""
    for start in starts:
        xb, yb = x[start:start + batch], y[start:start + batch]
        shards = np.array_split(np.arange(len(yb)), gpus)
        if sync:
            # Each GPU's share of the mean gradient: summing the shares gives the mean.
            local = np.stack([gradient(replicas[g], xb[s], yb[s], 1 / len(yb))
                              for g, s in enumerate(shards)])
            executor.load(xp.asarray(local))
            executor.run()
            replicas -= lr * to_numpy(executor.result())
        else:
            # Without sync a GPU only knows its own shard: it steps on that shard's mean.
            for g, s in enumerate(shards):
                replicas[g] -= lr * gradient(replicas[g], xb[s], yb[s], 1 / max(len(s), 1))
        reference -= lr * gradient(reference, xb, yb, 1 / len(yb))


def _finished(run: TrainingRun, syncs: int, per_sync: int, replicas, reference) -> TrainingRun:
    from dataclasses import replace
    return replace(run, syncs=syncs, elements_per_sync=per_sync, weights=replicas,
                   reference=reference)


def report_lines(run: TrainingRun) -> list[str]:
    """The run as text: settings, a row per epoch, and what the syncs moved."""
    from ..core.formula import format_number
    how = run.title if run.sync else "no sync"
    per_gpu = run.batch // run.gpus
    share = f"{per_gpu}" if run.batch % run.gpus == 0 else f"{per_gpu}–{per_gpu + 1}"
    lines = [
        f"Data-parallel logistic regression · {plural(run.gpus, 'GPU')} · {how}",
        f"{run.samples:,} samples, {plural(run.parameters, 'parameter')} (N), batch {run.batch:,} "
        f"({share} per GPU), {plural(run.steps_per_epoch, 'step')} per epoch",
        "epoch  loss     replicas differ by  differs from 1-GPU",
    ]
    for e in run.epochs:
        lines.append(f"{e.number:>5}  {e.loss:.5f}  {small_difference(e.replica_difference):>18}  "
                     f"{small_difference(e.reference_difference):>18}")
    if run.sync:
        lines.append(f"Syncs: {run.syncs:,} × {run.formula_per_sync} elements = "
                     f"{format_number(run.elements_moved)} elements moved")
    else:
        lines.append("Syncs: none, 0 elements moved — every replica learned only from its own shard")
    return lines


ROUNDING = 1e-12  # far above float64's rounding of these sums, far below any real gap


def small_difference(value: float) -> str:
    """0 exactly as '0'; a difference float64 rounding explains as '< 1e-12' (its digits
    depend on how the NumPy build orders a sum); larger ones in scientific notation."""
    if value == 0:
        return "0"
    return f"< {ROUNDING:.0e}" if value < ROUNDING else f"{value:.2e}"
