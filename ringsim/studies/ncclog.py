"""Read an NCCL_DEBUG=INFO log: the rings NCCL built, the link each hop used, the trees.

NCCL prints (src/graph/connect.cc, src/transport/*.cc; the format has changed over 2.x):
- rank 0's ring of every channel: `Channel 00/02 :    0   1   2   3` (2.5 on), or
  `Ring 00 :    0   1   2   3` (2.4 and older);
- one line per hop as it connects: `Channel 00/0 : 0[35000] -> 1[f5000] [send] via
  NET/IB/0/GDRDMA`, `Channel 03 : 0[14000] -> 2[41000] via P2P/IPC/read`, or the old
  `Ring 00 : 26[2] -> 24[0] via P2P/IPC` and `Ring 00 : 6 -> 2 [receive] via NET/IB/0`;
- every rank's tree neighbours per channel, on one line (src/init.cc, cut by NCCL at 1,023
  characters): `Trees [0] 1/16/-1->0->-1 [1] …`, read as children d0/d1/d2 -> this rank ->
  parent (-1: none) from 2.8 on; `[0] 26->25->-1/-1/-1`, parent -> rank -> children, in 2.4;
  `[0] 1/-1/-1->0->-1|-1->0->1/-1/-1`, the reduce tree | the broadcast tree, in 2.5 to 2.7;
- `comm 0x… rank r nranks N … Init COMPLETE` once per rank and communicator.
Each line starts `host:pid:tid [device] NCCL INFO`, which tells on which host a rank runs.
Where a log lacks the ring lists, the rings are put together from the hop lines.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..core.errors import RingsimError
from .textfile import DIGITS, LINE_PREFIX, NCCL_VERSION, Text, shown

MAX_CHANNELS = 64  # NCCL's MAXCHANNELS
MAX_RANKS = 4096
# NCCL writes a rank's Trees into a 1,024-byte buffer (src/init.cc): a line this long that
# ends mid-tree was cut by NCCL itself, every rank's at about the same channel. A shorter
# line that ends mid-tree was cut by whoever pasted the log.
NCCL_LINE_CUT = 990
_D = DIGITS
_ORIGIN = re.compile(rf"^(\S*?):({_D}):({_D}) \[({_D})\] NCCL INFO ")
_LIST = re.compile(rf"NCCL INFO (?:Channel ({_D})/({_D})|Ring ({_D})) :((?:\s+{_D})+)\s*(\.\.\.)?\s*$")
_HOP = re.compile(rf"NCCL INFO (?:Channel|Ring) ({_D})(?:/{_D})? : ({_D})(?:\[[0-9a-fA-Fx]+\])? -> "
                  rf"({_D})(?:\[[0-9a-fA-Fx]+\])?(?: \[(send|receive)\])? via (\S.*?)\s*$")
_TREES = re.compile(r"NCCL INFO Trees(?= \[\d+\] -?\d)")
_N = rf"(-?{_D})"
_DOWN = rf"{_N}/{_N}/{_N}->{_N}->{_N}"   # children -> rank -> parent (2.5 on)
_UP = rf"{_N}->{_N}->{_N}/{_N}/{_N}"     # parent -> rank -> children (2.4; 2.5–2.7's second tree)
_TREE = re.compile(rf" \[({_D})\] (?:{_DOWN}(?:\|{_UP})?|{_UP})(?=\s|$)")
_COMM = re.compile(rf"comm (0x[0-9a-fA-F]+) rank ({_D}) n[Rr]anks ({_D})")
_NODES = re.compile(rf"nNodes ({_D})")


@dataclass
class Log:
    """What an NCCL_DEBUG=INFO log says about one communicator."""

    name: str
    nranks: int
    rings: dict[int, tuple[int, ...]]  # channel → ranks in ring order (0-based)
    channels_declared: int | None  # the NN of `Channel 00/NN`
    hops: dict[tuple[int, int, int], str]  # (channel, src, dst) → transport
    hosts: dict[int, str]  # rank → host
    trees: dict[int, dict[int, tuple[int, tuple[int, ...]]]]  # channel → rank → (parent, children)
    nodes: int | None = None
    version: str | None = None
    notes: list[str] = field(default_factory=list)
    from_hops: bool = False
    trees_cut: dict[int, tuple[int, bool]] = field(default_factory=dict)  # rank → (line, cut by NCCL?)
    tree_clashes: list[str] = field(default_factory=list)  # why the Trees lines cannot be one plan
    tree_plan: dict[int, tuple[int, ...]] | None = None  # channel → parents of GPU1..G, when replayed

    def via(self, channel: int, src: int, dst: int) -> str | None:
        """The transport of one ring hop, when the log printed it."""
        return self.hops.get((channel, src, dst))

    def crosses(self, channel: int, src: int, dst: int) -> bool | None:
        """True when the hop leaves its node (network transport, or two hosts); None unknown."""
        via = self.via(channel, src, dst)
        if via is not None and via.upper().startswith(("NET", "COLLNET")):
            return True
        if src in self.hosts and dst in self.hosts:
            return self.hosts[src] != self.hosts[dst]
        return False if via is not None else None

    def orders(self) -> list[tuple[int, ...]]:
        """Every ring, 1-based (NCCL rank r is GPU r+1), in channel order."""
        return [tuple(r + 1 for r in self.rings[c]) for c in sorted(self.rings)]


def parse(text: Text, nranks: int | None = None, need_rings: bool = True) -> Log:
    """The communicator in `text` (the one of `nranks` ranks when the log holds several).

    need_rings=False reads a log for its trees: one without a whole ring is no error then."""
    lists: dict[int, dict[int, tuple[int, ...]]] = {}  # ring length → channel → ring
    declared: dict[int, int] = {}
    hops: dict[tuple[int, int, int], str] = {}
    hosts: dict[int, str] = {}
    trees: dict[int, dict[int, tuple[int, tuple[int, ...]]]] = {}
    trees_cut: dict[int, tuple[int, bool]] = {}
    clashes: list[str] = []
    comms: dict[str, int] = {}
    nodes = version = None
    truncated = []
    cut_lists: dict[int, tuple[int, ...]] = {}
    for number, raw in enumerate(text.lines, 1):
        if "NCCL" not in raw:  # most of a long log; the prefix taken off below never holds it
            continue
        line = LINE_PREFIX.sub("", raw)
        if version is None and (m := NCCL_VERSION.search(line)):
            version = m.group(1)
        origin = _ORIGIN.match(line)
        host = shown(origin.group(1), 80) if origin else None
        if m := _LIST.search(line):
            channel = int(m.group(1) if m.group(1) is not None else m.group(3))
            ring = tuple(int(x) for x in m.group(4).split())
            _check_channel(channel, number)
            if len(ring) > MAX_RANKS:
                raise RingsimError(f"line {number} lists {len(ring):,} ranks; at most {MAX_RANKS:,}")
            _check_rank(max(ring), number)
            if m.group(5) or max(ring) >= len(ring):
                # NCCL prints at most 128 characters of a ring (rings.cc dumpLine; older
                # versions 20 ranks): this list is only the ring's start
                cut_lists.setdefault(channel, ring)
                continue
            seen = lists.setdefault(len(ring), {})
            if channel in seen and seen[channel] != ring:
                raise RingsimError(f"the log holds two different rings for channel {channel:02d} "
                                   f"of {len(ring)} ranks (lines of two communicators of the same "
                                   "size?): cut the log to one communicator")
            seen[channel] = ring
            if m.group(2) is not None:
                declared[len(ring)] = _channel_count(int(m.group(2)), number)
        elif m := _HOP.search(line):
            channel, src, dst = int(m.group(1)), int(m.group(2)), int(m.group(3))
            _check_channel(channel, number)
            _check_rank(max(src, dst), number)
            if (channel, src, dst) not in hops:  # a log of many ranks repeats each hop
                hops[channel, src, dst] = shown(m.group(5), 60)
            if host is not None:
                hosts.setdefault(dst if m.group(4) == "receive" else src, host)
        elif m := _TREES.search(line):
            rest = line[m.end():]
            end = 0
            for t in _TREE.finditer(rest):
                if t.start() != end:
                    break
                end = t.end()
                channel, rank, parent, children, other = _tree_item(t)
                _check_channel(channel, number)
                _check_rank(max(rank, parent, *children), number)
                if host is not None:
                    hosts.setdefault(rank, host)
                seen = trees.setdefault(channel, {}).setdefault(rank, (parent, children))
                problem = None
                if seen != (parent, children):
                    problem = (f"rank {rank} printed two different trees for channel "
                               f"{channel:02d} (line {number}): the log mixes communicators; "
                               "cut it to one")
                elif other is not None and other != (parent, children):
                    problem = (f"rank {rank}'s channel {channel:02d} reduces on one tree and "
                               f"broadcasts on another (line {number}, NCCL 2.5–2.7's 'up|down' "
                               "form); ringsim replays one tree per channel")
                if problem and len(clashes) < 4:  # the first is what the error says; keep a few
                    clashes.append(problem)
            by_nccl = len(rest) >= NCCL_LINE_CUT
            if rest[end:].strip() or by_nccl:
                if not end:
                    truncated.append(number)
                rank_cut = _cut_rank(line)
                if rank_cut is not None:
                    trees_cut.setdefault(rank_cut, (number, by_nccl))
        elif _cut_short(line):
            truncated.append(number)
        if "comm " in line and (m := _COMM.search(line)):
            _check_rank(int(m.group(3)) - 1, number)
            comms[m.group(1)] = int(m.group(3))
            if host is not None:
                hosts.setdefault(int(m.group(2)), host)
        if "nNodes" in line and (m := _NODES.search(line)):
            nodes = int(m.group(1))
    sizes = sorted(set(lists) | set(comms.values()))
    if nranks is None:
        if len(sizes) > 1:
            raise RingsimError(f"{text.name} holds several communicators (of "
                               f"{', '.join(str(s) for s in sizes)} ranks); choose one with "
                               "--nccl-ranks N")
        nranks = sizes[0] if sizes else max(_ranks_from_hops(hops),
                                            max((max(r) + 1 for r in cut_lists.values()), default=0))
    elif nranks not in sizes and not (not sizes and hops):
        raise RingsimError(f"{text.name} has no communicator of {nranks} ranks"
                           + (f" (it has {', '.join(str(s) for s in sizes)})" if sizes else ""))
    if not nranks and not need_rings and trees:
        nranks = max(r for ranks in trees.values() for r in ranks) + 1
    if not nranks:
        raise _no_rings(text)
    log = Log(text.name, nranks, {}, declared.get(nranks), hops, hosts, trees, nodes, version,
              trees_cut=trees_cut, tree_clashes=clashes)
    if truncated:
        log.notes.append(f"{len(truncated)} NCCL line{'s' * (len(truncated) > 1)} cut short "
                         f"(line {', '.join(str(n) for n in truncated[:5])}) ignored")
    rings = lists.get(nranks, {})
    if not rings and not need_rings:
        try:
            rings = _rings_from_hops(hops, nranks, log) if hops and not cut_lists else {}
        except RingsimError:
            rings = {}
        log.from_hops = bool(rings)
    elif not rings:
        if not hops and not cut_lists:
            # A communicator's size from its Init line, but not one hop: no rings to walk.
            raise _no_rings(text)
        if cut_lists and not hops:
            channel, start = min(cut_lists.items())
            raise RingsimError(
                f"NCCL printed only the first {len(start)} ranks of channel {channel:02d}'s ring "
                f"(it cuts each ring list at 128 characters) and {text.name} has no hop lines "
                f"('Channel {channel:02d}/0 : a[…] -> b[…] via …') to complete it: paste the "
                "whole NCCL_DEBUG=INFO log of every rank")
        rings = _rings_from_hops(hops, nranks, log)
        log.from_hops = True
        for channel, start in cut_lists.items():
            if channel in rings and rings[channel][:len(start)] != start:
                raise RingsimError(f"channel {channel:02d}'s hop lines disagree with the start of "
                                   "its ring list: the log mixes communicators")
    for channel, ring in rings.items():
        _check_ring(channel, ring, nranks)
    log.rings = dict(sorted(rings.items()))
    _note_missing(log)
    return log


def _no_rings(text: Text) -> RingsimError:
    return RingsimError(f"{text.name} shows no rings: it needs NCCL_DEBUG=INFO lines such as "
                        "'Channel 00/02 :    0   1' or 'Ring 00 : 0[0] -> 1[1] via P2P/IPC' "
                        "(set NCCL_DEBUG=INFO and run again)")


def communicators(text: Text) -> list[int]:
    """The ranks of each communicator the log shows whole: in a complete ring list or a
    `comm … nRanks N` line (a log of hop lines alone shows none)."""
    sizes = set()
    for raw in text.lines:
        line = LINE_PREFIX.sub("", raw)
        if "NCCL" not in line:
            continue
        if (m := _LIST.search(line)) and not m.group(5):
            ring = [int(x) for x in m.group(4).split()]
            # Not the start of a ring NCCL cut: no rank beyond the list's length, and neither
            # the 20 ranks older releases stop at nor the 128 characters newer ones do (a cut
            # list of ranks 0, 1, 2, … in order looks whole otherwise).
            if max(ring) < len(ring) and len(ring) != 20 and len(m.group(4)) < 120:
                sizes.add(len(ring))
        if m := _COMM.search(line):
            sizes.add(int(m.group(3)))
    return sorted(sizes)


def _tree_item(t: re.Match) -> tuple[int, int, int, tuple[int, ...], tuple | None]:
    """(channel, rank, parent, children, the 2.5–2.7 broadcast tree's (parent, children) or None)."""
    g = [None if v is None else int(v) for v in t.groups()]
    kids = lambda values: tuple(v for v in values if v >= 0)  # noqa: E731  (-1: no child there)
    if g[1] is not None:  # children -> rank -> parent, perhaps | parent -> rank -> children
        other = None if g[6] is None else (g[6], kids(g[8:11]))
        return g[0], g[4], g[5], kids(g[1:4]), other
    return g[0], g[12], g[11], kids(g[13:16]), None


def _cut_rank(line: str) -> int | None:
    """The rank whose Trees line this is (its first tree's middle number), None when cut before it."""
    for item in re.finditer(rf"->({_D})->", line):
        return int(item.group(1))
    return None


def _cut_short(line: str) -> bool:
    """True for a Channel, Ring or Trees line that fits none of their forms: a paste cut it."""
    rest = line.partition("NCCL INFO ")[2]
    word = rest.split(" ", 1)[0]
    return len(word) >= 3 and any(name.startswith(word) for name in ("Channel", "Ring", "Trees"))


def _check_rank(rank: int, number: int) -> None:
    if rank >= MAX_RANKS:
        raise RingsimError(f"line {number} names rank {rank:,}; ringsim reads communicators of at "
                           f"most {MAX_RANKS:,} ranks")


def _check_channel(channel: int, number: int) -> None:
    if channel >= MAX_CHANNELS:
        raise RingsimError(f"line {number} names channel {channel}; NCCL has at most "
                           f"{MAX_CHANNELS} channels (0..{MAX_CHANNELS - 1})")


def _channel_count(count: int, number: int) -> int:
    """The NN of `Channel 00/NN`, refused past NCCL's MAXCHANNELS: every channel below it is
    looked for in the log."""
    if count > MAX_CHANNELS:
        raise RingsimError(f"line {number} says the communicator has {count:,} channels; NCCL "
                           f"has at most {MAX_CHANNELS}")
    return count


def _check_ring(channel: int, ring: tuple[int, ...], nranks: int) -> None:
    missing = sorted(set(range(nranks)) - set(ring))
    if missing or len(ring) != nranks:
        twice = sorted({r for r in ring if ring.count(r) > 1})
        what = (f"misses rank{'s' * (len(missing) > 1)} {few(missing)}" if missing
                else f"lists rank {few(twice)} twice")
        raise RingsimError(f"channel {channel:02d}'s ring {what} of 0..{nranks - 1}: the log is "
                           "cut or mixes communicators")


def few(values: list[int]) -> str:
    """Up to 8 values, comma-separated, and how many more."""
    shown_values = ", ".join(str(v) for v in values[:8])
    return shown_values + (f" and {len(values) - 8} more" if len(values) > 8 else "")


def _ranks_from_hops(hops: dict) -> int:
    ranks = {r for (_, src, dst) in hops for r in (src, dst)}
    return max(ranks) + 1 if ranks else 0


def _rings_from_hops(hops: dict, nranks: int, log: Log) -> dict[int, tuple[int, ...]]:
    """Each channel's ring walked from rank 0 along its hops; channels whose ring the hop
    lines do not close are left out, with a note naming the missing hops."""
    nexts: dict[int, dict[int, set[int]]] = {}
    for (channel, src, dst) in hops:
        nexts.setdefault(channel, {}).setdefault(src, set()).add(dst)
    rings, broken = {}, []
    for channel, succ in sorted(nexts.items()):
        if any(len(d) > 1 for d in succ.values()):
            broken.append(f"{channel:02d} (a rank with two successors: tree hops mixed in?)")
            continue
        ring, rank = [0], 0
        while len(ring) <= nranks:
            follow = succ.get(rank)
            if not follow:
                break
            rank = next(iter(follow))
            if rank == 0:
                break
            ring.append(rank)
        if rank == 0 and len(ring) == nranks:
            rings[channel] = tuple(ring)
        else:
            without = sorted(set(range(nranks)) - set(succ))
            broken.append(f"{channel:02d} (no hop from rank {few(without)})" if without
                          else f"{channel:02d} (its hops do not close one ring)")
    if not rings:
        raise RingsimError(f"{log.name} has no complete ring: its hop lines leave channel "
                           f"{'; '.join(broken[:2])}; paste the whole log, or one with NCCL's "
                           "'Channel 00/NN :' ring lists")
    if broken:
        log.notes.append(f"channel {'; '.join(broken[:4])} left out: the log misses hops")
    return rings


def _note_missing(log: Log) -> None:
    if log.channels_declared and len(log.rings) < log.channels_declared:
        absent = [c for c in range(log.channels_declared) if c not in log.rings]
        log.notes.append(f"the log lists {len(log.rings)} of its {log.channels_declared} channels' "
                         f"rings (channel {', '.join(f'{c:02d}' for c in absent[:8])}"
                         f"{' …' if len(absent) > 8 else ''} missing): walking those it lists")
