"""What a call NCCL chose takes beyond NCCL's own estimate (docs/cost.md, "Deviations"): the
share of the channels it runs on (5), its first step crossing the pipeline (12), a broadcast
ring's other hops (13), one node's NVLS at its links' whole speed (14), and the one channel
NCCL falls back to on links slower than its search lists, at what those links carry (15).
NCCL chooses on its own model (nccl.py); these price the call it chose."""

from __future__ import annotations

import math
from dataclasses import replace
from functools import lru_cache

from .nccl_channels import Tuned, comm_channels
from .nccl_graph import Graph, System, graphs
from .nccl_pipeline import fill_seconds, stages
from .nccl_tuner import RING_ONLY, bus_to_algorithm, latency, nvls_speeds


def run_graph(tuned: Tuned, algo: str, run: int) -> Graph:
    """The graph a call on `run` of an algorithm's channels is priced with: that share of the
    searched graph's channels, each at the graph's speed. Where the node's channels share one
    link, the CPUs' link that a NIC on the other socket puts on every path (System.cpu_link),
    the graph's speed is each channel's share of that link, not what a channel moves: each
    channel is its own connection, and the link is shared only by the channels that run. So
    the channels that run have the whole link, up to their own speed (what as many channels
    move where nothing is shared): min(run channels x own speed, the link's total as the graph
    shares it)."""
    graph = tuned.graphs[algo]
    share = graph.channels * run / comm_channels(tuned, algo, limited=False)
    cut = replace(graph, channels=share)
    if tuned.sys.cpu_link is None or share <= 0:
        return cut
    alone = _unshared(tuned.sys)
    own = alone.graphs[algo]
    own_share = own.channels * run / max(1, comm_channels(alone, algo))

    def speed(mine: float, theirs: float) -> float:
        # per channel of the share: at least the share's own, at most the whole graph's total
        total = min(own_share * theirs, graph.channels * mine)
        return max(mine, total / share)

    return Graph(share, speed(graph.bw_intra, own.bw_intra), speed(graph.bw_inter, own.bw_inter))


def nvls_link_graph(tuned: Tuned, func: str, algo: str) -> Graph | None:
    """The graph one node's NVLS all-reduce runs at: its links' whole speed, not the search's
    fastest listed one; None for any other call. Every GPU heads one of its ppn channels and
    carries (ppn + 1) x a channel's speed (ncclTopoSearchTryNvls), which NCCL's search caps at
    its fastest listed speed (60 GB/s on Hopper), so its model gives 2 GPUs half what 8 get
    per GPU. The call runs on nvlsChannels channels whatever the search found, and moves what
    its links carry: NCCL's own formula at link / (ppn + 1) per channel gives each GPU
    link x nvlsEfficiency x ppn / (ppn + 1), what the multicast moves (each GPU sends its
    data to be reduced and its share of the sum, N (ppn + 1) / ppn, and receives as much)."""
    sys = tuned.sys
    if algo != "NVLS" or func != "AllReduce" or sys.nodes != 1:
        return None
    graph = tuned.graphs[algo]
    if graph.channels <= 0:
        return None
    speed = sys.intra_bw / (graph.channels + 1)
    # No network on one node: the search raises the speed "across" until it reaches twice the
    # speed inside, so that speed never binds where the list does not stop it first.
    return Graph(graph.channels, max(speed, graph.bw_intra), max(2 * speed, graph.bw_inter))


def fallback_link_graph(tuned: Tuned, algo: str) -> Graph | None:
    """The graph a call on NCCL's fallback channel runs at: its one channel at what the links
    on its path carry, not the 0.1 GB/s search.cc rates it at for the choice; None where the
    search found a graph. NCCL falls back when its links are slower than every speed its
    search lists (below 3 GB/s on Hopper, 18 on Blackwell), and the channel then moves data
    as fast as a single channel on those links can; ringsim takes that as the slowest link on
    its path."""
    graph = tuned.graphs[algo]
    if not graph.fallback:
        return None
    sys = tuned.sys
    inside = min(sys.intra_bw, sys.uplink_bw if sys.uplink_bw is not None else math.inf)
    if sys.nodes == 1:
        return Graph(1, inside, 0.0, True)
    across = min(sys.net_bw, sys.cpu_link if sys.cpu_link is not None else math.inf)
    # The one channel crosses the node's links and the network in turn, so it goes at the
    # slower of the two everywhere, as NCCL's fallback rates both alike (and as NCCL's tuner
    # reads the speed inside on two nodes, the one across past them).
    slowest = min(across, inside) if sys.ranks > sys.nodes else across
    return Graph(1, slowest, slowest, True)


@lru_cache(maxsize=64)
def _unshared(sys: System) -> Tuned:
    """The same machine with no link its channels share (its NICs beside its GPUs' CPU)."""
    free = replace(sys, cpu_link=None)
    return Tuned(free, graphs(free), sys.nccl)


def ring_hops(tuned: Tuned, func: str, proto: str, measured: bool) -> float:
    """Seconds a broadcast or reduce spends on the ring's other hops, which NCCL's model
    leaves out: it prices one hop (deviation 13), while the data passes every GPU in turn,
    nRanks - 1 hops, as its all-gather ring's latency counts them."""
    if func not in RING_ONLY:
        return 0.0
    hops = latency(tuned.sys, "AllGather", "Ring", proto, measured)
    return max(0.0, hops - latency(tuned.sys, func, "Ring", proto, measured)) * 1e-6


def fill(tuned: Tuned, func: str, algo: str, proto: str, nbytes: int, run: int,
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
        if sys.cpu_link is not None:
            # A hop inside the node crosses NVLink or PCIe, not the link between the sockets
            # that slows the graph's channels: a step crosses it at a channel's own speed.
            own = _unshared(sys).graphs[algo]
            inside = max(inside, own.bw_intra * 1e9)
    loop, rates = stages(sys, algo, proto, nbytes, run, tuned.graphs[algo].channels, inside,
                         across, tuned.buffsize)
    return fill_seconds(loop, rates, bandwidth / run)
