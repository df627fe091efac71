"""NCCL's own performance model beside the textbook α-β-γ one: what NCCL would pick, and its time.

This follows NVIDIA/nccl (the version in nccl_constants.toml) line by line where ringsim has
what the line reads: ncclTopoTuneModel (src/graph/tuning.cc) turns each algorithm's graph
(channels × speed, nccl_graph.py) into a bus bandwidth per protocol and a latency of
baseLat + steps × hwLat, and ncclTopoGetAlgoTime prices a call at latency + bytes / bandwidth.
NCCL then runs the fastest (algorithm, protocol) it has; NCCL_ALGO and NCCL_PROTO restrict it.
Every step is a closed form in G: a million GPUs cost what eight do. The deviations from NCCL
are listed in docs/cost.md ("NCCL's model"). The table itself is nccl_tuner.py's, the channels a
call runs on nccl_channels.py's, what the call takes beyond NCCL's estimate nccl_runtime.py's,
the call's arguments and the pairs NCCL weighs nccl_call.py's, the notes in words
nccl_notes.py's; this module chooses, prices the call and prints the table.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

from ..core.checks import MAX_GPUS, echo
from ..core.arguments import argument
from ..core.errors import RingsimError
from .nccl_call import (RING, candidates, check_int, checked_topology, listed_names, nccl_function,
                        sets_protocols)
from .nccl_channels import (Tuned, channel_threads, comm_channels, connected, distinct_channels,
                            run_channels, tune)
from .nccl_graph import Graph, constants, log2i
from .nccl_notes import off_reasons
from .nccl_runtime import (fallback_link_graph, fill as fill_time, nvls_link_graph, ring_hops,
                           run_graph)
from .nccl_tuner import (ALGORITHMS, NVLS_FAMILY, PROTOCOLS, TABLE_FUNCTIONS, algorithm_on,
                         allowed, bus_bandwidth, carried_release, check_dtype, check_redop,
                         enabled_algorithms,
                         graph_searched, latency, names, priced, protocol_on, ring_fallback)
from .topology_model import Topology

MAX_BYTES = 1 << 50
# MAXCHANNELS of the newest releases (src/include/device.h); NCCL holds a larger
# NCCL_MIN_NCHANNELS or NCCL_MAX_NCHANNELS to it, and older releases to their own 32.
MAX_CHANNELS = 64


@dataclass(frozen=True)
class NcclChoice:
    """NCCL's pick for one call: algorithm and protocol (NCCL's names), channels, seconds."""

    algorithm: str
    protocol: str
    channels: int
    seconds: float
    latency: float = 0.0     # the call's fixed part on the GPUs, seconds
    bandwidth: float = 0.0   # the algorithm bandwidth the call runs at, bytes per second
    host: float = 0.0        # what the issuing thread needs for the call, seconds
    fill: float = 0.0        # its first step crossing the pipeline, beyond NCCL's model, s
    nccl_seconds: float = 0.0  # NCCL's own estimate, the time it chose on, seconds

    @property
    def host_bound(self) -> bool:
        """Whether the host issuing the call, not the GPUs, sets its time."""
        return self.host > 0 and self.seconds == self.host

    def to_json(self) -> dict:
        """The choice as plain JSON values (seconds, bytes per second)."""
        return {"algorithm": self.algorithm, "protocol": self.protocol,
                "channels": self.channels, "seconds": self.seconds, "latency": self.latency,
                "bandwidth": self.bandwidth, "fill": self.fill, "host": self.host,
                "host_bound": self.host_bound, "nccl_seconds": self.nccl_seconds}


def checked_list(given: str, kind: str, flag: str) -> str:
    """An NCCL_ALGO ('algorithms') or NCCL_PROTO ('protocols') setting, once NCCL has its every name."""
    listed_names(given, kind, flag)
    return given


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
    leave it out; up to 2.23.4 a function they leave nothing shows the ring NCCL falls back
    to, and in 2.18 the ring of every function but AllReduce stays whatever `algo` says."""
    tuned = tune(checked_topology(topology, gpus), gpus, nccl)
    sys = tuned.sys
    table = {}
    for func in TABLE_FUNCTIONS:
        algos = enabled_algorithms(sys, listed_names(algo, "algorithms", argument("algo"), func, nccl))
        protos = listed_names(proto, "protocols", argument("proto"), func, nccl)
        named = sets_protocols(proto, func)
        for a in ALGORITHMS:
            if a in sys.tables["rules"]["absent"]:
                continue  # that release's table has no such column
            graph = tuned.graphs[a]
            for p in PROTOCOLS:
                cell = (0.0, 0.0)
                if priced(sys, graph, func, a, p):
                    bw = 0.0
                    if (allowed(sys, func, a, p) and algorithm_on(sys, func, a, algos)
                            and protocol_on(sys, p, protos, named)):
                        bw = bus_bandwidth(sys, graph, func, a, p)
                    cell = (latency(sys, func, a, p, searched=graph_searched(sys, a)), bw)
                table[(func, a, p)] = cell
        if not any(bw for (f, _, _), (_, bw) in table.items() if f == func):
            # Up to 2.23.4 tuning.cc gives a function left without bandwidth the ring's back
            # (comm->ringbdw) before it prints the table.
            for p in ring_fallback(sys, protos, named):
                lat = table[(func, RING, p)][0]
                ring = bus_bandwidth(sys, tuned.graphs[RING], func, RING, p)
                table[(func, RING, p)] = (lat, ring)
    return table


