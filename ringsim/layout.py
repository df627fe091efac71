"""How N elements per GPU are split into G segments whose sizes differ by at most one."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Layout:
    """N elements split into G segments; the first N mod G segments get one extra element."""

    gpus: int
    elements: int

    @property
    def width(self) -> int:
        """Size of the largest segment (every segment buffer is allocated this wide)."""
        return -(-self.elements // self.gpus)

    def size(self, segment: int) -> int:
        """Number of elements in the 0-based segment."""
        q, r = divmod(self.elements, self.gpus)
        return q + (segment < r)

    def offset(self, segment: int) -> int:
        """Index of the segment's first element in a GPU's flat gradient (segment G gives N)."""
        q, r = divmod(self.elements, self.gpus)
        return segment * q + min(segment, r)

    def span(self, first: int, last: int) -> int:
        """Number of elements in segments first..last (inclusive)."""
        return self.offset(last + 1) - self.offset(first)

    def sizes(self) -> list[int]:
        """Every segment's size, in order."""
        return [self.size(j) for j in range(self.gpus)]
