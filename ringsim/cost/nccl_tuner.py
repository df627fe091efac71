"""NCCL's tuning table: what ncclTopoTuneModel (src/graph/tuning.cc) computes for each
(function, algorithm, protocol) from the searched graphs, a bus bandwidth and a latency of
baseLat + steps x hwLat, as each release that ringsim carries computed them (rules and
constants in nccl_constants.toml), and which cells NCCL tunes and runs at all. ringsim's choice
and its time (nccl.py) read it; NCCL prints it at init with NCCL_DEBUG_SUBSYS=TUNING.
"""

from __future__ import annotations

import math
from functools import lru_cache

from ..core.errors import RingsimError
from .nccl_graph import Graph, System, constants, log2i, nvls_searched

# NCCL's names (ncclAlgoStr, ncclProtoStr in src/device/ and tuning.cc), as NCCL_ALGO and
# NCCL_PROTO spell them, in NCCL's order: the columns of nccl_constants.toml follow it.
ALGORITHMS = ("Tree", "Ring", "CollNetDirect", "CollNetChain", "NVLS", "NVLSTree", "PAT")
PROTOCOLS = ("LL", "LL128", "Simple")
NVLS_FAMILY = ("NVLS", "NVLSTree")  # the algorithms the switch's own adds run
# The functions ncclTopoTuneModel (src/graph/tuning.cc) tunes on the ring only: it skips
# every other algorithm for them, so NCCL picks among the ring's three protocols.
RING_ONLY = ("Broadcast", "Reduce")
# nccl-tests' collectives (ringsim's spelling) to NCCL's function names.
FUNCTIONS = {"all-reduce": "AllReduce", "all-gather": "AllGather",
             "reduce-scatter": "ReduceScatter", "broadcast": "Broadcast", "reduce": "Reduce"}
# The functions NCCL's tuning table prints, in its order (ncclFuncStr); the model prices a
# call of each (Broadcast and Reduce on the ring only, the one algorithm NCCL tunes for them).
TABLE_FUNCTIONS = ("Broadcast", "Reduce", "AllGather", "ReduceScatter", "AllReduce")


def names(kind: str) -> list[str]:
    """NCCL's spelling of its algorithms ('algorithms') or protocols ('protocols')."""
    return list(ALGORITHMS if kind == "algorithms" else PROTOCOLS)


def bus_bandwidth(sys: System, graph: Graph, func: str, algo: str, proto: str) -> float:
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
    if algo in NVLS_FAMILY and c["rules"]["nvls_bandwidth"] != "graph":
        efficiency = c["rules"]["nvls_bandwidth"] == "efficiency"
        if nch < 2 and efficiency:
            return 0.0
        intra, inter = nvls_speeds(sys, graph, func, algo)
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
    lone = sys.last_node == 1 and sys.tables["rules"]["tree_pattern_over_ranks"]
    if algo == "Tree" and (sys.ranks == sys.nodes or lone):
        # With one GPU in a node the search can only build NCCL_TOPO_PATTERN_TREE (search.cc),
        # whose trees NCCL prices at 0.85: the tree graph's pattern up to 2.25.1, so with one
        # GPU per node, and from 2.26.2 the largest over the ranks, so also where only the last
        # node holds one. With more, which pattern it settles on depends on the PCIe paths
        # between GPUs and NICs, which a topology file does not describe.
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
        # prices them and enqueue.cc never runs them (runs).
        return 0.0
    if not gather or algo in c["rules"]["gather_bus_to_algorithm"]:
        bus *= bus_to_algorithm(sys, func, algo)
    return bus


def ring_steps(sys: System, func: str) -> int:
    """A ring's steps for one call (tuning.cc's nsteps): 2 (nRanks - 1) for an all-reduce,
    nRanks - 1 for an all-gather or reduce-scatter, nRanks for a broadcast or reduce."""
    if func == "AllReduce":
        return 2 * (sys.ranks - 1)
    return sys.ranks - 1 if func in ("AllGather", "ReduceScatter") else sys.ranks


def bus_to_algorithm(sys: System, func: str, algo: str) -> float:
    """NCCL's ratio of algorithm to bus bandwidth: nRanks / nsteps for rings (and NVLS from
    2.28.3), 5/6 for NVLS before (.75 in 2.18.1; NVLSTree too from 2.19), ½ for trees."""
    steps = ring_steps(sys, func)
    rule = sys.tables["rules"]["nvls_bandwidth"]
    if algo == "NVLSTree" and rule == "graph":
        return sys.tables["factors"]["nvlstree_graph"] * sys.nodes / (2 * (sys.nodes - 1))
    if algo in NVLS_FAMILY and rule != "efficiency":
        return sys.tables["factors"]["nvls_bus_to_algorithm"]
    return sys.ranks / steps if algo in ("Ring", *NVLS_FAMILY) else 0.5


