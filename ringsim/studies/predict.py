"""What nccl-tests' all_reduce_perf (and all_gather_perf, reduce_scatter_perf) should print:
NCCL's model of each size, in nccl-tests' own columns."""

from __future__ import annotations

from dataclasses import dataclass

from ..core.errors import RingsimError
from ..cost.nccl import nccl_choices
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

    def to_json(self) -> dict:
        """The row as `ringsim predict --json` prints it (bandwidths in bytes per second)."""
        return {"bytes": self.bytes, "count": self.count, "type": self.dtype,
                "seconds": self.seconds, "algbw": self.algbw, "busbw": self.busbw,
                "algorithm": self.algorithm, "protocol": self.protocol,
                "channels": self.channels}


def predict(topology, gpus: int, sizes, collective: str = "all-reduce", algo: str | None = None,
            proto: str | None = None, dtype: str = "float") -> list[PredictRow]:
    """NCCL's modelled time per size on a topology (a name, a path or a Topology); sizes are
    bytes per GPU (a list of ints, or text as `--sizes` takes it)."""
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
    choices = nccl_choices(topo, gpus, sizes, collective, algo, proto)
    factor = BUS_FACTORS[collective](gpus)
    rows = []
    for nbytes, choice in zip(sizes, choices):
        alg = nbytes / choice.seconds if choice.seconds > 0 else 0.0
        rows.append(PredictRow(nbytes, nbytes // width, type_name, choice.seconds, alg,
                               alg * factor, choice.algorithm, choice.protocol, choice.channels))
    return rows
