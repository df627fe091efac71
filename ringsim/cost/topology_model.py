"""Topologies: GPUs in nodes, a full-duplex port per GPU on each level, α, β and γ per level.

Two levels at most: `inside` a node (NVLink through NVSwitch, a PCIe switch) and `across`
nodes (one NIC per GPU). A transfer between two GPUs of one node uses the inside level,
any other the across level; a flat topology has one level and no nodes. Presets are TOML
files in ringsim/cost/topologies/, read and checked by topology.py; each says where its
numbers come from. GPU g (0-based) lives in node g // gpus_per_node, so the last node may be
partly filled.
"""

from __future__ import annotations

import math
from fractions import Fraction
from dataclasses import dataclass, replace

from ..core.checks import MAX_GPUS, check_count, echo
from ..core.errors import RingsimError
from ..core.naming import plural
from ..core.units import check_bandwidth, check_seconds, format_bandwidth, format_seconds


LEVELS = ("inside", "across")
LEVEL_WORDS = {"inside": "inside a node", "across": "across nodes"}
# What NCCL's model needs to know (docs/cost.md): the GPU generation and each level's kind of
# link. A file that leaves them out gets these defaults, which keep yesterday's files working.
ARCHS = ("volta", "ampere", "hopper", "blackwell")
KINDS = ("nvlink", "pcie", "network")
# The host CPU, as NCCL tells them apart (its cpuArch and cpuVendor): a few of its constants
# differ by CPU, such as the cost of posting to the network and LL's cap across nodes. An
# Intel host may also name its generation, which NCCL reads from the CPU's model number to
# rate the link between two sockets (topo.cc, ncclTopoGetInterCpuBw): Broadwell and older,
# Skylake to Ice Lake, Sapphire Rapids (and Granite Rapids, whose model number NCCL counts
# with it), Emerald Rapids. Plain "intel" is rated as Skylake; every Intel value is Intel to
# all of NCCL's other rules.
INTEL_GENERATIONS = ("intel-broadwell", "intel-skylake", "intel-sapphire-rapids",
                     "intel-emerald-rapids")
CPUS = ("intel", *INTEL_GENERATIONS, "amd", "arm", "power")
DEFAULT_ARCH = "ampere"
DEFAULT_CPU = "intel"
DEFAULT_KIND = {"inside": "nvlink", "across": "network"}
# The path from each GPU to its NIC, as NCCL names it (topo.h's PATH_PIX ... PATH_SYS, lower
# case): through at most one PCIe switch, through several, over the GPU's C2C link to the CPU
# the NIC hangs off (Grace), through the CPU's root complex, across the CPUs' interconnect.
# NCCL turns LL128 off across nodes on the far ones, and a path across the CPUs is no faster
# than their link. A file that does not say is read as "pxb", a NIC beside its GPU.
NIC_PATHS = ("pix", "pxb", "p2c", "phb", "sys")
DEFAULT_NIC_PATH = "pxb"
# A network's per-message latency is µs (aws-ofi-nccl reports 35 to 150 µs to NCCL); a
# second would be a typing slip, not a network.
MAX_NET_LATENCY = Fraction(1, 100)
MAX_SWITCH_GPUS = 1024
MAX_NICS_PER_GPU = 16  # a GPU with more NICs than this is no machine built (p5: 4 per GPU)
# Each GPU's memory, as `ringsim zero --gpu-memory` takes it: 1 MB to 100 TB.
MIN_GPU_MEMORY, MAX_GPU_MEMORY = 10**6, 10**14
MAX_NAME = 100  # characters of a topology's or a level's name
# Why a PCIe level may not say that it reduces (the file's and the API's message alike).
PCIE_ADDS_NOTHING = ("a PCIe switch forwards and adds nothing; a switch that adds is an "
                     "NVSwitch (kind = \"nvlink\")")
# Why an [inside] level may not name a NIC path (the file's and the API's message alike).
NIC_PATH_ACROSS = "a GPU's path to its NIC is the network's: give it in [across]"