def max_threads(topology, gpus: int, nccl: str | None = None) -> dict[tuple[str, str], int]:
    """NCCL's comm->maxThreads for every (algorithm, protocol) of the release's table, as it
    prints them in the 'Max NThreads' row: the threads one channel runs with, 0 for none."""
    tuned = tune(checked_topology(topology, gpus), gpus, nccl)
    return {(a, p): channel_threads(tuned, a, p) for a in ALGORITHMS
            if a not in tuned.sys.tables["rules"]["absent"] for p in PROTOCOLS}


def socket_cap(topology, gpus: int, nccl: str | None = None) -> float | None:
    """The rate (B/s each way) of the link between CPU sockets that caps a node's channels in
    NCCL's model (nic_path sys across nodes), None where nothing caps them so."""
    tuned = tune(checked_topology(topology, gpus), gpus, nccl)
    return None if tuned.sys.cpu_link is None else tuned.sys.cpu_link * 1e9


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
                nccl: str | None = None, gpus_per_process: int = 1,
                dtype: str = "float", min_channels: int | None = None,
                max_channels: int | None = None, nvls: bool = True,
                nvls_channels: int | None = None, redop: str = "sum",
                nthreads: int | None = None, ll128_nthreads: int | None = None,
                buffsize: int | None = None) -> NcclChoice:
    """NCCL's fastest (algorithm, protocol) for one call of `nbytes` per GPU (nccl-tests'
    `size`), restricted like NCCL_ALGO / NCCL_PROTO by `algo` / `proto`, with the latency
    tables of NCCL release `nccl` (one of versions(); None: the model's own), issued by
    processes that each drive `gpus_per_process` GPUs. `collective`: all-reduce, all-gather,
    reduce-scatter, broadcast or reduce (the last two on the ring only, as NCCL tunes them);
    `dtype`: the data type as nccl-tests names it (NVLS adds no 8-bit type: int8, uint8, f8e4m3, f8e5m2);
    `min_channels` / `max_channels`: NCCL_MIN_NCHANNELS / NCCL_MAX_NCHANNELS (None: unset);
    `nvls` False: NVLS off, as NCCL_NVLS_ENABLE=0 or a machine without multicast leaves it;
    `nvls_channels`: NCCL_NVLS_NCHANNELS (None: unset); `redop`: the reduction, as nccl-tests'
    -o names it (NVLS takes sum, and min and max of integers and 16-bit floats, only);
    `nthreads` / `ll128_nthreads`: NCCL_NTHREADS / NCCL_LL128_NTHREADS, `buffsize`: NCCL_BUFFSIZE
    (None: unset)."""
    func, dtype, redop, algos, protos = _asked(collective, algo, proto, nccl, dtype, redop)
    gpus = check_int(gpus, "gpus", 2, MAX_GPUS)
    topo = checked_topology(topology, gpus)
    nbytes = check_int(nbytes, "bytes", 0, MAX_BYTES)
    check_per_process(topo, gpus, gpus_per_process)
    tuned = _tuned(topo, gpus, nccl, min_channels, max_channels, nvls, nvls_channels, nthreads,
                   ll128_nthreads, buffsize)
    return _choose(tuned, func, algos, protos, sets_protocols(proto, func), nbytes,
                   host_seconds(gpus_per_process), dtype, redop)


def channel_cap(nccl: str | None = None) -> int:
    """MAXCHANNELS of NCCL release `nccl` (None: the model's own), to which NCCL holds every
    channel setting: 32 up to 2.24.3, 64 from 2.25.1."""
    return constants(carried_release(nccl))["channels"]["max"]


