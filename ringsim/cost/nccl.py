"""NCCL's own performance model beside the textbook α-β-γ one: what NCCL would pick, and its time.

This follows NVIDIA/nccl (the version in nccl_constants.toml) line by line where ringsim has
what the line reads: ncclTopoTuneModel (src/graph/tuning.cc) turns each algorithm's graph
(channels × speed, nccl_graph.py) into a bus bandwidth per protocol and a latency of
baseLat + steps × hwLat, and ncclTopoGetAlgoTime prices a call at latency + bytes / bandwidth.
NCCL then runs the fastest (algorithm, protocol) it has; NCCL_ALGO and NCCL_PROTO restrict it.
Every step is a closed form in G: a million GPUs cost what eight do. The deviations from NCCL
are listed in docs/cost.md ("NCCL's model").
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, replace
from functools import lru_cache

from ..core.checks import echo
from ..core.errors import RingsimError
from .nccl_graph import Graph, System, constants, graphs, log2i, system
from .nccl_pipeline import fill_seconds, stages
from .topology import Topology, load

MAX_GPUS = 1_000_000  # core/checks.py's bound, as every command has
MAX_BYTES = 1 << 50


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


# NCCL's names (ncclAlgoStr, ncclProtoStr in src/device/ and tuning.cc), as NCCL_ALGO and
# NCCL_PROTO spell them, in NCCL's order: the columns of nccl_constants.toml follow it.
ALGORITHMS = ("Tree", "Ring", "CollNetDirect", "CollNetChain", "NVLS", "NVLSTree", "PAT")
PROTOCOLS = ("LL", "LL128", "Simple")
# nccl-tests' collectives (ringsim's spelling) to NCCL's function names.
FUNCTIONS = {"all-reduce": "AllReduce", "all-gather": "AllGather",
             "reduce-scatter": "ReduceScatter"}
# The functions NCCL's tuning table prints, in its order (ncclFuncStr): the model prices the
# collectives above; Broadcast and Reduce appear in the table only, as NCCL prints them.
TABLE_FUNCTIONS = ("Broadcast", "Reduce", "AllGather", "ReduceScatter", "AllReduce")


def names(kind: str) -> list[str]:
    """NCCL's spelling of its algorithms ('algorithms') or protocols ('protocols')."""
    return list(ALGORITHMS if kind == "algorithms" else PROTOCOLS)


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


def _function(collective: str) -> str:
    table = FUNCTIONS
    if not isinstance(collective, str) or collective not in table:
        raise RingsimError(f"unknown collective {str(collective)[:40]!r}; choose one of "
                           f"{', '.join(table)}")
    return table[collective]


