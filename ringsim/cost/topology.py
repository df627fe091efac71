"""Topologies: GPUs in nodes, a full-duplex port per GPU on each level, α, β and γ per level.

Two levels at most: `inside` a node (NVLink through NVSwitch, a PCIe switch) and `across`
nodes (one NIC per GPU). A transfer between two GPUs of one node uses the inside level,
any other the across level; a flat topology has one level and no nodes. Presets are TOML
files in ringsim/cost/topologies/ (read with tomllib); each says where its numbers come from.
GPU g (0-based) lives in node g // gpus_per_node, so the last node may be partly filled.
"""

from __future__ import annotations

import math
import re
import tomllib
from fractions import Fraction
from dataclasses import dataclass, replace
from importlib import resources
from pathlib import Path

from ..core.checks import MAX_GPUS, check_count, echo
from ..core.errors import RingsimError
from ..core.files import read_text
from ..core.textout import printable
from ..core.naming import plural
from ..core.units import (check_bandwidth, check_seconds, format_bandwidth, format_seconds,
                          parse_bandwidth, parse_memory, parse_seconds)

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
# The most network one GPU has, per direction: 1.6 Tb/s, twice the fastest NIC sold, NVIDIA's
# ConnectX-8 SuperNIC at 800 Gb/s (its datasheet; one per GPU in GB300 NVL72), and as much
# as four 400 Gb/s NICs give one GPU (studies/published/systems/h100-1gpu-4nic.toml). A
# file's network above it is a unit slip (GB/s for Gb/s is 8 times too fast), not a NIC.
MAX_NETWORK_BANDWIDTH = 1.6e12 / 8
# Each GPU's memory, as `ringsim zero --gpu-memory` takes it: 1 MB to 100 TB.
MIN_GPU_MEMORY, MAX_GPU_MEMORY = 10**6, 10**14


def _check_text(value: object, what: str) -> None:
    if not isinstance(value, str):
        raise RingsimError(f"{what} must be text, got {echo(value)}")


def _check_word(value: object, what: str, words: tuple) -> None:
    if not isinstance(value, str) or value not in words:
        raise RingsimError(f"{what} must be one of {', '.join(words)}, got {echo(value)}")


def cpu_vendor(cpu: str) -> str:
    """The CPU as NCCL's rules other than the socket link read it: 'intel-skylake' is 'intel'."""
    return "intel" if cpu.startswith("intel") else cpu


def parse_gpu_memory(text: object, what: str = "the GPU's memory") -> int:
    """A GPU's memory in bytes, from text with a unit: '80GB', '141GB', '192GiB'; 1 MB to 100 TB."""
    nbytes = parse_memory(text, what)
    if not MIN_GPU_MEMORY <= nbytes <= MAX_GPU_MEMORY:
        raise RingsimError(f"{what} must be from 1MB to 100TB, got {echo(text)}")
    return nbytes


def _bits(rate: float, digits: int = 4) -> str:
    """Bytes per second as network cards are sold, in bits: '1.6 Tb/s', '400 Gb/s'."""
    bits = rate * 8
    for unit, scale in (("Tb/s", 1e12), ("Gb/s", 1e9), ("Mb/s", 1e6)):
        if bits >= scale:
            return f"{bits / scale:,.{digits}g} {unit}"
    return f"{bits:,.{digits}g} b/s"


def _bits_apart(rate: float, other: float) -> str:
    """`rate` in bits with as many digits as it takes not to read as `other` ('1.6000001 Tb/s'
    beside '1.6 Tb/s'), so that a message never says a rate is above a limit it prints alike."""
    for digits in range(4, 16):
        if _bits(rate, digits) != _bits(other, digits):
            return _bits(rate, digits)
    return _bits(rate, 16)


# A rate a level's name states in bits per second, as NIC and switch makers write it:
# "InfiniBand NDR 400 Gb/s", "400Gbps", "100 Gbit/s", "RoCE 100Gb", "100 GbE", "100G
# Ethernet". A prefix with b is bits; a bare prefix (100G) is how Ethernet names its rates;
# B (bytes) and anything else after the prefix (GT/s, GHz, GiB) is no network rate.
_NAMED_RATE = re.compile(r"(\d+(?:\.\d+)?)\s*([MGT])"
                         r"(?:b(?:its?)?(?:/s(?:ec)?|ps)?|bE)?(?![A-Za-z/])")
