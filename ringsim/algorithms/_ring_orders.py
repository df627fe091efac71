"""Ring orders as users write them: '1,3,2,4;1,2,3,4', lists of GPU numbers, or 'rails:P'
(one ring per NIC, as NCCL lays its channels out on rail-optimised clusters), each checked
once and kept as tuples and as a read-only (K, G) array for the rings that run on them
(_multiring.py); and K, the number of rings (--channels).
"""

from __future__ import annotations

import numbers
from functools import lru_cache

import numpy as np

from ..core.checks import echo, parse_count
from ..core.arguments import argument
from ..core.errors import RingsimError


MAX_ORDER_CELLS = 1 << 24  # GPU numbers all the rings' orders hold, checked before building them
_SEQUENCES = (list, tuple, np.ndarray)


def parse_orders(ring_order, gpus: int) -> tuple[tuple[int, ...], ...] | None:
    """Ring orders as users write them — '1,3,2,4;1,2,3,4' or [[1,3,2,4], …] or [1,3,2,4] — 1-based, checked."""
    if ring_order is None:
        return None
    for seen, seen_gpus in _LAST_CHECKED:
        # The very orders checked last come back with every price (estimate checks them, then
        # the ring's hook again): hashing 16,000,000 GPU numbers each time costs more than
        # the price itself.
        if seen is ring_order and seen_gpus == gpus:
            return ring_order
    if isinstance(ring_order, tuple) and all(isinstance(ring, tuple) for ring in ring_order):
        # Orders already parsed come back again and again (a sweep prices rails at every
        # size): checked once per distinct orders and G.
        try:
            checked = _checked(ring_order, gpus)
        except TypeError:  # something unhashable inside: checked, and refused, below
            pass
        else:
            _LAST_CHECKED[:] = [(checked, gpus)]
            return checked
    return _parse(ring_order, gpus)


@lru_cache(maxsize=32)
def _checked(orders: tuple, gpus: int) -> tuple[tuple[int, ...], ...]:
    return _parse(orders, gpus)


# The orders last checked, and their G: a strong reference, so that no other object can take
# the same id while it is kept.
_LAST_CHECKED: list = []


def _parse(ring_order, gpus: int) -> tuple[tuple[int, ...], ...]:
    if isinstance(ring_order, str) and ring_order.strip().lower().startswith("rails"):
        return rail_orders(ring_order.strip(), gpus)
    if isinstance(ring_order, str):
        rings = [part.split(",") for part in ring_order.split(";") if part.strip()]
        try:
            parsed = [[int(x) for x in ring] for ring in rings]
        except ValueError:
            raise RingsimError(f"{argument('ring_order')} must be GPU numbers separated by commas, rings by "
                               f"semicolons (1,3,2,4;1,2,3,4), got {echo(ring_order)}") from None
    else:
        if not isinstance(ring_order, _SEQUENCES):
            raise RingsimError(f"ring_order must be text such as '1,3,2,4', a list of GPU numbers "
                               f"or a list of such lists, got a {type(ring_order).__name__}")
        items = list(ring_order)
        if items and not any(isinstance(x, _SEQUENCES) for x in items):
            items = [items]  # one ring, written as a flat list of GPU numbers
        if len(items) > MAX_CHANNELS:
            raise RingsimError(f"ring_order gives {len(items):,} rings; at most {MAX_CHANNELS}")
        for number, ring in enumerate(items, 1):
            if not isinstance(ring, _SEQUENCES):
                raise RingsimError(f"ring order {number} must be a list of GPU numbers, got "
                                   f"{type(ring).__name__}")
        parsed = [list(ring) for ring in items]
    if not parsed:
        raise RingsimError(f"{argument('ring_order')} needs at least one ring")
    every = np.arange(1, gpus + 1)
    for number, ring in enumerate(parsed, 1):
        # Whole numbers in C first (rails at thousands of GPUs are checked again and again);
        # the element-by-element look only finds what to name in the error.
        try:
            row = np.asarray(ring) if len(ring) == gpus else None
        except ValueError:  # ragged: a list inside, found by the look below
            row = None
        whole = row is not None and row.dtype.kind in "iu" and not any(x is True or x is False
                                                                      for x in ring)
        if not whole:
            wrong = next((x for x in ring if isinstance(x, bool) or not isinstance(x, numbers.Integral)), ring)
            if wrong is not ring:
                raise RingsimError(f"ring order {number} must hold whole GPU numbers (int), got "
                                   f"{type(wrong).__name__} {str(wrong)[:20]}")
        if not whole or not np.array_equal(np.sort(row), every):
            shown = ",".join(str(x) for x in ring)
            raise RingsimError(f"ring order {number} must list each of GPU1..GPU{gpus} once "
                               f"(1..{gpus}), got {shown[:80]}")
    if all(isinstance(ring, tuple) for ring in parsed) and isinstance(ring_order, tuple):
        return ring_order  # already a checked tuple of tuples of ints
    return tuple(tuple(int(x) for x in ring) for ring in parsed)


