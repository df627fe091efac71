"""Published nccl-tests runs of machines like yours, set beside your own numbers.

`published/measurements.toml` holds what vendors, clouds and issue threads printed, each
system with its hardware, the address its numbers come from and its source's own word on its
health; `published/systems/` the topology files that describe the machines no preset does.
The same file checks ringsim's NCCL model (tests/nccl_validation.py); here it answers a
question the model cannot answer alone: how do machines like mine measure?
"""

from __future__ import annotations

import math
import statistics
import textwrap
import tomllib
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from ..core.units import format_seconds
from .nccltests import OTHER_NAMES, bus_factor
from .predict import TYPES
from ..cost.nccl_graph import constants
from ..cost.topology import load, parse, presets
from ..cost.topology_model import DEFAULT_KIND, DEFAULT_NIC_PATH, Topology

PUBLISHED = resources.files("ringsim.studies").joinpath("published")


@lru_cache(maxsize=1)
def data() -> dict:
    """The published runs as the TOML file holds them: `system` and `point` tables."""
    return tomllib.loads(PUBLISHED.joinpath("measurements.toml").read_text(encoding="utf-8"))


@lru_cache(maxsize=None)
def topology(name: str) -> Topology:
    """A published system's topology: a preset name, or a file under published/systems/."""
    if name in presets():
        return load(name)
    return parse(PUBLISHED.joinpath(name).read_text(encoding="utf-8"), name.rsplit("/", 1)[-1][:-5])


def system_file(name: str) -> str:
    """The path of one of published/systems/ (say 'p5-efa'), for `--topology` or `load`."""
    return str(PUBLISHED.joinpath("systems", f"{name}.toml"))


def collective(system: dict) -> str:
    """The collective a published system ran (all-reduce where its entry names none)."""
    return system.get("collective", "all-reduce")


def collectives() -> tuple[str, ...]:
    """The collectives that have published runs, all-reduce first."""
    ran = {collective(s) for s in data()["system"]}
    return tuple(sorted(ran, key=lambda name: (name != "all-reduce", name)))


def measured_seconds(point: dict, gpus: int, ran: str = "all-reduce") -> float:
    """A point's time: nccl-tests' time column, or the time its quoted busbw implies for the
    collective it `ran` (busbw = size / time × that test's factor, as
    nccl-tests' doc/PERFORMANCE.md defines it)."""
    if "time_us" in point:
        return point["time_us"] / 1e6
    return point["bytes"] * float(bus_factor(ran, gpus)) / (point["busbw_GBps"] * 1e9)


@dataclass(frozen=True)
class Peer:
    """One published healthy system like the user's, and its times (s) by size (bytes)."""

    id: str
    hardware: str
    source: str
    gpus_per_process: int | None
    times: dict[int, float]
    quoted: frozenset[int] = frozenset()  # sizes whose time comes from a quoted busbw
    dtype: str = "float"                   # the element type it ran (nccl-tests' -d)


KIND_WORDS = {"nvlink": "NVLink", "pcie": "PCIe", "network": "a network"}
PATH_WORDS = {"p2c": "under its CPU, over the GPU's C2C link", "phb": "behind its CPU",
              "sys": "on the other CPU socket"}


def _kind(topo: Topology) -> str:
    """The kind of link between GPUs of one node (the only level of a flat topology; '' where
    a node holds one GPU)."""
    level = topo.levels.get("inside") or (None if topo.gpus_per_node else
                                          next(iter(topo.levels.values()), None))
    return "" if level is None else level.kind or DEFAULT_KIND


def _switch_adds(topo: Topology) -> bool:
    """Whether a node's GPUs meet in a switch that adds (NVLink SHARP): NCCL runs NVLS there,
    and not on GPUs joined pair by pair, which time a large all-reduce otherwise."""
    inside = topo.levels.get("inside")
    return bool(inside is not None and inside.in_network_reduction)


def _network(topo: Topology, nodes: int) -> float | None:
    """Each GPU's network rate (B/s) where the GPUs span nodes; None on one node (or where
    the topology has no network, as a flat one given for a run on several nodes)."""
    across = topo.levels.get("across")
    return across.bandwidth if nodes > 1 and across else None


