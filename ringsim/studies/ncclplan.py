"""The plan NCCL built, from its log: each channel a ring of the multi-ring plan, each hop's link.

NCCL rank r is GPU r+1; channel c's ring becomes ring c of the ring algorithm's `ring_order`
(ringsim.algorithms._multiring), so the walk, the TUI and the cost model step through and
price exactly the rings NCCL connected. The summary says, hop by hop, which transport NCCL
chose and whether the hop leaves its node, and lists the trees of the `Trees` lines.

Asked for NCCL's Tree (`--nccl-algo Tree`), channel c's tree, read from every rank's
`Trees` line and checked link by link, becomes tree c of the nccl-tree algorithm's
`tree_parents`: children add into their parent up to the root, which sends the sum back
down (NVIDIA/nccl src/device/all_reduce.h, runTreeUpDown), each channel on its own part.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from ..core.errors import RingsimError
from ..core.parents import find_cycle
from .ncclog import Log, few, parse
from .textfile import read_text


@dataclass(frozen=True)
class HopView:
    """One hop of one channel's ring, 1-based GPUs, with its transport and whether it crosses nodes."""

    channel: int
    src: int
    dst: int
    via: str | None
    crosses: bool | None


def load(path: str, nranks: int | None = None, need_rings: bool = True) -> Log:
    """The communicator of an NCCL_DEBUG=INFO log file ('-' for standard input)."""
    return parse(read_text(path, "NCCL_DEBUG=INFO log"), nranks, need_rings)


def ring_options(log: Log, chunks: int | None = None) -> tuple[dict, int]:
    """The ring algorithm's options that make NCCL's rings (one ring per channel), and the
    plan's segments: K channels × G."""
    return {"channels": len(log.rings), "ring_order": ring_order_text(log)}, len(log.rings) * log.nranks


def tree_options(log: Log, chunks: int | None = None) -> tuple[dict, int]:
    """The nccl-tree algorithm's options that make NCCL's trees (one tree per channel), and the
    plan's segments: K channels × C chunks."""
    log.tree_plan = tree_channels(log)
    text = ";".join(",".join(str(p) for p in tree) for tree in log.tree_plan.values())
    return {"tree_parents": text}, len(log.tree_plan) * (chunks or 1)


# What --nccl-algo names (NCCL_ALGO's words) and the options that replay it from the log.
REPLAYS = {"Ring": ring_options, "Tree": tree_options}


def tree_channels(log: Log) -> dict[int, tuple[int, ...]]:
    """Every channel's tree as the parents of GPU1…G (0 for the root), each link checked from
    both of its ends; a one-line error names what the log misses or where its trees disagree."""
    n = log.nranks
    if not log.trees:
        raise RingsimError(f"{log.name} has no 'Trees [0] …' lines to replay (NCCL prints one per "
                           "rank at NCCL_DEBUG=INFO): leave out --nccl-algo Tree to walk its rings")
    if log.tree_clashes:
        raise RingsimError(log.tree_clashes[0])
    out, dropped = {}, []
    for channel in sorted(log.trees):
        ranks = log.trees[channel]
        beyond = sorted({r for r, (p, kids) in ranks.items() for r in (r, p, *kids) if r >= n})
        if beyond:
            raise RingsimError(f"channel {channel:02d}'s tree names rank {few(beyond)}, but the "
                               f"communicator has {n} ranks (0..{n - 1}): the log mixes communicators")
        missing = sorted(set(range(n)) - set(ranks))
        if missing and all(log.trees_cut.get(r, (0, False))[1] for r in missing):
            dropped.append(channel)  # NCCL cut those ranks' lines (1,023 characters) before it
            continue
        if missing:
            cut = [r for r in missing if r in log.trees_cut]
            why = (f" (rank {cut[0]}'s Trees line, line {log.trees_cut[cut[0]][0]}, is cut short)"
                   if cut else "")
            raise RingsimError(f"channel {channel:02d}'s tree misses rank{'s' * (len(missing) > 1)} "
                               f"{few(missing)} of 0..{n - 1}: the log has no 'Trees' line of "
                               f"{'theirs' if len(missing) > 1 else 'its'} for this channel{why}; "
                               "paste every rank's NCCL_DEBUG=INFO lines")
        out[channel] = _checked_tree(channel, ranks, n)
    if not out:
        raise RingsimError(f"every rank's 'Trees' line in {log.name} is cut short: no channel's "
                           "tree is whole")
    if any(by_nccl for _, by_nccl in log.trees_cut.values()):
        left = f" (channel {', '.join(f'{c:02d}' for c in dropped[:8])} left out)" if dropped else ""
        log.notes.append(f"NCCL cut some ranks' Trees lines at 1,023 characters: the trees from "
                         f"channel {max(out) + 1:02d} on are not in the log{left}; replaying "
                         f"channels 00..{max(out):02d}")
    return out


