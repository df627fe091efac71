"""NCCL's own performance model beside the textbook α-β-γ one: what NCCL would pick, and its time.

This follows NVIDIA/nccl (the version in nccl_constants.toml) line by line where ringsim has
what the line reads: ncclTopoTuneModel (src/graph/tuning.cc) turns each algorithm's graph
(channels × speed, nccl_graph.py) into a bus bandwidth per protocol and a latency of
baseLat + steps × hwLat, and ncclTopoGetAlgoTime prices a call at latency + bytes / bandwidth.
NCCL then runs the fastest (algorithm, protocol) it has; NCCL_ALGO and NCCL_PROTO restrict it.
Every step is a closed form in G: a million GPUs cost what eight do. The deviations from NCCL
are listed in docs/cost.md ("NCCL's model"). The table itself is nccl_tuner.py's, the channels a
call runs on nccl_channels.py's; this module chooses, prices the call and prints the table.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, replace

from ..core.checks import echo
from ..core.errors import RingsimError
from .nccl_channels import Tuned, channel_threads, comm_channels, connected, run_channels, tune
from .nccl_graph import Graph, constants, log2i
from .nccl_pipeline import fill_seconds, stages
from .nccl_tuner import (ALGORITHMS, FUNCTIONS, PROTOCOLS, TABLE_FUNCTIONS, allowed,
                         bus_bandwidth, bus_to_algorithm, graph_searched, latency,
                         ll128_default, names, nvls_speeds, priced, runs)
from .topology import Topology, load

MAX_GPUS = 1_000_000  # core/checks.py's bound, as every command has
MAX_BYTES = 1 << 50
# The functions ncclTopoTuneModel (src/graph/tuning.cc) tunes on the ring only: it skips
# every other algorithm for them, so NCCL picks among the ring's three protocols.
RING_ONLY = ("Broadcast", "Reduce")
RING = "Ring"


@dataclass(frozen=True)
class NcclChoice:
    """NCCL's pick for one call: algorithm and protocol (NCCL's names), channels, seconds."""

    algorithm: str
    protocol: str
    channels: int
    seconds: float
    latency: float = 0.0     # the call's fixed part on the GPUs, seconds
    bandwidth: float = 0.0   # NCCL's algorithm bandwidth for it, bytes per second
    host: float = 0.0        # what the issuing thread needs for the call, seconds
    fill: float = 0.0        # its first step crossing the pipeline, beyond NCCL's model, s

    @property
    def host_bound(self) -> bool:
        """Whether the host issuing the call, not the GPUs, sets its time."""
        return self.host > 0 and self.seconds == self.host

    def to_json(self) -> dict:
        """The choice as plain JSON values (seconds, bytes per second)."""
        return {"algorithm": self.algorithm, "protocol": self.protocol,
                "channels": self.channels, "seconds": self.seconds, "latency": self.latency,
                "bandwidth": self.bandwidth, "fill": self.fill, "host": self.host,
                "host_bound": self.host_bound}




def _pick(given, kind: str, flag: str) -> set[str]:
    """NCCL_ALGO / NCCL_PROTO: a name or comma list, any case, '^' to exclude; None for all."""
    valid = names(kind)
    if given is None:
        return set(valid)
    if not isinstance(given, str) or not given.strip():
        raise RingsimError(f"{flag}: give one of {', '.join(valid)} (or a comma list)")
    text = given.strip()
    exclude = text.startswith("^")
    chosen = set()
    for part in text.lstrip("^").split(","):
        match = [v for v in valid if v.lower() == part.strip().lower()]
        if not match:
            raise RingsimError(f"{flag}: unknown {kind[:-1]} {part.strip()[:40]!r}; "
                               f"valid: {', '.join(valid)}")
        chosen.add(match[0])
    return set(valid) - chosen if exclude else chosen


def _function(collective: str, algo: str | None = None) -> str:
    """NCCL's function for a collective; an `algo` (NCCL_ALGO) that leaves out every
    algorithm NCCL tunes for it is refused."""
    table = FUNCTIONS
    if not isinstance(collective, str) or collective not in table:
        raise RingsimError(f"unknown collective {str(collective)[:40]!r}; choose one of "
                           f"{', '.join(table)}")
    func = table[collective]
    if func in RING_ONLY and algo is not None and RING not in _pick(algo, "algorithms", "--algo"):
        # NCCL itself stops such a call ("No algorithm/protocol available"), whatever the size.
        raise RingsimError(f"--algo {algo.strip()[:40]}: NCCL tunes only {RING} for {collective} "
                           f"(src/graph/tuning.cc); give --algo {RING} or leave --algo out")
    return func










def _seconds(tuned: Tuned, func: str, algo: str, proto: str, nbytes: int,
             graph: Graph | None = None, measured: bool = False) -> tuple[float, float, float]:
    """ncclTopoGetAlgoTime for one candidate: (seconds, latency s, bandwidth B/s); inf if none.
    `graph` replaces the algorithm's searched graph (fewer channels); `measured` prices the
    network hops with its measured latency instead of the plugin's figure."""
    sys = tuned.sys
    bw = bus_bandwidth(sys, graph or tuned.graphs[algo], func, algo, proto)
    if bw <= 0:
        return math.inf, 0.0, 0.0
    lat = latency(sys, func, algo, proto, measured)
    c = sys.tables
    log_size = log2i(nbytes >> 6) if nbytes >> 6 else c["rules"]["log_size_of_zero"]
    if algo == "Tree" and func == "AllReduce" and 0 <= log_size < 23:
        bw *= c["tree_correction"][proto][log_size]
    if (algo == "NVLSTree" and func == "AllReduce" and 0 <= log_size < 24
            and c["rules"]["nvlstree_correction"] and sys.arch == "blackwell" and sys.x86):
        bw *= c["tree_correction"][proto][log_size]
    if (algo == "Ring" and proto == "Simple" and sys.nodes > 1 and func == "AllReduce"
            and nbytes // (connected(tuned)[1] * sys.ranks)
            >= c["factors"]["ring_plateau_min_bytes"]):
        lat *= c["factors"]["ring_plateau_volta" if sys.arch == "volta" else "ring_plateau"]
    micro = lat + nbytes / (1000 * bw)
    return micro * 1e-6, lat * 1e-6, bw * 1e9