def _check_text(value: object, what: str) -> None:
    if not isinstance(value, str):
        raise RingsimError(f"{what} must be text, got {echo(value)}")


def _check_word(value: object, what: str, words: tuple) -> None:
    if not isinstance(value, str) or value not in words:
        raise RingsimError(f"{what} must be one of {', '.join(words)}, got {echo(value)}")


def cpu_vendor(cpu: str) -> str:
    """The CPU as NCCL's rules other than the socket link read it: 'intel-skylake' is 'intel'."""
    return "intel" if cpu.startswith("intel") else cpu


def format_bits(rate: float, digits: int = 4) -> str:
    """Bytes per second as network cards are sold, in bits: '1.6 Tb/s', '400 Gb/s'."""
    bits = rate * 8
    for unit, scale in (("Tb/s", 1e12), ("Gb/s", 1e9), ("Mb/s", 1e6)):
        if bits >= scale:
            return f"{bits / scale:,.{digits}g} {unit}"
    return f"{bits:,.{digits}g} b/s"


@dataclass(frozen=True)
class Level:
    """One level of links: its name, latency α (s) and bandwidth per GPU port per direction (B/s)."""

    key: str
    name: str
    alpha: float
    bandwidth: float
    kind: str = ""                       # nvlink, pcie or network ("" reads as the default)
    in_network_reduction: bool = False   # the fabric reduces (NVLink SHARP, InfiniBand SHARP)
    gpus_per_switch: int | None = None   # PCIe: GPUs under one switch; switches meet at the CPU
    uplink: float | None = None          # PCIe: each switch's link to the CPU (B/s), shared
    net_plugin_latency: float = 0.0      # across: the latency (s) a net plugin reports to NCCL
    net_latency: float | None = None     # across: the network's measured latency (s), for time
    nic_path: str | None = None          # across: each GPU's path to its NIC (None reads as pxb)
    nics_per_gpu: int | None = None      # across: the NICs that share a GPU's bandwidth (None: 1)

    def __post_init__(self) -> None:
        """Refuse a field out of its range (the ranges of a topology file), in one line."""
        _check_word(self.key, "a level's key", LEVELS)
        where = f"the {self.key} level's"
        _check_text(self.name, f"{where} name")
        number = {"alpha": check_seconds(self.alpha, f"{where} alpha"),
                  "bandwidth": check_bandwidth(self.bandwidth, f"{where} bandwidth"),
                  "net_plugin_latency": check_seconds(self.net_plugin_latency,
                                                      f"{where} net_plugin_latency",
                                                      MAX_NET_LATENCY)}
        if self.kind != "":
            _check_word(self.kind, f"{where} kind", KINDS)
        if not isinstance(self.in_network_reduction, bool):
            raise RingsimError(f"{where} in_network_reduction must be True or False, got "
                               f"{echo(self.in_network_reduction)}")
        if self.in_network_reduction and (self.kind or DEFAULT_KIND[self.key]) == "pcie":
            raise RingsimError(f"{where} in_network_reduction: {PCIE_ADDS_NOTHING}")
        if self.gpus_per_switch is not None:
            number["gpus_per_switch"] = check_count(self.gpus_per_switch, f"{where} gpus_per_switch",
                                                    minimum=1, maximum=MAX_SWITCH_GPUS)
        if self.uplink is not None:
            number["uplink"] = check_bandwidth(self.uplink, f"{where} uplink")
        if self.net_latency is not None:
            number["net_latency"] = check_seconds(self.net_latency, f"{where} net_latency",
                                                  MAX_NET_LATENCY)
        if self.nics_per_gpu is not None:
            number["nics_per_gpu"] = check_count(self.nics_per_gpu, f"{where} nics_per_gpu",
                                                 minimum=1, maximum=MAX_NICS_PER_GPU)
        if self.nic_path is not None:
            if isinstance(self.nic_path, str) and self.nic_path.isascii():  # SYS is sys
                object.__setattr__(self, "nic_path", self.nic_path.lower())
            _check_word(self.nic_path, f"{where} nic_path", NIC_PATHS)
            if self.key != "across":
                raise RingsimError(f"{where} nic_path: {NIC_PATH_ACROSS}")
        for name, value in number.items():  # plain floats and ints, whatever numbers came in
            object.__setattr__(self, name, value)

    def __repr__(self) -> str:
        """One line: '<Level inside: NVLink 4 via NVSwitch · α 470 ns, 450.00 GB/s>'."""
        return f"<Level {self.key}: {self.name} · {self.figures()}>"

    def figures(self) -> str:
        """Latency and bandwidth as people write them: 'α 470 ns, 450.00 GB/s'."""
        return f"α {format_seconds(self.alpha)}, {format_bandwidth(self.bandwidth)}"

    @property
    def beta(self) -> float:
        """Seconds per byte on one port (0 for an infinite bandwidth)."""
        return 1.0 / self.bandwidth

    def transfer(self, nbytes: float) -> float:
        """α + b·β (computed as α + b/bandwidth) for a transfer of b bytes; an empty transfer
        sends nothing and costs 0."""
        return self.alpha + nbytes / self.bandwidth if nbytes > 0 else 0.0