def nvls_speeds(sys: System, graph: Graph, func: str, algo: str) -> tuple[float, float]:
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
    return list(carried())


def versions_text() -> str:
    """The releases versions() lists, grouped by series: '2.30.3/4/7, …, 2.18.1/3/5/6'."""
    series: dict[str, list[str]] = {}
    for v in versions():
        head, _, patch = v.rpartition(".")
        series.setdefault(head, []).append(patch)
    return ", ".join(f"{head}.{'/'.join(sorted(patches, key=int))}"
                     for head, patches in series.items())


@lru_cache(maxsize=1)
def carried() -> tuple[str, ...]:
    """The releases whose tables ringsim carries: the model's own, then the older ones."""
    c = constants()
    return (c["version"]["nccl"].split("-")[0], *sorted(
        c.get("older", {}), key=lambda v: tuple(int(x) for x in v.split(".")), reverse=True))


def release(text: str) -> str:
    """An NCCL version as NCCL prints it ('2.21.5-1+cuda12.4', 'v2.21.5') reduced to the
    release whose tables ringsim may carry ('2.21.5')."""
    return text.strip().lstrip("v").split("+")[0].split("-")[0]


def given_release(text: str) -> str:
    """A release someone names ('2.21.5', or as NCCL prints it, '2.21.5-1+cuda12.4') as the key
    of its tuning tables, once ringsim carries them."""
    given = release(text[:40]) if len(text) <= 40 else text[:40]
    if given not in versions():
        raise RingsimError(f"ringsim has the tuning tables of NCCL {versions_text()}, "
                           f"not {text[:40]!r}")
    return given


def carried_release(nccl: str | None) -> str | None:
    """An NCCL release ringsim carries, as the key of its constants (None: the model's own)."""
    if nccl is None or nccl == carried()[0]:
        return None
    if not isinstance(nccl, str) or nccl not in constants().get("older", {}):
        raise RingsimError(f"nccl: ringsim has the tuning tables of NCCL {versions_text()}")
    return nccl


def graph_searched(sys: System, algo: str) -> bool:
    """Whether init.cc searched the algorithm's graph: the ring's and the tree's always,
    CollNet's where the network reduces, NVLS's where the node has NVLS."""
    if algo.startswith("CollNet"):
        return sys.collnet_searched
    if algo in NVLS_FAMILY:
        return nvls_searched(sys)
    return True


def latency(sys: System, func: str, algo: str, proto: str, measured: bool = False,
            searched: bool = True) -> float:
    """NCCL's per-call latency (µs): baseLat + the steps × hwLat of ncclTopoTuneModel; with
    `measured`, the network's measured latency stands where NCCL adds the plugin's figure;
    `searched` False prices a graph init.cc never searched, as NCCL prints it."""
    c = tables = sys.tables
    p = names("protocols").index(proto)
    hw = tables["hw_latency"]
    base = tables["base_latency"][algo][p]
    # A graph init.cc does not search stays zeroed: its link type is not NVLink, so tuning.cc
    # reads the PCIe row, and it crosses no NIC, so no plugin latency is added. (2.18 leaves
    # such a graph unset rather than zeroed; ringsim prices it as zeroed.)
    kind = sys.intra_kind if searched else "pcie"
    intra = hw[kind][algo][p]
    if sys.cpu == "power" and algo == "Tree" and proto == "Simple" and kind == "pcie":
        intra = hw["pcie"]["Ring"][p]  # NCCL favours trees on POWER hosts with the ring's PCIe hop
    ppn, nodes, ranks = sys.ppn, sys.nodes, sys.ranks
    tree_row = ppn == 1 and tables["rules"]["ppn1_tree_network_row"]
    inter = hw["network"]["Tree" if tree_row else algo][p]
    # tuning.cc adds the graph's latencyInter (the net plugin's props->latency) to every
    # network hop, and once more with Simple for the flush that ends a receive; a measured
    # latency takes the plugin's place there when the call is priced.
    net = sys.net_measured if measured and sys.net_measured is not None else sys.net_latency
    net = net if searched else 0.0
    inter += net * (2 if proto == "Simple" else 1)
    local = ranks // nodes
    if algo == "Ring" and func in ("Broadcast", "Reduce"):
        # A broadcast or reduce ring is priced one hop, the one of the link it starts on,
        # when its channels all take the same path (the search's graph->sameChannels). The
        # machines a topology file describes are uniform, so the search's first try, with
        # identical channels, is taken to succeed (docs/cost.md, deviation 13).
        return base + hw[kind if nodes == 1 else "network"]["Ring"][p]
    if algo == "Ring":
        steps = ring_steps(sys, func)
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
    if algo in NVLS_FAMILY and tables["rules"]["nvls_latency"] == "base":
        # 2.18: a base latency, and the network's own hop without the plugin's latency.
        hops = (1 if nodes > 1 else 0) if algo == "NVLS" else 2 * (nodes - 1)
        return base + hops * hw["network"][algo][p]
    if algo == "NVLS":
        return intra + (inter if nodes > 1 else 0.0)
    if algo == "NVLSTree":
        return base + intra + 2 * log2i(nodes) * inter
    return base + log2i(nodes) * (inter / 3.5) + ranks * 2.8  # PAT


