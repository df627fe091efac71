"""Topologies: GPUs in nodes, a full-duplex port per GPU on each level, α, β and γ per level.

Two levels at most: `inside` a node (NVLink through NVSwitch, a PCIe switch) and `across`
nodes (one NIC per GPU). A transfer between two GPUs of one node uses the inside level,
any other the across level; a flat topology has one level and no nodes. Presets are TOML
files in ringsim/cost/topologies/ (read with tomllib); each says where its numbers come from.
GPU g (0-based) lives in node g // gpus_per_node, so the last node may be partly filled.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, replace
from importlib import resources
from pathlib import Path

from ..core.errors import RingsimError
from ..core.units import parse_bandwidth, parse_seconds

LEVELS = ("inside", "across")
LEVEL_WORDS = {"inside": "inside a node", "across": "across nodes"}
# What NCCL's model needs to know (docs/cost.md): the GPU generation and each level's kind of
# link. A file that leaves them out gets these defaults, which keep yesterday's files working.
ARCHS = ("volta", "ampere", "hopper", "blackwell")
KINDS = ("nvlink", "pcie", "network")
DEFAULT_ARCH = "ampere"
DEFAULT_KIND = {"inside": "nvlink", "across": "network"}


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

    @property
    def gamma(self) -> float:
        """Seconds per byte reduced at the receiver (0 when reducing is free)."""
        return 1.0 / self.reduce_bandwidth

    def level(self, key: str) -> Level:
        """The Level named `inside` or `across`."""
        try:
            return self.levels[key]
        except KeyError:
            raise RingsimError(f"topology {self.name} has no {LEVEL_WORDS.get(key, key)} level") \
                from None

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

    def describe(self) -> str:
        """One line per level: what it is, α and bandwidth; then the reduce bandwidth."""
        from ..core.units import format_bandwidth, format_seconds
        lines = [f"{self.title}" + (f", {self.gpus_per_node} GPU{'s' * (self.gpus_per_node > 1)} "
                                   "per node" if self.gpus_per_node else "")]
        for key in LEVELS:
            if key in self.levels:
                lv = self.levels[key]
                lines.append(f"  {LEVEL_WORDS[key] if self.gpus_per_node else 'every link'}: "
                             f"{lv.name}, α = {format_seconds(lv.alpha)}, "
                             f"{format_bandwidth(lv.bandwidth)} per GPU per direction")
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
        text = resources.files("ringsim.cost.topologies").joinpath(f"{name_or_path}.toml").read_text()
        return parse(text, name_or_path)
    path = Path(name_or_path)
    if name_or_path.endswith(".toml") or "/" in name_or_path:
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as error:
            raise RingsimError(f"cannot read topology file {name_or_path}: "
                               f"{error.strerror or error}") from None
        except UnicodeDecodeError:
            raise RingsimError(f"topology file {name_or_path} is not UTF-8 text") from None
        return parse(text, path.stem)
    raise RingsimError(f"unknown topology {name_or_path!r}; choose one of: "
                       f"{', '.join(presets())}, or give a .toml file")


def parse(text: str, name: str) -> Topology:
    """A Topology from TOML text (see docs/cost.md for the fields)."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise RingsimError(f"topology {name}: not valid TOML ({error})") from None
    where = f"topology {name}"
    known = {"name", "title", "gpus_per_node", "reduce_bandwidth", "sources", "measured", "arch",
             *LEVELS}
    unknown = sorted(set(data) - known)
    if unknown:
        raise RingsimError(f"{where}: unknown field {unknown[0]!r}; fields are "
                           f"{', '.join(sorted(known))}")
    per_node = data.get("gpus_per_node")
    if per_node is not None and (isinstance(per_node, bool) or not isinstance(per_node, int)
                                 or per_node < 1):
        raise RingsimError(f"{where}: gpus_per_node must be a whole number at least 1")
    levels = {}
    for key in LEVELS:
        table = data.get(key)
        if table is None:
            continue
        if not isinstance(table, dict):
            raise RingsimError(f"{where}: [{key}] must be a table with name, alpha, bandwidth")
        missing = [f for f in ("alpha", "bandwidth") if f not in table]
        if missing:
            raise RingsimError(f"{where}: [{key}] needs {missing[0]} (e.g. alpha = \"1us\", "
                               f"bandwidth = \"450GB/s\")")
        levels[key] = Level(key, str(table.get("name", key)),
                            parse_seconds(table["alpha"], f"{where}: [{key}] alpha"),
                            parse_bandwidth(table["bandwidth"], f"{where}: [{key}] bandwidth"),
                            **_nccl_fields(table, key, where))
    if not levels:
        raise RingsimError(f"{where}: needs an [inside] or an [across] level")
    if per_node is None and "across" in levels:
        raise RingsimError(f"{where}: an [across] level needs gpus_per_node")
    reduce = parse_bandwidth(str(data.get("reduce_bandwidth", "inf")),
                             f"{where}: reduce_bandwidth")
    arch = data.get("arch", DEFAULT_ARCH)
    if arch not in ARCHS:
        raise RingsimError(f"{where}: arch must be one of {', '.join(ARCHS)}")
    return Topology(str(data.get("name", name)), str(data.get("title", name)), per_node, levels,
                    reduce, str(data.get("sources", "")).strip(),
                    str(data.get("measured", "")).strip(), arch)