@dataclass(frozen=True)
class Topology:
    """GPUs per node (None: one flat level), the levels, and the reduce bandwidth (γ = 1/it)."""

    name: str
    title: str
    gpus_per_node: int | None
    levels: dict
    reduce_bandwidth: float
    sources: str = ""
    measured: str = ""
    arch: str = DEFAULT_ARCH
    cpu: str = DEFAULT_CPU
    gpu_memory: int | None = None  # bytes of memory each GPU has, where the file says

    def __post_init__(self) -> None:
        """Refuse a field out of its range (the ranges of a topology file), in one line."""
        _check_text(self.name, "a topology's name")
        where = f"topology {self.name[:MAX_NAME]!r}:"
        for name in ("title", "sources", "measured"):
            _check_text(getattr(self, name), f"{where} {name}")
        if self.gpus_per_node is not None:
            object.__setattr__(self, "gpus_per_node", check_count(
                self.gpus_per_node, f"{where} gpus_per_node", minimum=1, maximum=MAX_GPUS))
        if not isinstance(self.levels, dict) or not self.levels:
            raise RingsimError(f"{where} levels must be a dict with an 'inside' or an 'across' "
                               f"Level, got {echo(self.levels)}")
        for key, level in self.levels.items():
            if key not in LEVELS or not isinstance(level, Level) or level.key != key:
                raise RingsimError(f"{where} levels must map 'inside' and 'across' to a Level "
                                   f"of that key, got {echo(key)}: {echo(level)}")
        if "across" in self.levels and self.gpus_per_node is None:
            raise RingsimError(f"{where} an across level needs gpus_per_node")
        object.__setattr__(self, "reduce_bandwidth",
                           check_bandwidth(self.reduce_bandwidth, f"{where} reduce_bandwidth"))
        _check_word(self.arch, f"{where} arch", ARCHS)
        _check_word(self.cpu, f"{where} cpu", CPUS)
        if self.gpu_memory is not None:
            object.__setattr__(self, "gpu_memory", check_count(
                self.gpu_memory, f"{where} gpu_memory", minimum=MIN_GPU_MEMORY,
                maximum=MAX_GPU_MEMORY))

    def __repr__(self) -> str:
        """One line, not the sources: '<Topology dgx-h100 · 8 GPUs per node · inside α 470 ns, …>'."""
        return f"<Topology {self.summary()}>"

    def summary(self) -> str:
        """Its name, GPUs per node and each level's figures, on one line."""
        if self.gpus_per_node is None:
            shape = "one level"
        else:
            shape = f"{plural(self.gpus_per_node, 'GPU')} per node"
        levels = "".join(f" · {key} {self.levels[key].figures()}"
                         for key in LEVELS if key in self.levels)
        return f"{self.name} · {shape}{levels}"

    @property
    def gamma(self) -> float:
        """Seconds per byte reduced at the receiver (0 when reducing is free)."""
        return 1.0 / self.reduce_bandwidth

    def level(self, key: str) -> Level:
        """The Level named `inside` or `across`."""
        try:
            return self.levels[key]
        except KeyError:
            raise RingsimError(f"topology {self.name} has no [{key}] level (the link "
                               f"{LEVEL_WORDS.get(key, key)})") from None

    def node(self, gpu: int) -> int:
        """The 0-based node of a 0-based GPU."""
        return 0 if self.gpus_per_node is None else gpu // self.gpus_per_node

    def nodes(self, gpus: int) -> int:
        """How many nodes G GPUs fill (the last one possibly in part)."""
        return 1 if self.gpus_per_node is None else -(-gpus // self.gpus_per_node)

    def node_size(self, node: int, gpus: int) -> int:
        """GPUs in a 0-based node when G GPUs are placed in order."""
        if self.gpus_per_node is None:
            return gpus
        return max(0, min(self.gpus_per_node, gpus - node * self.gpus_per_node))

    def check_gpus(self, gpus: int) -> int:
        """G as an int; refused when it is not a whole number from 1 or its transfers would
        need a level this topology lacks."""
        gpus = check_count(gpus, "the number of GPUs", minimum=1)
        if self.nodes(gpus) > 1:
            self.level("across")
        if gpus > 1 and (self.gpus_per_node is None or self.gpus_per_node > 1):
            self.level("inside")
        return gpus

    def doubts(self) -> list[str]:
        """What looks wrong but may be right, one line each: a network faster than the link
        inside a node (some PCIe servers are built so; elsewhere it is a slip)."""
        inside, across = self.levels.get("inside"), self.levels.get("across")
        if inside is None or across is None or self.gpus_per_node == 1 \
                or math.isinf(across.bandwidth) or across.bandwidth <= inside.bandwidth:
            return []
        return [f"topology {self.name}: its network ([across], {format_bandwidth(across.bandwidth)} "
                f"= {format_bits(across.bandwidth)} per GPU) is faster than the link inside a node "
                f"([inside], {format_bandwidth(inside.bandwidth)}); some PCIe servers are built "
                f"so, elsewhere check the units (Gb/s is bits, GB/s bytes)"]

    def with_overrides(self, alpha: dict | None = None, bandwidth: dict | None = None,
                       reduce_bandwidth: float | None = None) -> "Topology":
        """A copy with α or bandwidth replaced on the named levels ({'inside': 1e-6, …})."""
        levels = dict(self.levels)
        for field, values in (("alpha", alpha), ("bandwidth", bandwidth)):
            for key, value in (values or {}).items():
                targets = list(levels) if key is None else [key]
                for target in targets:
                    levels[target] = replace(self.level(target) if target not in levels
                                             else levels[target], **{field: value})
        changed = replace(self, levels=levels)
        if reduce_bandwidth is not None:
            changed = replace(changed, reduce_bandwidth=reduce_bandwidth)
        return changed

    def describe(self, besides: dict | None = None) -> str:
        """One line per level: what it is, α and bandwidth (and what `besides` adds to the line
        of a level key: a cap NCCL's model puts on it); then the reduce bandwidth."""
        from ..core.units import format_bandwidth, format_seconds
        lines = [f"{self.title}" + (f", {self.gpus_per_node} GPU{'s' * (self.gpus_per_node > 1)} "
                                   "per node" if self.gpus_per_node else "")]
        for key in LEVELS:
            if key in self.levels:
                lv = self.levels[key]
                lines.append(f"  {LEVEL_WORDS[key] if self.gpus_per_node else 'every link'}: "
                             f"{lv.name}, α = {format_seconds(lv.alpha)}, "
                             f"{format_bandwidth(lv.bandwidth)} per GPU per direction"
                             + (f" ({lv.nics_per_gpu} NICs of {format_bandwidth(lv.bandwidth / lv.nics_per_gpu)})"
                                if (lv.nics_per_gpu or 1) > 1 else "")
                             + (f" {(besides or {})[key]}" if (besides or {}).get(key) else ""))
        lines.append(f"  reduce: {format_bandwidth(self.reduce_bandwidth)} per GPU")
        return "\n".join(lines)
