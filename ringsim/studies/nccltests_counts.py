"""What nccl-tests rows say of the run they came from: which test printed them (its count,
redop and root columns), whether a count is the whole size's or each rank's share, and how
many ranks ran (busbw / algbw); and how nccl-tests rounds a size down to what it runs.
nccltests.py reads the rows; diagnose_inputs checks a paste with what is worked out here.
"""

from __future__ import annotations

import math
import statistics

from ..core.checks import MAX_GPUS
from .nccltests import DTYPES, SHARE_COUNT, Row

# nccl-tests prints algbw and busbw in GB/s with two decimals, both from one value (busbw is
# algbw times the test's factor), so each printed value is within half a cent of it (and a
# float's rounding): a row of algbw 1.00 GB/s or more bounds the factor to about 1%.
PRECISE_ALGBW = 1e9
# Where no row reaches it (a slow machine, small sizes only), rows of 0.10 GB/s and more bound
# it to about 10%: enough to tell 2 ranks from 16.
ROUGH_ALGBW = 0.1e9
_HALF_CENT = 0.0051e9
# The tests whose busbw/algbw says how many ranks ran, the factor as a formula and n from it
# (nccl-tests' doc/PERFORMANCE.md); broadcast's and reduce's factor is 1 whatever n is.
RANKS_FROM_FACTOR = {"all-reduce": ("2(n−1)/n", lambda f: 2 / (2 - f) if f < 2 else math.inf),
                     **{name: ("(n−1)/n", lambda f: 1 / (1 - f) if f < 1 else math.inf)
                        for name in ("all-gather", "reduce-scatter", "all-to-all")}}


def test_from_rows(rows: list[Row], ranks: int | None) -> str | None:
    """The test the rows' own columns show, for an output that does not name it: one of
    all-reduce, reduce-scatter, all-gather, broadcast, reduce, gather (gather_perf or
    scatter_perf); None where they fit none or disagree. Without the number of ranks (None)
    only the whole-size tests can be told: a share's count needs it.

    nccl-tests prints `size` as the larger of the bytes sent and received per rank and `count`
    as the elements the call is given (src/common.cu, setupArgs and writeBenchmarkLinePreamble;
    each test's GetCollByteCount): the whole size for all_reduce, reduce, broadcast and
    sendrecv, a per-rank share, so count × wordSize × ranks = size, for reduce_scatter,
    all_gather, alltoall, gather and scatter. The redop is `none` for the tests that do not
    reduce, and the root is −1 except for the rooted ones (reduce, broadcast, gather, scatter),
    which print the root they ran (-r, 0 by default)."""
    rows = [r for r in rows if r.bytes > 0 and r.dtype in DTYPES]
    if not rows:
        return None
    whole = all(whole_count(r) for r in rows)
    share = ranks is not None and all(share_count(r, ranks) for r in rows)
    reduces = {r.redop not in (None, "none") for r in rows}
    rooted = {r.root is not None and r.root >= 0 for r in rows}
    if len(reduces) > 1 or len(rooted) > 1 or whole == share:
        return None
    reduces, rooted = reduces.pop(), rooted.pop()
    if share:
        return "gather" if rooted else "reduce-scatter" if reduces else "all-gather"
    if rooted:
        return "reduce" if reduces else "broadcast"
    return "all-reduce" if reduces else None


def other_test(rows: list[Row]) -> tuple[Row, list[str], list[str]] | None:
    """The first row whose columns show another test than the rows before it, with what it and
    they print where they differ (its type first, where that differs); None where all agree.

    Its type, its redop and whether its root is a rank (-1, a rank, or no root column) name the
    test and its options; where those agree, the count column still tells a whole-size test
    (all_reduce_perf) from one that prints each rank's share (reduce_scatter_perf). The root's
    value is not compared: broadcast_perf -r -1 runs every root in turn."""
    if not rows:
        return None
    first, sized = rows[0], next((r for r in rows if r.bytes > 0), None)
    for row in rows[1:]:
        differ = [(mine, theirs) for mine, theirs in zip(_columns_of(row), _columns_of(first))
                  if mine[0] != theirs[0]]
        if not differ and sized is not None and row.bytes > 0 and whole_count(row) != whole_count(sized):
            differ = [((None, _count_words(row)), (None, _count_words(sized)))]
        if differ:
            return row, [m[1] for m, _ in differ], [t[1] for _, t in differ]
    return None


def _columns_of(row: Row) -> list[tuple[object, str]]:
    """What names a row's test, each as (what is compared, its words)."""
    rooted = None if row.root is None else row.root >= 0
    return [(row.dtype, row.dtype),
            (row.redop, "no redop column" if row.redop is None else f"redop {row.redop}"),
            (rooted, "no root column" if row.root is None else f"root {row.root}")]


