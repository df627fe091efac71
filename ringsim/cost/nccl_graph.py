"""What NCCL's topology search finds: channels and per-channel speed of each algorithm's graph.

NCCL (src/graph/search.cc, ncclTopoCompute) searches the machine's real PCI/NVLink tree for
as many channels as fit at the fastest speed of a fixed list, tries slower speeds while they
are above 0.49 of what it found, splits a fast graph into twice the channels at half the
speed (ncclTopoDupChannels), then raises the speed again while the channels still fit. ringsim
has no PCI tree, only a link rate per level, so it replaces the search by the same steps over
a link budget: a speed s gives floor(budget / s) channels. The budgets are NCCL's own link
rates (topo.h), converted from the topology's datasheet rates (nccl_constants.toml).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import lru_cache
from importlib import resources
import tomllib

from .topology_model import DEFAULT_KIND, DEFAULT_NIC_PATH, Topology, cpu_vendor


def log2i(n: int) -> int:
    """NCCL's log2i: the whole part of log₂ n (0 for n ≤ 1)."""
    return max(0, int(n).bit_length() - 1)


@lru_cache(maxsize=1)
def _file() -> dict:
    text = resources.files("ringsim.cost").joinpath("nccl_constants.toml").read_text(encoding="utf-8")
    return tomllib.loads(text)


def _merged(base: dict, changes: dict) -> dict:
    """`base` with `changes` laid over it: tables merge key by key, anything else is replaced."""
    out = dict(base)
    for key, value in changes.items():
        out[key] = _merged(base[key], value) if isinstance(value, dict) and isinstance(
            base.get(key), dict) else value
    return out


@lru_cache(maxsize=None)
def constants(release: str | None = None) -> dict:
    """NCCL's tuning constants (ringsim/cost/nccl_constants.toml), read once: the model's own
    release's, or with `release` (one of the [older] entries) that release's in their place."""
    data = _file()
    if release is None:
        return data
    entry = data["older"][release]
    base = constants(entry["based_on"]) if "based_on" in entry else data
    return _merged(base, {k: v for k, v in entry.items() if k not in ("based_on", "tag")})


@dataclass(frozen=True)
class System:
    """What NCCL's tuner reads of a machine: GPUs, nodes, link kinds and NCCL-rated bandwidths."""

    arch: str
    ranks: int
    nodes: int
    intra_kind: str          # nvlink or pcie: NCCL's intraHw
    intra_bw: float          # GB/s per GPU per direction, as NCCL rates it
    net_bw: float            # GB/s per NIC, 0 on one node
    nvswitch: bool           # GPUs meet in an NVSwitch (CollNetDirect needs one)
    nvls: bool               # the NVSwitch reduces (NVLink SHARP)
    collnet: bool            # the network reduces (InfiniBand SHARP through CollNet)
    uplink_bw: float | None  # PCIe: a switch's shared link to the CPU, when GPUs span switches
    net_latency: float = 0.0  # µs a net plugin reports (props->latency), 0 on one node
    net_measured: float | None = None  # µs the network measurably takes, where the file says
    cpu: str = "intel"       # the host CPU (NCCL's cpuArch and cpuVendor): intel, amd, arm, power
    nccl: str | None = None  # the NCCL release whose tuner reads it (None: the model's own)
    # The network reduces, so init.cc searches CollNet's graphs, before it checks the nodes
    # and the GPUs per node that may turn CollNet off (collnet).
    collnet_searched: bool = False
    # The graphs' typeInter across nodes: each GPU's path to its NIC as the release names it
    # (pix, pxb, p2c, phb or sys; nic_path in the topology file).
    type_inter: str = DEFAULT_NIC_PATH
    # GB/s of the CPUs' interconnect that every channel crosses each way when the NIC is on the
    # other socket (NCCL's rate for the host CPU), None where the path does not cross it.
    cpu_link: float | None = None
    # NICs per GPU: NCCL searches each as a network device of its own, at its share of the
    # GPU's network bandwidth (net_bw).
    nics_per_gpu: int = 1
    # GPUs in the last node where it holds fewer than the others (G placed in order), None
    # where every node holds as many: each node searches its own graphs (graphs()), the last
    # one as `last_system` describes it (its own switches, uplinks and NVLS).
    last_node: int | None = None
    last_system: System | None = None

    @property
    def tables(self) -> dict:
        """The tuning constants of the NCCL release that reads this system."""
        return constants(self.nccl)

    @property
    def ppn(self) -> float:
        """GPUs per node as NCCL's tuner computes it (nRanks / nNodes, a float)."""
        return self.ranks / self.nodes

    @property
    def max_local(self) -> int:
        """comm->maxLocalRanks: the GPUs of the fullest node."""
        if self.last_node is None:
            return math.ceil(self.ppn)
        return round((self.ranks - self.last_node) / (self.nodes - 1))

    @property
    def min_local(self) -> int:
        """comm->minLocalRanks: the GPUs of the emptiest node."""
        return self.ranks // self.nodes if self.last_node is None else self.last_node

    @property
    def x86(self) -> bool:
        """Whether the host CPU is an x86 one (NCCL_TOPO_CPU_ARCH_X86): Intel or AMD."""
        return self.cpu in ("intel", "amd")

    @property
    def arch_index(self) -> int:
        """NCCL's compCapIndex: volta 0, ampere 1, hopper 2, blackwell 3."""
        return self.tables["caps"]["arch_index"][self.arch]