def _latency(topo: Topology, nodes: int) -> tuple[float, float | None]:
    """Across nodes, the latency a net plugin reports to NCCL and the network's measured one
    (both as the topology gives them); nothing on one node."""
    across = topo.levels.get("across")
    if nodes <= 1 or across is None:
        return 0.0, None
    return across.net_plugin_latency, across.net_latency


def _path(topo: Topology, nodes: int) -> str | None:
    """Across nodes, each GPU's path to its NIC as NCCL's model tells them apart: "near" for
    pix and pxb (and a file that does not say: the published systems' NICs sit by their GPUs
    unless their file says otherwise), else p2c, phb or sys; None on one node."""
    across = topo.levels.get("across")
    if nodes <= 1 or across is None:
        return None
    path = across.nic_path or DEFAULT_NIC_PATH
    return "near" if path in ("pix", "pxb") else path


def _alike(a: Topology, b: Topology, nodes: int) -> bool:
    """The same GPU architecture, link kind inside a node, switch that adds or none, and,
    across nodes, network rate per
    GPU, network latency and path from GPU to NIC: a plugin that reports its own latency
    (EFA's 75 µs) makes NCCL choose and time small calls otherwise than on InfiniBand or RoCE
    of the same rate, and a NIC behind the CPU or on the other socket turns LL128 off (and
    across the sockets caps every channel); and the same NICs per GPU, which NCCL runs as
    that many devices at a share of the rate each. A network of no finite rate (inf, which prices
    latency alone) is like no measured machine."""
    rate_a, rate_b = _network(a, nodes), _network(b, nodes)
    if rate_a is None or rate_b is None:
        same_rate = rate_a is rate_b
    else:
        same_rate = (math.isfinite(rate_a) and math.isfinite(rate_b)
                     and abs(rate_a - rate_b) <= 0.01 * rate_b)
    return (a.arch == b.arch and _kind(a) == _kind(b) and _switch_adds(a) == _switch_adds(b)
            and same_rate
            and _latency(a, nodes) == _latency(b, nodes) and _path(a, nodes) == _path(b, nodes)
            and _nics(a, nodes) == _nics(b, nodes))


def _nics(topo: Topology, nodes: int) -> int | None:
    """Across nodes, the NICs that share each GPU's network rate (NCCL runs a channel count
    by them); None on one node."""
    across = topo.levels.get("across")
    if nodes <= 1 or across is None:
        return None
    return across.nics_per_gpu or 1


def _added_alike(a: str, b: str, topo: Topology | None = None) -> bool:
    """Whether NCCL runs elements of types `a` and `b` alike on `topo` (None: on a machine
    with NVLink SHARP): both of a type NVLink SHARP can add, or both not (it has no 8-bit
    adds); bytes are bytes to every other algorithm, so without it every type is alike."""
    if topo is not None and not (_switch_adds(topo) and topo.arch in ("hopper", "blackwell")):
        return True
    summable = constants()["types"]["nvls_sum"]
    a, b = (TYPES.get(OTHER_NAMES.get(t, t), (t,))[0] for t in (a, b))
    return (a in summable) == (b in summable)


def peers(topo: Topology, gpus: int, nodes: int, gpus_per_process: int = 1,
          ran: str = "all-reduce", dtype: str = "float") -> list[Peer]:
    """The published runs of the collective a user `ran` whose source calls them healthy, on
    machines like this one: the
    same number of GPUs and nodes, GPUs per process (nccl-tests' -g), GPU architecture and kind of link
    inside a node, and across nodes the same network rate per GPU, latency and path from GPU
    to NIC (a finite rate: an inf network is like no measured one), an element type `dtype`
    that NCCL runs alike there (_added_alike); only sizes NCCL
    chose the algorithm for itself (a run that forced NCCL_ALGO or NCCL_PROTO, held its
    channels with NCCL_MIN_NCHANNELS or NCCL_MAX_NCHANNELS, or loaded a tuner plugin, measures
    something else).

    One thread issuing every call to -g GPUs sets the small sizes' time (cost.nccl.host_seconds),
    so runs of other -g are not alike. A run whose source shows no command is taken as -g 1,
    the launch that mpirun and srun scripts use, and so is set beside -g 1 runs only."""
    found = []
    points: dict[str, dict[int, dict]] = {}
    for p in data()["point"]:
        if "algo" not in p and "proto" not in p:
            points.setdefault(p["system"], {})[p["bytes"]] = p
    for s in data()["system"]:
        if (s["health"] != "healthy" or s["gpus"] != gpus or s["id"] not in points
                or s.get("gpus_per_process", 1) != gpus_per_process
                or any(key in s for key in ("tuner", *HELD))
                or collective(s) != ran or not _added_alike(s.get("dtype", "float"), dtype, topo)):
            continue
        theirs = topology(s["topology"])
        if theirs.nodes(gpus) != nodes or not _alike(theirs, topo, nodes):
            continue
        mine = sorted(points[s["id"]].items())
        times = {n: measured_seconds(p, gpus, ran) for n, p in mine}
        quoted = frozenset(n for n, p in mine if "time_us" not in p)
        found.append(Peer(s["id"], s["hardware"], s["source"], s.get("gpus_per_process"), times,
                          quoted, s.get("dtype", "float")))
    return found


