"""NCCL_MIN_CTAS and NCCL_MAX_CTAS (the communicator config's minCTAs and maxCTAs) as the
channel settings the model already takes: connect.cc (ncclTopoPostset) runs rings and trees on
at most min(NCCL_MAX_NCHANNELS, maxCTAs) channels and copies them up to
max(NCCL_MIN_NCHANNELS, minCTAs); transport/nvls.cc holds NVLS's channels (NCCL's own count or
NCCL_NVLS_NCHANNELS) to [minCTAs, maxCTAs]; init.cc caps both at MAXCHANNELS and lowers minCTAs
to maxCTAs where it is larger.
"""

from __future__ import annotations

from .nccl_call import check_int, checked_topology
from .nccl_channels import nvls_channels, tune


def with_ctas(topology, gpus: int, nccl: str | None, settings: dict,
              min_ctas: int | None = None, max_ctas: int | None = None,
              nvls: bool = True) -> dict:
    """`settings` (min_channels / max_channels / nvls_channels, as predict takes them) with
    minCTAs / maxCTAs applied as NCCL applies them; unchanged where neither is set. `nvls`
    False: NVLS is off, so only the rings and trees are bounded."""
    out = {key: value for key, value in settings.items() if value is not None}
    if min_ctas is None and max_ctas is None:
        return out
    tuned = tune(checked_topology(topology, gpus), gpus, nccl)
    most = tuned.sys.tables["channels"]["max"]
    high = most if max_ctas is None else min(check_int(max_ctas, "NCCL_MAX_CTAS", 1, 1 << 30),
                                            most)
    low = 1 if min_ctas is None else min(check_int(min_ctas, "NCCL_MIN_CTAS", 1, 1 << 30),
                                        most, high)
    if max_ctas is not None:
        out["max_channels"] = min(out.get("max_channels", high), high)
    if min_ctas is not None and low > 1:
        out["min_channels"] = max(out.get("min_channels", 0), low)
    if nvls and tuned.graphs["NVLS"].channels:
        own = out.get("nvls_channels", nvls_channels(tuned, limited=False))
        held = max(low, min(high, own))
        if held != own or "nvls_channels" in out:
            out["nvls_channels"] = held
    return out


def ctas_note(min_ctas: int | None, max_ctas: int | None, held: dict, source: str = "") -> str | None:
    """One line on what NCCL_MIN_CTAS / NCCL_MAX_CTAS did to the channels (None: neither set);
    `source` says where they were set ('in the paste', '(--max-ctas)')."""
    given = [f"NCCL_{b.upper()}_CTAS={v}" for b, v in (("min", min_ctas), ("max", max_ctas))
             if v is not None]
    if not given:
        return None
    bounds = [f"{words} {held[key]}" for key, words in (
        ("min_channels", "rings and trees on at least"), ("max_channels", "rings and trees on at most"),
        ("nvls_channels", "NVLS and NVLSTree on")) if key in held]
    return (f"{' and '.join(given)}{' ' + source if source else ''}: as NCCL bounds its channels "
            f"with them (connect.cc, transport/nvls.cc), the model runs "
            f"{', '.join(bounds) or 'the channels NCCL would anyway'}")


def threads_note(threads: dict, source: str) -> str | None:
    """One line on NCCL_NTHREADS / NCCL_LL128_NTHREADS (`threads`: nthreads, ll128_nthreads);
    `source` says where each was set, '{}' standing for its flag's name ('(--{})')."""
    said = [f"NCCL_{key.upper()}={value} {source.format(key.replace('_', '-'))}"
            for key, value in threads.items()
            if value is not None and key in ("nthreads", "ll128_nthreads")]
    if not said:
        return None
    return (f"# {' and '.join(said)}: as NCCL's getNthreads holds them (graph/tuning.cc), a "
            "Ring or Tree channel runs that many threads, and a small call keeps more of its "
            "channels the fewer they are (enqueue.cc)")


def buffsize_note(buffsize: int | None, source: str) -> str | None:
    """One line on NCCL_BUFFSIZE (None: unset); `source` says where it was set."""
    if buffsize is None:
        return None
    return (f"# NCCL_BUFFSIZE={buffsize:,} {source}: Simple's steps are an eighth of it "
            f"({buffsize // 8:,} bytes; init.cc, computeBuffSizes, and enqueue.cc, "
            "calcCollChunking), which sets how long a call's first step takes to fill its "
            "pipeline")