def _nccl_rate(bandwidth: float, kind: str, arch: str, nccl: str | None = None) -> float:
    """A datasheet rate in B/s as NCCL (release `nccl`) rates the same link, in GB/s."""
    rates = constants(nccl)["link_rates"]
    if kind == "nvlink":
        factor = rates["nvlink_nccl"][arch] / rates["nvlink_datasheet"][arch]
    elif kind == "pcie":
        factor = rates["pcie_nccl_x16_gen4"] / rates["pcie_datasheet_x16_gen4"]
    else:
        factor = rates["network_nccl_over_datasheet"]
    return bandwidth / 1e9 * factor if math.isfinite(bandwidth) else 1e6


def system(topology: Topology, gpus: int, nccl: str | None = None) -> System:
    """The System NCCL (release `nccl`, None for the model's own) would see for G GPUs placed
    in order on a topology."""
    nodes = topology.nodes(gpus)
    ppn = gpus if topology.gpus_per_node is None else min(gpus, topology.gpus_per_node)
    inside = topology.levels.get("inside")
    across = topology.levels.get("across")
    intra_kind, intra_bw, nvswitch, nvls, uplink = "pcie", 0.0, False, False, None
    if inside is not None:
        intra_kind = "pcie" if (inside.kind or DEFAULT_KIND["inside"]) == "pcie" else "nvlink"
        intra_bw = _nccl_rate(inside.bandwidth, intra_kind, topology.arch, nccl)
        # Two GPUs on NVLink may be a bridged pair with no switch; NVLink SHARP needs one.
        nvswitch = intra_kind == "nvlink" and (ppn > 2 or inside.in_network_reduction)
        nvls = nvswitch and inside.in_network_reduction
        if inside.gpus_per_switch is not None and ppn > inside.gpus_per_switch:
            uplink = _nccl_rate(inside.uplink, "pcie", topology.arch, nccl)
    net_bw, collnet, net_latency, measured = 0.0, False, 0.0, None
    type_inter, cpu_link, nics = DEFAULT_NIC_PATH, None, 1
    searched = across is not None and across.in_network_reduction
    if across is not None and nodes > 1:
        nics = across.nics_per_gpu or 1
        net_bw = _nccl_rate(across.bandwidth / nics, across.kind or "network", topology.arch, nccl)
        collnet = across.in_network_reduction
        tables = constants(nccl)
        if (tables["rules"]["collnet_arity"] == "off"
                and ppn > tables["channels"]["direct_max_arity"] + 1):
            # init.cc up to 2.21.5: "CollNet currently only supports up to 8 GPUs per node,
            # disabling CollNet", before the channels are connected and the model tuned.
            collnet = False
        # search.cc sets a graph's latencyInter to the NIC's latency, which topo.cc reads
        # from the plugin's props->latency through an integer attribute from 2.24.3 (whole
        # µs), a "%f" one before (to the millionth). One node's graphs cross no NIC.
        micro = across.net_plugin_latency * 1e6
        whole = constants(nccl)["rules"]["net_latency_whole"]
        net_latency = float(math.floor(micro + 1e-6)) if whole else round(micro, 6)
        if across.net_latency is not None:
            measured = across.net_latency * 1e6
        type_inter = across.nic_path or DEFAULT_NIC_PATH
        if type_inter not in tables["rules"]["path_order"]:
            # Before 2.27.3 NCCL has no PATH_P2C: a GPU reaching a NIC under its CPU over C2C
            # has the CPU's root complex on the path, which paths.cc calls PHB.
            type_inter = "phb"
        if type_inter == "sys":
            cpu_link = tables["link_rates"]["cpu_interconnect"][topology.cpu]
    # Every rule but the socket link's rate reads the vendor: an Intel generation is Intel.
    last = topology.node_size(nodes - 1, gpus)
    # The last node's own machine: as many nodes, each of its GPUs (a topology of that size).
    lone = None if last >= ppn else system(replace(topology, gpus_per_node=last), last * nodes, nccl)
    return System(topology.arch, gpus, nodes, intra_kind, intra_bw, net_bw, nvswitch, nvls,
                  collnet, uplink, net_latency, measured, cpu_vendor(topology.cpu), nccl,
                  searched, type_inter, cpu_link, nics, None if lone is None else last, lone)


