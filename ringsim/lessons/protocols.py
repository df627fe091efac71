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
from .text import clip
from .words import Entry

OPTIONS = ("gpus", "bytes", "topology", "proto", "algo")
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
    key = (topology, a.scenario.gpus, size, proto, a.options.get("algo"))
    return _CHOICES.get_or(key, lambda: nccl_choice(topology, a.scenario.gpus, size,
                                                    algo=a.options.get("algo"), proto=proto))


def _version(a) -> str:
    from ..cost.nccl_tuner import versions
    return versions()[0]  # spelled as --nccl takes it, as every command prints it


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


def _published(a) -> tuple[dict, dict | None]:
    """The published system the placeholder names (`system=`), and its point at `bytes=`."""
    from ..studies import peers
    name = a.options.get("system", "")
    system = next((s for s in peers.data()["system"] if s["id"] == name), None)
    if system is None:
        raise RingsimError(f"no published system {clip(name)!r} (ringsim/studies/published/measurements.toml)")
    size = int(a.options.get("bytes", 8))
    point = next((p for p in peers.data()["point"] if p["system"] == name and p["bytes"] == size), None)
    return system, point


def _measured(a) -> str:
    """A published run's time at `bytes=`, as its source printed it."""
    from ..studies import peers
    system, point = _published(a)
    if point is None:
        raise RingsimError(f"published system {system['id']!r} has no point at "
                           f"{clip(a.options.get('bytes', 8))} bytes")
    return format_seconds(peers.measured_seconds(point, system["gpus"], peers.collective(system)))


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
        "nccl.version": Entry(_version, (), "the NCCL version whose constants are used"),
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
                               "a published all_reduce_perf run's time at a size (system= its id)"),
        "nccl.measured.release": Entry(lambda a: _published(a)[0].get("nccl", "unstated"), ("system",),
                                       "the NCCL release a published run states"),
    }
