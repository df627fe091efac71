"""What a diagnosis says in words: one sentence per regime on how far the run falls from NCCL's
model and why it may, the check against the model held to rings, the run beside published ones,
what the NCCL log's network and GPUDirect RDMA lines say, and what to look at next. Those that
read a whole diagnosis take its diagnose.Report as `r`, untyped here since diagnose imports this file.
"""

from __future__ import annotations

import math
import re

import numpy as np

from ..core.units import format_bandwidth, format_bytes, format_seconds
from . import slowsizes
from .diagnose_inputs import SMALLEST_FOR_LATENCY

# NCCL turns GPUDirect RDMA on only while the GPU-to-NIC path is no longer than PXB (through PCIe
# switches, not the CPU) unless NCCL_NET_GDR_LEVEL says otherwise (NVIDIA/nccl
# src/graph/paths.cc, ncclTopoCheckGdr: `int netGdrLevel = PATH_PXB;`). These two settings
# let it reach through the CPU's host bridge (PHB) or across CPU sockets (SYS).
GDR_BEYOND_DEFAULT = ("PHB", "SYS")
# `NCCL_NET_GDR_LEVEL set by environment to SYS` (NCCL's echo) or `NCCL_NET_GDR_LEVEL=SYS`
_GDR_LEVEL = re.compile(r"\bNCCL_NET_GDR_LEVEL(?:( set by environment to )|=)([A-Za-z0-9]+)")
# NCCL names the network plugin it chose once per process: "NCCL INFO Using network IB",
# "… Using network Socket", "… Using network AWS Libfabric" (src/init.cc, ncclNetInit).
_NETWORK = re.compile(r"\bNCCL INFO Using network ([A-Za-z][\w ]{0,40}?)\s*$")


def percent(fraction: float) -> str:
    """A tolerance as the percentage it was given: 0.3 → '30%', 0.005 → '0.5%'."""
    # ten digits: as many as --tolerance takes below 100% (99.999999 is not 100)
    return f"{fraction * 100:.10g}%"


def ring_check(rows, ring, tolerance: float) -> dict:
    """The flagged sizes beside the model held to NCCL_ALGO=Ring: how many of them reach it.

    nccl-tests does not print the algorithm that ran. On two nodes NCCL's trees send each byte
    across the network once where rings send it 2(n-1)/n times, so the tree's bus bandwidth can
    exceed the ring's (S. Jeaugey, NVIDIA/nccl issue 307); a run that used rings, or a machine
    whose tuning picked them, falls short of a Tree prediction without anything being wrong."""
    by_size = {p.bytes: p for p in ring}
    # only where bandwidth counts: the algorithms differ in bytes moved, not in calls
    flagged = [r for r in rows if r.flag and r.regime == "bandwidth"]
    ratios = [r.measured_busbw / by_size[r.bytes].busbw for r in flagged
              if r.bytes in by_size and by_size[r.bytes].busbw]
    within = sum(x >= 1 - tolerance for x in ratios)
    return {"flagged": len(flagged), "within_ring": within,
            "median_ratio": _median(ratios),
            "ring_busbw": max((p.busbw for p in ring if p.busbw), default=None)}


def rings_explain(check: dict | None) -> bool:
    """Whether every flagged bandwidth-bound size reaches the model held to rings (ring_check)."""
    return bool(check and check["flagged"] and check["within_ring"] == check["flagged"])


def _median(values: list[float]) -> float | None:
    return float(np.median(values)) if values else None


def corrupted(row) -> bool:
    """Whether nccl-tests counted wrong elements at this size (#wrong, or an older error ≥ 1)."""
    return row.wrong not in (None, 0) and row.wrong >= 1


def _protocol_off(rows) -> str:
    """The protocol as a cause of slow calls, naming only those NCCL's model picks at `rows`.

    Turning off a protocol NCCL would not run at these sizes changes nothing: a paste that
    starts at 1 MiB has latency-bound sizes that run LL128 or Simple, where LL is no suspect.
    """
    picks = list(dict.fromkeys(x.protocol for x in rows if x.protocol))
    if not picks:
        return "the protocol NCCL's model picks being turned off (NCCL_PROTO)"
    named = picks[0] if len(picks) == 1 else f"{', '.join(picks[:-1])} or {picks[-1]}"
    return f"the protocol NCCL's model picks at these sizes being turned off ({named}, by NCCL_PROTO)"


