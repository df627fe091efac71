"""A small bounded cache of engine results, shared by every lesson loaded in one process."""

from __future__ import annotations

from collections import OrderedDict


class Cache(OrderedDict):
    """Keeps the `size` most recently stored or used results (a TUI session may load many scenarios)."""

    def __init__(self, size: int) -> None:
        super().__init__()
        self.size = size

    def __setitem__(self, key, value) -> None:
        super().__setitem__(key, value)
        self.move_to_end(key)
        while len(self) > self.size:
            self.popitem(last=False)

    def get_or(self, key, make):
        """The stored result for `key`, or `make()` stored."""
        if key in self:
            self.move_to_end(key)
            return self[key]
        value = self[key] = make()
        return value
