"""The one split of N elements per GPU into S segments, used by every executor and the ledger.

The split (as MPICH's reduce-scatter/all-gather all-reduce splits its counts): each of the
S segments gets ⌊N/S⌋ elements and the first N mod S segments one more, so sizes differ
by at most one and longer segments come first. Segment j starts at j·⌊N/S⌋ + min(j, N mod S).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .checks import MAX_GPUS, check_count
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

    def size(self, segment: int) -> int:
        """Number of elements in the 0-based segment."""
        q, r = divmod(self.elements, self.segments)
        return q + (segment < r)

    def offset(self, segment: int) -> int:
        """Index of the segment's first element in a GPU's flat gradient (segment S gives N)."""
        q, r = divmod(self.elements, self.segments)
        return segment * q + min(segment, r)

    def offsets(self, segments) -> np.ndarray:
        """`offset` for an integer array of segments (int64; N must fit in int64)."""
        if self.elements > INT64_MAX:
            raise RingsimError(f"{self.elements:.3g} elements per GPU are more than an int64 "
                               "array counts (2**63 − 1, about 9.2·10^18)")
        q, r = divmod(self.elements, self.segments)
        segments = np.asarray(segments, dtype=np.int64)
        return segments * q + np.minimum(segments, r)

    def span(self, first: int, last: int) -> int:
        """Number of elements in segments first..last (inclusive)."""
        return self.offset(last + 1) - self.offset(first)

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