def verdicts(r) -> list[str]:
    """One sentence per regime: how far measured falls from the model there, and why it may;
    first, where nccl-tests counted wrong results, that no timing of the run can be trusted."""
    out = []
    wrong = [x.bytes for x in r.rows if corrupted(x)]
    if wrong:
        out.append(f"The results were corrupted at {len(wrong)} size{'s' * (len(wrong) > 1)} "
                   f"(#wrong is not 0, from {format_bytes(wrong[0])}): a run that sums wrongly "
                   "is no measure of speed, so fix that before reading any of its times")
    tol = r.tolerance
    for regime in ("latency", "bandwidth"):
        rows = [x for x in r.rows if x.regime == regime and x.ratio is not None]
        if not rows:
            continue
        ratio = _median([x.ratio for x in rows])
        flagged = sum(x.flag for x in rows)
        span = f"{format_bytes(rows[0].bytes)}–{format_bytes(rows[-1].bytes)}" if len(rows) > 1 \
            else format_bytes(rows[0].bytes)
        head = (f"{regime.capitalize()}-bound sizes ({span}, {len(rows)} size"
                f"{'s' * (len(rows) > 1)}): measured busbw is {ratio:.0%} of the model's "
                f"(median), {flagged} flagged")
        short, above = ratio < 1 - tol, ratio > 1 + tol
        if regime == "latency":
            lat_m, lat_p = r.measured.latency, r.modelled.latency if r.modelled else None
            # An output that starts past the smallest sizes only bounds the per-call time: the
            # sentence after it goes by the sizes' busbw, so the figure must not read as exact.
            bound = r.rows[0].bytes > SMALLEST_FOR_LATENCY
            head += (f"; per-call time at most {format_seconds(lat_m)} measured (the output starts "
                     f"at {format_bytes(r.rows[0].bytes)})" if bound else
                     f"; per-call time {format_seconds(lat_m)} measured")
            if lat_p:
                head += f" vs {format_seconds(lat_p)} modelled"
            # the model's per-call time is the host's floor, not the GPUs' latency
            host_set = bool(r.host_seconds and lat_p and lat_p <= r.host_seconds * (1 + 1e-9))
            if host_set and lat_m < lat_p * (1 - tol):
                head += (f". The model's per-call time is the host's ({r.gpus_per_process} GPUs "
                         f"in one process × ringsim's estimate of "
                         f"{format_seconds(r.host_seconds / r.gpus_per_process)} each), and this "
                         "host issues calls faster than that; run one process per GPU to see "
                         "the GPUs' own latency")
            elif short:
                causes = ["kernel launch and proxy-thread overhead", "CPU binding far from the GPU"]
                if not r.proto:
                    # a model held to the run's NCCL_PROTO already runs what the run could
                    causes.append(_protocol_off(rows))
                if r.nodes > 1:
                    causes.append("network latency on the hops that cross nodes")
                head += (". Every call costs more than NCCL's model: "
                         + ", ".join(causes[:-1]) + ("," if len(causes) > 2 else "")
                         + " or " + causes[-1])
            elif above:
                head += (". Calls are cheaper than modelled: NCCL's model takes its latencies from "
                         "its own tables, not the topology's α; across nodes the file's "
                         "net_latency (or net_plugin_latency, added to every hop that crosses "
                         "nodes) may be set higher than the network's" if r.nodes > 1 else
                         ". Calls are cheaper than modelled: NCCL's model takes its latencies "
                         "from its own tables, not the topology's α")
            elif host_set:
                head += (f". The per-call cost is as modelled: the host's, one thread issuing "
                         f"each call to {r.gpus_per_process} GPUs")
            else:
                head += ". The per-call cost is as modelled"
        else:
            bw_m = r.measured.busbw
            bw_p = r.modelled.busbw if r.modelled else None
            if bw_m and bw_m != math.inf:
                head += f"; fitted bus bandwidth {format_bandwidth(bw_m)}"
                if bw_p and bw_p != math.inf:
                    head += f" vs {format_bandwidth(bw_p)} modelled ({bw_m / bw_p:.0%})"
            if short:
                where = (" across nodes: the NIC rate, fewer NICs than GPUs (the model gives each "
                         "GPU its own), a NIC on the other CPU socket (nic_path = \"sys\" in the "
                         "topology's [across] prices it), GPUDirect RDMA off (data staged "
                         "through host memory), the switch fabric (rails, oversubscription)"
                         if r.nodes > 1 else
                         " inside the node: the NVLink or PCIe rate, P2P off (data through host "
                         "memory), GPUs under different CPU sockets")
                if _in_place_fine(r):
                    head += (". These are the out-of-place calls, which diagnose reads; the "
                             "in-place calls beside them do not fall short (next)")
                elif rings_explain(r.ring_check):
                    # the model's pick may not be what ran: say that before blaming the links
                    head += (". Held to rings the model expects what was measured (next), "
                             "so the choice of algorithm may be all that differs")
                elif r.in_place and r.in_place["slower"] == "out-of-place":
                    head += (". Out of place they are slower than in place (next), and in place "
                             f"still short of the model, so the links may also move less than "
                             f"modelled{where}")
                elif _rate_as_modelled(bw_m, bw_p, tol):
                    # The slope of time over bytes is the links' rate: where it is the model's,
                    # the sizes fall short by a cost per call that larger sizes spread thinner.
                    head += (f". But the fitted bus bandwidth is within {percent(tol)} of the "
                             "model's, so the links reach their rate as the sizes grow: what "
                             "falls short is a cost each call pays beyond its bytes (the "
                             "pipeline's start, the proxy's work per message"
                             + (", latency on the hops across nodes" if r.nodes > 1 else "")
                             + "), more than NCCL's model prices, which the largest sizes "
                             "show least")
                else:
                    head += f". The links move less than modelled{where}"
            elif above:
                head += (". Measured exceeds the model: NCCL used a path the model does not price "
                         "(reduction in the switch: NVLink SHARP or CollNet; trees over two nodes) "
                         f"or {r.topology}'s rates are below this machine's")
            elif flagged:
                head += (f". The median size is as modelled, but {flagged} "
                         f"{'are' if flagged > 1 else 'is'} short by more than {percent(tol)}")
            else:
                head += ". The links deliver what the model expects"
        out.append(head)
    if r.in_place:
        out.append(slowsizes.in_place_verdict(r.in_place, tol))
    dipped = slowsizes.dips_verdict(r.dips, sum(x.flag for x in r.rows), percent(tol))
    if dipped:
        out.append(dipped)
    if r.ring_check and r.ring_check["flagged"]:
        c = r.ring_check
        n, within = c["flagged"], c["within_ring"]
        head = (f"Held to rings (NCCL_ALGO=Ring) the model expects up to "
                f"{format_bandwidth(c['ring_busbw'])}; {within} of the {n} flagged "
                f"bandwidth-bound size{'s' * (n > 1)} come{'s' * (within == 1)} within {percent(tol)} "
                f"of the rings' busbw at that size (they reach {c['median_ratio']:.0%} of it, "
                "median)")
        if rings_explain(c):
            head += (": nccl-tests does not print which algorithm ran, and on two nodes NCCL's "
                     "trees can beat the ring's bus bandwidth, so this run may simply have used "
                     "rings; run it again with NCCL_ALGO=Ring to compare like with like")
        elif within == 0:
            head += ": the shortfall is not the choice of algorithm"
        out.append(head)
    if r.peer_rows:
        out.append(peer_verdict(r))
    return out


