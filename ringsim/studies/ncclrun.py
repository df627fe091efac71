"""How NCCL ran, as a paste or its log says, and what the model takes from it: the release
whose tuning tables price the run, and NVLS left out where NCCL had it off."""

from __future__ import annotations

from ..cost.nccl_tuner import NVLS_FAMILY  # what NCCL leaves out when NVLS is off (tuning.cc)


def without_nvls(algo: str | None) -> str | None:
    """An NCCL_ALGO setting less NVLS and NVLSTree, as NCCL runs it with NVLS off; the setting
    as it was where that leaves nothing, or where ringsim cannot read it (the per-collective
    form): the caller's or the paste's word then stands."""
    if algo is None:
        return "^" + ",".join(NVLS_FAMILY)
    if ":" in algo or ";" in algo:
        return algo
    nvls = {a.lower() for a in NVLS_FAMILY}
    kept = [p.strip() for p in algo.lstrip("^").split(",") if p.strip().lower() not in nvls]
    if algo.startswith("^"):
        return "^" + ",".join(kept + list(NVLS_FAMILY))
    return ",".join(kept) if kept else algo


def only_nvls(algo: str | None) -> bool:
    """Whether an NCCL_ALGO setting names NVLS or NVLSTree alone, leaving NCCL nothing once
    NVLS is off (without_nvls then keeps it as it was)."""
    if algo is None or algo.startswith("^") or ":" in algo or ";" in algo:
        return False
    nvls = {a.lower() for a in NVLS_FAMILY}
    return all(part.strip().lower() in nvls for part in algo.split(","))


def no_nvls(predict, *args, algo: str | None = None, **options):
    """`predict` with NVLS off: NVLS and NVLSTree left out of its `algo` (without_nvls), and
    no nvlsChannels for the rings to be raised to."""
    return predict(*args, algo=without_nvls(algo), nvls=False, **options)


def run_release(version: str | None) -> str | None:
    """The release whose tables price a run of NCCL `version` by default: that one, where
    ringsim has its tables, else None (the release the model follows)."""
    from ..cost.nccl_tuner import release, versions
    if not version:
        return None
    ran = release(version)
    return ran if ran in versions() else None