def tuning_table(topology, gpus: int, nccl: str | None = None, algo: str | None = None,
                 proto: str | None = None) -> dict[tuple[str, str, str], tuple[float, float]]:
    """NCCL's comm->latencies (µs) and comm->bandwidths (GB/s of algorithm bandwidth) for every
    (function, algorithm, protocol) of the release's table, as NCCL prints them at init with
    NCCL_DEBUG_SUBSYS=TUNING: (0, 0) where its loop skips the cell; elsewhere the latency it
    computes, with bandwidth 0 where it then has none: the algorithm is off (CollNet without
    a network that reduces, NVLSTree on one node, NVLS across nodes without CollNet), its graph
    has no channels, LL128 is off by default, or NCCL_ALGO / NCCL_PROTO (`algo`, `proto`)
    leave it out."""
    algos, protos = _pick(algo, "algorithms", "--algo"), _pick(proto, "protocols", "--proto")
    tuned = tune(_topology(topology, gpus), gpus, nccl)
    sys = tuned.sys
    table = {}
    for func in TABLE_FUNCTIONS:
        for a in ALGORITHMS:
            if a in sys.tables["rules"]["absent"]:
                continue  # that release's table has no such column
            graph = tuned.graphs[a]
            for p in PROTOCOLS:
                cell = (0.0, 0.0)
                if priced(sys, graph, func, a, p):
                    bw = 0.0
                    if allowed(sys, func, a, p) and a in algos and p in protos and not (
                            p == "LL128" and proto is None and not ll128_default(sys)):
                        bw = bus_bandwidth(sys, graph, func, a, p)
                    cell = (latency(sys, func, a, p, searched=graph_searched(sys, a)), bw)
                table[(func, a, p)] = cell
    return table