def _bus_bandwidth(sys: System, graph: Graph, func: str, algo: str, proto: str) -> float:
    """NCCL's bandwidth (GB/s) for one (algorithm, protocol), as ncclTopoTuneModel computes it;
    0 where NCCL has none."""
    c = sys.tables
    caps, f = c["caps"], c["factors"]
    a, n2 = sys.arch_index, (sys.nodes - 1 if sys.nodes <= 2 else 2)
    # LL's cap: on one node by the GPU's generation, across nodes by the CPU (AMD's row is 1).
    ll_max = caps["ll_max_bw"][a if sys.nodes == 1 else int(sys.cpu == "amd")][n2]
    nch = graph.channels
    if nch == 0:
        return 0.0
    ppn = sys.ppn
    collnet = algo.startswith("CollNet")
    bw = graph.bw_intra if sys.nodes <= 2 or collnet else graph.bw_inter
    if algo in ("NVLS", "NVLSTree") and c["rules"]["nvls_bandwidth"] != "graph":
        efficiency = c["rules"]["nvls_bandwidth"] == "efficiency"
        if nch < 2 and efficiency:
            return 0.0
        intra, inter = _nvls_speeds(sys, graph, func, algo)
        bw = min(intra, inter, caps["per_channel_nvls_tree"][a][n2] if algo == "NVLSTree"
                 and efficiency else math.inf)
    bus = nch * bw
    if algo == "Ring" and proto == "LL":
        gather_one_node = sys.nodes == 1 and func not in ("AllReduce", "Reduce")
        bus = min(ll_max, bus * f["ring_ll_one_node_gather" if gather_one_node else "ring_ll"])
    if algo == "Ring" and proto == "LL128":
        factor = f["ring_ll128_one_gpu_per_node" if ppn < 2 else "ring_ll128"]
        bus = min(bus * factor, nch * caps["per_channel_ring_ll128"][a][n2])
    if algo == "Tree" and func == "AllReduce":
        bus = min(bus * f["tree_all_reduce"], nch * caps["per_channel_tree"][a][n2])
    if algo == "Tree" and proto == "LL":
        bus = min(bus * f["tree_ll"], ll_max)
    if algo == "Tree" and proto == "LL128":
        bus = min(bus * (f["tree_ll128_one_node"] if sys.nodes == 1 else f["tree_ll128_nodes"]),
                  nch * caps["per_channel_tree_ll128"][a][n2])
    if algo == "Tree" and sys.ranks == sys.nodes:
        # With one GPU per node the search can only build NCCL_TOPO_PATTERN_TREE (search.cc),
        # whose trees NCCL prices at 0.85 (the tree graph's pattern up to 2.25.1, the largest
        # over the ranks from 2.26.2); with more, which pattern it settles on depends on the
        # PCIe paths between GPUs and NICs, which a topology file does not describe.
        bus *= f["tree_pattern_tree"]
    if algo == "PAT":
        bus *= f["pat"]
    if collnet and proto != "Simple":
        return 0.0
    if algo == "CollNetDirect":
        if func != "AllReduce":
            return 0.0  # needs a CollNet plugin with all-gather and reduce-scatter: not assumed
        factor = ppn / nch
        factor -= (factor - 1) / 2
        bus /= factor
        if sys.arch in ("hopper", "blackwell"):
            bus *= f["collnet_direct_hopper"]
    gather = func in ("AllGather", "ReduceScatter")
    if algo == "NVLS" and gather and sys.nodes > 1 and c["rules"]["nvls_gather_nodes_zeroed"]:
        # From 2.27.3 without a CollNet plugin that has them (deviation 4); before, tuning.cc
        # prices them and enqueue.cc never runs them (_runs).
        return 0.0
    if not gather or algo in c["rules"]["gather_bus_to_algorithm"]:
        bus *= _bus_to_algorithm(sys, func, algo)
    return bus


def _steps(sys: System, func: str) -> int:
    """A ring's steps for one call (tuning.cc's nsteps): 2 (nRanks - 1) for an all-reduce,
    nRanks - 1 for an all-gather or reduce-scatter, nRanks for a broadcast or reduce."""
    if func == "AllReduce":
        return 2 * (sys.ranks - 1)
    return sys.ranks - 1 if func in ("AllGather", "ReduceScatter") else sys.ranks


def _bus_to_algorithm(sys: System, func: str, algo: str) -> float:
    """NCCL's ratio of algorithm to bus bandwidth: nRanks / nsteps for rings (and NVLS from
    2.28.3), 5/6 for NVLS before (and NVLSTree from 2.20), ½ for trees."""
    steps = _steps(sys, func)
    rule = sys.tables["rules"]["nvls_bandwidth"]
    if algo == "NVLSTree" and rule == "graph":
        return sys.tables["factors"]["nvlstree_graph"] * sys.nodes / (2 * (sys.nodes - 1))
    if algo in ("NVLS", "NVLSTree") and rule != "efficiency":
        return 5 / 6
    return sys.ranks / steps if algo in ("Ring", "NVLS", "NVLSTree") else 0.5