def _checked_tree(channel: int, ranks: dict, n: int) -> tuple[int, ...]:
    """Channel's tree as parents of GPU1…G, once every link is named by both ends and the ranks
    make one tree (one root, no cycle)."""
    where = f"channel {channel:02d}:"
    for rank in range(n):
        parent, kids = ranks[rank]
        if parent >= 0 and rank not in ranks[parent][1]:
            raise RingsimError(f"{where} rank {rank} names rank {parent} its parent, but rank "
                               f"{parent}'s Trees line does not list {rank} among its children")
        for kid in kids:
            if ranks[kid][0] != rank:
                named = ranks[kid][0]
                said = "no parent" if named < 0 else f"rank {named} its parent"
                raise RingsimError(f"{where} rank {rank} lists rank {kid} as a child, but rank "
                                   f"{kid} names {said}")
    roots = [r for r in range(n) if ranks[r][0] < 0]
    cycle = find_cycle([ranks[r][0] for r in range(n)])
    if cycle:
        raise RingsimError(f"{where} the trees' links go round in a cycle, "
                           + " → ".join(f"rank {r}" for r in cycle)
                           + " (each names the next its parent), so no data reaches a root")
    if len(roots) != 1:
        raise RingsimError(f"{where} the tree falls apart into {len(roots)} trees (roots: rank "
                           f"{few(roots)}); NCCL builds one tree per channel")
    return tuple(ranks[r][0] + 1 for r in range(n))


def tree_hops(log: Log) -> list[HopView]:
    """Every link of every replayed tree, both ways (child → parent up, parent → child down), 1-based."""
    views = []
    for channel, parents in (log.tree_plan or {}).items():
        for child, parent in enumerate(parents):
            if parent:
                for src, dst in ((child, parent - 1), (parent - 1, child)):
                    views.append(HopView(channel, src + 1, dst + 1, log.via(channel, src, dst),
                                         log.crosses(channel, src, dst)))
    return views


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
    """Everything the walk's preface says, as one JSON-ready record (the trees' links as its
    hops when the trees are replayed)."""
    trees_replayed = log.tree_plan is not None
    views = tree_hops(log) if trees_replayed else hops(log)
    transports = Counter(v.via or "not in the log" for v in views)
    crossing = [v for v in views if v.crosses]
    return {
        "type": "nccl_log", "source": log.name, "nccl_version": log.version,
        "replay": "Tree" if trees_replayed else "Ring",
        "ranks": log.nranks, "nodes": nodes(log),
        "channels": len(log.tree_plan) if trees_replayed else len(log.rings),
        "channels_declared": log.channels_declared, "rings_from_hops": log.from_hops,
        "ring_order": [list(r) for r in log.orders()],
        "hops": [{"channel": v.channel, "src": v.src, "dst": v.dst, "via": v.via,
                  "crosses_nodes": v.crosses} for v in views],
        **({"tree_channels": list(log.tree_plan),
            "tree_parents": [list(t) for t in log.tree_plan.values()]} if trees_replayed else {}),
        "transports": dict(transports), "hops_crossing_nodes": len(crossing),
        "trees": trees(log), "notes": list(log.notes),
    }


def text(log: Log) -> list[str]:
    """The preface in words: the rings, which hops cross nodes and over what, the trees."""
    if log.tree_plan is not None:
        return tree_text(log)
    info = summary(log)
    where = f" on {info['nodes']} node{'s' * (info['nodes'] != 1)}" if info["nodes"] else ""
    version = f" (NCCL {info['nccl_version']})" if info["nccl_version"] else ""
    lines = [f"NCCL's plan from {log.name}{version}: {log.nranks} ranks{where}, "
             f"{len(log.rings)} channel{'s' * (len(log.rings) != 1)}, each a ring; the numbers below are "
             "GPUs (NCCL rank r is GPU r+1)" + (" (rings put together from the hop lines)" if log.from_hops else "")]
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
    if any(len(ranks) == log.nranks for ranks in log.trees.values()):
        lines.append("  (--nccl-algo Tree walks these trees instead of the rings)")
    lines.extend(f"Note: {note}" for note in log.notes)
    return lines


def tree_text(log: Log) -> list[str]:
    """The tree replay's preface: each channel's tree link by link, which links cross nodes and
    over what, what to check."""
    info = summary(log)
    where = f" on {info['nodes']} node{'s' * (info['nodes'] != 1)}" if info["nodes"] else ""
    version = f" (NCCL {info['nccl_version']})" if info["nccl_version"] else ""
    count = len(log.tree_plan)
    lines = [f"NCCL's trees from {log.name}{version}: {log.nranks} ranks{where}, {count} "
             f"channel{'s' * (count != 1)}, each a tree: children add into their parent up to "
             "the root, which sends the sum back down (NCCL's Tree all-reduce); the numbers below are "
             "GPUs (NCCL rank r is GPU r+1)"]
    for channel, parents in log.tree_plan.items():
        root = parents.index(0) + 1
        links = []
        for parent, child in sorted((p, k) for k, p in enumerate(parents) if p):
            mark = " ⇒ " if log.crosses(channel, child, parent - 1) else " → "
            links.append(f"{parent}{mark}{child + 1}")
        lines.append(f"  channel {channel:02d}: root {root}; " + _cut(", ".join(links), 140))
    lines.append("  (a → b: b is a's child, adds into a going up and gets the sum back down; "
                 "⇒ marks a link that leaves its node)")
    views = tree_hops(log)
    crossing = [v for v in views if v.crosses]
    if crossing:
        links = Counter(v.via or "transport not in the log" for v in crossing)
        lines.append(f"Tree hops (up and down) that cross nodes: {len(crossing)} of {len(views)}, "
                     "over " + ", ".join(f"{via} ({n})" for via, n in links.most_common(4)))
    inside = Counter(v.via for v in views if v.via and not v.crosses)
    if inside:
        lines.append("Tree hops inside a node: "
                     + ", ".join(f"{via} ({n})" for via, n in inside.most_common(4)))
    unknown = sum(v.via is None for v in views)
    if unknown:
        lines.append(f"  {unknown} of {len(views)} tree hops have no 'via' line in the log")
    advice = transport_advice(info["transports"])
    if advice:
        lines.append(advice)
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
