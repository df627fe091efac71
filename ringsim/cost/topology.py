"""Topology files: the presets shipped in ringsim/cost/topologies/ and any .toml by path, read
with tomllib and checked field by field before a Topology (topology_model.py) is built.

A preset or file says where its numbers come from; docs/cost.md lists the fields.
"""

from __future__ import annotations

import math
import re
import tomllib
from importlib import resources
from pathlib import Path

from ..core.checks import MAX_GPUS, echo
from ..core.errors import RingsimError
from ..core.files import read_text
from ..core.textout import printable
from ..core.units import format_bandwidth, parse_bandwidth, parse_memory, parse_seconds
from .topology_model import (ARCHS, CPUS, DEFAULT_KIND, KINDS, LEVELS, MAX_GPU_MEMORY, MAX_NAME,
                             MAX_NET_LATENCY, MAX_NICS_PER_GPU, MAX_SWITCH_GPUS, MIN_GPU_MEMORY,
                             NIC_PATH_ACROSS, NIC_PATHS, PCIE_ADDS_NOTHING, Level, Topology,
                             format_bits)

# The most network one GPU has, per direction: 1.6 Tb/s, twice the fastest NIC sold, NVIDIA's
# ConnectX-8 SuperNIC at 800 Gb/s (its datasheet; one per GPU in GB300 NVL72), and as much
# as four 400 Gb/s NICs give one GPU (studies/published/systems/h100-1gpu-4nic.toml). A
# file's network above it is a unit slip (GB/s for Gb/s is 8 times too fast), not a NIC.
MAX_NETWORK_BANDWIDTH = 1.6e12 / 8


def parse_gpu_memory(text: object, what: str = "the GPU's memory") -> int:
    """A GPU's memory in bytes, from text with a unit: '80GB', '141GB', '192GiB'; 1 MB to 100 TB."""
    nbytes = parse_memory(text, what)
    if not MIN_GPU_MEMORY <= nbytes <= MAX_GPU_MEMORY:
        raise RingsimError(f"{what} must be from 1MB to 100TB, got {echo(text)}")
    return nbytes


def _bits_apart(rate: float, other: float) -> str:
    """`rate` in bits with as many digits as it takes not to read as `other` ('1.6000001 Tb/s'
    beside '1.6 Tb/s'), so that a message never says a rate is above a limit it prints alike."""
    for digits in range(4, 16):
        if format_bits(rate, digits) != format_bits(other, digits):
            return format_bits(rate, digits)
    return format_bits(rate, 16)


# A rate a level's name states in bits per second, as NIC and switch makers write it:
# "InfiniBand NDR 400 Gb/s", "400Gbps", "100 Gbit/s", "RoCE 100Gb", "100 GbE", "100G
# Ethernet". A prefix with b is bits; a bare prefix (100G) is how Ethernet names its rates;
# B (bytes) and anything else after the prefix (GT/s, GHz, GiB) is no network rate.
_NAMED_RATE = re.compile(r"(\d+(?:\.\d+)?)\s*([MGT])"
                         r"(?:b(?:its?)?(?:/s(?:ec)?|ps)?|bE)?(?![A-Za-z/])")
_RATE_PREFIX = {"M": 1e6, "G": 1e9, "T": 1e12}


def presets() -> list[str]:
    """Names of the topologies shipped with ringsim, `flat` first."""
    names = sorted(p.name[:-5] for p in resources.files("ringsim.cost.topologies").iterdir()
                   if p.name.endswith(".toml"))
    return sorted(names, key=lambda n: n != "flat")


def topology_file(name_or_path: object) -> bool:
    """Whether --topology names a file (ends in .toml or holds a slash), not a preset."""
    return isinstance(name_or_path, str) and name_or_path not in presets() and (
        name_or_path.endswith(".toml") or "/" in name_or_path)


def load(name_or_path: str = "flat") -> Topology:
    """A preset by name, or a TOML file by path (a name ending in .toml or holding a slash)."""
    if not isinstance(name_or_path, str):
        raise RingsimError(f"a topology is a preset name or a .toml file, got {name_or_path!r}")
    if name_or_path in presets():
        text = resources.files("ringsim.cost.topologies").joinpath(f"{name_or_path}.toml").read_text(encoding="utf-8")
        return parse(text, name_or_path)
    if topology_file(name_or_path):
        text = read_text(name_or_path, "topology file", MAX_FILE_BYTES)
        return parse(text, Path(name_or_path).stem)
    raise RingsimError(f"unknown topology {printable(name_or_path)[:60]!r}; choose one of: "
                       f"{', '.join(presets())}, or give a .toml file")


# What a topology file may hold, checked before anything is built: each key names the checker
# that turns its TOML value into the value of the Topology (or Level) field of the same name.
# A new key is one line here and a defaulted field on the dataclass.
MAX_FILE_BYTES = 64 * 1024  # thirty times the largest preset
MAX_LINE = 1000             # TOML's parser slows down with the square of a key's dots


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
        raise RingsimError(f"{where} \"{shown}\" is {format_bits(rate)} per GPU, 8 times the "
                           f"{format_bits(slipped)} its name says: B is bytes, b bits, so write "
                           f"\"{format_bits(slipped).replace(' ', '')}\"")
    if rate > MAX_NETWORK_BANDWIDTH:
        # The b-for-B hint only where the rate was written in bytes: one written in bits
        # already is too fast as it stands.
        in_bytes = re.search(r"B(/s|ps)\s*$", text.strip()) is not None
        hint = (f"; if {format_bits(rate / 8)} was meant, write it with b (bits), not B (bytes)"
                if in_bytes and rate / 8 <= MAX_NETWORK_BANDWIDTH else
                "; check the number and its unit")
        raise RingsimError(f"{where} \"{shown}\" is {_bits_apart(rate, MAX_NETWORK_BANDWIDTH)} "
                           f"per GPU, faster than any network a GPU has (at most "
                           f"{format_bits(MAX_NETWORK_BANDWIDTH)}, "
                           f"{format_bandwidth(MAX_NETWORK_BANDWIDTH)} each way){hint}")