def _nvls_speeds(sys: System, graph: Graph, func: str, algo: str) -> tuple[float, float]:
    """NVLS's and NVLSTree's per-channel bus speed (GB/s) inside a node and across nodes, as
    ncclTopoTuneModel computes them before taking the smaller."""
    if sys.tables["rules"]["nvls_bandwidth"] == "graph":
        # 2.18: the speed any algorithm's graph is priced at.
        bw = graph.bw_intra if sys.nodes <= 2 else graph.bw_inter
        return bw, bw
    if sys.tables["rules"]["nvls_bandwidth"] == "min":
        # Before 2.28.3: the graph's speeds; NVLSTree beyond two nodes halves the one across.
        if algo == "NVLS" and func != "AllReduce" and sys.tables["rules"]["nvls_gather_speeds"]:
            # 2.27: an all-gather or reduce-scatter leaves out the GPU's own share inside.
            return (graph.bw_intra * (sys.ppn - 1) / sys.ppn,
                    graph.bw_inter * sys.tables["factors"]["nvls_gather_inter"])
        halve = algo == "NVLSTree" and sys.nodes > 2
        return graph.bw_intra, graph.bw_inter / (2 if halve else 1)
    nch = graph.channels
    intra = graph.bw_intra * sys.tables["caps"]["nvls_efficiency"][sys.arch_index] * (nch - 1) / nch
    intra *= 2.0 if func == "AllReduce" else (sys.ppn - 1) / sys.ppn
    inter = graph.bw_inter * (2 if sys.nodes <= 2 and algo == "NVLSTree" else 1)
    return intra, inter


def versions() -> list[str]:
    """The NCCL releases whose tuning tables ringsim carries, newest first."""
    return list(_versions())


def versions_text() -> str:
    """The releases versions() lists, grouped by series: '2.30.3/4/7, …, 2.18.3/5/6'."""
    series: dict[str, list[str]] = {}
    for v in versions():
        head, _, patch = v.rpartition(".")
        series.setdefault(head, []).append(patch)
    return ", ".join(f"{head}.{'/'.join(sorted(patches, key=int))}"
                     for head, patches in series.items())


@lru_cache(maxsize=1)
def _versions() -> tuple[str, ...]:
    c = constants()
    return (c["version"]["nccl"].split("-")[0], *sorted(
        c.get("older", {}), key=lambda v: tuple(int(x) for x in v.split(".")), reverse=True))


def release(text: str) -> str:
    """An NCCL version as NCCL prints it ('2.21.5-1+cuda12.4', 'v2.21.5') reduced to the
    release whose tables ringsim may carry ('2.21.5')."""
    return text.strip().lstrip("v").split("+")[0].split("-")[0]


def _release(nccl: str | None) -> str | None:
    """An NCCL release ringsim carries, as the key of its constants (None: the model's own)."""
    if nccl is None or nccl == _versions()[0]:
        return None
    if not isinstance(nccl, str) or nccl not in constants().get("older", {}):
        raise RingsimError(f"nccl: ringsim has the tuning tables of NCCL {versions_text()}")
    return nccl