_RATE_PREFIX = {"M": 1e6, "G": 1e9, "T": 1e12}


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

    def check_gpus(self, gpus: int) -> None:
        """Refuse a G whose transfers would need a level this topology lacks."""
        if self.nodes(gpus) > 1:
            self.level("across")
        if gpus > 1 and (self.gpus_per_node is None or self.gpus_per_node > 1):
            self.level("inside")

    def doubts(self) -> list[str]:
        """What looks wrong but may be right, one line each: a network faster than the link
        inside a node (some PCIe servers are built so; elsewhere it is a slip)."""
        inside, across = self.levels.get("inside"), self.levels.get("across")
        if inside is None or across is None or self.gpus_per_node == 1 \
                or math.isinf(across.bandwidth) or across.bandwidth <= inside.bandwidth:
            return []
        return [f"topology {self.name}: its network ([across], {format_bandwidth(across.bandwidth)} "
                f"= {_bits(across.bandwidth)} per GPU) is faster than the link inside a node "
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


def presets() -> list[str]:
    """Names of the topologies shipped with ringsim, `flat` first."""
    names = sorted(p.name[:-5] for p in resources.files("ringsim.cost.topologies").iterdir()
                   if p.name.endswith(".toml"))
    return sorted(names, key=lambda n: n != "flat")


def load(name_or_path: str = "flat") -> Topology:
    """A preset by name, or a TOML file by path (a name ending in .toml or holding a slash)."""
    if not isinstance(name_or_path, str):
        raise RingsimError(f"a topology is a preset name or a .toml file, got {name_or_path!r}")
    if name_or_path in presets():
        text = resources.files("ringsim.cost.topologies").joinpath(f"{name_or_path}.toml").read_text(encoding="utf-8")
        return parse(text, name_or_path)
    if name_or_path.endswith(".toml") or "/" in name_or_path:
        text = read_text(name_or_path, "topology file", MAX_FILE_BYTES)
        return parse(text, Path(name_or_path).stem)
    raise RingsimError(f"unknown topology {printable(name_or_path)[:60]!r}; choose one of: "
                       f"{', '.join(presets())}, or give a .toml file")


# What a topology file may hold, checked before anything is built: each key names the checker
# that turns its TOML value into the value of the Topology (or Level) field of the same name.
# A new key is one line here and a defaulted field on the dataclass.
MAX_FILE_BYTES = 64 * 1024  # thirty times the largest preset
MAX_LINE = 1000             # TOML's parser slows down with the square of a key's dots
MAX_NAME = 100


def _text(limit: int, lines: bool = False):
    """Text of at most `limit` characters, stripped of what a terminal would act on."""
    def check(value, where: str):
        if not isinstance(value, str):
            raise RingsimError(f"{where} must be text in quotes, got a {_toml_type(value)}")
        if len(value) > limit:
            raise RingsimError(f"{where} is {len(value):,} characters long; at most {limit:,}")
        return printable(value, lines=lines).strip()
    return check


def _whole(low: int, high: int):
    """A whole number from `low` to `high`."""
    def check(value, where: str):
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise RingsimError(f"{where} must be a whole number from {low:,} to {high:,}")
        return value
    return check


def _one_of(*words: str):
    """One of the given words, in any case (nvidia-smi and vendors write AMD, Hopper, NVLink)."""
    def check(value, where: str):
        # ASCII only: str.lower() maps look-alikes (the Kelvin sign K) onto ASCII letters
        if not isinstance(value, str) or not value.isascii() or value.lower() not in words:
            # echo: the value as repr writes it, so a file's text reaches the terminal escaped
            raise RingsimError(f"{where} must be one of {', '.join(words)}, got {echo(value)}")
        return value.lower()
    return check


def _flag(value, where: str) -> bool:
    """true or false."""
    if not isinstance(value, bool):
        raise RingsimError(f"{where} must be true or false")
    return value


def _quantity(parse, example: str):
    """Text with a unit, read by the shared unit parser; `example` is one such text of the
    field's own kind ('"5us"', '"450GB/s"', '"80GB"')."""
    def check(value, where: str):
        if not isinstance(value, str):
            raise RingsimError(f"{where} must be text with a unit in quotes, e.g. {example}, "
                               f"got a {_toml_type(value)}")
        return parse(value, where)
    return check


SECONDS_EXAMPLE, RATE_EXAMPLE = '"5us"', '"450GB/s"'


TOPOLOGY_FIELDS = {
    "name": _text(MAX_NAME),
    "title": _text(200),
    "gpus_per_node": _whole(1, MAX_GPUS),
    "reduce_bandwidth": _quantity(parse_bandwidth, '"1TB/s" or "inf"'),
    "sources": _text(20_000, lines=True),
    "measured": _text(20_000, lines=True),
    "arch": _one_of(*ARCHS),
    "cpu": _one_of(*CPUS),
    "gpu_memory": _quantity(parse_gpu_memory, '"80GB"'),
}
LEVEL_FIELDS = {
    "name": _text(MAX_NAME),
    "alpha": _quantity(parse_seconds, SECONDS_EXAMPLE),
    "bandwidth": _quantity(parse_bandwidth, RATE_EXAMPLE),
    "kind": _one_of(*KINDS),
    "in_network_reduction": _flag,
    "gpus_per_switch": _whole(1, MAX_SWITCH_GPUS),
    "uplink": _quantity(parse_bandwidth, '"31.5GB/s"'),
    "net_plugin_latency": _quantity(lambda text, where: parse_seconds(text, where, MAX_NET_LATENCY),
                                    '"75us"'),
    "net_latency": _quantity(lambda text, where: parse_seconds(text, where, MAX_NET_LATENCY),
                             SECONDS_EXAMPLE),
    "nic_path": _one_of(*NIC_PATHS),  # nvidia-smi topo -m and NCCL's logs print PIX, SYS
    "nics_per_gpu": _whole(1, MAX_NICS_PER_GPU),
}
# Why a PCIe level may not say that it reduces (the file's and the API's message alike).
PCIE_ADDS_NOTHING = ("a PCIe switch forwards and adds nothing; a switch that adds is an "
                     "NVSwitch (kind = \"nvlink\")")
# Why an [inside] level may not name a NIC path (the file's and the API's message alike).
NIC_PATH_ACROSS = "a GPU's path to its NIC is the network's: give it in [across]"
LEVEL_NEEDS = ("alpha", "bandwidth")


def _toml_type(value) -> str:
    return {bool: "true/false", int: "number", float: "number", list: "list", dict: "table"} \
        .get(type(value), type(value).__name__)


def _fields(table: dict, checkers: dict, where: str, also: tuple = (), join: str = ": ") -> dict:
    """Every key of `table` checked by its checker; a key with none is refused."""
    unknown = sorted(set(table) - set(checkers) - set(also))
    if unknown:
        raise RingsimError(f"{where}: unknown field {printable(unknown[0])[:40]!r}; fields are "
                           f"{', '.join(sorted((*checkers, *also)))}")
    return {key: checkers[key](value, f"{where}{join}{key}") for key, value in table.items()
            if key in checkers}


def _read_toml(text: str, where: str) -> dict:
    if len(text) > MAX_FILE_BYTES:
        raise RingsimError(f"{where}: {len(text):,} characters; at most {MAX_FILE_BYTES:,}")
    for number, line in enumerate(text.splitlines(), 1):
        if len(line) > MAX_LINE:
            raise RingsimError(f"{where}: line {number} is {len(line):,} characters long; at "
                               f"most {MAX_LINE:,}")
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise RingsimError(f"{where}: not valid TOML ({error})") from None
    except RecursionError:
        raise RingsimError(f"{where}: lists or tables nested too deeply") from None


def parse(text: str, name: str) -> Topology:
    """A Topology from TOML text (see docs/cost.md for the fields)."""
    name = printable(name)[:MAX_NAME]
    where = f"topology {name}"
    data = _read_toml(text, where)
    top = _fields(data, TOPOLOGY_FIELDS, where, also=LEVELS)
    levels = {}
    for key in LEVELS:
        table = data.get(key)
        if table is None:
            continue
        if not isinstance(table, dict):
            raise RingsimError(f"{where}: [{key}] must be a table with name, alpha, bandwidth")
        fields = _fields(table, LEVEL_FIELDS, f"{where}: [{key}]", join=" ")
        missing = [f for f in LEVEL_NEEDS if f not in fields]
        if missing:
            raise RingsimError(f"{where}: [{key}] needs {missing[0]} (e.g. alpha = \"1us\", "
                               f"bandwidth = \"450GB/s\")")
        if key == "across":
            _check_network(fields, table["bandwidth"], f"{where}: [{key}] bandwidth")
        levels[key] = Level(key, **{"name": key, **_level_rules(fields, key, where)})
    if not levels:
        raise RingsimError(f"{where}: needs an [inside] or an [across] level")
    if top.get("gpus_per_node") is None and "across" in levels:
        raise RingsimError(f"{where}: an [across] level needs gpus_per_node")
    if "inside" not in levels and (top.get("gpus_per_node") or 1) > 1:
        raise RingsimError(f"{where}: gpus_per_node = {top['gpus_per_node']:,} puts GPUs together "
                           "in a node: give an [inside] level for their link (or gpus_per_node "
                           "= 1 for one GPU per node)")
    top = {"name": name, "title": name, "gpus_per_node": None, "reduce_bandwidth": math.inf,
           **{k: v for k, v in top.items() if v != "" or k in ("sources", "measured")}}
    return Topology(levels=levels, **top)


def _level_rules(fields: dict, key: str, where: str) -> dict:
    """What a level's fields must say together: its kind fits its place (a network joins
    nodes), and a PCIe switch layout gives both gpus_per_switch and uplink."""
    kind = fields.setdefault("kind", DEFAULT_KIND[key])
    if (kind == "network") != (key == "across"):
        raise RingsimError(f"{where}: [{key}] kind must be " + (
            "network" if key == "across" else "nvlink or pcie (a network joins nodes: put it "
            "in [across], with gpus_per_node = 1 for one GPU per node)"))
    if ("gpus_per_switch" in fields) != ("uplink" in fields):
        raise RingsimError(f"{where}: [{key}] gpus_per_switch and uplink go together")
    if fields.get("in_network_reduction") and kind == "pcie":
        raise RingsimError(f"{where}: [{key}] in_network_reduction: {PCIE_ADDS_NOTHING}")
    for name in ("net_plugin_latency", "net_latency", "nics_per_gpu"):
        if name in fields and key != "across":
            raise RingsimError(f"{where}: [{key}] {name}: only the [across] level is a network")
    if "nic_path" in fields and key != "across":
        raise RingsimError(f"{where}: [{key}] nic_path: {NIC_PATH_ACROSS}")
    return fields


def _check_network(fields: dict, text: str, where: str) -> None:
    """Refuse a network rate no NIC gives a GPU (above MAX_NETWORK_BANDWIDTH), and one that is
    eight times the rate the level's name states: bytes written for bits."""
    rate, shown = fields["bandwidth"], printable(text)[:40]
    if math.isinf(rate):
        return  # inf says a free network on purpose, as reduce_bandwidth = "inf" does
    named = [float(number) * _RATE_PREFIX[prefix] / 8
             for number, prefix in _NAMED_RATE.findall(fields.get("name", ""))]
    slipped = next((n for n in named if math.isclose(rate, 8 * n, rel_tol=1e-9)), None)
    if slipped is not None:
        raise RingsimError(f"{where} \"{shown}\" is {_bits(rate)} per GPU, 8 times the "
                           f"{_bits(slipped)} its name says: B is bytes, b bits, so write "
                           f"\"{_bits(slipped).replace(' ', '')}\"")
    if rate > MAX_NETWORK_BANDWIDTH:
        # The b-for-B hint only where the rate was written in bytes: one written in bits
        # already is too fast as it stands.
        in_bytes = re.search(r"B(/s|ps)\s*$", text.strip()) is not None
        hint = (f"; if {_bits(rate / 8)} was meant, write it with b (bits), not B (bytes)"
                if in_bytes and rate / 8 <= MAX_NETWORK_BANDWIDTH else
                "; check the number and its unit")
        raise RingsimError(f"{where} \"{shown}\" is {_bits_apart(rate, MAX_NETWORK_BANDWIDTH)} "
                           f"per GPU, faster than any network a GPU has (at most "
                           f"{_bits(MAX_NETWORK_BANDWIDTH)}, "
                           f"{format_bandwidth(MAX_NETWORK_BANDWIDTH)} each way){hint}")