def max_threads(topology, gpus: int, nccl: str | None = None) -> dict[tuple[str, str], int]:
    """NCCL's comm->maxThreads for every (algorithm, protocol) of the release's table, as it
    prints them in the 'Max NThreads' row: the threads one channel runs with, 0 for none."""
    tuned = tune(_topology(topology, gpus), gpus, nccl)
    return {(a, p): channel_threads(tuned, a, p) for a in ALGORITHMS
            if a not in tuned.sys.tables["rules"]["absent"] for p in PROTOCOLS}


def host_seconds(gpus_per_process: int) -> float:
    """Seconds one thread needs to issue a call to the GPUs it drives (nccl-tests' `-g`):
    ringsim's estimate, not NCCL's model (nccl_constants.toml, [host])."""
    return gpus_per_process * constants()["host"]["issue_per_gpu_us"] / 1e6


def check_per_process(topology: Topology, gpus: int, gpus_per_process: int) -> None:
    """A process drives GPUs of one node, and every process as many (nccl-tests' `-g`)."""
    per_node = min(gpus, topology.gpus_per_node or gpus)
    if isinstance(gpus_per_process, bool) or not isinstance(gpus_per_process, numbers.Integral):
        raise RingsimError(f"GPUs per process must be a whole number, got {echo(gpus_per_process)}")
    if not 1 <= gpus_per_process <= per_node:
        raise RingsimError(f"GPUs per process must be from 1 to {per_node:,}: a process drives "
                           f"GPUs of one node, got {gpus_per_process:,}")
    if gpus % gpus_per_process:
        raise RingsimError(f"GPUs per process must divide the {gpus:,} GPUs "
                           f"(every process drives as many), got {gpus_per_process:,}")


# src/enqueue.cc, taskAppend: "Empty collectives can be discarded" (count == 0), before any choice.
EMPTY_CALL = "an empty call, which NCCL discards before choosing anything"


def nccl_choice(topology, gpus: int, nbytes: int, collective: str = "all-reduce",
                algo: str | None = None, proto: str | None = None,
                nccl: str | None = None, gpus_per_process: int = 1) -> NcclChoice:
    """NCCL's fastest (algorithm, protocol) for one call of `nbytes` per GPU (nccl-tests'
    `size`), restricted like NCCL_ALGO / NCCL_PROTO by `algo` / `proto`, with the latency
    tables of NCCL release `nccl` (one of versions(); None: the model's own), issued by
    processes that each drive `gpus_per_process` GPUs. `collective`: all-reduce, all-gather,
    reduce-scatter, broadcast or reduce (the last two on the ring only, as NCCL tunes them)."""
    func = _function(collective, algo)
    algos, protos = _pick(algo, "algorithms", "--algo"), _pick(proto, "protocols", "--proto")
    gpus = _check_count(gpus, "gpus", 2, MAX_GPUS)
    topo = _topology(topology, gpus)
    nbytes = _check_count(nbytes, "bytes", 0, MAX_BYTES)
    check_per_process(topo, gpus, gpus_per_process)
    return _choose(tune(topo, gpus, nccl), func, algos, protos, proto is not None, nbytes,
                   host_seconds(gpus_per_process))


def _choose(tuned: Tuned, func: str, algos: set, protos: set, proto_given: bool,
            nbytes: int, host: float = 0.0) -> NcclChoice:
    best = None
    for a in names("algorithms"):
        if a not in algos:
            continue
        for p in names("protocols"):
            if p not in protos or not allowed(tuned.sys, func, a, p):
                continue
            if not runs(tuned.sys, func, a):
                continue
            if a in tuned.sys.tables["rules"]["absent"]:
                continue  # an algorithm that release did not have
            if p == "LL128" and not proto_given and not ll128_default(tuned.sys):
                continue
            seconds, lat, bw = _seconds(tuned, func, a, p, nbytes)
            if best is None or seconds < best[0]:
                best = (seconds, a, p, lat, bw)
    if best is None or not math.isfinite(best[0]):
        raise RingsimError("NCCL has no algorithm and protocol for this on that topology with "
                           "the --algo/--proto given")
    seconds, a, p, lat, bw = best
    # NCCL picks on its model, which counts every channel; the call then runs on the channels
    # topoGetAlgoInfo leaves it. Its time is NCCL's own bandwidth formula for that share of
    # the graph's channels (each channel keeps its speed; caps on the total still apply).
    full, run = comm_channels(tuned, a), run_channels(tuned, a, p, nbytes)
    graph = tuned.graphs[a]
    if run < full:
        graph = replace(graph, channels=graph.channels * run / full)
    measured = tuned.sys.net_measured is not None
    if run < full or measured:
        # NCCL chose on what the plugin reports; the call takes what the network measures.
        seconds, lat, bw = _seconds(tuned, func, a, p, nbytes, graph, measured)
    # NCCL's model prices the pipeline at its steady rate from the first byte; the call also
    # waits for its first step to cross it (nccl_pipeline.py). NCCL's choice does not weigh it.
    fill = _fill(tuned, func, a, p, nbytes, run, graph, bw)
    # Calls are issued back to back while the GPUs run the ones before, so a call takes as
    # long as the slower of the two; NCCL's choice does not weigh the host either.
    return NcclChoice(a, p, run, max(seconds + fill, host), lat, bw, host, fill)