def _latency(sys: System, func: str, algo: str, proto: str, measured: bool = False) -> float:
    """NCCL's per-call latency (µs): baseLat + the steps × hwLat of ncclTopoTuneModel; with
    `measured`, the network's measured latency stands where NCCL adds the plugin's figure."""
    c = tables = sys.tables
    p = names("protocols").index(proto)
    hw = tables["hw_latency"]
    base = tables["base_latency"][algo][p]
    intra = hw[sys.intra_kind][algo][p]
    if sys.cpu == "power" and algo == "Tree" and proto == "Simple" and sys.intra_kind == "pcie":
        intra = hw["pcie"]["Ring"][p]  # NCCL favours trees on POWER hosts with the ring's PCIe hop
    ppn, nodes, ranks = sys.ppn, sys.nodes, sys.ranks
    tree_row = ppn == 1 and tables["rules"]["ppn1_tree_network_row"]
    inter = hw["network"]["Tree" if tree_row else algo][p]
    # tuning.cc adds the graph's latencyInter (the net plugin's props->latency) to every
    # network hop, and once more with Simple for the flush that ends a receive; a measured
    # latency takes the plugin's place there when the call is priced.
    net = sys.net_measured if measured and sys.net_measured is not None else sys.net_latency
    inter += net * (2 if proto == "Simple" else 1)
    local = ranks // nodes
    if algo == "Ring" and func in ("Broadcast", "Reduce"):
        # A broadcast or reduce ring is priced one hop, the one of the link it starts on,
        # when its channels all take the same path (the search's graph->sameChannels). The
        # machines a topology file describes are uniform, so the search's first try, with
        # identical channels, is taken to succeed (docs/cost.md, deviation 13).
        return base + hw[sys.intra_kind if nodes == 1 else "network"]["Ring"][p]
    if algo == "Ring":
        steps = _steps(sys, func)
        overhead = 0.0
        if nodes > 1:
            # getNetOverhead: what posting a step to the network costs the host's CPU.
            table = c["factors"]["net_overhead"]
            overhead = table.get(sys.cpu, table["other"]) * (
                c["factors"]["net_overhead_simple_multiplier"] if proto == "Simple" else 1.0)
        intra = max(intra, overhead)
        # The steps that cross a node boundary: 2 (nNodes - 1) for an all-reduce from 2.23,
        # 2 nNodes before; nNodes - 1 for an all-gather or reduce-scatter.
        per_node = tables["rules"]["ring_inter_steps"] == "nodes"
        crossing = 0 if nodes == 1 else (
            2 * (nodes if per_node else nodes - 1) if func == "AllReduce" else nodes - 1)
        return base + (steps - crossing) * intra + crossing * inter
    if algo == "Tree":
        return base + 2 * ((local - 1) * intra + log2i(nodes) * inter)
    if algo == "CollNetDirect":
        return base + 2 * (min(1, local - 1) * intra
                           + (local - 1) * c["factors"]["collnet_arity_latency"]) + inter
    if algo == "CollNetChain":
        return base + 2 * (local - 1) * intra + inter
    if algo in ("NVLS", "NVLSTree") and tables["rules"]["nvls_latency"] == "base":
        # 2.18: a base latency, and the network's own hop without the plugin's latency.
        hops = (1 if nodes > 1 else 0) if algo == "NVLS" else 2 * (nodes - 1)
        return base + hops * hw["network"][algo][p]
    if algo == "NVLS":
        return intra + (inter if nodes > 1 else 0.0)
    if algo == "NVLSTree":
        return base + intra + 2 * log2i(nodes) * inter
    return base + log2i(nodes) * (inter / 3.5) + ranks * 2.8  # PAT


def _allowed(sys: System, func: str, algo: str, proto: str) -> bool:
    """The (function, algorithm, protocol) triples NCCL tunes at all, and what it disables."""
    if func in ("Broadcast", "Reduce") and algo != "Ring":
        return False
    gather = sys.tables["rules"]["gather_algorithms"]
    if func in ("AllGather", "ReduceScatter") and algo not in gather:
        return False
    if func == "AllReduce" and algo == "PAT":
        return False
    if algo in ("NVLS", "NVLSTree") and proto != "Simple":
        return False
    if algo == "PAT" and (proto != "Simple" or sys.nodes != sys.ranks):
        return False  # PAT runs one GPU per node, with Simple only
    if algo == "NVLSTree" and sys.nodes == 1:
        return False
    if not sys.collnet and (algo.startswith("CollNet") or (algo == "NVLS" and sys.nodes > 1)):
        return False
    return True


def _runs(sys: System, func: str, algo: str) -> bool:
    """Whether enqueue.cc considers an algorithm tuning.cc priced: its choice skips some."""
    local = math.ceil(sys.ppn)  # comm->maxLocalRanks, comm->localRanks
    limits, rules = sys.tables["channels"], sys.tables["rules"]
    gather = func in ("AllGather", "ReduceScatter")
    if algo == "NVLS" and gather and (
            sys.nodes > 1 or (rules["nvls_gather_arity"] and local > limits["nvls_max_arity"])):
        return False  # "now we only support single-node NVLS allgather and reducescatter"
    # CollNetDirect runs with at most NCCL_MAX_DIRECT_ARITY + 1 GPUs per node, and from
    # 2.28.3 CollNetChain too (up to 2.21.5 init.cc turned CollNet off there: system()).
    arity = limits["direct_max_arity"] + 1
    if algo == "CollNetDirect" and local > arity:
        return False
    if algo == "CollNetChain" and local > arity and rules["collnet_arity"] == "both":
        return False
    return True


def _ll128_default(sys: System) -> bool:
    """LL128's default: the release's GPUs, with every path inside a node NVLink (or none)."""
    if sys.arch not in sys.tables["rules"]["ll128_archs"]:
        return False
    return sys.intra_kind == "nvlink" or sys.ranks == sys.nodes


