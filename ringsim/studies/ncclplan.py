"""The plan NCCL built, from its log: each channel a ring of the multi-ring plan, each hop's link.

NCCL rank r is GPU r+1; channel c's ring becomes ring c of the ring algorithm's `ring_order`
(ringsim.algorithms._multiring), so the walk, the TUI and the cost model step through and
price exactly the rings NCCL connected. The summary says, hop by hop, which transport NCCL
chose and whether the hop leaves its node, and lists the trees of the `Trees` lines.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from ..core.errors import RingsimError
from .ncclog import Log, parse
from .textfile import read_text


@dataclass(frozen=True)
class HopView:
    """One hop of one channel's ring, 1-based GPUs, with its transport and whether it crosses nodes."""

    channel: int
    src: int
    dst: int
    via: str | None
    crosses: bool | None


def load(path: str, nranks: int | None = None) -> Log:
    """The communicator of an NCCL_DEBUG=INFO log file ('-' for standard input)."""
    return parse(read_text(path, "NCCL_DEBUG=INFO log"), nranks)


def ring_order_text(log: Log) -> str:
    """The rings as --ring-order reads them: '1,2,3,4;1,3,2,4'."""
    return ";".join(",".join(str(g) for g in ring) for ring in log.orders())


def hops(log: Log) -> list[HopView]:
    """Every hop of every ring, in ring order."""
    views = []
    for channel, ring in log.rings.items():
        for i, src in enumerate(ring):
            dst = ring[(i + 1) % len(ring)]
            views.append(HopView(channel, src + 1, dst + 1, log.via(channel, src, dst),
                                 log.crosses(channel, src, dst)))
    return views


def nodes(log: Log) -> int | None:
    """How many nodes the log shows: its nNodes, or the hosts its lines name (None: unknown)."""
    if log.nodes:
        return log.nodes
    hosts = set(log.hosts.values())
    return len(hosts) if len(hosts) == log.nranks or (hosts and len(log.hosts) == log.nranks) else None