@dataclass(frozen=True)
class Graph:
    """One searched graph: channels and per-channel speed inside (bw_intra) and across (bw_inter)."""

    channels: int
    bw_intra: float
    bw_inter: float
    # No listed speed fitted the links, and NCCL fell back to one channel in rank order,
    # which it rates at 0.1 GB/s (search.cc, "falling back to simple order").
    fallback: bool = False


NONE = Graph(0, 0.0, 0.0)
FALLBACK_SPEED = 0.1  # GB/s: what search.cc rates the fallback channel at

# NCCL's search patterns (graph.h: NCCL_TOPO_PATTERN_*), the shape a graph is searched for.
PATTERN_TREE, PATTERN_RING, PATTERN_NVLS = 1, 4, 5


def _fits(sys: System, speed: float, pattern: int) -> int:
    """How many channels of one speed the link budget holds (NCCL's search, as a count)."""
    counts = []
    ppn = max(1, round(sys.ppn))
    if ppn > 1:
        counts.append(_intra_fits(sys, speed, pattern))
    if sys.nodes > 1:
        counts.append(_nic_fits(sys, speed))
    return min(counts) if counts else 0


def _nic_fits(sys: System, speed: float) -> int:
    """Channels a node's NICs hold at one speed: each of each GPU's NICs holds its own, and
    where the NICs sit on the other socket, as many as the CPUs' interconnect carries (each
    channel crosses it once each way, entering the node through one NIC and leaving through
    another)."""
    nics = max(1, round(sys.ppn)) * sys.nics_per_gpu
    count = nics * math.floor(sys.net_bw / speed + 1e-9)
    if sys.cpu_link is not None:
        count = min(count, math.floor(sys.cpu_link / speed + 1e-9))
    return count


def search_speeds(sys: System) -> list[float]:
    """The speeds (GB/s) NCCL's search tries, fastest first (search.cc's speedArray)."""
    return sys.tables["speeds"]["inter" if sys.nodes > 1 else "intra"][sys.arch]


def _max_bw(sys: System) -> float:
    """NCCL's system maxBw: the fastest single path a channel can take."""
    paths = [sys.intra_bw] if sys.ranks > sys.nodes else []
    if sys.nodes > 1:
        # A GPU's path to its NIC is as fast as its slowest link (paths.cc).
        paths.append(min(sys.net_bw, sys.cpu_link if sys.cpu_link is not None else math.inf))
    return min(paths) if paths else 0.0


