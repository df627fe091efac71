"""What every all-reduce algorithm provides, in one frozen record the registry lists: its
names, its options and the functions that build, count and time its plan.

Every function takes the algorithm's checked options as keywords (as its `Options` fields
name them): check turns the options users give into those, written turns them back.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Callable, NamedTuple


class Shape(Enum):
    """How an algorithm's links are drawn: the TUI's shape pane and the figures read it."""

    RING = "ring"              # GPUs on a circle, each sending to the next
    TREE = "tree"              # parents above their children
    PAIRS = "pairs"            # GPUs exchanging in pairs, step by step
    STAR = "star"              # every GPU to one GPU and back
    ALL_TO_ALL = "all-to-all"  # every GPU to every other
    SWITCH = "switch"          # GPUs around a switch that reduces and multicasts (the plan's switches)

    def __str__(self) -> str:
        return self.value


def accept(gpus: int, **given) -> dict:
    """Options that need no check beyond their names: taken as given."""
    return given


def unchanged(**options) -> dict:
    """Options that users write just as the algorithm takes them."""
    return options


def one_lane(**options) -> int:
    """One ring or tree carries every segment."""
    return 1


def two_lanes(**options) -> int:
    """Two rings or trees, each on half the segments."""
    return 2


class Implementation(NamedTuple):
    """A library that runs the same schedule, and the source file (in its repository) that does."""

    library: str  # as people name it: "MPICH", "Open MPI"
    source: str  # the file in its repository, e.g. src/mpi/coll/allreduce/allreduce_intra_ring.c
    function: str  # the function in that file that runs it


def as_ringsim_lays_it_out(gpus: int, topology, **given) -> dict | None:
    """NCCL lays the schedule out as ringsim does by default: no other layout to price."""
    return None


def no_hub(**options) -> None:
    """No GPU that every transfer passes through."""
    return None


def anywhere(topology, gpus: int, dtype: str | None = None) -> str:
    """Runs on every topology, with every element type: no reason against."""
    return ""


@dataclass(frozen=True)
class AlgorithmSpec:
    """One all-reduce algorithm: its names, options, plan, counts and time."""

    name: str  # as users choose it: --algorithm NAME
    title: str  # as tables and titles show it
    summary: str  # one line: what it does and what it moves
    Options: type  # a frozen dataclass, every field defaulted: the options its functions take
    plan: Callable  # (G, **options) -> Plan
    closed_form: Callable  # (G, N, **options) -> ClosedForm, exact, without building the plan
    transfers: Callable  # (G, **options) -> how many transfers the plan holds
    seconds: Callable  # (G, N, model, **options) -> the α-β-γ Estimate
    busiest_gpu: Callable  # (G, N, **options) -> the 0-based GPU the ledger names busiest
    shape: Shape  # how the TUI draws its links
    check: Callable[..., dict] = accept  # (G, **given) -> checked options, or a RingsimError
    written: Callable[..., dict] = unchanged  # (**options) -> the options as users write them
    label: Callable[..., str] | None = None  # (**options) -> a title's words; None: non-defaults
    lanes: Callable[..., int] = one_lane  # (**options) -> rings or trees sharing the segments
    nccl_name: str | None = None  # NCCL's algorithm with the same schedule (NCCL_ALGO), if any
    mpi_implementations: tuple[Implementation, ...] = ()  # MPI libraries with this schedule
    # (topology, G, dtype=None) -> why the hardware cannot run it there, '' when it can (a
    # switch that adds, and adds that element type)
    unavailable: Callable[..., str] = anywhere
    # (**options) -> the title of a plan whose options replace the shape the title names (trees
    # given from a log are not the chain and two trees), None to keep `title`
    retitle: Callable[..., str | None] = lambda **options: None
    # (G, model, **options) -> about how long one `seconds` call takes where it lays out steps
    # GPU by GPU across nodes (work that grows with G), 0 where it does not: callers pricing
    # many sizes at huge G budget for it before they start
    seconds_cost: Callable[..., float] = lambda gpus, model, **options: 0.0
    # (G, topology, **given) -> the options, as users write them, that lay the schedule out as
    # NCCL does on that machine, where that differs from its default layout and none of the
    # given options (its own, as users give them) lays it out already; None elsewhere.
    # compare, sweep, overlap, zero and the lessons price that layout beside the default one.
    nccl_layout: Callable[..., dict | None] = as_ringsim_lays_it_out
    # The algorithm whose busiest GPU compare sets this one's beside, in a closing sentence
    # ('The master sends 1.5× what the ring's busiest GPU sends'); None for no sentence
    contrast: str | None = None
    # The options users write as one of the G GPUs, 1..G (the master GPU): such a value still
    # holds on another G while that GPU exists there
    gpu_options: tuple[str, ...] = ()
    # (**options) -> the 0-based GPU that every transfer goes into or out of (the master),
    # None where there is none: the TUI draws it apart
    hub: Callable[..., int | None] = no_hub

    def __repr__(self) -> str:
        """One line, not its functions: '<AlgorithmSpec ring: Ring all-reduce>'."""
        return f"<AlgorithmSpec {self.name}: {self.title}>"

    def holds_on(self, gpus: int, option: str, value: object) -> bool:
        """Whether an option's value, as users write it, still holds on G GPUs: a GPU that is
        one of them does; the other options are written for one G (ring orders, node counts)."""
        return option in self.gpu_options and 1 <= value <= gpus

    def title_for(self, **options) -> str:
        """The title of a plan made with these options: `title`, unless `retitle` says otherwise."""
        return self.retitle(**options) or self.title
