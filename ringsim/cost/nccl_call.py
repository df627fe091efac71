"""One call as NCCL's choice takes it: the topology and its GPUs checked, NCCL_ALGO and
NCCL_PROTO read as NCCL parses them, the collective's NCCL function, and the (algorithm,
protocol) pairs the choice weighs (enqueue.cc and src/graph/tuning.cc).

nccl.py chooses among the pairs and prices the call; nccl_notes.py says in words why a pair
is missing or what the machine does to the model.
"""

from __future__ import annotations

import numbers

from ..core.checks import MAX_GPUS, echo
from ..core.arguments import argument
from ..core.errors import RingsimError
from .nccl_channels import Tuned
from .nccl_graph import constants
from .nccl_lists import per_function
from .nccl_tuner import (FUNCTIONS, RING_ONLY, algorithm_on, allowed, bus_bandwidth,
                         carried_release, enabled_algorithms, names, protocol_on, ring_fallback,
                         ring_restored, runs)
from .topology import load
from .topology_model import Topology

RING = "Ring"


def listed_names(given, kind: str, flag: str, func: str = "AllReduce",
                 nccl: str | None = None) -> set[str]:
    """NCCL_ALGO / NCCL_PROTO for one of NCCL's functions, as parseList reads them (a name or
    comma list, any case, '^' to exclude, per-function entries from 2.24.3: nccl_lists.py);
    every name where the setting is None or leaves the function alone."""
    valid = names(kind)
    if given is None:
        return set(valid)
    chosen = per_function(given, kind, flag, nccl)[func]
    return set(valid) if chosen is None else chosen


def sets_protocols(proto, func: str = "AllReduce") -> bool:
    """Whether NCCL_PROTO (`proto`) sets a function's protocols: there LL128 runs whenever it
    is named, where elsewhere it keeps its default (tuning.cc starts it at 2)."""
    return proto is not None and per_function(proto, "protocols", argument("proto"))[func] is not None


def nccl_function(collective: str, algo: str | None = None, nccl: str | None = None) -> str:
    """NCCL's function for a collective; an `algo` (NCCL_ALGO) that leaves out every
    algorithm NCCL tunes for it is refused where release `nccl` refuses the call."""
    table = FUNCTIONS
    if not isinstance(collective, str) or collective not in table:
        raise RingsimError(f"unknown collective {str(collective)[:40]!r}; choose one of "
                           f"{', '.join(table)}")
    func = table[collective]
    if (func in RING_ONLY and algo is not None
            and RING not in listed_names(algo, "algorithms", argument("algo"), func, nccl)
            and not ring_restored(constants(carried_release(nccl)))):
        # From 2.24.3 NCCL stops such a call ("no algorithm/protocol available", enqueue.cc),
        # whatever the size; the releases before ran the ring all the same.
        raise RingsimError(f"{argument('algo', algo.strip()[:40])}: NCCL tunes only {RING} for "
                           f"{collective} (src/graph/tuning.cc); give {argument('algo', RING)} or "
                           f"leave {argument('algo')} out")
    return func


def candidates(tuned: Tuned, func: str, algos: set, protos: set, proto_given: bool,
               dtype: str = "float", redop: str = "sum") -> tuple[list[tuple[str, str]], bool]:
    """The (algorithm, protocol) pairs NCCL's choice weighs for one function under NCCL_ALGO
    (`algos`) and NCCL_PROTO (`protos`, `proto_given` where set) for a call of `dtype` and
    `redop`, and
    whether they are the ring the release fell back to because nothing else was left
    (enqueue.cc's backup, and tuning.cc's "at least set ring algo available", 2.19.3 to
    2.23.4)."""
    sys = tuned.sys
    on = enabled_algorithms(sys, algos)
    pairs = []
    for a in names("algorithms"):
        if (a in sys.tables["rules"]["absent"] or not algorithm_on(sys, func, a, on)
                or not runs(sys, func, a, dtype, redop)):
            continue  # an algorithm the release lacks, NCCL_ALGO leaves out or enqueue.cc skips
        pairs += [(a, p) for p in names("protocols")
                  if allowed(sys, func, a, p) and protocol_on(sys, p, protos, proto_given)
                  and bus_bandwidth(sys, tuned.graphs[a], func, a, p) > 0]
    if pairs:
        return pairs, False
    ring = tuned.graphs[RING]
    return [(RING, p) for p in ring_fallback(sys, protos, proto_given)
            if bus_bandwidth(sys, ring, func, RING, p) > 0], True


def checked_topology(topology, gpus: int) -> Topology:
    """A preset name, .toml path or Topology, checked to hold `gpus` GPUs."""
    topo = load(topology) if isinstance(topology, str) else topology
    if not isinstance(topo, Topology):
        raise RingsimError("topology: give a preset name, a .toml path or a Topology")
    check_int(gpus, "gpus", 2, MAX_GPUS)
    topo.check_gpus(gpus)
    return topo


def check_int(value, what: str, low: int, high: int) -> int:
    """`value` as an int: any integer type (numpy's too, as make_plan takes them), in range."""
    whole = not isinstance(value, bool) and isinstance(value, numbers.Integral)
    if not whole or not low <= value <= high:
        shown = f"{int(value):,}" if whole else echo(value)
        raise RingsimError(f"{what} must be a whole number from {low:,} to {high:,}, got {shown}")
    return int(value)