def runs_nvls(topology, gpus: int, collective: str = "all-reduce", nccl: str | None = None,
              dtype: str = "float") -> bool:
    """Whether NCCL weighs NVLS or NVLSTree for the collective on that machine at all (so that
    NCCL_NVLS_NCHANNELS can matter)."""
    tuned = tune(checked_topology(topology, gpus), gpus, nccl)
    pairs = candidates(tuned, nccl_function(collective, None, nccl), set(names("algorithms")),
                       set(names("protocols")), False, check_dtype(dtype))[0]
    return any(a in NVLS_FAMILY for a, _ in pairs)


def _asked(collective: str, algo: str | None, proto: str | None, nccl: str | None, dtype: str,
           redop: str) -> tuple[str, str, str, set, set]:
    """A call's NCCL function, data type and reduction, and the algorithms and protocols that
    NCCL_ALGO (`algo`) and NCCL_PROTO (`proto`) leave it, each checked in that order."""
    func = nccl_function(collective, algo, nccl)
    dtype, redop = check_dtype(dtype), check_redop(redop)
    algos = listed_names(algo, "algorithms", argument("algo"), func, nccl)
    protos = listed_names(proto, "protocols", argument("proto"), func, nccl)
    return func, dtype, redop, algos, protos


def _tuned(topology: Topology, gpus: int, nccl: str | None, min_channels: int | None,
           max_channels: int | None, nvls: bool, nvls_channels: int | None, nthreads: int | None,
           ll128_nthreads: int | None, buffsize: int | None) -> Tuned:
    """NCCL's table for a checked topology under the channel, thread and buffer settings a
    call gives (each checked: None where unset)."""
    return tune(topology, gpus, nccl, **channel_settings(min_channels, max_channels, nvls_channels),
                nvls=nvls, nthreads=_threads(nthreads, "NCCL_NTHREADS"),
                ll128_nthreads=_threads(ll128_nthreads, "NCCL_LL128_NTHREADS"),
                buffsize=_buffsize(buffsize))


def channel_settings(min_channels: int | None, max_channels: int | None,
                     nvls_channels: int | None = None) -> dict:
    """NCCL_MIN_NCHANNELS, NCCL_MAX_NCHANNELS and NCCL_NVLS_NCHANNELS checked (None: unset),
    as tune() takes them."""
    return {name: None if value is None else check_int(value, what, 1, MAX_CHANNELS)
            for name, value, what in (("min_channels", min_channels, "NCCL_MIN_NCHANNELS"),
                                      ("max_channels", max_channels, "NCCL_MAX_NCHANNELS"),
                                      ("nvls_channels", nvls_channels, "NCCL_NVLS_NCHANNELS"))}


def _threads(value: int | None, what: str) -> int | None:
    """NCCL_NTHREADS or NCCL_LL128_NTHREADS as a whole number (None: unset); NCCL reads any
    integer, and getNthreads holds it (nccl_channels.channel_threads)."""
    return None if value is None else check_int(value, what, -(1 << 31), (1 << 31) - 1)


def _buffsize(value: int | None) -> int | None:
    """NCCL_BUFFSIZE in bytes (None: unset): at least one byte for each of NCCL_STEPS steps."""
    steps = constants()["chunks"]["steps"]
    return None if value is None else check_int(value, "NCCL_BUFFSIZE", steps, 1 << 40)


