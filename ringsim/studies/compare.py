"""Every algorithm side by side, from closed forms only: traffic, and time when a model is given.

No plan is built and no gradient allocated: each row comes from the algorithm module's
closed forms, exact Python integers and Fractions computed in O(G) at most, so any G up to
1,000,000 answers at once. Time comes from the module's `seconds` hook (ringsim.algorithms.timing).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..algorithms import ALGORITHMS, closed_form
from ..algorithms.timing import estimate, machine_options, timed_algorithms
from ..core.checks import check_elements, check_gpus
from ..cost.model import CostModel, Estimate, algbw, busbw
from ..core.formula import ClosedForm


@dataclass(frozen=True)
class Timing:
    """An algorithm's modelled time with nccl-tests' bandwidths and its rank (1 = fastest)."""

    estimate: Estimate
    algbw: float | None
    busbw: float | None
    rank: int


@dataclass(frozen=True)
class Row:
    """One algorithm's closed forms (exact), its busiest GPU, and its time if a model was given."""

    algorithm: str
    title: str
    total: int
    busiest_gpu: int
    busiest_sent: int
    busiest_received: int
    steps: int
    messages: int
    formulas: ClosedForm
    timing: Timing | None = None


def _whole(formula):
    """The exact value: an int when whole (always, once closed forms are exact), else a Fraction."""
    value = formula.value
    return value.numerator if value.denominator == 1 else value


def compare(gpus: int, elements: int, model: CostModel | None = None) -> list[Row]:
    """A row per registered algorithm (default options; on a topology with nodes, the
    machine's nodes) for G GPUs of N elements each."""
    gpus, elements = check_gpus(gpus), check_elements(elements)
    rows = []
    for name, spec in ALGORITHMS.items():
        options = machine_options(name, gpus, model)
        cf = closed_form(name, gpus, elements, **options)
        rows.append(Row(name, spec.title, _whole(cf.total), spec.busiest_gpu(gpus, elements),
                        _whole(cf.busiest_sent), _whole(cf.busiest_received), _whole(cf.steps),
                        _whole(cf.messages), cf))
    return rows if model is None else _timed(rows, gpus, elements, model)


def _timed(rows: list[Row], gpus: int, elements: int, model: CostModel) -> list[Row]:
    """Rows with their times; an algorithm the hardware cannot run (timed_algorithms) keeps timing None."""
    nbytes = elements * model.itemsize
    runs = set(timed_algorithms(model, gpus))
    estimates = {row.algorithm: estimate(row.algorithm, gpus, elements, model,
                                         **machine_options(row.algorithm, gpus, model))
                 for row in rows if row.algorithm in runs}
    order = sorted(estimates, key=lambda name: estimates[name].seconds)
    out = []
    for row in rows:
        if row.algorithm not in runs:
            out.append(row)
            continue
        est = estimates[row.algorithm]
        alg = algbw(nbytes, est.seconds)
        timing = Timing(est, alg, busbw(alg, gpus), order.index(row.algorithm) + 1)
        out.append(Row(**{**row.__dict__, "timing": timing}))
    return out


RAILS_LIMIT = 65_536  # K·G ring positions priced port by port: keep compare instant


def rails_ring(gpus: int, elements: int, model: CostModel) -> tuple[int, Estimate] | None:
    """The ring laid out as NCCL's channels on a rail-optimised cluster (one ring per NIC).

    On two levels the default ring crosses each node boundary through one GPU's NIC while the
    others idle; NCCL instead runs one ring per NIC (`--ring-order rails:P`). Returns (P, its
    estimate) where that applies (several nodes of P > 1 GPUs, P dividing G, G ≤ 65,536).
    """
    per_node = model.topology.gpus_per_node
    if not per_node or per_node == 1 or gpus % per_node or gpus // per_node < 2 \
            or gpus > RAILS_LIMIT:
        return None
    from ..algorithms import ring
    return per_node, ring.seconds(gpus, elements, model, ring_order=f"rails:{per_node}")