def _rate_as_modelled(measured: float | None, modelled: float | None, tol: float) -> bool:
    """Whether the fitted bus bandwidth reaches the model's within the tolerance."""
    known = [b for b in (measured, modelled) if b and b != math.inf]
    return len(known) == 2 and measured >= (1 - tol) * modelled


def _in_place_fine(r) -> bool:
    """Whether only the out-of-place calls fall short: in place the same sizes reach the model."""
    return bool(r.in_place and r.in_place["slower"] == "out-of-place"
                and r.in_place["in_place_as_modelled"])


def peer_verdict(r) -> str:
    """How this run stands among the published healthy runs on machines like it."""
    rows, n = r.peer_rows, len(r.peers)
    theirs = "its" if n == 1 else "their median"
    # One median over every size would let the many latency-bound sizes hide a shortfall at
    # the large ones: each regime gets its own, as the model's verdict does.
    regime = {y.bytes: y.regime for y in r.rows}
    parts = []
    for name in ("latency", "bandwidth"):
        mine = [x.ratio for x in rows if regime.get(x.bytes) == name]
        if mine:
            whose = "" if parts else f" {theirs} time"
            parts.append(f"{_median(mine):.2f}×{whose} over the {len(mine)} {name}-bound "
                         f"size{'s' * (len(mine) > 1)}")
    head = (f"Beside {n} published healthy run{'s' * (n > 1)} on machines like this one, at the "
            f"{len(rows)} size{'s' * (len(rows) > 1)} {'they share' if n > 1 else 'it shares'}: "
            f"this run takes {' and '.join(parts)} (the median of each)")
    if n == 1:
        return head
    slower = [x for x in rows if x.slower_than_all]
    if not slower:
        head += ", never longer than the slowest of them"
    elif len(slower) == len(rows):
        head += ", longer than every one of them at every size"
    else:
        sizes = ", ".join(format_bytes(x.bytes) for x in slower[:8]) + (", …" if len(slower) > 8
                                                                          else "")
        head += f", longer than every one of them at {len(slower)} ({sizes})"
    # A ◀ says the model expects more; the published runs say what machines like it do.
    flagged_sizes = {y.bytes for y in r.rows if y.flag}
    flagged = [x for x in rows if x.bytes in flagged_sizes]
    if flagged:
        k, near = len(flagged), sum(x.ratio <= 1 + r.tolerance for x in flagged)
        head += (f"; of the {k} size{'s' * (k > 1)} flagged against the model, {near} "
                 f"{'is' if near == 1 else 'are'} within {percent(r.tolerance)} of their median or "
                 "faster")
        # Healthy machines of this kind measure the same there, so the model is what misses:
        # docs/cost.md lists the sizes where it is faster than what such runs measure.
        if near == k:
            head += (": machines like this one take as long there or longer, so those flags show "
                     "where NCCL's model is faster than real runs (docs/cost.md lists its known "
                     "misses), not a fault of this run")
        elif near:
            other = (f"the other {k - near} take", "those") if k - near > 1 else (
                "the other one takes", "it")
            head += (f": {other[0]} longer than machines like this one do, so look at "
                     f"{other[1]} first")
        else:
            head += ": machines like this one are faster there, so this run falls short of them too"
    return head


