"""Exact closed forms without building a plan: per-GPU counts of whole and long segments.

With N = q·S + r every segment holds q elements and the first r hold one more ("long"
segments, Layout's split). A GPU that sends `count` segments of which `long` are long
sends exactly q·count + long elements. Counting segments per GPU is O(G) integer work
(NumPy, small numbers); the element totals are then Python integers, exact for any N.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..core.formula import ClosedForm, Formula

# The message count's words where some segments are empty (fewer elements than segments), so
# no short formula counts the transfers: it reads after "messages 2 of" in the TUI's counters.
EMPTY_SKIPPED = "non-empty transfers"


@dataclasses.dataclass
class Tally:
    """Per-GPU segment counts sent and received, plus messages (non-empty transfers)."""

    gpus: int
    segments: int
    elements: int

    def __post_init__(self) -> None:
        self.q, self.r = divmod(self.elements, self.segments)
        zeros = lambda: np.zeros(self.gpus, dtype=np.int64)  # noqa: E731
        self.sent, self.sent_long, self.received, self.received_long = zeros(), zeros(), zeros(), zeros()
        self.messages = 0

    def _per_gpu(self, gpus: np.ndarray, values) -> np.ndarray:
        """Sum of values per GPU (values are segment counts, far below 2⁵³: float weights stay exact)."""
        weights = np.broadcast_to(np.asarray(values, dtype=np.float64), gpus.shape)
        return np.rint(np.bincount(gpus, weights=weights, minlength=self.gpus)).astype(np.int64)

    def long_in(self, first, width: int):
        """Long segments among first..first+width−1 (first may be an array)."""
        return np.clip(self.r - np.asarray(first, dtype=np.int64), 0, width)

    def nonempty(self, first) -> np.ndarray:
        """Whether a range starting at `first` holds any element."""
        return (np.asarray(first) < self.r) | (self.q > 0)

    def add_sends(self, src, dst, first, width: int) -> None:
        """Transfers of `width` segments from first, src → dst (arrays, one entry each)."""
        src, dst = np.asarray(src, np.int64), np.asarray(dst, np.int64)
        first = np.broadcast_to(np.asarray(first, np.int64), src.shape)
        long = self.long_in(first, width)
        self.sent += self._per_gpu(src, width)
        self.received += self._per_gpu(dst, width)
        self.sent_long += self._per_gpu(src, long)
        self.received_long += self._per_gpu(dst, long)
        self.messages += int(np.count_nonzero(self.nonempty(first)))

    def add_rings(self, orders, bases, width: int) -> None:
        """Reduce-scatter and all-gather of R rings (`_phases.ring_iterations`), counted without the steps.

        Position p sends every block but (p+1) mod L in reduce-scatter and every block but
        (p+2) mod L in all-gather; it receives every block but p, then every block but p+1.
        """
        orders = np.atleast_2d(np.asarray(orders, dtype=np.int64))
        rings, length = orders.shape
        if length < 2:
            return
        bases = np.broadcast_to(np.asarray(bases, np.int64).reshape(-1, 1), orders.shape)
        p = np.arange(length)
        long = self.long_in(bases + p * width, width) if self.r else None  # (R, L) long per block
        all_long = long.sum(axis=1, keepdims=True) if self.r else None
        at = lambda shift: long[:, (p + shift) % length]  # noqa: E731  (block p+shift of every ring)
        moved = 2 * (length - 1) * width
        for row in orders:  # each ring row names a GPU at most once: plain indexed adds
            self.sent[row] += moved
            self.received[row] += moved
        if self.r:  # with N a multiple of S no segment is long
            sent_long, received_long = 2 * all_long - at(1) - at(2), 2 * all_long - at(0) - at(1)
            for index, row in enumerate(orders):
                self.sent_long[row] += sent_long[index]
                self.received_long[row] += received_long[index]
        self.messages += 2 * (length - 1) * int(np.count_nonzero(self.nonempty(bases + p * width)))

    def elements_of(self, count, long) -> int:
        """q·count + long, exactly."""
        return self.q * int(count) + int(long)

    def busiest(self, count: np.ndarray, long: np.ndarray) -> tuple[int, int]:
        """(the most elements any GPU moves, the lowest such GPU), exactly."""
        best, who = -1, 0
        distinct = np.flatnonzero(np.bincount(count)) if len(count) else []
        for c in distinct:  # few distinct counts: each is one candidate group
            group = np.flatnonzero(count == c)
            k = int(group[np.argmax(long[group])])
            value = self.elements_of(c, long[k])
            if value > best or (value == best and k < who):
                best, who = value, k
        return max(best, 0), who

    def total(self) -> int:
        """Elements moved over all links."""
        return self.q * int(self.sent.sum()) + int(self.sent_long.sum())


def formula(text: str, value: int, textbook=None, exact: str = "") -> Formula:
    """A Formula whose text is honest: a textbook expression that is only a bound says so."""
    fields = {f.name for f in dataclasses.fields(Formula)}
    if textbook is not None and "textbook" in fields:
        return Formula(text, value, textbook, exact)  # type: ignore[call-arg]
    if textbook is not None and textbook != value:
        text = f"{text}, exactly {exact}" if exact else f"{text} (segments differ by one element)"
    return Formula(text, value)


def closed(total: Formula, sent: Formula, received: Formula, steps: Formula, messages: Formula,
           sender: int = 0, receiver: int = 0) -> ClosedForm:
    """A ClosedForm, naming the busiest GPUs where ClosedForm has room for them."""
    fields = {f.name for f in dataclasses.fields(ClosedForm)}
    extra = {"busiest_sender": sender, "busiest_receiver": receiver} if "busiest_sender" in fields else {}
    return ClosedForm(total, sent, received, steps, messages, **extra)


def from_tally(tally: Tally, texts: dict[str, str], steps: int, textbook: dict | None = None) -> ClosedForm:
    """The ClosedForm a tally measures, with the algorithm's own expressions as texts."""
    return from_counts(tally.total(), tally.busiest(tally.sent, tally.sent_long),
                       tally.busiest(tally.received, tally.received_long), tally.messages,
                       texts, steps, textbook)


def from_counts(total: int, sent: tuple[int, int], received: tuple[int, int], messages: int,
                texts: dict[str, str], steps: int, textbook: dict | None = None) -> ClosedForm:
    """The ClosedForm of exact counts: sent and received as (most elements, lowest such GPU)."""
    textbook = textbook or {}
    exact = "the sum of the segments it moves"
    return closed(
        formula(texts["total"], total),
        formula(texts["sent"], sent[0], textbook.get("sent"), exact),
        formula(texts["received"], received[0], textbook.get("received"), exact),
        formula(texts["steps"], steps),
        formula(texts["messages"], messages),
        sent[1], received[1],
    )