def _choose(tuned: Tuned, func: str, algos: set, protos: set, proto_given: bool,
            nbytes: int, host: float = 0.0, dtype: str = "float",
            redop: str = "sum") -> NcclChoice:
    if not tuned.nvls:  # NVLS off: NCCL has neither NVLS nor NVLSTree to pick
        algos = algos - set(NVLS_FAMILY)
    best = None
    for a, p in candidates(tuned, func, algos, protos, proto_given, dtype, redop)[0]:
        seconds, lat, bw = _seconds(tuned, func, a, p, nbytes)
        if best is None or seconds < best[0]:
            best = (seconds, a, p, lat, bw)
    if best is None or not math.isfinite(best[0]):
        why = off_reasons(tuned.sys, algos, func, protos, dtype, redop)
        given = (" with the --algo/--proto given" if algos != set(names("algorithms")) or proto_given
                 else "")
        raise RingsimError(f"NCCL has no algorithm and protocol for this on that topology{given}"
                           + (f": {'; '.join(why)}" if why else ""))
    seconds, a, p, lat, bw = best
    nccl_seconds = seconds
    # NCCL picks on its model, which counts every channel of the searched graph; the call then
    # runs on the channels NCCL_MAX_NCHANNELS and topoGetAlgoInfo leave it. Its time is NCCL's
    # own bandwidth formula for that share of the graph's channels (run_graph: each channel
    # keeps its speed, or on a link the channels share, the whole link up to their own speed;
    # caps on the total still apply). Copies that a setting added drive the rings they copy,
    # adding speed only up to the blocks NCCL's own communicator gives a ring (distinct_channels).
    full, run = comm_channels(tuned, a, limited=False), run_channels(tuned, a, p, nbytes)
    priced = distinct_channels(tuned, a, run)
    # Every channel of CollNetDirect drives all its heads, so a cut call is no share of the
    # graph's channels that ringsim can price: it keeps NCCL's time.
    cut = priced < full and a != "CollNetDirect"
    # NCCL's NVLS formula is for a whole graph ((n - 1) / n of its channels' speed, none at
    # all below 2), so a cut NVLS call is priced as that share of the whole graph's rate.
    shared = cut and a in NVLS_FAMILY
    graph = run_graph(tuned, a, priced) if cut and not shared else tuned.graphs[a]
    linked = nvls_link_graph(tuned, func, a) or fallback_link_graph(tuned, a)
    graph = linked or graph
    measured = tuned.sys.net_measured is not None
    if cut or measured or linked:
        # NCCL chose on what the plugin reports; the call takes what the network measures.
        seconds, lat, bw = _seconds(tuned, func, a, p, nbytes, graph, measured)
        if shared:
            bw *= priced / full
            seconds = lat + nbytes / bw
    # NCCL's model prices the pipeline at its steady rate from the first byte; the call also
    # waits for its first step to cross it (nccl_pipeline.py). NCCL's choice does not weigh it.
    # channels past NCCL's own count add nothing, to the pipeline's first step neither
    fill = (fill_time(tuned, func, a, p, nbytes, min(run, full), graph, bw)
            + ring_hops(tuned, func, p, measured))
    # Calls are issued back to back while the GPUs run the ones before, so a call takes as
    # long as the slower of the two; NCCL's choice does not weigh the host either.
    return NcclChoice(a, p, run, max(seconds + fill, host), lat, bw, host, fill, nccl_seconds)


def nvls_link_rates(topology, gpus: int, nccl: str | None = None, algo: str | None = None,
                    proto: str | None = None, dtype: str = "float") -> tuple[float, float] | None:
    """One node's NVLS all-reduce: NCCL's algorithm bandwidth for it and what its links carry
    (nvls_link_graph), in bytes per second; None where NCCL has no NVLS there, for `dtype`, or
    `algo` / `proto` (as NCCL_ALGO / NCCL_PROTO) leave it out."""
    tuned = tune(checked_topology(topology, gpus), gpus, nccl)
    linked = nvls_link_graph(tuned, "AllReduce", "NVLS")
    algos = listed_names(algo, "algorithms", argument("algo"), "AllReduce", nccl)
    protos = listed_names(proto, "protocols", argument("proto"), "AllReduce", nccl)
    weighed = candidates(tuned, "AllReduce", algos, protos, sets_protocols(proto),
                         check_dtype(dtype))[0]
    if linked is None or ("NVLS", "Simple") not in weighed:
        return None
    size = 1 << 30  # any size: both bandwidths are the steady rate
    own = _seconds(tuned, "AllReduce", "NVLS", "Simple", size)[2]
    link = _seconds(tuned, "AllReduce", "NVLS", "Simple", size, linked)[2]
    return (own, link) if own > 0 else None


def nccl_choices(topology: Topology, gpus: int, sizes: list[int], collective: str = "all-reduce",
                 algo: str | None = None, proto: str | None = None,
                 nccl: str | None = None, gpus_per_process: int = 1,
                 dtype: str = "float", min_channels: int | None = None,
                 max_channels: int | None = None, nvls: bool = True,
                 nvls_channels: int | None = None, redop: str = "sum",
                 nthreads: int | None = None, ll128_nthreads: int | None = None,
                 buffsize: int | None = None) -> list[NcclChoice | None]:
    """nccl_choice for many sizes, tuning the topology once (what `predict` prints); None for
    a size of 0, an empty call, which NCCL discards before choosing anything (EMPTY_CALL)."""
    func, dtype, redop, algos, protos = _asked(collective, algo, proto, nccl, dtype, redop)
    gpus = check_int(gpus, "gpus", 2, MAX_GPUS)
    sizes = [check_int(n, "bytes", 0, MAX_BYTES) for n in sizes]
    topology = checked_topology(topology, gpus)
    check_per_process(topology, gpus, gpus_per_process)
    tuned = _tuned(topology, gpus, nccl, min_channels, max_channels, nvls, nvls_channels,
                   nthreads, ll128_nthreads, buffsize)
    host, named = host_seconds(gpus_per_process), sets_protocols(proto, func)
    return [_choose(tuned, func, algos, protos, named, n, host, dtype, redop)
            if n else None for n in sizes]
