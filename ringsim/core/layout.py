"""The one split of N elements per GPU into S segments, used by every executor and the ledger.

The split (as MPICH's reduce-scatter/all-gather all-reduce splits its counts): each of the
S segments gets ⌊N/S⌋ elements and the first N mod S segments one more, so sizes differ
by at most one and longer segments come first. Segment j starts at j·⌊N/S⌋ + min(j, N mod S).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .checks import MAX_GPUS, check_count, echo
from .errors import RingsimError

INT64_MAX = 2**63 - 1
# A list of one size per segment is built only for a layout of one segment per GPU.
MAX_LISTED = MAX_GPUS


@dataclass(frozen=True)
class Layout:
    """N elements split into S segments; the first N mod S segments get one extra element."""

    segments: int
    elements: int

    def __post_init__(self) -> None:
        # Every figure below divides by S and counts N: a zero, negative or fractional one
        # would give wrong sizes without an error.
        object.__setattr__(self, "segments", check_count(self.segments, "a layout's number of "
                                                         "segments", minimum=1))
        object.__setattr__(self, "elements", check_count(self.elements, "a layout's number of "
                                                         "elements", minimum=0))

    @property
    def width(self) -> int:
        """Size of the largest segment (every segment buffer is allocated this wide)."""
        return -(-self.elements // self.segments)

    def _index(self, segment: object, most: int) -> int:
        """`segment` as an int from 0 to `most`: a float, a string or an index past the end
        would otherwise give a size or an offset that no segment has, without an error."""
        if type(segment) is int and 0 <= segment <= most:  # the executors' case, kept fast
            return segment
        return check_count(segment, "a segment's index", minimum=0, maximum=most)

    def size(self, segment: int) -> int:
        """Number of elements in the 0-based segment."""
        q, r = divmod(self.elements, self.segments)
        return q + (self._index(segment, self.segments - 1) < r)

    def offset(self, segment: int) -> int:
        """Index of the segment's first element in a GPU's flat gradient (segment S gives N)."""
        segment = self._index(segment, self.segments)
        q, r = divmod(self.elements, self.segments)
        return segment * q + min(segment, r)

    def offsets(self, segments) -> np.ndarray:
        """`offset` for an integer array of segments (int64; N must fit in int64)."""
        if self.elements > INT64_MAX:
            raise RingsimError(f"{self.elements:.3g} elements per GPU are more than an int64 "
                               "array counts (2**63 − 1, about 9.2·10^18)")
        q, r = divmod(self.elements, self.segments)
        given = np.asarray(segments)
        # Converting to int64 would read '2' as 2 and cut 2.5 to 2: only integers are indices.
        if given.dtype.kind not in "iu":
            raise RingsimError(f"a layout's segment indices must be whole numbers, got "
                               f"{echo(segments)}")
        if given.size and (given.min() < 0 or given.max() > self.segments):
            raise RingsimError(f"a layout's segment indices must be from 0 to {self.segments:,}, "
                               f"got {echo(segments)}")
        segments = given.astype(np.int64, copy=False)
        return segments * q + np.minimum(segments, r)

    def span(self, first: int, last: int) -> int:
        """Number of elements in segments first..last (inclusive)."""
        start = self.offset(first)
        if self._index(last, self.segments - 1) < first - 1:
            raise RingsimError(f"a span of segments ends before it starts: segments {first} to "
                               f"{last}")
        return self.offset(last + 1) - start

    def spans(self, first, last) -> np.ndarray:
        """`span` for integer arrays of first and last segments (int64): elements per transfer."""
        return self.offsets(np.asarray(last) + 1) - self.offsets(first)

    def sizes(self) -> list[int]:
        """Every segment's size, in order."""
        # One Python integer per segment: a layout of 10^30 segments would never finish.
        if self.segments > MAX_LISTED:
            raise RingsimError(f"{self.segments:,} segments are too many to list one by one "
                               f"(at most {MAX_LISTED:,}); distinct_sizes() gives their sizes")
        return [self.size(j) for j in range(self.segments)]

    def distinct_sizes(self) -> list[int]:
        """The sizes the segments take, smallest first: one, or two a step apart."""
        q, r = divmod(self.elements, self.segments)
        return [q, q + 1] if r else [q]
