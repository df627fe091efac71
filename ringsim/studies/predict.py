"""What nccl-tests' all_reduce_perf (and all_gather_perf, reduce_scatter_perf) should print:
NCCL's model of each size, in nccl-tests' own columns."""

from __future__ import annotations

from dataclasses import dataclass

from ..core.errors import RingsimError
from ..core.units import format_bytes, format_seconds
from ..cost.nccl import host_seconds, nccl_choices
from ..cost.topology import Topology, load
from .sweep import parse_sizes

# nccl-tests doc/PERFORMANCE.md: busbw = algbw × factor, the bytes each GPU's link carries.
BUS_FACTORS = {"all-reduce": lambda n: 2 * (n - 1) / n,
               "all-gather": lambda n: (n - 1) / n,
               "reduce-scatter": lambda n: (n - 1) / n}
# nccl-tests' type names (its -d option) and ringsim's, with their bytes per element.
TYPES = {"float": ("float", 4), "float32": ("float", 4), "half": ("half", 2),
         "float16": ("half", 2), "bfloat16": ("bfloat16", 2), "double": ("double", 8),
         "float64": ("double", 8), "int32": ("int32", 4), "int64": ("int64", 8),
         "int8": ("int8", 1), "uint8": ("uint8", 1)}


@dataclass(frozen=True)
class PredictRow:
    """One size: bytes per GPU (nccl-tests' size), elements, time and bandwidths, NCCL's pick."""

    bytes: int
    count: int
    dtype: str
    seconds: float
    algbw: float
    busbw: float
    algorithm: str
    protocol: str
    channels: int
    requested: int | None = None  # the size asked for, when it was not whole elements
    host_bound: bool = False  # the host issuing the call, not the GPUs, sets its time
    fill: float = 0.0  # seconds of it spent filling the pipeline, which NCCL's model leaves out

    def to_json(self) -> dict:
        """The row as `ringsim predict --json` prints it (bandwidths in bytes per second;
        requested_bytes: the size asked for, before rounding down to whole elements;
        host_bound: the time is the host's, issuing the call to the GPUs it drives;
        fill: seconds of it the first step takes to cross the pipeline, beyond NCCL's model)."""
        return {"bytes": self.bytes, "count": self.count, "type": self.dtype,
                "seconds": self.seconds, "algbw": self.algbw, "busbw": self.busbw,
                "algorithm": self.algorithm, "protocol": self.protocol,
                "channels": self.channels,
                "requested_bytes": self.bytes if self.requested is None else self.requested,
                "host_bound": self.host_bound, "fill": self.fill}


def whole_elements(nbytes: int, width: int) -> tuple[int, int]:
    """(count, bytes) as nccl-tests sets up a size: count = size / wordSize in integer
    division (src/common.cu, setupArgs), so a size that is not whole elements is rounded
    down and the test moves, times and prints count × wordSize bytes."""
    count = nbytes // width
    return count, count * width


def predict(topology, gpus: int, sizes, collective: str = "all-reduce", algo: str | None = None,
            proto: str | None = None, dtype: str = "float",
            nccl: str | None = None, gpus_per_process: int = 1) -> list[PredictRow]:
    """NCCL's modelled time per size on a topology (a name, a path or a Topology); sizes are
    bytes per GPU (a list of ints, or text as `--sizes` takes it); `nccl`: the release whose
    tuning tables price it (None: the release the model follows); `gpus_per_process`: the
    GPUs each process drives (nccl-tests' `-g`), whose calls one thread issues in turn."""
    topo = load(topology) if isinstance(topology, str) else topology
    if not isinstance(topo, Topology):
        raise RingsimError("topology: give a preset name, a .toml path or a Topology")
    if not isinstance(dtype, str) or dtype not in TYPES:
        raise RingsimError(f"unknown dtype {str(dtype)[:40]!r}; choose one of "
                           f"{', '.join(TYPES)}")
    if collective not in BUS_FACTORS:
        raise RingsimError(f"unknown collective {str(collective)[:40]!r}; choose one of "
                           f"{', '.join(BUS_FACTORS)}")
    if isinstance(sizes, str):
        sizes = parse_sizes(sizes)
    sizes = list(sizes)
    if not sizes or len(sizes) > 1000:
        raise RingsimError("give between 1 and 1,000 sizes")
    type_name, width = TYPES[dtype]
    if any(isinstance(n, bool) or not isinstance(n, int) for n in sizes):
        raise RingsimError("sizes must be whole numbers of bytes")
    whole = [whole_elements(n, width) for n in sizes]
    choices = nccl_choices(topo, gpus, [used for _, used in whole], collective, algo, proto, nccl,
                           gpus_per_process)
    factor = BUS_FACTORS[collective](gpus)
    rows = []
    for nbytes, (count, used), choice in zip(sizes, whole, choices):
        alg = used / choice.seconds if choice.seconds > 0 else 0.0
        rows.append(PredictRow(used, count, type_name, choice.seconds, alg, alg * factor,
                               choice.algorithm, choice.protocol, choice.channels,
                               nbytes if used != nbytes else None, choice.host_bound,
                               choice.fill))
    return rows


def host_note(rows: list[PredictRow], gpus_per_process: int) -> str | None:
    """One comment line naming the sizes whose time is the host's (None: none)."""
    bound = [r for r in rows if r.host_bound]
    if not bound:
        return None
    sizes = (format_bytes(bound[0].bytes) if len(bound) == 1 else
             f"{len(bound):,} sizes from {format_bytes(bound[0].bytes)} to "
             f"{format_bytes(bound[-1].bytes)}")
    return (f"# -g {gpus_per_process}: one thread issues each call to {gpus_per_process} GPUs, "
            f"{format_seconds(bound[0].seconds)} a call ({format_seconds(host_seconds(1))} per GPU, "
            f"ringsim's estimate); it, not the GPUs, sets the time of {sizes}")


MAX_NAMED = 4  # rounded sizes named one by one in the table's note, then a count


def rounding_note(rows: list[PredictRow]) -> str | None:
    """One comment line saying which sizes were rounded down to whole elements (None: none)."""
    rounded = [r for r in rows if r.requested is not None]
    if not rounded:
        return None
    width = dict(TYPES.values())[rounded[0].dtype]  # nccl-tests' name → bytes per element
    named = ", ".join(f"{r.requested:,} B → {r.bytes:,} B" for r in rounded[:MAX_NAMED])
    more = f" and {len(rounded) - MAX_NAMED:,} more" if len(rounded) > MAX_NAMED else ""
    which = ("a size that is not", "was") if len(rounded) == 1 else (f"{len(rounded):,} sizes that are not", "were")
    return (f"# {which[0]} whole {rounded[0].dtype} elements ({width} B each) {which[1]} rounded "
            f"down, as nccl-tests does (count = size / wordSize): {named}{more}")