def contiguous_nodes(log: Log, gpus_per_node: int) -> bool | None:
    """True when ranks r·P … r·P+P−1 share a host, as ringsim's topologies place GPUs (None: unknown)."""
    if len(log.hosts) < log.nranks:
        return None
    return all(log.hosts[r] == log.hosts[(r // gpus_per_node) * gpus_per_node]
               for r in range(log.nranks))


def placement_note(log: Log, topology) -> str:
    """Where the pricing topology's nodes differ from the log's hosts, the sentence that says so."""
    count = nodes(log)
    if topology is None or not count or log.nranks % count:
        return ""
    per_node = log.nranks // count
    if topology.nodes(log.nranks) == count and (count == 1 or topology.gpus_per_node == per_node):
        if count == 1 or contiguous_nodes(log, per_node) in (True, None):
            return ""
        return ("the log's ranks do not sit in blocks of one host each; the price puts GPU k "
                f"in node ⌈k/{per_node}⌉")
    placed = f"{topology.gpus_per_node} GPUs per node" if topology.gpus_per_node else "one node"
    return (f"the log shows {count} node{'s' * (count > 1)} of {per_node} GPUs but topology "
            f"{topology.name} has {placed}: its price places hops otherwise than NCCL did "
            f"(a topology file with gpus_per_node = {per_node} matches the log)")


def trees(log: Log) -> list[dict]:
    """Each channel's tree as NCCL printed it: root(s) and parent → children, 1-based GPUs."""
    out = []
    for channel in sorted(log.trees):
        ranks = log.trees[channel]
        roots = sorted(r + 1 for r, (parent, _) in ranks.items() if parent < 0)
        edges = sorted((r + 1, [c + 1 for c in children]) for r, (_, children) in ranks.items() if children)
        out.append({"channel": channel, "ranks_seen": len(ranks), "roots": roots,
                    "children": {str(parent): kids for parent, kids in edges}})
    return out


def summary(log: Log) -> dict:
    """Everything the walk's preface says, as one JSON-ready record."""
    views = hops(log)
    transports = Counter(v.via or "not in the log" for v in views)
    crossing = [v for v in views if v.crosses]
    return {
        "type": "nccl_log", "source": log.name, "nccl_version": log.version,
        "ranks": log.nranks, "nodes": nodes(log), "channels": len(log.rings),
        "channels_declared": log.channels_declared, "rings_from_hops": log.from_hops,
        "ring_order": [list(r) for r in log.orders()],
        "hops": [{"channel": v.channel, "src": v.src, "dst": v.dst, "via": v.via,
                  "crosses_nodes": v.crosses} for v in views],
        "transports": dict(transports), "hops_crossing_nodes": len(crossing),
        "trees": trees(log), "notes": list(log.notes),
    }


def text(log: Log) -> list[str]:
    """The preface in words: the rings, which hops cross nodes and over what, the trees."""
    info = summary(log)
    where = f" on {info['nodes']} node{'s' * (info['nodes'] != 1)}" if info["nodes"] else ""
    version = f" (NCCL {info['nccl_version']})" if info["nccl_version"] else ""
    lines = [f"NCCL's plan from {log.name}{version}: {log.nranks} ranks{where}, "
             f"{len(log.rings)} channel{'s' * (len(log.rings) != 1)}, each a ring; NCCL rank r "
             "is GPU r+1" + (" (rings put together from the hop lines)" if log.from_hops else "")]
    for channel, ring in log.rings.items():
        parts = []
        for i, src in enumerate(ring):
            dst = ring[(i + 1) % len(ring)]
            mark = " ⇒ " if log.crosses(channel, src, dst) else " → "
            parts.append(f"{src + 1}{mark}" if i < len(ring) - 1 else f"{src + 1}{mark}{ring[0] + 1}")
        shown_ring = "".join(parts)
        lines.append(f"  channel {channel:02d}: {_cut(shown_ring, 150)}")
    lines.append("  (⇒ marks a hop that leaves its node)")
    crossing = [v for v in hops(log) if v.crosses]
    if crossing:
        links = Counter(v.via or "transport not in the log" for v in crossing)
        lines.append(f"Hops that cross nodes: {len(crossing)} of {len(hops(log))}, over "
                     + ", ".join(f"{via} ({n})" for via, n in links.most_common(4)))
    links = Counter(v.via for v in hops(log) if v.via and not v.crosses)
    if links:
        lines.append("Hops inside a node: " + ", ".join(f"{via} ({n})" for via, n in links.most_common(4)))
    advice = transport_advice(info["transports"])
    if advice:
        lines.append(advice)
    for tree in trees(log)[:2]:
        edges = "; ".join(f"{p} → {', '.join(str(k) for k in kids)}"
                          for p, kids in list(tree["children"].items())[:6])
        lines.append(f"Tree of channel {tree['channel']:02d} ({tree['ranks_seen']} of "
                     f"{log.nranks} ranks' lines): root {', '.join(str(r) for r in tree['roots']) or '?'}"
                     + (f"; {edges}" if edges else ""))
    if len(log.trees) > 2:
        lines.append(f"  … and {len(log.trees) - 2} more channels' trees (--json lists them all)")
    lines.extend(f"Note: {note}" for note in log.notes)
    return lines


def transport_lines(log: Log) -> list[str]:
    """The links the log's rings use, in two sentences, and what they suggest checking."""
    views = hops(log)
    out = []
    crossing = Counter(v.via or "transport not in the log" for v in views if v.crosses)
    inside = Counter(v.via for v in views if v.via and not v.crosses)
    if crossing:
        out.append(f"the NCCL log lines show {sum(crossing.values())} of {len(views)} ring hops "
                   "crossing nodes, over " + ", ".join(f"{via} ({n})" for via, n in crossing.most_common(3)))
    if inside:
        out.append("inside a node the rings use " + ", ".join(f"{via} ({n})" for via, n in inside.most_common(3)))
    advice = transport_advice(dict(Counter(v.via or "" for v in views)))
    if advice:
        out.append(advice[0].lower() + advice[1:])
    return out


def transport_advice(transports: dict) -> str:
    """What the transports say to check, in words (empty when nothing stands out)."""
    names = " ".join(transports).upper()
    tips = []
    if "NET/SOCKET" in names:
        tips.append("NET/Socket means plain TCP between nodes: no InfiniBand/RoCE verbs found "
                    "(check NCCL_IB_HCA, the RDMA drivers, NCCL_IB_DISABLE)")
    if "NET/IB" in names and "GDRDMA" not in names:
        tips.append("NET/IB without /GDRDMA stages every message through host memory: GPUDirect "
                    "RDMA is off (nvidia-peermem loaded? GPU and NIC under one PCIe switch? "
                    "NCCL_NET_GDR_LEVEL)")
    if "SHM" in names:
        tips.append("SHM hops go through host memory, not GPU to GPU (no P2P between those "
                    "GPUs: check nvidia-smi topo -m, NCCL_P2P_LEVEL)")
    return "What to check: " + "; ".join(tips) if tips else ""


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"


def check_walkable(log: Log, max_gpus: int) -> None:
    """Refuse a log whose plan the walk cannot show."""
    if log.nranks > max_gpus:
        raise RingsimError(f"the log's communicator has {log.nranks:,} ranks; the walk shows at most "
                           f"{max_gpus} GPUs")
    if log.nranks < 2:
        raise RingsimError("the log's communicator has one rank: there is no ring to walk")