def rail_orders(text: str, gpus: int) -> tuple[tuple[int, ...], ...]:
    """'rails:P': P rings, ring c entering every node of P GPUs at its GPU c, so each ring
    crosses between nodes through a different GPU's NIC.

    Built once per text and G: a study prices the same 'rails:P' at every size and bucket, and
    P rings of 1,000,000 GPUs take about a second and hundreds of MB to spell out as tuples.

    This is how NCCL lays out its channels on rail-optimised clusters (DGX: one NIC per GPU):
    each channel's ring runs through the node on NVLink and leaves it through its own NIC, so
    all P NICs carry traffic at once instead of one (NCCL `src/graph/search.cc`, rings built
    per NET device; NVIDIA DGX SuperPOD reference architecture, "rail-optimized").
    """
    orders, rows = _rails(text, gpus)
    _LAST_CHECKED[:] = [(orders, gpus)]
    if not any(seen is orders for seen, *_ in _ARRAYS):
        _ARRAYS[:] = [(orders, len(orders), gpus, rows)]  # its array, for order_array
    return orders


@lru_cache(maxsize=2)
def _rails(text: str, gpus: int) -> tuple[tuple[tuple[int, ...], ...], np.ndarray]:
    """rail_orders' tuples and their (P, G) array of 0-based GPUs, read-only."""
    _, _, per_node = text.partition(":")
    try:
        size = parse_count(per_node, "rails:P", minimum=None)
    except RingsimError:
        raise RingsimError(f"{argument('ring_order', 'rails')} needs the GPUs per node, as rails:8, got {echo(text)}") from None
    if size < 1:
        raise RingsimError(f"{argument('ring_order', 'rails:P')} needs at least 1 GPU per node, got rails:{size}")
    if size > MAX_CHANNELS:  # P rings are P channels: refuse before building P·G numbers
        raise RingsimError(f"{argument('ring_order', 'rails:P')} builds P rings, at most {MAX_CHANNELS} "
                           f"(as {argument('channels')}), got rails:{size:,}")
    if size > gpus or gpus % size:
        raise RingsimError(f"{argument('ring_order', f'rails:{size}')} needs {size} GPUs per node to divide G = {gpus}")
    if size * gpus > MAX_ORDER_CELLS:  # P rings of G GPUs each
        raise RingsimError(f"{argument('ring_order', f'rails:{size}')} makes {size:,} rings of {gpus:,} GPUs; at "
                           f"most {MAX_ORDER_CELLS:,} GPU numbers in all")
    local = (np.arange(size)[:, None] + np.arange(size)[None, :]) % size  # ring c: c, c+1, …
    nodes = np.arange(0, gpus, size)
    rows = (nodes[None, :, None] + local[:, None, :]).reshape(size, gpus)
    rows.flags.writeable = False
    # Every ring holds the same G numbers: one int object per GPU, shared by the P rings
    # (P·G objects of their own would take 32 bytes each, half a GB at P·G = 16,000,000).
    numbers = list(range(1, gpus + 1))
    orders = tuple(tuple(map(numbers.__getitem__, row.tolist())) for row in rows)
    return orders, rows


def rails_size(orders, gpus: int) -> int | None:
    """P where these ring orders are exactly those of 'rails:P' with P > 1 (nodes of P GPUs),
    else None: titles name them so, and figures box each node."""
    if not orders or len(orders) < 2 or gpus % len(orders) or len(orders) * gpus > MAX_ORDER_CELLS:
        return None
    size = len(orders)
    return size if tuple(map(tuple, orders)) == rail_orders(f"rails:{size}", gpus) else None


MAX_CHANNELS = 64


def check_channels(channels, gpus: int, orders) -> int:
    """K: at least 1, and one ring order or one per channel."""
    if isinstance(channels, bool) or not isinstance(channels, numbers.Integral) or not 1 <= channels <= MAX_CHANNELS:
        raise RingsimError(f"{argument('channels')} must be a whole number from 1 to 64, got {channels!r}")
    if orders is not None and len(orders) not in (1, channels):
        raise RingsimError(f"{argument('ring_order')} gives {len(orders)} rings but {argument('channels')} is "
                           f"{channels}: "
                           "give one order for every channel, or one order for all")
    return int(channels)


def order_array(orders, channels: int, gpus: int) -> np.ndarray:
    """(K, G) 0-based orders: the identity ring when none is given, one order repeated for every channel."""
    if orders is None:
        return np.tile(np.arange(gpus, dtype=np.int64), (channels, 1))
    for seen, seen_channels, seen_gpus, array in _ARRAYS:
        # The same orders object priced again (every size of a sweep, every bucket): its array
        # once, not 16,000,000 Python ints converted per price. Read-only: it is shared.
        if seen is orders and (seen_channels, seen_gpus) == (channels, gpus):
            return array
    rows = np.array(orders, dtype=np.int64) - 1
    array = np.tile(rows, (channels // len(rows), 1)) if len(rows) == 1 else rows
    array.flags.writeable = False
    _ARRAYS[:] = [(orders, channels, gpus, array)]  # holding `orders` keeps its id its own
    return array


_ARRAYS: list = []  # the last (orders, channels, G, array) order_array made