def looped(sys: System, func: str, algo: str, proto: str) -> bool:
    """Whether ncclTopoTuneModel's loop over functions, algorithms and protocols reaches a
    cell at all, by the tests that need no graph."""
    if func in ("Broadcast", "Reduce") and algo != "Ring":
        return False
    if func in ("AllGather", "ReduceScatter") and algo not in sys.tables["rules"]["gather_algorithms"]:
        return False
    if func == "AllReduce" and algo == "PAT":
        return False
    if algo in NVLS_FAMILY and proto != "Simple":
        return False
    return not (algo == "PAT" and (proto != "Simple" or sys.nodes != sys.ranks))  # ncclPatEnable


def priced(sys: System, graph: Graph, func: str, algo: str, proto: str) -> bool:
    """Whether the release's ncclTopoTuneModel reaches a cell's latency: the cells its loop
    over functions, algorithms and protocols does not skip. It prints a latency there even
    where it then zeroes the bandwidth (allowed() says where it keeps it)."""
    rules = sys.tables["rules"]
    if algo in rules["absent"] or not looped(sys, func, algo, proto):
        return False
    # From 2.28.3 (with nvlsEfficiency) the loop skips NVLS and NVLSTree with fewer than two
    # channels: "NVLS/NVLStree needs at least 2 channels".
    return not (algo in NVLS_FAMILY and graph.channels < 2
                and rules["nvls_bandwidth"] == "efficiency")


def allowed(sys: System, func: str, algo: str, proto: str) -> bool:
    """The (function, algorithm, protocol) triples NCCL tunes at all, and what it disables."""
    if not looped(sys, func, algo, proto):
        return False
    if algo == "NVLSTree" and sys.nodes == 1:
        return False
    return sys.collnet or not (algo.startswith("CollNet") or (algo == "NVLS" and sys.nodes > 1))


def runs(sys: System, func: str, algo: str, dtype: str = "float", redop: str = "sum") -> bool:
    """Whether enqueue.cc considers an algorithm tuning.cc priced for a call of `dtype` and
    `redop` (nccl-tests' names): its choice skips some."""
    local = sys.max_local  # comm->maxLocalRanks, comm->localRanks
    limits, rules = sys.tables["channels"], sys.tables["rules"]
    if algo in NVLS_FAMILY and not nvls_reduces(sys, func, dtype, redop):
        return False  # nvlsSupport: the switch cannot reduce this type this way
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


def nvls_reduces(sys: System, func: str, dtype: str, redop: str = "sum") -> bool:
    """Whether NCCL lets NVLS and NVLSTree run a call of this data type and reduction
    (nccl-tests' names): enqueue.cc turns them off where ncclNvlsSupported says the switch
    cannot reduce the type that way. An all-gather reduces nothing (NCCL passes it as a sum)."""
    types = sys.tables["types"]
    if func == "AllGather":
        return dtype in types["nvls_sum"] or sys.tables["rules"]["nvls_gather_any_type"]
    return dtype in types["nvls_sum" if redop == "sum" else "nvls_minmax"] \
        and redop in ("sum", "min", "max")


def _known(value, table: str, what: str, names: str) -> str:
    """`value` if the constants' types[`table`] lists it, else one line naming them all."""
    known = constants()["types"][table]
    if not isinstance(value, str) or value not in known:
        raise RingsimError(f"unknown {what} {str(value)[:40]!r}; {names}: {', '.join(known)}")
    return value


def check_redop(redop) -> str:
    """A reduction as nccl-tests names it (its -o: sum, prod, max, min, avg), checked."""
    return _known(redop, "redops", "reduction", "nccl-tests' -o names")


