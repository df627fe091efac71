"""NCCL's tuner re-read from its source at each carried release, to diff ringsim's model against.

Written from NVIDIA/nccl at each tag (git show vX.Y.Z-1:path), one branch per release where the
source changed, independently of the formulas in ringsim/cost/nccl.py: src/graph/tuning.cc
(ncclTopoTuneModel's table and enable logic, ncclTopoGetAlgoTime), src/graph/connect.cc
(comm->nChannels and collChannels), src/transport/nvls.cc (nvlsSupport, nvlsChannels),
src/init.cc (which graphs are searched, collNetSupport) and src/enqueue.cc (the choice's
filters and topoGetAlgoInfo's channel cut). The factors tuning.cc writes into its formulas are
written here as the source writes them.

What it takes from ringsim as input, since ringsim documents it as its own reading of the
machine: the System (NCCL's link rates, docs/cost.md deviation 2), the graph ringsim's search
finds for each pattern (the search is deviation 1; which graphs NCCL searches at all is decided
here), and the tables of nccl_constants.toml (baseLat, hwLat, the per-channel caps, llMaxBws,
nvlsEfficiency, treeCorrectionFactor), which were compared cell by cell with each tag's
tuning.cc. It reads the topology file itself for whether the network reduces (CollNet), for
the latency a net plugin reports (topo.cc), for each GPU's path to its NIC (nic_path: the
graphs' typeInter, numbered as each tag's topo.h numbers PATH_*) and, where that path crosses
the sockets, for the rate topo.cc gives the CPUs' link (the file's cpu, Intel by generation).
"""

from __future__ import annotations

import math
from dataclasses import replace

from ringsim.cost.nccl_tuner import ALGORITHMS, FUNCTIONS, PROTOCOLS, TABLE_FUNCTIONS
from ringsim.cost.nccl_graph import (NONE, PATTERN_NVLS, PATTERN_RING, PATTERN_TREE,
                                     constants, log2i, search, system)
from ringsim.cost.topology import load

OWN = "2.30.7"  # the release ringsim's own tables are


def version(release: str) -> tuple[int, ...]:
    """A release as a comparable tuple: '2.21.5' -> (2, 21, 5)."""
    return tuple(int(x) for x in release.split("."))


# The CPU model number NCCL reads (cpuid: family 6) for each Intel value of a topology file's
# cpu: Broadwell-EP 0x4F, Skylake-SP 0x55 (a plain "intel" is taken as Skylake), Sapphire
# Rapids 0x8F, Emerald Rapids 0xCF.
INTEL_MODELS = {"intel": 0x55, "intel-broadwell": 0x4F, "intel-skylake": 0x55,
                "intel-sapphire-rapids": 0x8F, "intel-emerald-rapids": 0xCF}


def inter_cpu_bw(cpu: str, v: tuple[int, ...]) -> float:
    """topo.cc, ncclTopoGetInterCpuBw, at release v (topo.h's rates, GB/s): POWER P9_BW 32,
    ARM ARM_BW 6, AMD AMD_BW 16 from 2.19.3 (v2.18.6-1:54-71 has no AMD branch: LOC_BW 5000),
    Intel by model: from 2.26.2 ERP_QPI_BW 40 (model >= 0xCF), SRP_QPI_BW 22 (>= 0x8F),
    SKL_QPI_BW 10 (>= 0x55), else BDW_QPI_BW 6 (v2.26.2-1:80-85, 519-523); before, SKL_QPI_BW
    10 from 0x55, else QPI_BW 6 (v2.25.1-1:80, 514)."""
    if cpu == "power":
        return 32.0
    if cpu == "arm":
        return 6.0
    if cpu == "amd":
        return 16.0 if v >= (2, 19) else 5000.0
    model = INTEL_MODELS[cpu]
    if v >= (2, 26, 2):
        return 40.0 if model >= 0xCF else 22.0 if model >= 0x8F else 10.0 if model >= 0x55 else 6.0
    return 10.0 if model >= 0x55 else 6.0


def _cc(arch: str) -> int:
    """The compute capability NCCL compares (minCompCap), for ringsim's GPU generations."""
    return {"volta": 70, "ampere": 80, "hopper": 90, "blackwell": 100}[arch]


