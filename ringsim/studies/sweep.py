"""Sweep message sizes: every algorithm's modelled time and busbw, the best per size, crossovers.

Like nccl-tests' all_reduce_perf -b 1K -e 8G -f 2, but from closed forms on a modelled
topology. A crossover is where the fastest algorithm changes between two swept sizes; its
exact size (to the element) is found by bisection over the closed forms, as NCCL's tuner
switches between tree and ring where their modelled times cross (src/graph/tuning.cc).

An algorithm that NCCL lays out otherwise on the machine is priced twice: as ringsim lays it
out (its registry column) and as NCCL does (compare's extra row, its spec's nccl_layout). On
several nodes that is the ring, one ring per NIC ('ring rails:P'), which may be the fastest.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from ..core.arguments import argument
from ..core.checks import check_count, check_gpus, echo
from ..algorithms import ALGORITHMS, given_title, with_options
from ..algorithms.timing import estimate, machine_options, nccl_layouts, timed_algorithms
from ..cost.model import CostModel, Estimate, algbw_of, busbw_of, given_model
from ..cost.nccl import NcclChoice, nccl_choices
from ..cost.nccl_tuner import carried_release, nccl_type
from ..core.errors import RingsimError
from ..core.units import format_bytes, format_seconds, parse_size
from .compare import nccl_layout_estimate
from .nccltests_counts import nccl_tests_size

MAX_SIZES = 200
# Ring positions (rings x GPUs, a ring per GPU of a node) an NCCL layout is priced over, once
# per size and per bisection probe: above this the sweep leaves that column out, to stay
# within about 2 s (16,384 GPUs in nodes of 8: 1.8 s measured on one core); compare prices it
# at one size up to its own limit.
RAILS_SWEEP_LIMIT = 131_072
# Across nodes a column whose time lays out its steps GPU by GPU (its spec's seconds_cost: the
# bidirectional ring, about 40 ns per GPU and size on one core, and the hierarchical ring where
# its groups are not the machine's nodes) grows as sizes × GPUs: a sweep whose columns would
# take longer than this before any crossover is bisected is refused first.
MAX_PRICING_SECONDS = 2.0


def layout_column(name: str, options: dict) -> str:
    """The column of an algorithm laid out as NCCL does: its name, then its layout's values
    ('ring rails:8' for the ring with ring order rails:8)."""
    return " ".join([name, *(str(value) for value in options.values())])


@dataclass(frozen=True)
class Point:
    """One size: each column's estimate, and the fastest (column order breaks ties)."""

    nbytes: int
    elements: int
    estimates: dict
    best: str
    requested: int | None = None  # the size asked for, where nccl-tests would round it down

    def algbw(self, name: str) -> float | None:
        """nccl-tests' algbw of one algorithm at this size."""
        return algbw_of(self.nbytes, self.estimates[name].seconds)

    def busbw(self, name: str, gpus: int) -> float | None:
        """nccl-tests' all-reduce busbw of one algorithm at this size."""
        return busbw_of(self.algbw(name), gpus)


@dataclass(frozen=True)
class Crossover:
    """Between two swept sizes the fastest changes: `before` is fastest up to `nbytes` (excluded)."""

    before: str
    after: str
    nbytes: int


