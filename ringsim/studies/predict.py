"""What nccl-tests' all_reduce_perf (and all_gather_perf, reduce_scatter_perf, broadcast_perf,
reduce_perf) should print: NCCL's model of each size, in nccl-tests' own columns."""

from __future__ import annotations

from dataclasses import dataclass

from ..core.arguments import argument
from ..core.errors import RingsimError
from ..core.units import format_bytes, format_seconds
from ..cost.nccl import MAX_BYTES, host_seconds, nccl_choices, nvls_link_rates
from ..cost.nccl_tuner import AS_NCCL
from ..cost.topology import load
from ..cost.topology_model import Topology
from .nccltests import ROOTED, SHARE_COUNT
# nccl-tests' rounding lives beside its counts, where sweep reads it too.
from .nccltests_counts import nccl_tests_size, per_rank
from .sweep import parse_sizes

# nccl-tests doc/PERFORMANCE.md: busbw = algbw × factor, the bytes each GPU's link carries.
# A broadcast or reduce moves the buffer once along the ring, so its factor is 1: nccl-tests
# src/broadcast.cu, BroadcastGetBw (lines 34-40, `double factor = 1;`) and src/reduce.cu,
# ReduceGetBw (lines 36-40, `*busBw = baseBw;`), at nccl-tests 2.19.6 (a0b82b2).
BUS_FACTORS = {"all-reduce": lambda n: 2 * (n - 1) / n,
               "all-gather": lambda n: (n - 1) / n,
               "reduce-scatter": lambda n: (n - 1) / n,
               "broadcast": lambda n: 1.0,
               "reduce": lambda n: 1.0}
# nccl-tests' type names (its -d option) with their bytes per element, then ringsim's names
# for them (cost.nccl_tuner.AS_NCCL): what --dtype takes, as (NCCL's name, bytes).
_WIDTHS = {"float": 4, "half": 2, "bfloat16": 2, "double": 8, "int32": 4, "uint32": 4,
           "int64": 8, "uint64": 8, "int8": 1, "uint8": 1, "f8e4m3": 1, "f8e5m2": 1}
TYPES = {**{name: (name, width) for name, width in _WIDTHS.items()},
         **{ours: (name, _WIDTHS[name]) for ours, name in AS_NCCL.items()}}


@dataclass(frozen=True)
class PredictRow:
    """One size: bytes (nccl-tests' size), elements (its count), time and bandwidths, NCCL's
    pick; an empty call (0 bytes), which NCCL discards, has no time and no pick (None)."""

    bytes: int
    count: int
    dtype: str
    seconds: float | None
    algbw: float
    busbw: float
    algorithm: str | None
    protocol: str | None
    channels: int
    requested: int | None = None  # the size asked for, when nccl-tests would round it down
    host_bound: bool = False  # the host issuing the call, not the GPUs, sets its time
    fill: float | None = 0.0  # seconds of it filling the pipeline, beyond NCCL's model (None: empty)
    nccl_seconds: float | None = None  # NCCL's own estimate, the time it chose on

    def to_json(self) -> dict:
        """The row as `ringsim predict --json` prints it (bandwidths in bytes per second;
        seconds, fill, nccl_seconds, algorithm and protocol null for an empty call, which NCCL
        discards;
        requested_bytes: the size asked for, before nccl-tests' rounding down;
        host_bound: the time is the host's, issuing the call to the GPUs it drives;
        fill: seconds of it the first step takes to cross the pipeline, beyond NCCL's model;
        nccl_seconds: NCCL's own estimate of the call, the time it chose the pick on)."""
        return {"bytes": self.bytes, "count": self.count, "type": self.dtype,
                "seconds": self.seconds, "algbw": self.algbw, "busbw": self.busbw,
                "algorithm": self.algorithm, "protocol": self.protocol,
                "channels": self.channels,
                "requested_bytes": self.bytes if self.requested is None else self.requested,
                "host_bound": self.host_bound, "fill": self.fill,
                "nccl_seconds": self.nccl_seconds}