def count_fits(row: Row, ranks: int) -> bool:
    """Whether a row's count is the whole size's or a share of `ranks` ranks, as nccl-tests
    prints them or rounds them down (nccl_tests_size): a size is whole elements, and
    in the share tests `ranks` shares of a multiple of 16 bytes each."""
    width = DTYPES[row.dtype]
    elements = row.bytes // width
    align = per_rank(width)
    return row.count in (elements, elements // ranks // align * align) or share_count(row, ranks)


def share_of(rows: list[Row]) -> int | None:
    """The number of ranks n whose share every sized row's count is (count × type size × n =
    size), None where the rows give no one such n of 2 or more."""
    found = {r.bytes // (r.count * DTYPES[r.dtype]) if r.count and
             r.bytes % (r.count * DTYPES[r.dtype]) == 0 else None for r in rows if r.bytes > 0}
    n = found.pop() if len(found) == 1 else None
    return n if n is not None and 2 <= n <= MAX_GPUS else None


def whole_count(row: Row) -> bool:
    """Whether a row's count is the whole size's (all_reduce_perf, broadcast_perf, reduce_perf)."""
    return row.count * DTYPES[row.dtype] == row.bytes


def share_count(row: Row, ranks: int) -> bool:
    """Whether a row's count is exactly one of `ranks` shares of its size (all_gather_perf,
    reduce_scatter_perf: count × type size × ranks = size)."""
    return row.count * DTYPES[row.dtype] * ranks == row.bytes


def per_rank(width: int) -> int:
    """The elements each GPU's share is rounded down to a multiple of, in all_gather_perf and
    reduce_scatter_perf: 16 bytes' worth (1 for elements of 16 bytes or more)."""
    return max(1, 16 // width)


def whole_elements(nbytes: int, width: int) -> tuple[int, int]:
    """(count, bytes) as nccl-tests sets up a size: count = size / wordSize in integer
    division (src/common.cu, setupArgs), so a size that is not whole elements is rounded
    down and the test moves, times and prints count × wordSize bytes."""
    count = nbytes // width
    return count, count * width


def nccl_tests_size(nbytes: int, width: int, collective: str, gpus: int) -> tuple[int, int]:
    """(count, bytes) that nccl-tests prints and times for a size (its -b/-e/-f value).

    all_reduce_perf, broadcast_perf and reduce_perf: whole elements (whole_elements), the
    buffer NCCL is given (src/broadcast.cu, src/reduce.cu: sendcount = recvcount = count).
    all_gather_perf and reduce_scatter_perf split the count among the ranks: each GPU's share
    is count / nranks, rounded down to a multiple of 16 bytes, the count column prints that
    share and the size column the whole buffer, share × nranks × wordSize (src/all_gather.cu,
    src/reduce_scatter.cu, *GetCollByteCount: base = (count/nranks) & ~(16/eltSize - 1);
    src/common.cu, setupArgs and the max(sendBytes, expectedBytes) it prints; nccl-tests
    2.13.12 on, where earlier releases rounded the share to a multiple of 4 elements, the same
    for 4-byte types)."""
    count, whole = whole_elements(nbytes, width)
    if collective not in SHARE_COUNT:
        return count, whole
    align = per_rank(width)
    share = count // gpus // align * align
    return share, share * gpus * width


def _count_words(row: Row) -> str:
    return "the whole size's count" if whole_count(row) else "a count of part of the size"


def ranks_from_busbw(rows: list[Row], collective: str,
                     rough: bool = False) -> tuple[float, list[tuple[int, int]]] | None:
    """The busbw/algbw the rows print (the median over the rows of algbw 1.00 GB/s or more, or
    with `rough`, where none is, of 0.10 GB/s or more: enough to check a count, not to tell
    one) and
    the numbers of ranks n whose factor for `collective` fits it, as ranges (lo, hi); None
    where the factor says nothing of n (broadcast, reduce) or no row is precise enough.

    Each precise row bounds the factor to the ratios its printed values allow (PRECISE_ALGBW),
    so to a range of n; an n fits where it lies in the ranges of more than half of the rows,
    so that a row or two misprinted or cut do not decide."""
    if collective not in RANKS_FROM_FACTOR:
        return None
    ranks = RANKS_FROM_FACTOR[collective][1]
    printed = [r for r in rows if r.algbw is not None and r.busbw is not None]
    precise = ([r for r in printed if r.algbw >= PRECISE_ALGBW]
               or [r for r in printed if rough and r.algbw >= ROUGH_ALGBW])
    if not precise:
        return None
    steps: dict[int, int] = {}
    for r in precise:
        low = ranks((r.busbw - _HALF_CENT) / (r.algbw + _HALF_CENT))
        high = ranks((r.busbw + _HALF_CENT) / (r.algbw - _HALF_CENT))
        if low > MAX_GPUS:  # a factor past any n's: this row fits none
            continue
        lo, hi = max(2, math.ceil(low)), MAX_GPUS if high >= MAX_GPUS else math.floor(high)
        if lo <= hi:
            steps[lo] = steps.get(lo, 0) + 1
            steps[hi + 1] = steps.get(hi + 1, 0) - 1
    fits, count, start = [], 0, None
    for at in sorted(steps):
        count += steps[at]
        if count * 2 > len(precise) and start is None:
            start = at
        elif count * 2 <= len(precise) and start is not None:
            fits.append((start, at - 1))
            start = None
    return statistics.median(r.busbw / r.algbw for r in precise), fits