def likeness(topo: Topology, nodes: int, dtype: str = "float") -> str:
    """What peers() matches on besides the GPU and node counts, in words."""
    kind = _kind(topo)
    words = f"{topo.arch.capitalize()} GPUs, " + (f"{KIND_WORDS.get(kind, kind)} inside a node"
                                                   if kind else "one GPU per node")
    if _switch_adds(topo):
        words += " through a switch that adds (NVLink SHARP)"
    rate = _network(topo, nodes)
    if rate is not None and math.isinf(rate):
        words += ", a network of no finite rate (inf)"
    elif rate:
        words += f", {rate * 8 / 1e9:.4g} Gb/s of network per GPU"
    path = _path(topo, nodes)
    if path not in (None, "near"):
        words += f", each GPU's NIC {PATH_WORDS[path]} (nic_path {path})"
    plugin, measured = _latency(topo, nodes)
    if plugin or measured is not None:
        said = [f"{format_seconds(plugin)} reported by its net plugin"] if plugin else []
        said += [f"{format_seconds(measured)} measured"] if measured is not None else []
        words += f" with a latency of {' and '.join(said)}"
    if not _added_alike(dtype, "float", topo):
        words += f", {dtype} elements or others NVLink SHARP cannot add"
    return words


# nccl-tests prints a time to at least four significant digits (%.2f under 100 µs, %.1f under
# 10 ms, %.0f above), so two copies of one run agree to 0.05%; 0.2% leaves room for a copy
# retyped from a page. Healthy runs of one machine type agree to 1% at the largest sizes, so
# the bound must be this tight to tell a run from its twin. A busbw quoted to three digits
# gives a time good to about 1% only.
PRINTED, QUOTED = 0.002, 0.01


def same_run(peer: Peer, mine: dict[int, float]) -> bool:
    """Whether `mine` (seconds by bytes) is this published run itself: at least three sizes in
    common, each within the published copy's rounding (PRINTED, or QUOTED where it comes from
    a quoted busbw)."""
    shared = [n for n in mine if n in peer.times]
    return len(shared) >= 3 and all(
        abs(mine[n] - peer.times[n]) <= (QUOTED if n in peer.quoted else PRINTED) * peer.times[n]
        for n in shared)


# The settings a data file's system may say its run was held to (NCCL_MIN_NCHANNELS …
# NCCL_BUFFSIZE, by nccl_settings.NAMES): such a run is not one where NCCL chose for itself.
HELD = ("min_channels", "max_channels", "nvls_channels", "min_ctas", "max_ctas", "nthreads",
        "ll128_nthreads", "buffsize")


@dataclass(frozen=True)
class Copy:
    """A published run that a user's paste is a copy of, and what the data file says it ran with."""

    id: str
    source: str
    health: str
    algo: str | None   # NCCL_ALGO at every size, or None
    proto: str | None  # NCCL_PROTO at every size, or None
    tuner: bool
    held: tuple[tuple[str, int], ...] = ()  # the other settings it ran with: (('buffsize', 8388608),)

    @property
    def settings(self) -> str:
        """'NCCL_ALGO=Ring,Tree and NCCL_PROTO=Simple, with a tuner plugin' ('' where NCCL chose)."""
        from .nccl_settings import NAMES
        said = " and ".join(f"{name}={value}" for name, value in (
            ("NCCL_ALGO", self.algo), ("NCCL_PROTO", self.proto),
            *((NAMES[key], value) for key, value in self.held)) if value)
        plugin = "a tuner plugin" if self.tuner else ""
        return f"{said}, with {plugin}" if said and plugin else said or plugin


