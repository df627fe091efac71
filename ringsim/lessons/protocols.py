"""The lessons' NCCL figures: which algorithm and protocol NCCL picks, and how long a call takes.

Nothing is modelled here: every figure is `ringsim.cost.nccl.nccl_choice` (NCCL's own tuning
model, its constants copied from NVIDIA/nccl into cost/nccl_constants.toml) on a preset
topology, dgx-h100 unless the placeholder names another; `proto=` restricts the protocol as
NCCL_PROTO does, `algo=` the algorithm as NCCL_ALGO does. `nccl.measured` reads a published
run instead (ringsim/studies/published/measurements.toml).
"""

from __future__ import annotations

from ..core.errors import RingsimError
from ..core.units import format_bytes, format_seconds
from .cache import Cache
from ..core.textout import clip
from .words import Entry

OPTIONS = ("gpus", "bytes", "topology", "proto", "algo", "nccl")
DEFAULT_TOPOLOGY = "dgx-h100"
TABLE_SIZES = (8, 1 << 10, 1 << 16, 1 << 20, 1 << 24, 1 << 30)  # 8 B … 1 GiB per GPU
SCAN_LIMIT = 1 << 33  # the switch is looked for among powers of two up to 8 GiB

_CHOICES = Cache(256)


def _choice(a, nbytes: int | None = None, proto: str | None = None):
    """NCCL's pick for the figure's G, bytes per GPU and topology (cached)."""
    from ..cost.nccl import nccl_choice
    topology = a.options.get("topology", DEFAULT_TOPOLOGY)
    size = int(a.options.get("bytes", 8) if nbytes is None else nbytes)
    proto = a.options.get("proto") if proto is None else proto
    release = a.options.get("nccl")
    key = (topology, a.scenario.gpus, size, proto, a.options.get("algo"), release)
    return _CHOICES.get_or(key, lambda: nccl_choice(topology, a.scenario.gpus, size,
                                                    algo=a.options.get("algo"), proto=proto,
                                                    nccl=release))


def _version(a) -> str:
    from ..cost.nccl_tuner import versions
    return a.options.get("nccl") or versions()[0]  # spelled as --nccl takes it, as every command prints it


def _factor(name: str):
    def fn(a) -> str:
        from ..cost.nccl_graph import constants
        return f"{constants()['factors'][name]:g}"
    return fn


def _switch(a) -> str:
    """The smallest power-of-two size at which NCCL stops picking the protocol it picks at 8 B."""
    first = _choice(a, 8).protocol
    size = 16
    while size <= SCAN_LIMIT and _choice(a, size).protocol == first:
        size *= 2
    return format_bytes(size) if size <= SCAN_LIMIT else "never, up to 8 GiB"


def _table(a) -> str:
    """A block: per size, NCCL's pick and its time, beside LL's and Simple's."""
    rows = [("size", "NCCL picks", "time", "with LL", "with Simple")]
    for size in TABLE_SIZES:
        best = _choice(a, size)
        ll, simple = _choice(a, size, "LL"), _choice(a, size, "Simple")
        rows.append((format_bytes(size), f"{best.algorithm} + {best.protocol}",
                     format_seconds(best.seconds), format_seconds(ll.seconds),
                     format_seconds(simple.seconds)))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join([r[0].rjust(widths[0]), r[1].ljust(widths[1]),
                                *(c.rjust(w) for c, w in zip(r[2:], widths[2:]))]).rstrip()
                     for r in rows)


def _system(a) -> dict:
    """The published system the placeholder names (`system=`, which it needs)."""
    from ..studies import peers
    name = a.options.get("system")
    if name is None:
        raise RingsimError("name the published run with system=ID "
                           "(an id of ringsim/studies/published/measurements.toml)")
    return next(s for s in peers.data()["system"] if s["id"] == name)  # the option checked it


def _point(a) -> dict:
    """The published system's one point at `bytes=` (a size it measured once)."""
    from ..studies import peers
    system, size = _system(a), int(a.options.get("bytes", 8))
    found = [p for p in peers.data()["point"] if p["system"] == system["id"] and p["bytes"] == size]
    if len(found) != 1:
        raise RingsimError(f"published system {system['id']!r} has {len(found) or 'no'} points at "
                           f"{clip(size)} bytes: name a size it measured once")
    return found[0]


def _measured(a) -> str:
    """A published run's time at `bytes=`: printed, or from the busbw its source quotes."""
    from ..studies import peers
    system = _system(a)
    return format_seconds(peers.measured_seconds(_point(a), system["gpus"], peers.collective(system)))


def _release(a) -> str:
    """The NCCL release a published run states."""
    system = _system(a)
    if "nccl" not in system:
        raise RingsimError(f"published system {system['id']!r} states no NCCL release")
    return system["nccl"]


def _measured_why(a, value: str) -> str:
    system, point = _system(a), _point(a)
    return (f"read, not computed: the published {system['id']} ({system['source']}), "
            f"{system['gpus']:,} GPUs, its {format_bytes(point['bytes'])} row.")


def _why(a, value: str) -> str:
    c = _choice(a)
    held = " and ".join(f"{flag}={a.options[key]}" for key, flag in
                        (("algo", "NCCL_ALGO"), ("proto", "NCCL_PROTO")) if a.options.get(key))
    return (f"ringsim.cost.nccl (NCCL's tuning model) prices every algorithm and protocol NCCL has"
            f"{f' (held to {held})' if held else ''} "
            f"for {format_bytes(int(a.options.get('bytes', 8)))} per GPU on {a.scenario.gpus:,} GPUs "
            f"({a.options.get('topology', DEFAULT_TOPOLOGY)}): latency + bytes / bandwidth; the "
            f"fastest is {c.algorithm} + {c.protocol}, {format_seconds(c.seconds)}.")


def entries() -> dict:
    """The protocol lesson's words, as vocabulary Entries."""
    return {
        "nccl.version": Entry(_version, ("nccl",), "the NCCL version whose constants are used"),
        "nccl.factor.ll": Entry(_factor("ring_ll"), (), "LL's share of each 8-byte line that is data (0.5)"),
        "nccl.factor.ll128": Entry(_factor("ring_ll128"), (),
                                   "LL128's share of each 128-byte line that is data (0.92 in tuning.cc)"),
        "nccl.protocol": Entry(lambda a: _choice(a).protocol, OPTIONS, "the protocol NCCL picks", _why),
        "nccl.algorithm": Entry(lambda a: _choice(a).algorithm, OPTIONS, "the algorithm NCCL picks", _why),
        "nccl.time": Entry(lambda a: format_seconds(_choice(a).seconds), OPTIONS,
                           "the call's time in NCCL's model", _why),
        "nccl.latency": Entry(lambda a: format_seconds(_choice(a).latency), OPTIONS,
                              "the call's fixed part: base latency + steps × hop latency", _why),
        "nccl.fill": Entry(lambda a: format_seconds(_choice(a).fill), OPTIONS,
                           "what the call waits for its first step to cross the pipeline", _why),
        "nccl.switch": Entry(_switch, OPTIONS, "the smallest power-of-two size at which NCCL leaves "
                                               "the protocol it uses at 8 B"),
        "nccl.table": Entry(_table, OPTIONS, "a block: NCCL's pick and time from 8 B to 1 GiB, "
                                             "beside LL's and Simple's"),
        "nccl.measured": Entry(_measured, ("system", "bytes"),
                               "a published nccl-tests run's time at a size (system= its id)",
                               _measured_why),
        "nccl.measured.release": Entry(_release, ("system",), "the NCCL release a published run states"),
    }
