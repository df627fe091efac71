"""Every algorithm side by side, from closed forms only: traffic, and time when a model is given.

No plan is built and no gradient allocated: each row comes from the algorithm module's
closed forms, exact Python integers and Fractions computed in O(G) at most, so any G up to
1,000,000 answers at once. Time comes from the module's `seconds` hook (ringsim.algorithms.timing).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from ..algorithms import ALGORITHMS, closed_form, given_title, option_names
from ..algorithms.timing import (estimate, machine_options, nccl_layout, nccl_layouts,
                                 timed_algorithms)
from ..core.checks import check_elements, check_gpus
from ..cost.model import CostModel, Estimate, algbw_of, busbw_of
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
    label: str  # the title with the options given, as every title names them: 'Ring all-reduce (2 channels)'
    total: int
    busiest_gpu: int
    busiest_sent: int
    busiest_received: int
    steps: int
    messages: int
    formulas: ClosedForm
    timing: Timing | None = None
    options: tuple[tuple[str, object], ...] = ()  # the options given, as users write them
    as_nccl: bool = False  # laid out as NCCL lays out this schedule (the spec's nccl_layout)


@dataclass(frozen=True)
class Contrast:
    """One row's busiest GPU beside another's, as an algorithm's spec asks (`contrast`)."""

    row: Row
    other: Row
    ratio: Fraction  # what row's busiest GPU sends ÷ what other's sends


def contrasts(rows: list[Row]) -> list[Contrast]:
    """Each contrast the rows' algorithms declare, where both are rows and the other's busiest
    GPU sends something. An algorithm's first row stands for it: the rows after it lay it out
    as NCCL would (the ring, one per NIC), which is not the schedule the contrast is about."""
    named: dict[str, Row] = {}
    for r in rows:
        named.setdefault(r.algorithm, r)
    found = []
    for name, row in named.items():
        other = named.get(ALGORITHMS[name].contrast)
        if other is not None and other.busiest_sent:
            found.append(Contrast(row, other,
                                  Fraction(row.busiest_sent) / Fraction(other.busiest_sent)))
    return found


def _whole(formula):
    """The exact value: an int when whole (always, once closed forms are exact), else a Fraction."""
    value = formula.value
    return value.numerator if value.denominator == 1 else value


def compare(gpus: int, elements: int, model: CostModel | None = None,
            options: dict | None = None) -> list[Row]:
    """A row per registered algorithm for G GPUs of N elements each; each option given (as
    users write them: chunks=4, ring_order="rails:8") goes to the algorithms that take it.
    With a model, one more row for each algorithm NCCL lays out otherwise on its machine (the
    ring on several nodes: one ring per NIC), where no option given lays it out already."""
    gpus, elements = check_gpus(gpus), check_elements(elements)
    given = {k: v for k, v in (options or {}).items() if v is not None}
    cases = [(name, tuple((k, v) for k, v in given.items() if k in option_names(name)))
             for name in ALGORITHMS]
    layouts = [(name, tuple(laid.items())) for name, laid in nccl_layouts(gpus, model, given)]
    rows = [_row(name, gpus, elements, opts, model) for name, opts in cases]
    rows += [Row(**{**_row(name, gpus, elements, opts, model).__dict__, "as_nccl": True})
             for name, opts in layouts]  # after the registry's rows
    return rows if model is None else _timed(rows, gpus, elements, model)


def _options(name: str, gpus: int, model: CostModel | None, given: tuple) -> dict:
    """The options a row runs with: the machine's nodes (on a topology with nodes), then
    those given."""
    return {**machine_options(name, gpus, model), **dict(given)}


def _row(name: str, gpus: int, elements: int, options: tuple, model: CostModel | None) -> Row:
    spec = ALGORITHMS[name]
    used = _options(name, gpus, model, options)
    cf = closed_form(name, gpus, elements, **used)
    return Row(name, spec.title, given_title(name, gpus, dict(options)), _whole(cf.total), spec.busiest_gpu(gpus, elements, **_checked(
        name, gpus, used)), _whole(cf.busiest_sent), _whole(cf.busiest_received),
        _whole(cf.steps), _whole(cf.messages), cf, options=options)


def _checked(name: str, gpus: int, options: dict) -> dict:
    from ..algorithms import check_options
    return check_options(name, gpus, options)


def _timed(rows: list[Row], gpus: int, elements: int, model: CostModel) -> list[Row]:
    """Rows with their times; an algorithm the hardware cannot run (timed_algorithms) keeps timing None."""
    nbytes = elements * model.itemsize
    runs = set(timed_algorithms(model, gpus))
    timed = [i for i, row in enumerate(rows) if row.algorithm in runs]
    estimates = {i: estimate(rows[i].algorithm, gpus, elements, model,
                             **_options(rows[i].algorithm, gpus, model, rows[i].options))
                 for i in timed}
    order = sorted(timed, key=lambda i: estimates[i].seconds)
    out = []
    for i, row in enumerate(rows):
        if i not in estimates:
            out.append(row)
            continue
        alg = algbw_of(nbytes, estimates[i].seconds)
        timing = Timing(estimates[i], alg, busbw_of(alg, gpus), order.index(i) + 1)
        out.append(Row(**{**row.__dict__, "timing": timing}))
    return out


def nccl_layout_estimate(name: str, gpus: int, elements: int,
                         model: CostModel) -> Estimate | None:
    """Algorithm `name`'s time laid out as NCCL lays it out on the model's machine, as
    compare's extra row prices it (a rail-optimised cluster's ring: one ring per NIC, where
    the default ring crosses each node boundary through one GPU's NIC while the others idle);
    None where NCCL's layout is the default one (see algorithms.timing.nccl_layout)."""
    laid = nccl_layout(name, gpus, model)
    if laid is None:
        return None
    options = _options(name, gpus, model, tuple(laid.items()))
    return estimate(name, gpus, elements, model, **options)