def copy_of(gpus: int, nodes: int, per_process: int, dtype: str, ran: str,
            mine: dict[int, float]) -> Copy | None:
    """The one published run, of any health or settings, that `mine` (seconds by bytes) copies."""
    points: dict[str, list[dict]] = {}
    for p in data()["point"]:
        points.setdefault(p["system"], []).append(p)
    found = []
    for s in data()["system"]:
        theirs = points.get(s["id"], [])
        # A copy prints every size its run printed, on as many GPUs, nodes and processes, of
        # one element type: one size range of another machine agreeing is not a copy.
        if (s["gpus"] != gpus or collective(s) != ran or s.get("gpus_per_process", 1) != per_process
                or s.get("dtype", "float") != dtype or {p["bytes"] for p in theirs} != set(mine)
                or topology(s["topology"]).nodes(gpus) != nodes):
            continue
        times = {p["bytes"]: measured_seconds(p, gpus, ran) for p in theirs}
        quoted = frozenset(p["bytes"] for p in theirs if "time_us" not in p)
        if same_run(Peer(s["id"], s["hardware"], s["source"], None, times, quoted), mine):
            found.append(Copy(s["id"], s["source"], s["health"], _one(theirs, "algo"),
                              _one(theirs, "proto"), "tuner" in s,
                              tuple((key, s[key]) for key in HELD if key in s)))
    # Two published runs alike to the digits (one machine, two settings) cannot be told apart.
    return found[0] if len(found) == 1 else None


def _one(points: list[dict], key: str) -> str | None:
    """The value every point gives `key` (NCCL_ALGO or NCCL_PROTO), None where they differ or none has one."""
    values = {p.get(key) for p in points}
    return values.pop() if len(values) == 1 else None


def describe(found: list[Peer], width: int = 96) -> list[str]:
    """Each run as lines of at most `width` characters (its address may run over): its id and
    hardware, with -g where its source shows it and -d where it ran other than float, then its
    address."""
    lines = []
    for p in found:
        said = ([f"-g {p.gpus_per_process}"] if p.gpus_per_process else []) + (
            [f"-d {p.dtype}"] if p.dtype != "float" else [])
        g = f" ({', '.join(said)})" if said else ""
        lines += textwrap.wrap(f"{p.id}: {p.hardware}{g}", width, subsequent_indent="    ")
        lines.append(f"    {p.source}")
    return lines


@dataclass(frozen=True)
class PeerRow:
    """One of the user's sizes beside the published runs that measured it."""

    bytes: int
    seconds: float           # the user's time
    low: float               # the fastest published time at this size
    median: float
    high: float              # the slowest
    systems: int             # how many published systems measured this size
    slower_than_all: bool    # the user's time is above every one of theirs

    @property
    def ratio(self) -> float:
        """The user's time over the published runs' median (1: as they measure)."""
        return self.seconds / self.median

    def to_json(self) -> dict:
        """The row as `diagnose --json` gives it (seconds)."""
        return {"bytes": self.bytes, "seconds": self.seconds, "published_fastest": self.low,
                "published_median": self.median, "published_slowest": self.high,
                "published_systems": self.systems, "over_median": self.ratio,
                "slower_than_all": self.slower_than_all}


def beside(sizes: list[tuple[int, float]], found: list[Peer]) -> list[PeerRow]:
    """Each (bytes, seconds) of the user's that published runs also measured, beside them."""
    rows = []
    for nbytes, seconds in sizes:
        theirs = [p.times[nbytes] for p in found if nbytes in p.times]
        if not theirs:
            continue
        rows.append(PeerRow(nbytes, seconds, min(theirs), statistics.median(theirs), max(theirs),
                            len(theirs), len(theirs) > 1 and seconds > max(theirs)))
    return rows