def search(sys: System, pattern: int, max_channels: int, fixed: int | None = None,
           collnet: bool = False) -> Graph:
    """The graph NCCL's search settles on for one pattern (PATTERN_RING, _TREE, _NVLS), for
    CollNet where `collnet` is set."""
    table = sys.tables["speeds"]
    speeds = search_speeds(sys)
    need = fixed or 1
    max_bw = _max_bw(sys)
    start = 0
    while start < len(speeds) - 1 and speeds[start] > max_bw:
        start += 1
    best_n, best_s = 0, 0.0
    for s in speeds[start:]:
        if best_n and s / best_s <= table["keep_searching"]:
            break
        n = min(max_channels, _fits(sys, s, pattern))
        if fixed is not None:
            n = fixed if n >= fixed else 0
        if n >= need and n * s > best_n * best_s:
            best_n, best_s = n, s
    if not best_n:
        if pattern == PATTERN_NVLS or collnet:
            return NONE
        # Links slower than every listed speed: NCCL still runs, on one channel in rank order
        # at 0.1 GB/s, across nodes through the first NIC the GPUs see.
        return Graph(1, FALLBACK_SPEED, FALLBACK_SPEED if sys.nodes > 1 else 0.0, True)
    n, bw_intra, bw_inter = best_n, best_s, best_s
    # ncclTopoDupChannels splits a fast graph into twice the channels at half the speed; from
    # 2.19.3 on before the speeds are raised again, before then after.
    late = sys.tables["rules"]["search_dup_last"]
    if not late:
        n, bw_intra, bw_inter = _dup(sys, pattern, n, bw_intra, bw_inter, max_channels)
    bw_intra, bw_inter = _raise(sys, pattern, n, bw_intra, bw_inter, speeds)
    if late:
        n, bw_intra, bw_inter = _dup(sys, pattern, n, bw_intra, bw_inter, max_channels)
    return Graph(n, bw_intra, bw_inter)


def _dup(sys: System, pattern: int, n: int, bw_intra: float, bw_inter: float,
         max_channels: int) -> tuple[int, float, float]:
    """ncclTopoDupChannels: twice the channels at half the speed, for a fast graph that is not
    NVLS (not on Hopper and later below 50 GB/s with more than four channels; 2.18.1 splits
    none of Hopper's below 50 GB/s and none at all on a later GPU)."""
    table, rules = sys.tables["speeds"], sys.tables["rules"]
    few = n <= 4 and rules["dup_few_channels"]
    if pattern == PATTERN_NVLS or sys.arch not in rules["dup_archs"] or (
            bw_intra < table["dup_above"]) or (
            sys.arch in ("hopper", "blackwell") and bw_intra < table["dup_below_after_ampere"]
            and not few):
        return n, bw_intra, bw_inter
    doubled = min(2 * n, max_channels)
    split = math.ceil(doubled / n)
    return doubled, bw_intra / split, bw_inter / split


def _raise(sys: System, pattern: int, n: int, bw_intra: float, bw_inter: float,
           speeds: list[float]) -> tuple[float, float]:
    """The search's second pass: faster speeds tried while the channels still fit."""
    rules = sys.tables["rules"]
    higher = [v for v in speeds if v > max(bw_intra, bw_inter)]
    if pattern == PATTERN_RING:
        if rules["search_raise_rings"]:
            for v in reversed(higher):
                if _fits(sys, v, pattern) < n:
                    break
                bw_intra = bw_inter = v
    elif pattern == PATTERN_NVLS and rules["search_nvls_raises"] == "across":
        # NVLS raises the speed across (the multicast) one speed at a time while it is under
        # twice the speed inside, so the last raise may reach or pass twice that speed.
        for v in reversed(higher):
            if bw_inter >= 2 * bw_intra or (sys.nodes > 1 and _nic_fits(sys, v) < n):
                break
            bw_inter = v
    else:
        # Trees (and CollNet, and NVLS before 2.19.1) raise the speed inside the node one speed
        # at a time while it is under twice the speed across (search.cc: `bwIntra <
        # bwInter*2` is checked before each raise), so the last may reach or pass twice it.
        for v in reversed(higher):
            if bw_intra >= 2 * bw_inter or (sys.ranks > sys.nodes
                                             and _intra_fits(sys, v, pattern) < n):
                break
            bw_intra = v
    return bw_intra, bw_inter