def predict(topology, gpus: int, sizes, collective: str = "all-reduce", algo: str | None = None,
            proto: str | None = None, dtype: str = "float",
            nccl: str | None = None, gpus_per_process: int = 1,
            printed: bool = False, min_channels: int | None = None,
            max_channels: int | None = None, nvls: bool = True,
            nvls_channels: int | None = None, redop: str = "sum", nthreads: int | None = None,
            ll128_nthreads: int | None = None, buffsize: int | None = None) -> list[PredictRow]:
    """NCCL's modelled time per size on a topology (a name, a path or a Topology); sizes are
    bytes per GPU (a list of ints, or text as `--sizes` takes it); `nccl`: the release whose
    tuning tables price it (None: the release the model follows); `gpus_per_process`: the
    GPUs each process drives (nccl-tests' `-g`), whose calls one thread issues in turn. Each
    size is rounded down as nccl-tests rounds it (nccl_tests_size); one that comes to 0 bytes
    is an empty call, which NCCL discards: its row has no time and no pick. `printed`: the
    sizes are nccl-tests' own size column, rounded already by the release that ran (older
    ones round differently), so they are priced as they are. `min_channels` / `max_channels`:
    NCCL_MIN_NCHANNELS / NCCL_MAX_NCHANNELS (None: unset); `nvls` False: NVLS off (as
    NCCL_NVLS_ENABLE=0); `nvls_channels`: NCCL_NVLS_NCHANNELS (None: unset); `redop`: the
    reduction, as nccl-tests' -o names it; `nthreads` / `ll128_nthreads`: NCCL_NTHREADS /
    NCCL_LL128_NTHREADS, `buffsize`: NCCL_BUFFSIZE (None: unset)."""
    topo = load(topology) if isinstance(topology, str) else topology
    if not isinstance(topo, Topology):
        raise RingsimError("topology: give a preset name, a .toml path or a Topology")
    if not isinstance(dtype, str) or dtype not in TYPES:
        raise RingsimError(f"unknown dtype {str(dtype)[:40]!r}; choose one of "
                           f"{', '.join(TYPES)}")
    if collective not in BUS_FACTORS:
        raise RingsimError(f"unknown collective {str(collective)[:40]!r}; choose one of "
                           f"{', '.join(BUS_FACTORS)}")
    named = argument("sizes")
    # A range's largest size is a step of it, not the end typed: the error says which it is.
    ranged = isinstance(sizes, str) and ".." in sizes
    if isinstance(sizes, str):
        sizes = parse_sizes(sizes)
    sizes = list(sizes)
    if not sizes or len(sizes) > 1000:
        raise RingsimError("give between 1 and 1,000 sizes")
    type_name, width = TYPES[dtype]
    if any(isinstance(n, bool) or not isinstance(n, int) for n in sizes):
        raise RingsimError("sizes must be whole numbers of bytes")
    if max(sizes) > MAX_BYTES or min(sizes) < 0:
        bad = max(sizes) if max(sizes) > MAX_BYTES else min(sizes)
        # past an exbibyte, a size reads better as a power of ten than as thousands of PiB
        shown = format_bytes(bad) if abs(bad) < 1 << 60 else f"{bad:.3g} B"
        raise RingsimError(f"{named}: NCCL's model prices 0 B to {format_bytes(MAX_BYTES)} per GPU, "
                           f"got {shown}" + (" (the largest size the range reaches)"
                                             if ranged and bad > MAX_BYTES else ""))
    ranks = gpus if collective in SHARE_COUNT else 1  # the count column is a share per GPU
    whole = [(n // width // ranks, n) if printed else nccl_tests_size(n, width, collective, gpus)
             for n in sizes]
    choices = nccl_choices(topo, gpus, [used for _, used in whole], collective, algo, proto,
                           nccl, gpus_per_process, type_name, min_channels, max_channels, nvls,
                           nvls_channels, redop, nthreads, ll128_nthreads, buffsize)
    factor = BUS_FACTORS[collective](gpus)
    rows = []
    for nbytes, (count, used), choice in zip(sizes, whole, choices):
        requested = nbytes if used != nbytes else None
        if choice is None:  # an empty call, which NCCL discards: not priced
            rows.append(PredictRow(0, 0, type_name, None, 0.0, 0.0, None, None, 0, requested,
                                   fill=None))
            continue
        alg = used / choice.seconds if choice.seconds > 0 else 0.0
        rows.append(PredictRow(used, count, type_name, choice.seconds, alg, alg * factor,
                               choice.algorithm, choice.protocol, choice.channels, requested,
                               choice.host_bound, choice.fill, choice.nccl_seconds))
    return rows


def host_note(rows: list[PredictRow], gpus_per_process: int) -> str | None:
    """One comment line naming the sizes whose time is the host's (None: none)."""
    bound = [r for r in rows if r.host_bound]
    if not bound:
        return None
    sizes = (format_bytes(bound[0].bytes) if len(bound) == 1 else
             f"{len(bound):,} sizes from {format_bytes(bound[0].bytes)} to "
             f"{format_bytes(bound[-1].bytes)}")
    return (f"# --gpus-per-process {gpus_per_process} (nccl-tests' -g {gpus_per_process}): one "
            f"thread issues each call to {gpus_per_process} GPUs, "
            f"{format_seconds(bound[0].seconds)} a call ({format_seconds(host_seconds(1))} per GPU, "
            f"ringsim's estimate); it, not the GPUs, sets the time of {sizes}")


def channels_note(min_channels: int | None, max_channels: int | None,
                  nvls_channels: int | None = None, most: int = 64,
                  nvls_runs: bool = True) -> str | None:
    """One comment line saying what NCCL_MIN_NCHANNELS, NCCL_MAX_NCHANNELS and
    NCCL_NVLS_NCHANNELS do (None: none set), each held to the release's `most` channels;
    `nvls_runs` False where NCCL runs no NVLS for the call."""
    def setting(bound: str, value: int) -> str:
        held = f" (held to {most})" if value > most else ""
        return f"NCCL_{bound}_NCHANNELS={value}{held}"

    parts = []
    rings = [setting(b, v) for b, v in (("MIN", min_channels), ("MAX", max_channels))
             if v is not None]
    if rings:
        parts.append(f"{' and '.join(rings)}: calls run on the channels the channels column "
                     "shows, a copy of a ring adding speed only up to the blocks a ring gets by "
                     "default, while NCCL still weighs every ring its search found")
    if nvls_channels is not None:
        parts.append(f"{setting('NVLS', nvls_channels)}: " + (
            "NVLS and NVLSTree run on that many channels, fewer at that share of NCCL's rate "
            "(2.22.3 to 2.27.7 copy the rings up to it too)" if nvls_runs else
            "NCCL runs no NVLS for this call here"))
    if not parts:
        return None
    return "# " + "; ".join(parts) + " (docs/cost.md, deviation 6)"


MAX_NAMED = 4  # rounded sizes named one by one in the table's note, then a count


def rounding_note(rows: list[PredictRow], collective: str = "all-reduce",
                  gpus: int = 1) -> str | None:
    """One comment line saying which sizes were rounded down as nccl-tests rounds them
    (nccl_tests_size), on `gpus` GPUs (None: none was)."""
    rounded = [r for r in rows if r.requested is not None]
    if not rounded:
        return None
    dtype = rounded[0].dtype
    width = dict(TYPES.values())[dtype]  # nccl-tests' name → bytes per element
    return "# " + rounded_sizes_note([(r.requested, r.bytes) for r in rounded], dtype, width,
                                     collective, gpus)


def rounded_sizes_note(rounded: list[tuple[int, int]], dtype: str, width: int,
                       collective: str = "all-reduce", gpus: int = 1) -> str:
    """What nccl_tests_size did to sizes of `width`-byte elements named `dtype`, in words: the
    (asked, used) pairs, the first MAX_NAMED of them one by one."""
    named = ", ".join(f"{asked:,} B → {used:,} B" for asked, used in rounded[:MAX_NAMED])
    more = f" and {len(rounded) - MAX_NAMED:,} more" if len(rounded) > MAX_NAMED else ""
    if collective not in SHARE_COUNT:
        which = (("a size that is not", "was") if len(rounded) == 1 else
                 (f"{len(rounded):,} sizes that are not", "were"))
        return (f"{which[0]} whole {dtype} elements ({width} B each) {which[1]} rounded "
                f"down, as nccl-tests does (count = size / wordSize): {named}{more}")
    which = "a size was" if len(rounded) == 1 else f"{len(rounded):,} sizes were"
    align = per_rank(width)
    return (f"{which} rounded down as {collective.replace('-', '_')}_perf does: each GPU's "
            f"share (the count column) is size / wordSize / {gpus:,} GPUs, rounded down to a "
            f"multiple of {align} {dtype} element{'s' * (align > 1)} ({align * width} B), and "
            f"the size column holds all {gpus:,} shares: {named}{more}")


def rooted_note(collective: str) -> str | None:
    """One comment line for broadcast and reduce: the ring only, busbw = algbw (None for the
    other collectives)."""
    if collective not in ROOTED:
        return None
    return (f"# NCCL tunes {collective} on the ring only (src/graph/tuning.cc), so it picks Ring "
            f"with LL, LL128 or Simple; busbw = algbw, as {collective}_perf prints it; every "
            "root (-r) is priced alike, as NCCL's model does")


def falls_note(rows: list[PredictRow]) -> str | None:
    """One comment line where a larger size takes less time than the size before it, saying
    why for the first such size and naming the others (None: time never falls)."""
    timed = sorted((r for r in rows if r.seconds is not None), key=lambda r: r.bytes)
    # nccl-tests' own tables wobble by a percent; only a real fall is worth a line
    falls = [(small, large) for small, large in zip(timed, timed[1:])
             if large.bytes > small.bytes and large.seconds < small.seconds * 0.99]
    if not falls:
        return None
    small, large = falls[0]
    pick = f"{small.algorithm}/{small.protocol} at {format_bytes(small.bytes)}"
    why = (f"NCCL chooses {pick} on its own model, which leaves out the "
           f"{format_seconds(small.fill)} its first step takes to fill the pipeline "
           "(ringsim adds it: docs/cost.md, deviation 12)" if small.fill > 0 else
           f"NCCL chooses {pick} on its model of every channel it has, and the call "
           "runs on fewer, or meets the network's measured latency, which ringsim times")
    more = [format_bytes(b.bytes) for _, b in falls[1:]]
    again = (f"; time falls again at {', '.join(more[:MAX_NAMED])}"
             + (f" and {len(more) - MAX_NAMED:,} more sizes" if len(more) > MAX_NAMED else "")
             if more else "")
    return (f"# {format_bytes(large.bytes)} takes less time than {format_bytes(small.bytes)} "
            f"({format_seconds(large.seconds)} against {format_seconds(small.seconds)}): "
            f"{why}{again}")


NVLS_GAP = 1.1  # the links' rate over NCCL's that is worth a line (8 H100s differ by 3%)


def nvls_note(topology, gpus: int, rows: list[PredictRow], collective: str = "all-reduce",
              algo: str | None = None, proto: str | None = None, nccl: str | None = None,
              gpus_per_process: int = 1) -> str | None:
    """One comment line where one node's NVLS all-reduce moves more than NCCL's model rates
    it at (nvls_link_rates) and that shows in the table: a size runs NVLS, or NCCL gives a
    size to something slower (named); None otherwise."""
    timed = [r for r in rows if r.seconds is not None]
    if collective in ("all-gather", "reduce-scatter"):
        return _nvls_gather_note(topology, gpus, timed, collective, nccl, gpus_per_process)
    if collective != "all-reduce" or not timed:
        return None
    dtype = timed[0].dtype
    rates = nvls_link_rates(topology, gpus, nccl, algo, proto, dtype)
    if rates is None or rates[1] < rates[0] * NVLS_GAP:
        return None
    own, link = rates
    text = (f"# NVLS on one node: NCCL's model rates it at {own / 1e9:.0f} GB/s algbw, its search "
            f"capping a channel at its fastest listed speed, but a call on NVLS moves what the "
            f"links carry, {link / 1e9:.0f} GB/s (ringsim's time; docs/cost.md, deviation 14)")
    priced = [r for r in timed if r.algorithm != "NVLS"]
    forced = nccl_choices(topology, gpus, [r.bytes for r in priced], collective, "NVLS",
                          "Simple", nccl, gpus_per_process, dtype) if priced else []
    faster = [(r, 1 - f.seconds / r.seconds) for r, f in zip(priced, forced)
              if f.seconds < r.seconds * 0.95]
    if not faster:
        return text if len(priced) < len(timed) else None
    gain = max(g for _, g in faster)
    if len(faster) == 1:
        which = f"{format_bytes(faster[0][0].bytes)} would take {gain:.0%} less"
    else:
        run = priced[priced.index(faster[0][0]):priced.index(faster[-1][0]) + 1]
        named = [format_bytes(r.bytes) for r, _ in faster[:MAX_NAMED]]
        more = len(faster) - len(named)
        which = (f"{len(faster):,} sizes from {named[0]} to {format_bytes(faster[-1][0].bytes)}"
                 if len(run) == len(faster) else
                 f"{', '.join(named)} and {more:,} more sizes" if more else
                 f"{', '.join(named[:-1])} and {named[-1]}")
        which += f" would take up to {gain:.0%} less"
    return (f"{text}. NCCL chooses on its own figure, so with NCCL_ALGO=NVLS (--algo NVLS) "
            f"{which}")


def _nvls_gather_note(topology, gpus: int, timed: list[PredictRow], collective: str,
                      nccl: str | None, gpus_per_process: int) -> str | None:
    """One comment line where an all-gather or reduce-scatter row runs NVLS: its time is
    NCCL's own figure, unchecked, and set beside an NVLS all-reduce of the same bytes."""
    nvls = [r for r in timed if r.algorithm == "NVLS"]
    if not nvls:
        return None
    text = (f"# NVLS {collective}: the time is NCCL's own figure (docs/cost.md, deviation 14), "
            "which no published run checks")
    # An all-reduce on NVLS is a reduce-scatter and an all-gather of the same bytes: where
    # NCCL's figure for the half is above the whole, a run is likely faster than the table.
    last = nvls[-1]
    whole = nccl_choices(topology, gpus, [last.bytes], "all-reduce", "NVLS", "Simple", nccl,
                         gpus_per_process, last.dtype)[0]
    if whole.seconds is not None and whole.seconds < last.seconds:
        text += (f"; it rates {format_bytes(last.bytes)} at {format_seconds(last.seconds)}, above "
                 f"the {format_seconds(whole.seconds)} of an NVLS all-reduce of the same bytes, "
                 "which does this and more, so a run may well be faster")
    return text


def empty_note(rows: list[PredictRow]) -> str | None:
    """One comment line on the 0-byte rows, which NCCL discards (None: there are none)."""
    empty = sum(1 for r in rows if r.seconds is None)
    if not empty:
        return None
    which = "the row of 0 B" if empty == 1 else f"the {empty:,} rows of 0 B"
    return (f"# {which}: NCCL discards an empty call and launches nothing (src/enqueue.cc, "
            "taskAppend), so there is no algorithm, protocol or channel; nccl-tests would time "
            "only the host's calls around it, which ringsim does not model, so no time either")