def _fill(tuned: Tuned, func: str, algo: str, proto: str, nbytes: int, run: int,
          graph: Graph, bandwidth: float) -> float:
    """Seconds the call waits for its first step to cross the pipeline (nccl_pipeline.py), on
    `run` channels sharing `graph`'s speed, NCCL's algorithm bandwidth `bandwidth` (B/s)."""
    sys = tuned.sys
    if func != "AllReduce" or bandwidth <= 0 or graph.channels <= 0:
        return 0.0
    share = graph.channels / run  # the graph's channels one running channel has the speed of
    if algo == "NVLS":
        # NCCL's own speeds inside and across, in the units of its algorithm bandwidth.
        per_byte = bus_to_algorithm(sys, func, algo)
        inside, across = (share * s * per_byte * 1e9 for s in nvls_speeds(sys, graph, func, algo))
    else:
        inside, across = share * graph.bw_intra * 1e9, share * graph.bw_inter * 1e9
    loop, rates = stages(sys, algo, proto, nbytes, run, tuned.graphs[algo].channels, inside,
                         across)
    return fill_seconds(loop, rates, bandwidth / run)


def _topology(topology, gpus: int) -> Topology:
    """A preset name, .toml path or Topology, checked to hold `gpus` GPUs."""
    topo = load(topology) if isinstance(topology, str) else topology
    if not isinstance(topo, Topology):
        raise RingsimError("topology: give a preset name, a .toml path or a Topology")
    _check_count(gpus, "gpus", 2, MAX_GPUS)
    topo.check_gpus(gpus)
    return topo


def _check_count(value, what: str, low: int, high: int) -> int:
    """`value` as an int: any integer type (numpy's too, as make_plan takes them), in range."""
    whole = not isinstance(value, bool) and isinstance(value, numbers.Integral)
    if not whole or not low <= value <= high:
        shown = f"{int(value):,}" if whole else echo(value)
        raise RingsimError(f"{what} must be a whole number from {low:,} to {high:,}, got {shown}")
    return int(value)


def nccl_choices(topology: Topology, gpus: int, sizes: list[int], collective: str = "all-reduce",
                 algo: str | None = None, proto: str | None = None,
                 nccl: str | None = None, gpus_per_process: int = 1) -> list[NcclChoice | None]:
    """nccl_choice for many sizes, tuning the topology once (what `predict` prints); None for
    a size of 0, an empty call, which NCCL discards before choosing anything (EMPTY_CALL)."""
    func = _function(collective, algo)
    algos, protos = _pick(algo, "algorithms", "--algo"), _pick(proto, "protocols", "--proto")
    gpus = _check_count(gpus, "gpus", 2, MAX_GPUS)
    sizes = [_check_count(n, "bytes", 0, MAX_BYTES) for n in sizes]
    topology = _topology(topology, gpus)
    check_per_process(topology, gpus, gpus_per_process)
    tuned, host = tune(topology, gpus, nccl), host_seconds(gpus_per_process)
    return [_choose(tuned, func, algos, protos, proto is not None, n, host) if n else None
            for n in sizes]