@dataclass(frozen=True)
class _Tuned:
    sys: System
    graphs: dict
    nccl: str | None = None


def _tuned(topology: Topology, gpus: int, nccl: str | None = None) -> _Tuned:
    release = _release(nccl)  # an unknown version is an error before any work
    sys = system(topology, gpus, release)
    return _Tuned(sys, graphs(sys), release)


def _nvls_channels(tuned: _Tuned) -> int:
    """comm->nvlsChannels: NVLS_NCHANNELS by architecture and nodes, and from 2.30.3 on
    Blackwell across nodes what ncclNvlsTreeSm100Tuning (transport/nvls.cc) picks from the
    NIC's rate and the GPUs per node."""
    sys = tuned.sys
    limits = sys.tables["channels"]
    table = limits["nvls_channels_nodes" if sys.nodes > 1 else "nvls_channels"]
    channels = table.get(sys.arch, tuned.graphs["NVLS"].channels)
    if sys.tables["rules"]["sm100_nvls_tuning"] and sys.arch == "blackwell" and sys.nodes > 1:
        t = limits["sm100_tuning"]
        ppn = sys.ranks // sys.nodes  # comm->minLocalRanks
        if sys.nodes == 2 and sys.net_bw >= t["nic"]:
            channels = t["two_nodes"]
        elif sys.net_bw >= t["fast_nic"]:
            channels = t["fewer"] if ppn <= t["few_gpus"] else t["two_nodes"]
        elif sys.net_bw >= t["nic"]:
            channels = t["fewer"]
    return channels