def gdr_level(lines) -> str | None:
    """The NCCL_NET_GDR_LEVEL a paste was run with, as NCCL echoes it or the command line sets it.

    NCCL prints `NCCL_NET_GDR_LEVEL set by environment to SYS` with the level as a word (an
    old numeric setting such as `=2` is echoed as `PXB`), so the echo wins over the command line.
    `lines` are the paste's cleaned lines (studies.textfile.Text.lines)."""
    found = None
    for line in lines:
        for match in _GDR_LEVEL.finditer(line):
            if match.group(1) or found is None:
                found = match.group(2).upper()
    return found


# What NCCL's socket transport means for a run across nodes, and what to check.
SOCKETS = ("through host memory and the kernel's network stack, not InfiniBand/RoCE verbs "
           "(check NCCL_IB_HCA, the RDMA drivers and devices in the container, NCCL_IB_DISABLE)")


def network_used(lines) -> str | None:
    """The network NCCL says it used ('IB', 'Socket', 'AWS Libfabric'), from its
    `Using network …` line; the last one where processes disagree is as good as any."""
    found = None
    for line in lines:
        if match := _NETWORK.search(line):
            found = match.group(1)
    return found


def log_verdict(r, crossing: dict[str, int], gdr: str | None = None,
                network: str | None = None) -> str | None:
    """What the NCCL log's cross-node hops say about a cross-node shortfall, in one sentence.

    `crossing` counts the transports of the hops that leave a node (`NET/IB/0/GDRDMA`,
    `NET/Socket/0`, …). NCCL's net transport prints `via NET/<plugin>/<dev>` and appends
    `/GDRDMA` exactly when the NIC reads and writes GPU memory itself (src/transport/net.cc);
    without it every message is copied through host memory on both sides. `gdr` is the
    NCCL_NET_GDR_LEVEL the run set (gdr_level), if any."""
    rows = [x for x in r.rows if x.regime == "bandwidth" and x.ratio is not None]
    known = {via: n for via, n in crossing.items() if via}
    if r.nodes < 2 or not rows or _median([x.ratio for x in rows]) >= 1 - r.tolerance:
        return None
    if _in_place_fine(r):  # the same links move the in-place calls as modelled
        return None
    if not known and network is not None and network.lower() == "socket":
        # No whole ring to read, but NCCL said which network it chose: sockets settle it.
        return ("The NCCL lines show why the bandwidth-bound sizes fall short: NCCL chose its "
                f"TCP socket transport (Using network Socket), {SOCKETS}")
    if not known:
        return None
    total = sum(known.values())
    names = ", ".join(f"{via} ({n})" for via, n in sorted(known.items(), key=lambda kv: -kv[1])[:3])
    if all("/SOCKET" in via.upper() for via in known):
        return (f"The log shows why the bandwidth-bound sizes fall short: all {total} hops that "
                f"cross nodes use NCCL's TCP socket transport ({names}), {SOCKETS}")
    if not any("GDRDMA" in via.upper() for via in known):
        said = (f"The log points at GPUDirect RDMA: none of the {total} hops that cross nodes "
                f"({names}) carries /GDRDMA, which NCCL adds only when the NIC reads and writes "
                "GPU memory directly, so every message is staged through host memory (is "
                "nvidia-peermem or DMA-BUF support loaded? PCIe ACS or the IOMMU in the way? "
                "NCCL_NET_GDR_LEVEL)")
        if gdr is not None and gdr not in GDR_BEYOND_DEFAULT:
            said += (f"; this run sets NCCL_NET_GDR_LEVEL={gdr}, which keeps it off wherever a "
                     "GPU and its NIC are further apart than that (nvidia-smi topo -m)")
        return said
    if all("GDRDMA" in via.upper() for via in known):
        if gdr in GDR_BEYOND_DEFAULT:
            return (f"The log shows GPUDirect RDMA on all {total} hops that cross nodes ({names}) "
                    f"only because NCCL_NET_GDR_LEVEL={gdr} allows it past NCCL's default (PXB: "
                    "GPU and NIC under a common PCIe switch), so the NIC reads and writes GPU "
                    "memory through the CPU (PHB) or across the link between CPU sockets (SYS): "
                    "check the GPU-to-NIC path with nvidia-smi topo -m and the BIOS NUMA "
                    "settings, and put each GPU next to its NIC rather than forcing the level")
        return (f"The log shows GPUDirect RDMA on all {total} hops that cross nodes ({names}), so "
                "the shortfall is in the NICs or the fabric: their rate and number per node "
                "(ibstat), the switches between the nodes, other traffic; or on the PCIe path "
                "between each GPU and its NIC (nvidia-smi topo -m)")
    return None


