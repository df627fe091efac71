"""Whose time it is: NCCL's own model's pick for a call, beside what the textbook α-β-γ model
prices, and which libraries run a textbook algorithm (read from its spec)."""

from __future__ import annotations

from ..algorithms import ALGORITHMS
from ..core.errors import RingsimError
from ..core.naming import plural
from ..core.units import format_bandwidth, format_seconds
from ..cost.model import CostModel, algbw_of
from ..cost.nccl import EMPTY_CALL, NcclChoice, nccl_choice
from ..cost.nccl_tuner import carried_release, nccl_type


def nccl_release(nccl: str | None = None) -> str | None:
    """The release given, or None where it is the model's own (whose labels name no release)."""
    from ..cost.nccl_tuner import versions
    return None if nccl is None or nccl == versions()[0] else nccl


def nccl_version(nccl: str | None = None) -> str:
    """The NCCL release whose tuning constants price the model: 'NCCL 2.30.7' (the model's
    own, spelled as --nccl and every other release are) or the older release given."""
    from ..cost.nccl_tuner import versions
    return "NCCL " + (nccl_release(nccl) or versions()[0])


def nccl_model(nccl: str | None = None) -> str:
    """The name of NCCL's model's row or column: "NCCL's model", or "NCCL 2.21.5's model"
    where an older release's tables price it."""
    release = nccl_release(nccl)
    return "NCCL's model" if release is None else f"NCCL {release}'s model"


def nccl_for(model: CostModel, gpus: int, nbytes: int, collective: str = "all-reduce",
             nccl: str | None = None) -> NcclChoice | str | None:
    """NCCL's model's pick for one call, with the tuning tables of release `nccl` (None: the
    model's own); None for one GPU (NCCL sends nothing), or the one line saying why the
    model has no answer on this topology."""
    carried_release(nccl)  # a release ringsim lacks is refused, not given as the model's answer
    if gpus < 2:
        return None
    if nbytes == 0:
        return EMPTY_CALL
    try:
        return nccl_choice(model.topology, gpus, nbytes, collective, nccl=nccl,
                           dtype=nccl_type(model.dtype))
    except RingsimError as error:
        return str(error)


def nccl_line(pick: NcclChoice | str | None, nbytes: int, bus_factor: float,
              nccl: str | None = None) -> str:
    """'NCCL's model (NCCL 2.30.7's tuning): NCCL would run Tree, protocol LL, on 16
    channels: 27.60 µs (algbw …, busbw …)', or why there is no such line."""
    head = f"NCCL's model ({nccl_version(nccl)}'s own tuning)"
    if pick is None:
        return f"{head}: one GPU, NCCL sends nothing"
    if not isinstance(pick, NcclChoice):
        return f"{head}: no answer here: {pick}"
    alg = algbw_of(nbytes, pick.seconds)
    bus = None if alg is None else alg * bus_factor
    return (f"{head}: NCCL would run {pick.algorithm}, protocol {pick.protocol}, on "
            f"{plural(pick.channels, 'channel')}: {format_seconds(pick.seconds)} (algbw "
            f"{format_bandwidth(alg)}, busbw {format_bandwidth(bus)})")


def runs_line(name: str) -> str:
    """What a textbook algorithm is to NCCL and MPI, from its spec: 'Ring all-reduce is NCCL's
    Ring', 'Recursive doubling is not in NCCL (MPICH and Open MPI run it)'."""
    spec = ALGORITHMS.get(name)
    if spec is None:
        return ""
    libraries = list(dict.fromkeys(i.library for i in spec.mpi_implementations))
    mpi = f"{' and '.join(libraries)} run{'s' * (len(libraries) == 1)} it" if libraries else ""
    if spec.nccl_name:
        return f"{spec.title} is NCCL's {spec.nccl_name}" + (f"; {mpi}" if mpi else "")
    return f"{spec.title} is not in NCCL" + (f" ({mpi})" if mpi else "")