class Reference:
    """NCCL's table, channels and choice for one machine, GPU count and release."""

    def __init__(self, topology, gpus: int, release: str):
        topo = load(topology) if isinstance(topology, str) else topology
        self.v = v = version(release)
        key = None if release == OWN else release
        self.c = constants(key)
        self.sys = sys = system(topo, gpus, key)
        self.nodes, self.ranks = sys.nodes, sys.ranks
        self.ppn = sys.ranks / sys.nodes          # tuning.cc's float ppn
        self.local = math.ceil(self.ppn)          # comm->localRanks, maxLocalRanks
        self.cc = _cc(sys.arch)
        self.max_channels = 32 if v < (2, 25) else 64   # MAXCHANNELS (device.h)
        # search.cc copies the NIC's latency into a graph's latencyInter; topo.cc stores the
        # plugin's props->latency with xmlInitAttrInt from 2.24.3 (v2.24.3-1:1170: whole us)
        # and with xmlInitAttrFloat, "%f", before (v2.23.4-1:798). One node crosses no NIC.
        across = topo.levels.get("across")
        plugin = across.net_plugin_latency * 1e6 if across is not None and self.nodes > 1 else 0.0
        self.lat_inter = float(math.floor(plugin + 1e-6)) if v >= (2, 24) else round(plugin, 6)
        self.path = self._paths()
        nic = (across.nic_path if across is not None else None) or "pxb"
        if nic not in self.path:
            nic = "phb"  # no PATH_P2C before 2.27.3: C2C, then the CPU's PCI link, is PATH_PHB
        # search.cc starts typeInter at the GPUs' best path to a NET (ncclTopoGetGpuMinPath),
        # which with every GPU alike is their NIC's; with one node it stays at PATH_PIX.
        self.type_inter = self.path[nic] if self.nodes > 1 else self.path["pix"]
        # A path across the sockets is no faster than the CPUs' link (paths.cc), which every
        # channel of the node crosses: its rate is topo.cc's, read here at each tag; the search
        # (ringsim's, deviation 1) runs on it.
        link = inter_cpu_bw(topo.cpu, v) if nic == "sys" and self.nodes > 1 else None
        self.sys = sys = replace(sys, cpu_link=link)
        self._graphs(topo)
        self._connect()
        self._tune()
        self._tables: dict = {}
        self.table = self.tuned()

    def _graphs(self, topo) -> None:
        """init.cc and nvls.cc: which graphs NCCL searches, and nvlsSupport, collNetSupport."""
        sys, v = self.sys, self.v
        ring = search(sys, PATTERN_RING, self.max_channels // 2)
        tree = NONE
        if ring.channels:
            tree = search(sys, PATTERN_TREE, ring.channels, fixed=ring.channels)
        # nvls.cc: gpuCount <= 2 (before 2.28.7) or < 2 turns NVLS off; it needs an NVSwitch
        # that reduces (NVLink SHARP) and compute capability 9.0 or more.
        few = self.local <= 2 if v < (2, 28, 7) else self.local < 2
        nvls = NONE
        nvls_searched = sys.nvls and self.cc >= 90 and not few
        if nvls_searched:
            heads = min(32, self.local)  # NCCL_MAX_NVLS_ARITY
            nvls = search(sys, PATTERN_NVLS, heads, fixed=heads if self.nodes == 1 else None)
        self.nvls_support = nvls.channels > 0
        # init.cc: collNetSupport needs the network to reduce and two nodes (the node
        # threshold); up to 2.22.3 more than NCCL_MAX_DIRECT_ARITY + 1 (8) GPUs in a node turn
        # it off (v2.21.5-1:1197-1199, v2.22.3-1:1036-1039). Both checks come after the
        # search: CollNet's graphs are searched wherever the network reduces.
        across = topo.levels.get("across")
        reduces = bool(across is not None and across.in_network_reduction)
        collnet = reduces and self.nodes > 1
        if v < (2, 23) and self.local > 8:
            collnet = False
        chain = direct = NONE
        if collnet and ring.channels:
            chain = search(sys, PATTERN_TREE, ring.channels, fixed=ring.channels)
            if sys.nvswitch:
                direct = search(sys, PATTERN_TREE, min(8, self.local))
        self.collnet = collnet and chain.channels > 0
        self.graphs = {"Tree": tree, "Ring": ring, "CollNetDirect": direct,
                       "CollNetChain": chain, "NVLS": nvls, "NVLSTree": nvls, "PAT": tree}
        # A graph init.cc does not search keeps the zeros it was set to (memset from 2.19.3;
        # 2.18 leaves it unset, taken as zeroed here): its typeIntra is not LINK_NVL and its
        # latencyInter 0.
        self.searched = {"Tree": True, "Ring": True, "PAT": True, "CollNetDirect": reduces,
                         "CollNetChain": reduces, "NVLS": nvls_searched,
                         "NVLSTree": nvls_searched}

    def _connect(self) -> None:
        """connect.cc and nvls.cc: collChannels, comm->nChannels and nvlsChannels."""
        v, sys, g = self.v, self.sys, self.graphs
        n = min(self.max_channels, 2 * g["Ring"].channels)
        chain = g["CollNetChain"]
        if self.collnet and chain.bw_intra > chain.bw_inter and self.ranks > self.nodes:
            n = min(self.max_channels, n + n // 2)
        hopper = self.cc == 90 if v < (2, 25) else self.cc >= 90
        room = 2 * n <= self.max_channels if v < (2, 20) else n < 16
        if hopper and self.nodes > 1 and g["Ring"].bw_intra > 45.0 and room:
            n = 2 * n
        self.coll_channels = n
        nvls = 0
        if self.nvls_support:
            if v < (2, 25):
                nvls = 16                                   # NCCL_NVLS_NCHANNELS
            elif v < (2, 27):
                nvls = 32 if self.cc >= 100 else 16         # NVLS_NCHANNELS_SM100, _SM90
            elif self.cc >= 100:
                nvls = 32 if self.nodes > 1 else 24         # _SM100, _SM100_NVL
                if v >= (2, 30, 3) and self.nodes > 1:      # ncclNvlsTreeSm100Tuning
                    nic = sys.net_bw
                    if self.nodes == 2 and nic >= 48:
                        nvls = 32
                    elif nic >= 96:
                        nvls = 24 if self.local <= 8 else 32
                    elif nic >= 48:
                        nvls = 24
            else:
                nvls = 16
        self.nvls_channels = nvls
        # From 2.20.5 to 2.27.7 comm->nChannels is raised to nvlsChannels; 2.20.5 and 2.21.5
        # start Ring and Tree from collChannels, 2.22.3 on from comm->nChannels.
        self.n_channels = max(n, nvls) if (2, 20) <= v < (2, 28) and nvls else n
        self.start_channels = n if (2, 20) <= v < (2, 22) else self.n_channels

    def _paths(self) -> dict:
        """topo.h (graph.h from 2.30): the PATH_* numbers of the types a GPU-NIC path can be."""
        v = self.v
        if v < (2, 26):
            return {"pix": 3, "pxb": 4, "pxn": 5, "phb": 6, "sys": 7}
        if v < (2, 27, 3):
            return {"pix": 4, "pxb": 5, "pxn": 6, "phb": 7, "sys": 8}  # PATH_C2C is 3
        if v < (2, 27, 5):
            return {"pix": 4, "pxb": 5, "pxn": 6, "p2c": 7, "phb": 8, "sys": 9}
        return {"pix": 4, "pxb": 5, "p2c": 6, "pxn": 7, "phb": 8, "sys": 9}

    def _ll128(self, a: str) -> bool:
        """LL128 on by default: NVLink inside (docs/cost.md deviation 3), the GPU, and the graph's
        typeInter: `typeInter <= PATH_PXB || (minCompCap >= 90 && typeInter <= PATH_PXN)` up to
        2.26 (v2.26.6-1 tuning.cc:429), PATH_P2C in PXN's place in 2.27.3 (v2.27.3-1:460,
        NCCL_LL128_C2C 1), and from 2.27.5 `typeInter <= PATH_PXN` from 9.0, PATH_PXB below
        (v2.27.5-1:459-464)."""
        v, cc = self.v, self.cc
        if v < (2, 25):
            listed = cc in (70, 80, 90)
        elif v < (2, 27, 3):
            listed = cc in (70, 80, 90, 100, 120)
        else:
            listed = cc >= 70
        # A graph init.cc never searched stays zeroed: typeInter 0, PATH_LOC.
        inter, path = (self.type_inter if self.searched[a] else 0), self.path
        if v < (2, 27, 3):
            near = inter <= path["pxb"] or (cc >= 90 and inter <= path["pxn"])
        elif v < (2, 27, 5):
            near = inter <= path["pxb"] or (cc >= 90 and inter <= path["p2c"])
        else:
            near = inter <= (path["pxn"] if cc >= 90 else path["pxb"])
        return listed and near and (self.sys.intra_kind == "nvlink" or self.ranks == self.nodes)

    def _tune(self) -> None:
        """tuning.cc, ncclTopoTuneModel: (latency us, algorithm GB/s) for every cell, before
        any algorithm or protocol is turned off (self.raw)."""
        v, c, sys, g = self.v, self.c, self.sys, self.graphs
        nodes, ranks, ppn = self.nodes, self.ranks, self.ppn
        ai = c["caps"]["arch_index"][sys.arch]
        i2 = nodes - 1 if nodes <= 2 else 2
        i1 = ai if nodes == 1 else (1 if sys.cpu == "amd" else 0)
        caps = c["caps"]
        ll_max = caps["ll_max_bw"][i1][i2]
        ch_tree = caps["per_channel_tree"][ai][i2]
        ch_ring128 = caps["per_channel_ring_ll128"][ai][i2]
        ch_tree128 = caps["per_channel_tree_ll128"][ai][i2]
        ch_nvlstree = caps["per_channel_nvls_tree"][ai][i2]
        eff = caps["nvls_efficiency"][ai]
        hw = {k: {a: list(c["hw_latency"][k][a]) for a in ALGORITHMS}
              for k in ("nvlink", "pcie", "network")}
        if sys.cpu == "power":
            hw["pcie"]["Tree"][2] = hw["pcie"]["Ring"][2]
        base = c["base_latency"]
        out = {}
        for coll in TABLE_FUNCTIONS:
            gather = coll in ("AllGather", "ReduceScatter")
            nsteps = 2 * (ranks - 1) if coll == "AllReduce" else (ranks - 1 if gather else ranks)
            for a in ALGORITHMS:
                for p in PROTOCOLS:
                    out[(coll, a, p)] = (0.0, 0.0)
                if a == "PAT" and v < (2, 23):
                    continue
                if coll in ("Broadcast", "Reduce") and a != "Ring":
                    continue
                if gather:
                    tuned = (["Ring"] if v < (2, 19) else ["Ring", "NVLS"] if v < (2, 20)
                             else ["Ring", "NVLS", "CollNetDirect"] if v < (2, 23)
                             else ["Ring", "NVLS", "CollNetDirect", "PAT"])
                    if a not in tuned:
                        continue
                if coll == "AllReduce" and a == "PAT":
                    continue
                graph = g[a]
                nch = graph.channels
                for pi, p in enumerate(PROTOCOLS):
                    if a in ("NVLS", "NVLSTree") and p != "Simple":
                        continue
                    if a == "PAT" and (p != "Simple" or nodes != ranks):
                        continue
                    if a in ("NVLS", "NVLSTree") and v >= (2, 28) and nch < 2:
                        continue  # v2.28.3-1: `if (graphs[a]->nChannels < 2) continue;`
                    collnet = a.startswith("CollNet")
                    bw = graph.bw_intra if nodes <= 2 or collnet else graph.bw_inter
                    if a in ("NVLS", "NVLSTree") and v >= (2, 28):
                        intra = graph.bw_intra * eff * (nch - 1) / nch
                        intra *= 2.0 if coll == "AllReduce" else (ppn - 1) / ppn
                        inter = graph.bw_inter * (2 if nodes <= 2 and a == "NVLSTree" else 1)
                        bw = min(intra, inter, ch_nvlstree if a == "NVLSTree" else math.inf)
                    elif a == "NVLS" and v >= (2, 19):
                        if v >= (2, 27) and coll != "AllReduce":
                            bw = min(graph.bw_intra * (ppn - 1.0) / ppn, graph.bw_inter * 0.9)
                        else:
                            bw = min(graph.bw_intra, graph.bw_inter)
                    elif a == "NVLSTree" and v >= (2, 19):
                        across = graph.bw_inter if nodes <= 2 else graph.bw_inter / 2
                        bw = min(graph.bw_intra, across)
                    bus = nch * bw
                    if a == "Ring" and p == "LL":
                        if v < (2, 21):
                            f = 0.25 if (nodes > 1 or coll in ("AllReduce", "Reduce")) else 1 / 3
                        else:
                            f = 0.5
                        bus = min(ll_max, bus * f)
                    if a == "Ring" and p == "LL128":
                        f = (0.7 if ppn < 2 else 0.92) if v < (2, 23) else 0.92
                        bus = min(bus * f, nch * ch_ring128)
                    if a == "Tree" and (coll == "AllReduce" or v < (2, 23)):
                        bus = min(bus * 0.92, nch * ch_tree)
                    if a == "Tree" and p == "LL":
                        bus = min(bus / 3.8, ll_max)
                    if a == "Tree" and p == "LL128":
                        bus = min(bus * (7 / 9 if nodes == 1 else 120 / 128), nch * ch_tree128)
                    if a == "Tree" and ranks == nodes and v >= (2, 18, 3):
                        # one GPU per node: NCCL_TOPO_PATTERN_TREE (search.cc); v2.18.1-1's
                        # tuning.cc has no such refinement
                        bus *= 0.85
                    if a == "PAT":
                        bus *= 0.85 if v < (2, 24) else 0.75
                    if collnet and p != "Simple":
                        bus = 0.0
                    if a == "CollNetDirect" and p == "Simple":
                        if gather:
                            bus = 0.0  # no CollNet plugin with iallgather (deviation 4)
                        elif nch:
                            factor = ppn / nch
                            factor -= (factor - 1) / 2
                            bus /= factor
                            if self.cc >= 90:
                                bus *= 0.85
                    if v >= (2, 27) and a in ("NVLS", "CollNetDirect") and gather and nodes > 1:
                        bus = 0.0
                    # "Convert bus BW to algorithm BW"
                    if v < (2, 20):
                        convert = True
                    elif v < (2, 23):
                        convert = not (a == "CollNetDirect" and gather)
                    else:
                        convert = not (a != "Ring" and gather)
                    if convert:
                        if a == "Ring":
                            bus *= ranks / nsteps
                        elif a == "NVLS" or (a == "NVLSTree" and v >= (2, 19)):
                            # v2.18.1-1:187 `ratio = .75`; 5.0/6.0 from v2.18.3-1
                            bus *= (ranks / nsteps if v >= (2, 28) else 5 / 6
                                    if v >= (2, 18, 3) else 0.75)
                        elif a == "NVLSTree":
                            bus *= 0.7 * nodes / (2 * (nodes - 1)) if nodes > 1 else 0.0
                        else:
                            bus *= 0.5
                    # tuning.cc: intraHw[a] = graphs[a]->typeIntra == LINK_NVL ? NVLINK : PCI
                    searched = self.searched[a]
                    intra_kind = sys.intra_kind if searched else "pcie"
                    lat_inter = self.lat_inter if searched else 0.0
                    out[(coll, a, p)] = (self._latency(coll, a, p, pi, nsteps, base, hw,
                                                       intra_kind, lat_inter), bus)
        self.raw = out

    def _latency(self, coll, a, p, pi, nsteps, base, hw, intra_kind, lat_inter) -> float:
        """tuning.cc: one cell's comm->latencies (us)."""
        v, nodes, ranks = self.v, self.nodes, self.ranks
        lat = base[a][pi]
        intra = hw[intra_kind][a][pi]
        inter = hw["network"]["Tree" if v >= (2, 23) and ranks == nodes else a][pi]
        inter += lat_inter * (2 if p == "Simple" else 1)
        local = ranks // nodes
        if a == "Ring":
            if coll in ("Broadcast", "Reduce"):
                return lat + hw[intra_kind if nodes == 1 else "network"]["Ring"][pi]
            overhead = 0.0
            if nodes > 1:
                overhead = {"amd": 2.0}.get(self.sys.cpu, 1.0) * (3 if p == "Simple" else 1)
            intra = max(intra, overhead)
            # nInterSteps: 2 nNodes for an all-reduce before 2.23, 2 (nNodes - 1) since
            if coll != "AllReduce":
                crossing = nodes - 1
            elif nodes == 1:
                crossing = 0
            else:
                crossing = 2 * nodes if v < (2, 23) else 2 * (nodes - 1)
            return lat + (nsteps - crossing) * intra + crossing * inter
        if a == "Tree":
            return lat + 2 * ((local - 1) * intra + log2i(nodes) * inter)
        if a == "CollNetDirect":
            arity = 0.5 if v < (2, 19) else 0.4
            return lat + 2 * (min(1, local - 1) * intra + (local - 1) * arity) + inter
        if a == "CollNetChain":
            return lat + 2 * (local - 1) * intra + inter
        if a == "NVLS":
            if v < (2, 19):
                return lat + (hw["network"]["NVLS"][pi] if nodes > 1 else 0.0)
            return intra + (inter if nodes > 1 else 0.0)
        if a == "NVLSTree":
            if v < (2, 19):
                return lat + 2 * (nodes - 1) * hw["network"]["NVLSTree"][pi]
            return lat + intra + 2 * log2i(nodes) * inter
        # PAT, all-gather and reduce-scatter
        if v < (2, 28):
            return 8 + log2i(nodes) * (inter / 3.5) + ranks * 2.8
        return lat + log2i(nodes) * (inter / 3.5) + ranks * 2.8

    def _parse(self, text: str | None, names: list[str], default: dict) -> dict:
        """tuning.cc's parseList for NCCL_ALGO / NCCL_PROTO: a comma list, any case, '^' to
        turn the named ones off; a name the release does not have is ignored."""
        if text is None:
            return dict(default)
        off = text.startswith("^")
        chosen = {t.strip().lower() for t in text.lstrip("^").split(",")}
        return {n: int((n.lower() in chosen) != off) for n in names}

    def _algo_enable(self, algo: str | None) -> dict:
        """algoEnable after NCCL_ALGO and tuning.cc's own switches."""
        v, nodes = self.v, self.nodes
        names = [a for a in ALGORITHMS if a != "PAT" or v >= (2, 23)]
        on = self._parse(algo, names, {a: 1 for a in names})
        on.setdefault("PAT", 0)
        if nodes == 1:
            on["NVLSTree"] = 0
        if not self.collnet:
            on["CollNetDirect"] = on["CollNetChain"] = 0
            if nodes > 1:
                on["NVLS"] = 0
            # "If user has hard set NCCL_ALGO=COLLNET, ignore it" (v2.18.3-1:267-272 to
            # v2.23.4-1:310-314; gone from v2.24.3-1:407-411)
            if v < (2, 24) and not any(on[a] for a in ("Ring", "Tree", "NVLS", "NVLSTree")):
                on["Ring"] = on["Tree"] = 1
        if not self.sys.nvswitch:
            on["CollNetDirect"] = 0
        return on

    def tuned(self, algo: str | None = None, proto: str | None = None) -> dict:
        """comm->bandwidths as tuning.cc prints them under NCCL_ALGO / NCCL_PROTO, and the
        ring's backup (comm->ringbdw, 2.19.3 to 2.23.4) in self.ring_backup."""
        key = (algo, proto)
        if key in self._tables:
            self.ring_backup = self._tables[key][1]
            return self._tables[key][0]
        v = self.v
        algo_on = self._algo_enable(algo)
        proto_on = self._parse(proto, list(PROTOCOLS), {"LL": 1, "LL128": 2, "Simple": 1})
        out, backup = {}, {}
        for (coll, a, p), (lat, bw) in self.raw.items():
            enable = proto_on[p]
            if enable == 2:
                enable = int(self._ll128(a))
            if a == "Ring":
                # v2.19.3-1:204 keeps it before any switch; v2.22.3-1:318 zeroes it where the
                # protocol is off
                backup[(coll, p)] = bw if enable or v < (2, 22) else 0.0
            if not enable:
                bw = 0.0
            # v2.18.3-1:296: "Never disable ring for non-allreduce operations"
            kept = v < (2, 19) and a == "Ring" and coll != "AllReduce"
            if not algo_on[a] and not kept:
                bw = 0.0
            out[(coll, a, p)] = (lat, bw)
        if (2, 19) <= v < (2, 24):
            for coll in TABLE_FUNCTIONS:
                if not any(out[(coll, a, p)][1] for a in ALGORITHMS for p in PROTOCOLS):
                    # "at least set ring algo available" (v2.19.3-1:303-318), before the print
                    for p in PROTOCOLS:
                        out[(coll, "Ring", p)] = (out[(coll, "Ring", p)][0], backup[(coll, p)])
        self._tables[key] = (out, backup)
        self.ring_backup = backup
        return out

    def _runs(self, func: str, a: str) -> bool:
        """enqueue.cc (updateCollCostTable, topoGetAlgoInfo): the algorithms the choice tries."""
        v, gather = self.v, func in ("AllGather", "ReduceScatter")
        if a.startswith("CollNet") and not self.collnet:
            return False
        if a == "CollNetDirect" and self.local > 8 and v >= (2, 23):
            return False  # v2.23.4-1:1793 (up to 2.22.3 init.cc turned CollNet off)
        if a == "CollNetChain" and self.local > 8 and v >= (2, 28):
            return False
        if a in ("NVLS", "NVLSTree") and not self.nvls_support:
            return False
        if a == "NVLS" and not self.collnet and self.nodes > 1:
            return False
        if a == "NVLS" and gather and self.nodes > 1 and v < (2, 27):
            return False
        if a == "NVLS" and gather and self.local > 32 and v >= (2, 25):
            return False
        return True

    def choice(self, nbytes: int, collective: str, algo: str | None = None,
               proto: str | None = None) -> tuple | None:
        """NCCL's (algorithm, protocol, channels, latency us, GB/s, uncut channels), or None."""
        v, c, sys = self.v, self.c, self.sys
        func = FUNCTIONS[collective]
        table = self.tuned(algo, proto)
        best = backup = None
        for a in ALGORITHMS:
            if not self._runs(func, a):
                continue
            for p in PROTOCOLS:
                lat, bw = table[(func, a, p)]
                fallback = False
                if a == "Ring" and bw == 0 and (2, 19) <= v < (2, 24):
                    # ncclTopoGetAlgoTime: "try back up RING algorithm" (v2.19.3-1:404-411)
                    bw, fallback = self.ring_backup[(func, p)], True
                if bw <= 0:
                    continue
                if v < (2, 22):
                    log_size = log2i(nbytes >> 6)  # utils.h log2i(0) = 0
                else:
                    log_size = log2i(nbytes >> 6) if nbytes >> 6 else -1  # log2Down(0) = -1
                if a == "Tree" and (func == "AllReduce" or v < (2, 23)) and 0 <= log_size < 23:
                    bw *= c["tree_correction"][p][log_size]
                if (a == "NVLSTree" and func == "AllReduce" and v >= (2, 29, 2)
                        and 0 <= log_size < 24 and self.cc >= 100
                        and sys.cpu in ("intel", "amd")):
                    bw *= c["tree_correction"][p][log_size]
                if (a == "Ring" and p == "Simple" and self.nodes > 1 and func == "AllReduce"
                        and nbytes // (self.n_channels * self.ranks) >= 64):
                    lat *= 1.9 if self.cc < 80 else 1.4  # "Plateau effect of ring"
                time = lat + nbytes / (1000 * bw)
                if fallback:
                    if backup is None or time < backup[0]:
                        backup = (time, a, p, lat, bw)
                elif best is None or time < best[0]:
                    best = (time, a, p, lat, bw)
        # enqueue.cc: the backup only where nothing else is left (v2.19.3-1:1194-1201); from
        # 2.24.3 "no algorithm/protocol available"
        best = best or backup
        if best is None:
            return None
        _, a, p, lat, bw = best
        return a, p, self._channels(a, p, nbytes), lat, bw, self._full(a)

    def _full(self, a: str) -> int | None:
        """The channels an algorithm has before topoGetAlgoInfo cuts them for a small call."""
        if a in ("NVLS", "NVLSTree"):
            return self.nvls_channels
        return None if a == "CollNetDirect" else self.start_channels

    def _channels(self, a: str, p: str, nbytes: int) -> int | None:
        """enqueue.cc, topoGetAlgoInfo: the channels a call runs on."""
        if a in ("NVLS", "NVLSTree"):
            nc = self.nvls_channels
            if a == "NVLS" and self.nodes > 1 and self.v >= (2, 28):
                nc = min(nc, self.n_channels)
            return nc
        if a == "CollNetDirect":
            return None
        nc = self._full(a)
        threshold = {"LL": 8, "LL128": 8, "Simple": 64}[p]
        if a == "Ring" and p == "LL":
            threshold *= self.ranks
        if a == "CollNetChain" and p == "Simple":
            threshold = 512
        if a == "PAT":
            threads = 0  # comm->maxThreads is never set for PAT
        elif a == "CollNetChain":
            threads = 640  # NCCL_MAX_NTHREADS
        else:
            threads = {"LL": 512, "LL128": 640, "Simple": 512}[p]
            ring = self.graphs["Ring"]
            if a == "Ring" and p == "Simple" and ring.bw_intra * ring.channels <= 12:
                threads = 256  # PCI_BW
        while nbytes < nc * threads * threshold and nc >= 2:
            nc -= 1
        return nc