# ringsim's element types (core/units.py) as NCCL's, by nccl-tests' names; NCCL has no 16-bit
# integer, and its two 8-bit floats run alike (NVLink SHARP adds neither).
AS_NCCL = {"float64": "double", "float32": "float", "float16": "half", "bfloat16": "bfloat16",
           "float8": "f8e4m3", "int64": "int64", "int32": "int32", "int8": "int8", "uint8": "uint8"}


def nvls_adds(dtype: str | None) -> bool:
    """Whether NVLink SHARP adds elements of one of ringsim's types (None: float32), as NCCL's
    ncclNvlsSupported says for its own (types.nvls_sum)."""
    return AS_NCCL.get(dtype or "float32") in constants()["types"]["nvls_sum"]


def nccl_type(dtype: str | None) -> str:
    """NCCL's name (nccl-tests') for one of ringsim's element types (None: float32)."""
    if dtype is None:
        return "float"
    if dtype not in AS_NCCL:
        raise RingsimError(f"NCCL has no {dtype} type: its integers are 8, 32 and 64 bits wide")
    return AS_NCCL[dtype]


def check_dtype(dtype) -> str:
    """A data type as nccl-tests names it (its -d option), checked."""
    return _known(dtype, "nccl", "data type", "NCCL's types as nccl-tests names them")


def enabled_algorithms(sys: System, algos: set[str]) -> set[str]:
    """NCCL_ALGO's algorithms as the release's tuning.cc enables them: up to 2.23.4, without
    CollNet, a set that names none of Ring, Tree, NVLS and NVLSTree gets Ring and Tree back."""
    if not sys.tables["rules"]["collnet_reenables"] or sys.collnet:
        return set(algos)
    # tuning.cc turns NVLSTree off on one node and NVLS across nodes without CollNet before it
    # looks: "If user has hard set NCCL_ALGO=COLLNET, ignore it".
    left = set(algos) & {"Ring", "Tree", "NVLS" if sys.nodes == 1 else "NVLSTree"}
    return set(algos) if left else set(algos) | {"Ring", "Tree"}


def algorithm_on(sys: System, func: str, algo: str, algos: set[str]) -> bool:
    """Whether NCCL_ALGO (`algos`, as enabled_algorithms gives them) leaves an algorithm its
    bandwidth for a function: 2.18 never takes the ring from any function but AllReduce."""
    if algo in algos:
        return True
    return (algo == "Ring" and func != "AllReduce"
            and sys.tables["rules"]["ring_kept_beyond_all_reduce"])


def protocol_on(sys: System, proto: str, protos: set[str], proto_given: bool) -> bool:
    """Whether NCCL_PROTO (`protos`, `proto_given` where it was set) and LL128's default leave
    a protocol on: LL128 named by NCCL_PROTO runs whatever its default."""
    if proto not in protos:
        return False
    return proto != "LL128" or proto_given or ll128_default(sys)


def ring_fallback(sys: System, protos: set[str], proto_given: bool) -> list[str]:
    """The ring's protocols the release restores (comm->ringbdw) for a function NCCL_ALGO left
    no bandwidth: none (2.18, and 2.24.3 on, which fail the call), all three (2.19.3 to
    2.21.5) or those NCCL_PROTO and LL128's default leave on (2.22.3 to 2.23.4)."""
    rule = sys.tables["rules"]["ring_fallback"]
    if rule == "none":
        return []
    return [p for p in PROTOCOLS if rule == "all" or protocol_on(sys, p, protos, proto_given)]


def ring_restored(tables: dict) -> bool:
    """Whether a release runs the ring where NCCL_ALGO leaves a function nothing (up to
    2.23.4: it falls back to it, or in 2.18 never takes it away)."""
    rules = tables["rules"]
    return rules["ring_fallback"] != "none" or rules["ring_kept_beyond_all_reduce"]


def ll128_default(sys: System) -> bool:
    """LL128's default: the release's GPUs, with every path inside a node NVLink (or none),
    and across nodes a NIC close enough to each GPU (the graphs' typeInter)."""
    rules = sys.tables["rules"]
    if sys.arch not in rules["ll128_archs"]:
        return False
    if sys.intra_kind != "nvlink" and sys.ranks != sys.nodes:
        return False
    if sys.nodes == 1:
        return True  # one node's graphs cross no NIC: search.cc leaves typeInter at PATH_PIX
    order = rules["path_order"]
    limit = rules["ll128_inter_sm90" if sys.arch in ("hopper", "blackwell") else "ll128_inter"]
    return order.index(sys.type_inter) <= order.index(limit)