def _nccl_fields(table: dict, key: str, where: str) -> dict:
    """A level's kind, in_network_reduction, PCIe switch layout and plugin latency, checked
    (defaults above)."""
    kind = table.get("kind", DEFAULT_KIND[key])
    if kind not in KINDS:
        raise RingsimError(f"{where}: [{key}] kind must be one of {', '.join(KINDS)}")
    if (kind == "network") != (key == "across"):
        raise RingsimError(f"{where}: [{key}] kind must be " + (
            "network" if key == "across" else "nvlink or pcie (a network joins nodes: put it "
            "in [across], with gpus_per_node = 1 for one GPU per node)"))
    reduces = table.get("in_network_reduction", False)
    if not isinstance(reduces, bool):
        raise RingsimError(f"{where}: [{key}] in_network_reduction must be true or false")
    per_switch = table.get("gpus_per_switch")
    if per_switch is not None and (isinstance(per_switch, bool) or not isinstance(per_switch, int)
                                   or not 1 <= per_switch <= 1024):
        raise RingsimError(f"{where}: [{key}] gpus_per_switch must be a whole number from 1 "
                           "to 1024")
    uplink = table.get("uplink")
    if uplink is not None:
        uplink = parse_bandwidth(uplink, f"{where}: [{key}] uplink")
    if (per_switch is None) != (uplink is None):
        raise RingsimError(f"{where}: [{key}] gpus_per_switch and uplink go together")
    return {"kind": kind, "in_network_reduction": reduces, "gpus_per_switch": per_switch,
            "uplink": uplink, "net_plugin_latency": _plugin_latency(table, key, where)}


# A net plugin's props->latency is a per-message figure in µs (aws-ofi-nccl reports 35 to
# 150 µs); a second would be a typing slip, not a network.
MAX_PLUGIN_LATENCY = 0.01


def _plugin_latency(table: dict, key: str, where: str) -> float:
    """[across] net_plugin_latency: what a network plugin tells NCCL its latency is (0: NCCL's
    own InfiniBand and socket transports, which report none)."""
    if "net_plugin_latency" not in table:
        return 0.0
    what = f"{where}: [{key}] net_plugin_latency"
    if key != "across":
        raise RingsimError(f"{what}: only the [across] level has a network plugin")
    value = parse_seconds(table["net_plugin_latency"], what)
    if not 0 <= value <= MAX_PLUGIN_LATENCY:
        raise RingsimError(f"{what} must be from 0 to 10ms")
    return value