def _corruption_suspects(nodes: int) -> str:
    """The paths that can corrupt a run's data, each with the setting that takes it out; the
    network's only where the run crosses nodes."""
    # Taking one path out at a time finds the one that corrupts, without guessing.
    paths = ["NCCL_P2P_DISABLE=1 (peer-to-peer between a node's GPUs, which PCIe ACS or the "
             "IOMMU can break)", "NCCL_NVLS_ENABLE=0 (NVLink SHARP, on NVSwitch machines)"]
    if nodes > 1:
        paths.insert(0, "NCCL_NET_GDR_LEVEL=LOC (GPUDirect RDMA between GPU and NIC)")
    return ("run it again with one path taken out at a time, " + ", ".join(paths)
            + "; then the driver and the NCCL release")


def checks(r) -> list[str]:
    """What to look at next."""
    out = []
    wrong = [x.bytes for x in r.rows if corrupted(x)]
    if wrong:
        out.append(f"#wrong is not 0 at {len(wrong)} size{'s' * (len(wrong) > 1)} (from "
                   f"{format_bytes(wrong[0])}): the results were corrupted; fix that before any "
                   f"timing: {_corruption_suspects(r.nodes)}")
    flagged = sum(x.flag for x in r.rows)
    # The verdicts' own next steps first, where they explain the flagged sizes.
    if _in_place_fine(r):
        out.append("run it again with a larger -w (warm-up iterations), then with "
                   "NCCL_LOCAL_REGISTER=0 and with NCCL_NVLS_ENABLE=0: the out-of-place calls "
                   "alone fall short, so their output buffer, not the links, is the question")
    dipped = slowsizes.mostly_dips(r.dips, flagged)
    if dipped:
        out.append("run it again with more iterations (nccl-tests -n 100 -w 20) and check for "
                   "other jobs on the same nodes and switches: the flagged sizes are dips")
    c = r.ring_check
    if rings_explain(c):
        out.append("run it again with NCCL_ALGO=Ring: held to rings the model expects what was "
                   "measured, so this run may simply have used rings")
    if flagged and not (_in_place_fine(r) or dipped):
        out.append("run again with NCCL_DEBUG=INFO and read which transport every hop uses: "
                   "ringsim walk --nccl-log LOG (P2P/IPC and NET/IB/…/GDRDMA are the fast paths; "
                   "SHM, NET/Socket or NET/IB without GDRDMA go through host memory)")
        if r.nodes == 2 and r.gpus > 2 and not r.ring_check and any(
                x.flag and x.algorithm not in (None, "Ring") for x in r.rows):
            out.append("with two nodes NCCL picks trees, which can exceed the ring's bus bandwidth; "
                       "NCCL_ALGO=Ring makes the numbers easier to read (S. Jeaugey, NVIDIA/nccl "
                       "issue 307)")
    return out