def _intra_fits(sys: System, speed: float, pattern: int) -> int:
    """Channels the links inside a node alone hold at one speed."""
    if pattern == PATTERN_NVLS:
        # ncclTopoSearchTryNvls: every channel takes s each way between each GPU and the
        # NVSwitch, and 2·s at the channel's head GPU, each GPU heading one channel.
        return math.floor(sys.intra_bw / speed + 1e-9) - 1
    ppn = max(1, round(sys.ppn))
    budget = sys.intra_bw
    if sys.nodes > 1 and ppn > 1:
        # A channel enters the node through one GPU's NIC and leaves through another's:
        # one GPU in ppn neither receives nor sends that channel on NVLink.
        budget *= ppn / (ppn - 1)
    elif pattern == PATTERN_TREE and ppn == 2:
        # One node's tree of two GPUs is a single hop, and the search lets channels take it
        # either way round, so each GPU sends on half of them (NCCL 2.29.2 prints 12 tree
        # channels at 60 GB/s for two H100s where its rings get 30).
        budget *= 2
    count = math.floor(budget / speed + 1e-9)
    if sys.uplink_bw is not None:
        count = min(count, math.floor(sys.uplink_bw / speed + 1e-9))
    return count


def nvls_searched(sys: System) -> bool:
    """Whether init.cc searches the NVLS graph (NVLS and NVLSTree share it): nvlsSupport."""
    # transport/nvls.cc: NVLS needs an NVSwitch that reduces, a Hopper or later GPU and
    # nvls_min_gpus GPUs in the node (3 before 2.28.7).
    ppn = max(1, round(sys.ppn))
    return (sys.nvls and sys.arch in ("hopper", "blackwell")
            and ppn >= sys.tables["rules"]["nvls_min_gpus"])


def graphs(sys: System) -> dict[str, Graph]:
    """Every algorithm's graph, keyed by NCCL's algorithm names (NONE where it has none)."""
    if sys.last_node is not None:
        return _aligned(sys)
    limits = sys.tables["channels"]
    ring = search(sys, PATTERN_RING, limits["ring_max"])
    # init.cc: the tree (and CollNetChain) graph is searched with exactly the ring's channels.
    tree = search(sys, PATTERN_TREE, ring.channels, fixed=ring.channels) if ring.channels else NONE
    # init.cc prices PAT with the tree's graph (graphs[] = {tree, ring, ..., nvls, nvls, tree}).
    found = {"Ring": ring, "Tree": tree, "PAT": tree, "CollNetChain": NONE,
             "CollNetDirect": NONE, "NVLS": NONE, "NVLSTree": NONE}
    ppn = max(1, round(sys.ppn))
    if nvls_searched(sys):
        heads = min(limits["nvls_max_arity"], ppn)
        nvls = search(sys, PATTERN_NVLS, heads, fixed=heads if sys.nodes == 1 else None)
        found["NVLS"] = found["NVLSTree"] = nvls
    if sys.collnet and sys.nodes > 1 and ring.channels:
        found["CollNetChain"] = search(sys, PATTERN_TREE, ring.channels, fixed=ring.channels,
                                       collnet=True)
        if sys.nvswitch:
            # Up to 2.21.5 both CollNet algorithms are priced with the chain's graph.
            found["CollNetDirect"] = (found["CollNetChain"] if sys.tables["rules"]["collnet_one_graph"]
                                      else search(sys, PATTERN_TREE,
                                                  min(limits["direct_max_arity"] + 1, ppn),
                                                  collnet=True))
    return found


def _aligned(sys: System) -> dict[str, Graph]:
    """The graphs of a machine whose last node holds fewer GPUs than the others. Each rank
    searches its own node (search.cc), and init.cc then aligns every rank on the worst: the
    fewest channels, the slowest speeds inside and across (std::min over allGather3Data), so
    that all of them tune alike; CollNet is off where CollNetChain has no channel, NVLS where
    its graph has none; the ring and the tree keep the fewer channels of the two."""
    full = replace(sys, ranks=sys.max_local * sys.nodes, last_node=None, last_system=None)
    per_node = [graphs(full),
                graphs(sys.last_system)]
    found = {}
    for algo in per_node[0]:
        a, b = (g[algo] for g in per_node)
        found[algo] = NONE if not (a.channels and b.channels) else Graph(
            min(a.channels, b.channels), min(a.bw_intra, b.bw_intra), min(a.bw_inter, b.bw_inter),
            a.fallback or b.fallback)
    if not found["CollNetChain"].channels:
        found["CollNetDirect"] = NONE
    shared = min(found["Ring"].channels, found["Tree"].channels)
    for algo in ("Ring", "Tree", "PAT"):
        if found[algo].channels:
            found[algo] = replace(found[algo], channels=shared)
    return found
