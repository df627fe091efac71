"""The lessons' precision and training words: a float32 all-reduce of random gradients against
the exact sum, and the training demo's run and report.

Nothing is modelled here: the sums are ringsim.allreduce's, the runs ringsim.training.train's.
"""

from __future__ import annotations

from ..algorithms import ALGORITHMS
from ..core.errors import RingsimError
from ..core.formula import format_number
from .budget import ledger_cost
from .cache import Cache
from .text import plural
from .words import SCENARIO_OPTIONS, SIMULATE_MAX_CELLS, Entry, check_training, small_number

PRECISION_OPTIONS = SCENARIO_OPTIONS
# The demo's N is its model's parameters, never an option
TRAIN_OPTIONS = tuple(o for o in SCENARIO_OPTIONS if o != "elements") + ("epochs", "sync")
PRECISION_SEED = 0  # one fixed draw of gradients, so the lesson's figures are reproducible

_PRECISION, _TRAININGS = Cache(64), Cache(16)


def _precision_run(a):
    """float32 random gradients summed by the scenario's algorithm, and their exact float64 sums."""
    s = a.scenario
    if s.gpus * s.elements > SIMULATE_MAX_CELLS:
        raise RingsimError(f"{a.expr.head!r} sums real arrays: at most {SIMULATE_MAX_CELLS:,} elements in all")
    if s not in _PRECISION:
        a.ctx.budget.spend(ledger_cost(int(a.closed().messages.value)) + s.gpus * s.elements // 10_000,
                           f"{a.expr.head!r} (an all-reduce of {s.gpus:,} arrays)")

    def make():
        import math

        import numpy as np

        from ..api import allreduce
        rng = np.random.default_rng(PRECISION_SEED)
        arrays = [rng.standard_normal(s.elements).astype(np.float32) for _ in range(s.gpus)]
        out = allreduce(arrays, s.algorithm, **dict(s.options)).outputs[0]
        # math.fsum: the correctly rounded sum of the float32 values, the reference every order misses.
        exact = np.array([math.fsum(float(x[i]) for x in arrays) for i in range(s.elements)])
        nearest = exact.astype(np.float32)
        return (float(np.abs(out.astype(np.float64) - exact).max(initial=0.0)),
                int(np.count_nonzero(out != nearest)))
    return _PRECISION.get_or(s, make)


def _precision_why(a, value: str) -> str:
    s = a.scenario
    return (f"ringsim.allreduce summed {plural(s.gpus, 'GPU')}' float32 random gradients (seed {PRECISION_SEED}, "
            f"{plural(s.elements, 'element')}) with {ALGORITHMS[s.algorithm].title}, in its own order of "
            f"additions, and compared with the exact sum (math.fsum in float64): {value}.")


def _train_run(a):
    from .budget import training_cost
    s = a.scenario
    epochs = a.options.get("epochs", 5)
    check_training(epochs, s.gpus)
    sync = a.options.get("sync", True)
    key = (s.gpus, s.algorithm, epochs, sync, s.options)
    if key not in _TRAININGS:
        a.ctx.budget.spend(training_cost(epochs, 16, s.gpus, a.steps()),
                           f"{a.expr.head!r} (training on {s.gpus:,} GPUs for {epochs} epochs)")

    def make():
        from ..training.train import train
        return train(s.gpus, s.algorithm, epochs, sync=sync, options=dict(s.options))
    return _TRAININGS.get_or(key, make)


def _train_block(a) -> str:
    from ..training.train import report_lines
    return "\n".join(report_lines(_train_run(a)))


def _train_why(a, value: str) -> str:
    run = _train_run(a)
    if a.expr.name == "train.per_sync":
        return (f"One sync is one all-reduce of the model's N = {run.parameters} parameters on "
                f"{plural(run.gpus, 'GPU')}: {run.formula_per_sync}.")
    if a.expr.name == "train.elements":
        return (f"{run.syncs:,} syncs (one per batch) × {run.formula_per_sync} elements per sync "
                f"= {value}.")
    return f"The training run ({plural(run.gpus, 'GPU')}, {len(run.epochs)} epochs) reports {value}."


def entries() -> dict:
    """The precision and training words, as vocabulary Entries."""
    return {
        "train": Entry(_train_block, TRAIN_OPTIONS, "the training demo's report"),
        "precision.error": Entry(lambda a: small_number(_precision_run(a)[0]), PRECISION_OPTIONS,
                                 "largest error of a float32 all-reduce against the exact sum", _precision_why),
        "precision.off": Entry(lambda a: format_number(_precision_run(a)[1]), PRECISION_OPTIONS,
                               "elements whose float32 sum is not the exact sum correctly rounded", _precision_why),
        "train.replica_difference": Entry(lambda a: small_number(_train_run(a).epochs[-1].replica_difference),
                                          TRAIN_OPTIONS, "largest weight difference between replicas at the end",
                                          _train_why),
        "train.reference_difference": Entry(lambda a: small_number(_train_run(a).epochs[-1].reference_difference),
                                            TRAIN_OPTIONS, "largest difference from one-GPU training at the end",
                                            _train_why),
        "train.loss": Entry(lambda a: f"{_train_run(a).epochs[-1].loss:.5f}", TRAIN_OPTIONS, "final loss", _train_why),
        "train.elements": Entry(lambda a: format_number(_train_run(a).elements_moved), TRAIN_OPTIONS,
                                "elements all the syncs moved", _train_why),
        "train.per_sync": Entry(lambda a: format_number(_train_run(a).elements_per_sync), TRAIN_OPTIONS,
                                "elements one sync (one all-reduce) moves", _train_why),
        "train.syncs": Entry(lambda a: format_number(_train_run(a).syncs), TRAIN_OPTIONS, "number of syncs",
                             _train_why),
        "train.parameters": Entry(lambda a: format_number(_train_run(a).parameters), TRAIN_OPTIONS,
                                  "model size N", _train_why),
    }