@dataclass(frozen=True)
class Sweep:
    """The swept points and the crossovers between them."""

    gpus: int
    model: CostModel
    algorithms: tuple[str, ...]
    points: tuple[Point, ...]
    crossovers: tuple[Crossover, ...]
    # NCCL's model's pick at each point (none: see nccl_note; None at an empty call, which
    # NCCL discards before choosing anything: src/enqueue.cc, taskAppend).
    nccl: tuple[NcclChoice | None, ...] = ()
    nccl_note: str = ""  # why NCCL's model has no answer here, when it has none
    # Each algorithm also priced as NCCL lays it out on the machine, with that layout's options
    # (('ring', {'ring_order': 'rails:8'}): one ring per NIC, compare's extra row), its column
    # ('ring rails:8') after the algorithms; () where none is.
    layouts: tuple[tuple[str, dict], ...] = ()
    rails_note: str = ""  # why a layout has no column where NCCL's layout differs
    nccl_release: str | None = None  # the release whose tables priced `nccl` (None: the model's)

    @property
    def layout_columns(self) -> dict:
        """{column: (algorithm, options)} for each layout: {'ring rails:8': ('ring', {...})}."""
        return {layout_column(name, options): (name, options) for name, options in self.layouts}

    @property
    def columns(self) -> tuple[str, ...]:
        """Every priced column: the algorithms, then each NCCL layout's ('ring rails:8')."""
        return self.algorithms + tuple(self.layout_columns)

    def algorithm(self, column: str) -> str:
        """The registered algorithm a column runs: 'ring' for 'ring rails:8'."""
        return self.layout_columns.get(column, (column,))[0]

    def title(self, column: str) -> str:
        """A column's title: the algorithm's, with its options for an NCCL layout."""
        laid = self.layout_columns.get(column)
        if laid is None:
            return ALGORITHMS[column].title
        name, options = laid
        return given_title(name, self.gpus, options)  # as compare labels its row

    @property
    def rounded(self) -> list[tuple[int, int]]:
        """(asked, swept) for each size that was rounded down to whole elements."""
        return [(p.requested, p.nbytes) for p in self.points if p.requested is not None]

    def nccl_busbw(self, index: int) -> float | None:
        """nccl-tests' all-reduce busbw of NCCL's model's pick at point `index`."""
        point, choice = self.points[index], self.nccl[index]
        return None if choice is None else busbw_of(algbw_of(point.nbytes, choice.seconds), self.gpus)

    def __repr__(self) -> str:
        """One line, not every estimate: '<Sweep of 8 GPUs on flat · 11 sizes, 1KiB to 1GiB · …>'."""
        from ..core.naming import plural
        from ..core.units import format_bytes
        sizes = (f", {format_bytes(self.points[0].nbytes)} to {format_bytes(self.points[-1].nbytes)}"
                 if self.points else "")
        return (f"<Sweep of {plural(self.gpus, 'GPU')} on {self.model.topology.name} · "
                f"{plural(len(self.points), 'size')}{sizes} · "
                f"{plural(len(self.algorithms), 'algorithm')} · "
                f"{plural(len(self.crossovers), 'crossover')}>")

    def options(self, name: str) -> dict:
        """The options column `name` was priced with: its defaults, the machine's nodes, and
        NCCL's layout's options for a layout's column (the rails ring's order)."""
        from ..algorithms import default_options
        algorithm = self.algorithm(name)
        layout = self.layout_columns.get(name, (name, {}))[1]
        return {**default_options(algorithm), **machine_options(algorithm, self.gpus, self.model),
                **layout}

    def label(self, name: str) -> str:
        """The column's title, with its chunk count where it takes one: 'Binary tree (C=1)'.

        A pipelined schedule priced in one chunk is at its slowest; the label says so, where
        a chart would otherwise rank it against schedules priced at their best.
        """
        chunks = self.options(name).get("chunks")
        return with_options(self.title(name), "" if chunks is None else f"C={chunks:,}")

    def _repr_svg_(self) -> str | None:
        """Jupyter shows the sweep as the log-log chart of each algorithm's modelled time."""
        from ..core.units import format_bytes, format_seconds
        from .svgplot import loglog_svg
        series = {self.label(n): [(float(p.nbytes), float(p.estimates[n].seconds))
                                  for p in self.points] for n in self.columns}
        ticks = [(float(p.nbytes), format_bytes(p.nbytes))
                 for p in self.points[::max(1, -(-len(self.points) // 6))]]
        try:
            return loglog_svg(f"All-reduce modelled time, {self.gpus:,} GPUs, "
                              f"{self.model.topology.name}", "bytes per GPU", "time", series,
                              ticks, format_seconds)
        except ValueError:  # nothing positive to draw on log axes
            return None


def parse_sizes(text: str) -> list[int]:
    """'1KiB..8GiB' (every doubling), 'A..B:xF' (factor F), 'A..B:+S' (step S), or 'A,B,C'."""
    named = argument("sizes")  # --sizes on the command line
    if not isinstance(text, str) or not text.strip():
        raise RingsimError(f"{named}: give a range such as 1KiB..8GiB or a list such as 1KiB,1MiB")
    match = re.fullmatch(r"\s*([^.,:]+)\.\.([^.,:]+?)(?::(?:x(\S+)|\+(\S+)))?\s*", text)
    if not match:
        sizes = sorted({parse_size(part, named) for part in text.split(",")})
    elif match.group(4) is not None:
        sizes = _stepped(text, *match.group(1, 2, 4))
    else:
        sizes = _multiplied(text, *match.group(1, 2, 3))
    if len(sizes) > MAX_SIZES:
        raise RingsimError(f"{named}: at most {MAX_SIZES} sizes, got more")
    return sizes


def _ends(text: str, low_text: str, high_text: str) -> tuple[int, int]:
    """A range's two ends in bytes, refused unless it goes up from at least 1 byte."""
    named = argument("sizes")
    low, high = parse_size(low_text, named), parse_size(high_text, named)
    if low < 1 or high < low:
        raise RingsimError(f"{named}: the range {echo(text)} must go up from at least 1 byte")
    return low, high


def _multiplied(text: str, low_text: str, high_text: str, factor_text: str | None) -> list[int]:
    """A..B:xF as nccl-tests' -b A -e B -f F: A, A*F, A*F*F, ... up to B (F = 2 if not given)."""
    written = factor_text or "2"
    if not (written.isascii() and written.isdigit()) or len(written) > 6 or int(written) < 2:
        raise RingsimError(f"{argument('sizes')}: the factor after :x must be a whole number of at least 2 "
                           f"(nccl-tests' -f), got {written[:20]!r}")
    factor = int(written)
    low, high = _ends(text, low_text, high_text)
    sizes = [low]
    while sizes[-1] * factor <= high and len(sizes) <= MAX_SIZES:
        sizes.append(sizes[-1] * factor)
    return sizes


def _stepped(text: str, low_text: str, high_text: str, step_text: str) -> list[int]:
    """A..B:+S as nccl-tests' -b A -e B -i S: A, A+S, A+2S, ... while at most B.

    nccl-tests' loop (TimeTest in src/common.cu) is `for (size = minbytes; size <= maxbytes;
    size += stepbytes)`: B is a row only if the steps land on it, and each size is rounded to
    whole elements (and shares) only when its row is run, not before the next step is added.
    The rows are counted before any is made, so a 1-byte step over gibibytes is refused at once.
    """
    named = argument("sizes")
    step = parse_size(step_text, f"{named}: the step after :+", example="1MiB or 4096")
    if step < 1:
        # nccl-tests would add 0 forever: its loop never ends.
        raise RingsimError(f"{named}: the step after :+ must be at least 1 byte (nccl-tests' -i), "
                           f"got {echo(step_text)}")
    low, high = _ends(text, low_text, high_text)
    rows = (high - low) // step + 1
    if rows > MAX_SIZES:
        raise RingsimError(f"{named}: at most {MAX_SIZES} sizes, got {rows:,} "
                           f"(steps of {format_bytes(step)} from {format_bytes(low)} "
                           f"to {format_bytes(high)})")
    return [low + index * step for index in range(rows)]


def _estimate(name: str, gpus: int, elements: int, model: CostModel, laid: dict) -> Estimate:
    """One column's time: an algorithm on the machine's nodes, or, for a column of `laid`
    ({column: algorithm}), that algorithm as compare's row of NCCL's layout prices it."""
    if name in laid:
        return nccl_layout_estimate(laid[name], gpus, elements, model)
    return estimate(name, gpus, elements, model, **machine_options(name, gpus, model))


def _point(gpus: int, asked: int, model: CostModel, names: tuple[str, ...], laid: dict) -> Point:
    """One size, rounded down to whole elements as nccl-tests' all_reduce_perf does."""
    elements, nbytes = nccl_tests_size(asked, model.itemsize, "all-reduce", gpus)
    estimates = {name: _estimate(name, gpus, elements, model, laid) for name in names}
    best = min(names, key=lambda name: estimates[name].seconds)
    return Point(nbytes, elements, estimates, best, None if nbytes == asked else asked)


def _best(gpus: int, elements: int, model: CostModel, names: tuple[str, ...], laid: dict) -> str:
    times = {name: _estimate(name, gpus, elements, model, laid).seconds for name in names}
    return min(names, key=times.__getitem__)


def _check_sizes(sizes: object) -> list[int]:
    """Sizes in bytes as whole numbers: 2.5 or True would be swept as 0 B without a word."""
    if isinstance(sizes, (str, bytes)) or not hasattr(sizes, "__iter__"):
        raise RingsimError(f"sizes must be a list of sizes in bytes, got {echo(sizes)}")
    return [check_count(size, "a size in bytes", minimum=0) for size in sizes]


def _check_names(algorithms: object) -> tuple:
    """The algorithms asked for, as a tuple (empty for all): a name given alone would be read
    letter by letter, and one named twice would be priced and drawn twice."""
    if algorithms is None:
        return ()
    if isinstance(algorithms, (str, bytes)) or not hasattr(algorithms, "__iter__"):
        raise RingsimError(f"algorithms must be a list of algorithm names, got {echo(algorithms)}")
    names = tuple(algorithms)
    twice = next((name for index, name in enumerate(names) if name in names[:index]), None)
    if twice is not None:
        raise RingsimError(f"{echo(twice)} is named twice in algorithms; name each once")
    return names


def sweep(gpus: int, sizes: list[int], model: CostModel | None = None,
          algorithms: list[str] | None = None, rails: bool = True,
          nccl: str | None = None) -> Sweep:
    """Time every algorithm that has a closed-form time at each size (bytes per GPU, rounded
    down to whole elements as nccl-tests does: Point.requested keeps the size asked for); with
    every algorithm, each one NCCL lays out otherwise on the machine as NCCL does too (the
    ring on several nodes, one ring per NIC: compare's extra row; rails=False leaves them
    out); NCCL's model with the tuning tables of release `nccl` (None: the model's own)."""
    model = given_model(model)
    gpus = check_gpus(gpus)
    sizes = _check_sizes(sizes)
    carried_release(nccl)  # a release ringsim lacks is refused here, not left as the note
    model.topology.check_gpus(gpus)
    algorithm_names = _check_names(algorithms) or tuple(timed_algorithms(model, gpus))
    # The algorithms as NCCL runs them on this machine: compare's extra rows, priced by the
    # same code.
    layouts = nccl_layouts(gpus, model) if rails and not algorithms else []
    rails_note = ""
    per_node = model.topology.gpus_per_node
    if layouts and per_node * gpus > RAILS_SWEEP_LIMIT:
        rails_note = "; ".join(
            f"{layout_column(name, options)} (the ring as NCCL's channels, one ring per NIC) is "
            f"left out above {RAILS_SWEEP_LIMIT // per_node:,} GPUs, where pricing it at every "
            f"size and probe takes too long; compare --time prices it at one size"
            for name, options in layouts)
        layouts = []
    laid = {layout_column(name, options): name for name, options in layouts}
    names = algorithm_names + tuple(laid)
    _check_work(gpus, len(sizes), model, names)
    points = tuple(_point(gpus, n, model, names, laid) for n in sizes)
    crossovers = []
    for left, right in zip(points, points[1:]):
        if left.estimates[right.best].seconds <= left.estimates[left.best].seconds:
            continue  # the right end's fastest ties for fastest at the left end too: no change
        # Bisect on elements: the first size at which left.best stops being the fastest.
        # Every time grows with N (no segment shrinks when N grows), so an algorithm slower
        # at the left end than the fastest at the right end is never fastest in between:
        # the bisection compares only the others (the same answer, fewer estimates).
        fastest_right = right.estimates[right.best].seconds
        rivals = tuple(n for n in names if left.estimates[n].seconds <= fastest_right)
        low, high = left.elements, right.elements
        while high - low > 1:
            middle = (low + high) // 2
            if _best(gpus, middle, model, rivals, laid) == left.best:
                low = middle
            else:
                high = middle
        after = _best(gpus, high, model, rivals, laid)
        crossovers.append(Crossover(left.best, after, high * model.itemsize))
    picks, note = _nccl(gpus, [p.nbytes for p in points], model, nccl)
    return Sweep(gpus, model, algorithm_names, points, tuple(crossovers), picks, note,
                 tuple(layouts), rails_note, nccl)


def _check_work(gpus: int, count: int, model: CostModel, names: tuple[str, ...]) -> None:
    """Refuse, in one line, a sweep whose columns laid out GPU by GPU would take too long
    (MAX_PRICING_SECONDS)."""
    costs = {n: ALGORITHMS[n].seconds_cost(gpus, model, **machine_options(n, gpus, model))
             for n in names if n in ALGORITHMS}
    per_size = sum(costs.values())
    if count * per_size <= MAX_PRICING_SECONDS:
        return
    slow = ALGORITHMS[max(costs, key=costs.get)]
    raise RingsimError(
        f"sweep would price the {slow.title[0].lower() + slow.title[1:]} step by step at "
        f"{count:,} sizes × {gpus:,} GPUs (about {format_seconds(count * per_size)} before any "
        f"crossover is bisected); the limit is {format_seconds(MAX_PRICING_SECONDS)}: use at "
        f"most {max(1, math.floor(MAX_PRICING_SECONDS / per_size + 1e-9)):,} sizes at {gpus:,} GPUs, or "
        "fewer GPUs")


def _nccl(gpus: int, sizes: list[int], model: CostModel,
          nccl: str | None) -> tuple[tuple, str]:
    """NCCL's model at every size (tuned once), or why it has no answer (one GPU, say)."""
    if gpus < 2:
        return (), "one GPU: NCCL sends nothing"
    try:
        return tuple(nccl_choices(model.topology, gpus, list(sizes), nccl=nccl,
                                  dtype=nccl_type(model.dtype))), ""
    except RingsimError as error:
        return (), str(error)

