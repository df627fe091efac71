"""What the pattern of a run's slow sizes says before the links are blamed.

Two patterns point away from the links' capacity. nccl-tests times every size twice, out of
place (a separate output buffer) and in place (the output over the input); both calls move the
same bytes over the same links, so where only one of them is slow the links are unlikely to be
why. And sizes that are each slower than both of their neighbours, while the neighbours run as
modelled, are dips that a link's rate alone does not make: a slow link slows every large size.
"""

from __future__ import annotations

import statistics

from ..core.units import format_bytes

# Healthy runs print out-of-place and in-place times within a few per cent of each other
# (the same bytes over the same links); past 1.3× apart, as far as the default tolerance
# lets a size fall short of the model, the gap is in the calls themselves, not in jitter.
IN_PLACE_ASYMMETRY = 1.3


def in_place_check(rows, tolerance: float) -> dict | None:
    """The bandwidth-bound sizes where one of nccl-tests' two columns is IN_PLACE_ASYMMETRY×
    slower than the other, or None where they agree.

    'out-of-place' is slower at most of the flagged sizes (the column diagnose reads), or
    'in-place' at most of the bandwidth-bound ones (the column it does not); with the median
    ratio of the slower time to the other, and the in-place busbw over the model's there."""
    both = [r for r in rows if r.regime == "bandwidth" and r.in_place_seconds]
    flagged = [r for r in both if r.flag]
    slower = [r for r in flagged if r.measured_seconds > IN_PLACE_ASYMMETRY * r.in_place_seconds]
    if flagged and 2 * len(slower) >= len(flagged):
        return _record("out-of-place", slower, len(flagged), tolerance,
                       [r.measured_seconds / r.in_place_seconds for r in slower])
    reverse = [r for r in both if r.in_place_seconds > IN_PLACE_ASYMMETRY * r.measured_seconds]
    if len(reverse) >= 2 and 2 * len(reverse) >= len(both):
        return _record("in-place", reverse, len(both), tolerance,
                       [r.in_place_seconds / r.measured_seconds for r in reverse])
    return None


def _record(slower: str, rows, out_of: int, tolerance: float, ratios: list[float]) -> dict:
    # the in-place busbw against the model's at those sizes: the same factor turns both
    # times into busbw, so the ratio of times carries over
    in_place = [r.ratio * r.measured_seconds / r.in_place_seconds for r in rows
                if r.ratio is not None]
    share = statistics.median(in_place) if in_place else None
    return {"slower": slower, "sizes": [r.bytes for r in rows], "out_of": out_of,
            "median_ratio": statistics.median(ratios), "in_place_of_model": share,
            "in_place_as_modelled": share is not None and share >= 1 - tolerance}


def in_place_verdict(check: dict, tolerance: float) -> str:
    """The asymmetry in one sentence, its possible causes worded as possibilities."""
    n, k = len(check["sizes"]), check["out_of"]
    sizes = _sizes(check["sizes"])
    if check["slower"] == "out-of-place":
        head = (f"At {n} of the {k} flagged bandwidth-bound size{'s' * (k > 1)} ({sizes}) the "
                f"out-of-place time is {check['median_ratio']:.2f}× the in-place time nccl-tests "
                "prints beside it (median)")
        share = check["in_place_of_model"]
        if share is not None:
            head += f", and in place the same sizes reach {share:.0%} of the model's busbw"
        head += (": both calls move the same bytes over the same links, so the links are "
                 "unlikely to be " + ("the cause" if check["in_place_as_modelled"] else
                                      "the whole cause") +
                 ". What differs is the separate output buffer: it may be registered with NCCL "
                 "otherwise than the input (NCCL's user-buffer or NVLS buffer registration, "
                 "NCCL_LOCAL_REGISTER, NCCL_NVLS_ENABLE), placed in other memory (another NUMA "
                 "node, a managed or host allocation), or first touched inside the timed "
                 "loop; rerunning with a larger -w (warm-up iterations) and with NVLS or "
                 "registration turned off would tell these apart")
        return head
    return (f"At {n} of the {k} bandwidth-bound size{'s' * (k > 1)} ({sizes}) the in-place time "
            f"is {check['median_ratio']:.2f}× the out-of-place time (median); diagnose reads "
            "the out-of-place column, so the table above does not show it. Both calls move the "
            "same bytes over the same links, so the in-place call itself may differ: how NCCL "
            "registers a buffer that is both input and output (user-buffer or NVLS "
            "registration), or the algorithm it picks for it")


def dips(rows, tolerance: float) -> list:
    """The flagged sizes whose busbw is short of both neighbouring sizes' by more than the
    tolerance, while those neighbours are not flagged (as modelled)."""
    found = []
    for before, row, after in zip(rows, rows[1:], rows[2:]):
        if (row.flag and not before.flag and not after.flag
                and row.measured_busbw < (1 - tolerance) * before.measured_busbw
                and row.measured_busbw < (1 - tolerance) * after.measured_busbw):
            found.append(row)
    return found


def mostly_dips(found: list[int], flagged: int) -> bool:
    """Whether the dips are most of the flagged sizes: then they, not the links, are the story."""
    return bool(found) and 2 * len(found) >= flagged


def dips_verdict(found: list[int], flagged: int, tolerance: str) -> str | None:
    """One sentence where the dips are most of the flagged sizes (None where they are not)."""
    if not mostly_dips(found, flagged):
        return None
    n = len(found)
    return (f"{n} of the {flagged} flagged size{'s' * (flagged > 1)} ({_sizes(found)}) "
            f"{'are dips' if n > 1 else 'is a dip'}: busbw more than {tolerance} below both "
            "neighbouring sizes, which run as modelled. Slowness that comes and goes from one "
            "size to the next points to noise or contention (other jobs on the nodes or the "
            "fabric) or a flapping link rather than too little link capacity, which would slow "
            "every size past it: run it again with more iterations (nccl-tests -n 100 -w 20, "
            "say) and check for other jobs on the same nodes and switches")


def _sizes(sizes: list[int], most: int = 8) -> str:
    return ", ".join(format_bytes(n) for n in sizes[:most]) + (", …" if len(sizes) > most else "")