def _connected(tuned: _Tuned) -> tuple[int, int]:
    """connect.cc's comm->collChannels and comm->nChannels (raised to nvlsChannels)."""
    sys = tuned.sys
    limits, rules = sys.tables["channels"], sys.tables["rules"]
    ring, chain = tuned.graphs["Ring"], tuned.graphs["CollNetChain"]
    # The ring graph's channels connected twice; with CollNet half as many again; on Hopper
    # and later across nodes twice again (before 2.25.1 Hopper only: minCompCap == 90).
    channels = min(limits["max"], 2 * ring.channels)
    if sys.collnet and chain.channels and chain.bw_intra > chain.bw_inter and sys.ranks > sys.nodes:
        # "Add more channels to saturate intra-node bandwidth, except the 1 PPN case"
        channels = min(limits["max"], channels + channels // limits["collnet_add_divisor"])
    if (sys.arch in rules["comm_double_archs"] and sys.nodes > 1
            and ring.bw_intra > limits["comm_double_above"]
            and channels < limits["comm_double_below"]):
        channels = min(limits["max"], 2 * channels)
    # collChannels is taken here; from 2.20.5 to 2.27.7 comm->nChannels is then raised to
    # nvlsChannels where NVLS runs.
    raised = channels
    if rules["comm_nvls_raise"] != "none" and tuned.graphs["NVLS"].channels:
        raised = min(limits["max"], max(channels, _nvls_channels(tuned)))
    return channels, raised


def _comm_channels(tuned: _Tuned, algo: str) -> int:
    """Channels an algorithm starts from: nvlsChannels, CollNetDirect's heads, or connect.cc's."""
    if algo in ("NVLS", "NVLSTree"):
        return _nvls_channels(tuned)
    if algo == "CollNetDirect":
        return tuned.graphs[algo].channels
    # Ring and Tree start from the raised count from 2.22.3 (enqueue.cc: comm->nChannels),
    # from collChannels in 2.20.5 and 2.21.5.
    start, raised = _connected(tuned)
    return raised if tuned.sys.tables["rules"]["comm_nvls_raise"] == "rings" else start


def _run_channels(tuned: _Tuned, algo: str, proto: str, nbytes: int) -> int:
    """The channels NCCL launches one call on (topoGetAlgoInfo in enqueue.cc): rings, trees
    and CollNetChain drop a channel while the call is under channels × threads × threshold
    bytes; NVLS runs on nvlsChannels (across nodes at most the communicator's channels);
    CollNetDirect on its heads (ringsim does not shrink it)."""
    channels = _comm_channels(tuned, algo)
    if algo == "NVLS" and tuned.sys.nodes > 1 and tuned.sys.tables["rules"]["nvls_across_capped"]:
        return min(channels, _comm_channels(tuned, "Ring"))
    if algo in ("NVLS", "NVLSTree", "CollNetDirect", "PAT"):
        return channels  # PAT's comm->maxThreads is never set (0), so its loop never runs
    t = tuned.sys.tables["threads"]
    threshold = t["threshold"][proto] * (tuned.sys.ranks if algo == "Ring" and proto == "LL" else 1)
    if algo == "CollNetChain":
        threshold = t["collnet_threshold"]
    threads = _max_threads(tuned, algo, proto)
    # `while (nBytes < nc * nt * threadThreshold) nc--` down to one channel: the largest nc
    # whose nc × nt × threshold bytes fit in the call.
    return max(1, min(channels, nbytes // (threads * threshold)))


def _max_threads(tuned: _Tuned, algo: str, proto: str) -> int:
    """comm->maxThreads (ncclTopoTuneModel): the threads a channel runs with, 0 where NCCL
    sets none. A Simple ring gets fewer when its graph's channels × speed is at most PCI_BW."""
    t = tuned.sys.tables["threads"]
    if algo in ("Ring", "Tree"):
        ring = tuned.graphs["Ring"]
        if (algo, proto) == ("Ring", "Simple") and ring.bw_intra * ring.channels <= t["pci_bw"]:
            return t["ring_simple_small"]
        return t["max_threads"][proto]
    if proto == "Simple" and algo in ("CollNetDirect", "CollNetChain", "NVLS", "NVLSTree"):
        return t["nccl_max"]
    return 0  # PAT's is never set


def _seconds(tuned: _Tuned, func: str, algo: str, proto: str, nbytes: int,
             graph: Graph | None = None, measured: bool = False) -> tuple[float, float, float]:
    """ncclTopoGetAlgoTime for one candidate: (seconds, latency s, bandwidth B/s); inf if none.
    `graph` replaces the algorithm's searched graph (fewer channels); `measured` prices the
    network hops with its measured latency instead of the plugin's figure."""
    sys = tuned.sys
    bw = _bus_bandwidth(sys, graph or tuned.graphs[algo], func, algo, proto)
    if bw <= 0:
        return math.inf, 0.0, 0.0
    lat = _latency(sys, func, algo, proto, measured)
    c = sys.tables
    log_size = log2i(nbytes >> 6) if nbytes >> 6 else c["rules"]["log_size_of_zero"]
    if algo == "Tree" and func == "AllReduce" and 0 <= log_size < 23:
        bw *= c["tree_correction"][proto][log_size]
    if (algo == "NVLSTree" and func == "AllReduce" and 0 <= log_size < 24
            and c["rules"]["nvlstree_correction"] and sys.arch == "blackwell" and sys.x86):
        bw *= c["tree_correction"][proto][log_size]
    if (algo == "Ring" and proto == "Simple" and sys.nodes > 1 and func == "AllReduce"
            and nbytes // (_connected(tuned)[1] * sys.ranks)
            >= c["factors"]["ring_plateau_min_bytes"]):
        lat *= c["factors"]["ring_plateau_volta" if sys.arch == "volta" else "ring_plateau"]
    micro = lat + nbytes / (1000 * bw)
    return micro * 1e-6, lat * 1e-6, bw * 1e9


def tuning_table(topology, gpus: int, nccl: str | None = None, algo: str | None = None,
                 proto: str | None = None) -> dict[tuple[str, str, str], tuple[float, float]]:
    """NCCL's comm->latencies (µs) and comm->bandwidths (GB/s of algorithm bandwidth) for every
    (function, algorithm, protocol) ringsim models, as NCCL prints them at init with
    NCCL_DEBUG_SUBSYS=TUNING; (0, 0) where NCCL cannot run it, and a latency with bandwidth 0
    where it could but has no channels for it, leaves LL128 off by default, or NCCL_ALGO /
    NCCL_PROTO (`algo`, `proto`) leave it out."""
    algos, protos = _pick(algo, "algorithms", "--algo"), _pick(proto, "protocols", "--proto")
    tuned = _tuned(_topology(topology, gpus), gpus, nccl)
    sys = tuned.sys
    table = {}
    for func in TABLE_FUNCTIONS:
        for a in ALGORITHMS:
            if a in sys.tables["rules"]["absent"]:
                continue  # that release's table has no such column
            for p in PROTOCOLS:
                cell = (0.0, 0.0)
                # From 2.28.3 NCCL skips NVLS and NVLSTree outright without two channels,
                # leaving the latency unset too.
                no_nvls = (a in ("NVLS", "NVLSTree") and tuned.graphs[a].channels < 2
                           and sys.tables["rules"]["nvls_bandwidth"] == "efficiency")
                if _allowed(sys, func, a, p) and not no_nvls:
                    bw = _bus_bandwidth(sys, tuned.graphs[a], func, a, p)
                    if (p == "LL128" and proto is None and not _ll128_default(sys)) or (
                            a not in algos or p not in protos):
                        bw = 0.0
                    cell = (_latency(sys, func, a, p), bw)
                table[(func, a, p)] = cell
    return table


def max_threads(topology, gpus: int, nccl: str | None = None) -> dict[tuple[str, str], int]:
    """NCCL's comm->maxThreads for every (algorithm, protocol) of the release's table, as it
    prints them in the 'Max NThreads' row: the threads one channel runs with, 0 for none."""
    tuned = _tuned(_topology(topology, gpus), gpus, nccl)
    return {(a, p): _max_threads(tuned, a, p) for a in ALGORITHMS
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
    processes that each drive `gpus_per_process` GPUs."""
    func = _function(collective)
    algos, protos = _pick(algo, "algorithms", "--algo"), _pick(proto, "protocols", "--proto")
    gpus = _check_count(gpus, "gpus", 2, MAX_GPUS)
    topo = _topology(topology, gpus)
    nbytes = _check_count(nbytes, "bytes", 0, MAX_BYTES)
    check_per_process(topo, gpus, gpus_per_process)
    return _choose(_tuned(topo, gpus, nccl), func, algos, protos, proto is not None, nbytes,
                   host_seconds(gpus_per_process))


def _choose(tuned: _Tuned, func: str, algos: set, protos: set, proto_given: bool,
            nbytes: int, host: float = 0.0) -> NcclChoice:
    best = None
    for a in names("algorithms"):
        if a not in algos:
            continue
        for p in names("protocols"):
            if p not in protos or not _allowed(tuned.sys, func, a, p):
                continue
            if not _runs(tuned.sys, func, a):
                continue
            if a in tuned.sys.tables["rules"]["absent"]:
                continue  # an algorithm that release did not have
            if p == "LL128" and not proto_given and not _ll128_default(tuned.sys):
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
    full, run = _comm_channels(tuned, a), _run_channels(tuned, a, p, nbytes)
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


def _fill(tuned: _Tuned, func: str, algo: str, proto: str, nbytes: int, run: int,
          graph: Graph, bandwidth: float) -> float:
    """Seconds the call waits for its first step to cross the pipeline (nccl_pipeline.py), on
    `run` channels sharing `graph`'s speed, NCCL's algorithm bandwidth `bandwidth` (B/s)."""
    sys = tuned.sys
    if func != "AllReduce" or bandwidth <= 0 or graph.channels <= 0:
        return 0.0
    share = graph.channels / run  # the graph's channels one running channel has the speed of
    if algo == "NVLS":
        # NCCL's own speeds inside and across, in the units of its algorithm bandwidth.
        per_byte = _bus_to_algorithm(sys, func, algo)
        inside, across = (share * s * per_byte * 1e9 for s in _nvls_speeds(sys, graph, func, algo))
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
    func = _function(collective)
    algos, protos = _pick(algo, "algorithms", "--algo"), _pick(proto, "protocols", "--proto")
    gpus = _check_count(gpus, "gpus", 2, MAX_GPUS)
    sizes = [_check_count(n, "bytes", 0, MAX_BYTES) for n in sizes]
    topology = _topology(topology, gpus)
    check_per_process(topology, gpus, gpus_per_process)
    tuned, host = _tuned(topology, gpus, nccl), host_seconds(gpus_per_process)
    return [_choose(tuned, func, algos, protos, proto is not None, n, host) if n else None
            for n in sizes]
