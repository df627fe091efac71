"""The App's notices (Textual toasts) as a record: one copy of the same words at a time, and each
notice known by what it speaks of, so that it can go as soon as that changes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from textual.content import Content
from textual.notifications import Notification

# Notices on screen at once, the newest (an older one goes for a new one): each takes a row of
# the status line, and more would squeeze the counters out of an 80×24 terminal.
MOST = 3
# Rows the notices take at most, together: a notice that wraps counts each of its rows, so that
# on 80x24 the GPU view keeps every row it needs (the oldest notices go first to make room).
ROWS = 3
EDGE = 3  # columns of a notice that hold no words: its coloured left edge and a space each side


def rows_on(notification: Notification, width: int) -> int:
    """The rows a notice takes in a status line `width` columns wide: its title's and its words'."""
    words = len(Content(notification.message).wrap(max(1, width - EDGE)))
    return words + (1 if notification.title else 0)


@dataclass
class Notice:
    """A notification that holds while `about` answers as it did when raised (none: a rule)."""

    notification: Notification
    about: Callable[[], object] | None = None
    then: object = field(init=False)

    def __post_init__(self) -> None:
        self.then = None if self.about is None else self.about()

    @property
    def words(self) -> tuple[str, str]:
        """Its title and message."""
        return self.notification.title, self.notification.message

    def holds(self) -> bool:
        """What it speaks of is as it was when it was raised."""
        return self.about is None or self.about() == self.then


class Notices:
    """The notices on screen (those whose timeout has not run out), in the order raised."""

    def __init__(self) -> None:
        self._shown: list[Notice] = []

    def _live(self) -> list[Notice]:
        return [notice for notice in self._shown if not notice.notification.has_expired]

    def add(self, notice: Notice) -> bool:
        """Record a notice; False where the same words are on screen and still hold."""
        # A held key would pile up copies; a stale copy goes (drop_stale) and the new one stays.
        self._shown = self._live()
        if any(shown.words == notice.words and shown.holds() for shown in self._shown):
            return False
        self._shown.append(notice)
        return True

    def drop_stale(self, rows: Callable[[Notification], int] = lambda _: 1) -> list[Notification] | None:
        """Forget the notices that no longer hold, and the oldest past MOST or past ROWS rows
        (`rows`: the rows a notice takes on screen; the newest always stays): those that stay,
        None if all do."""
        live = self._live()
        held = [notice for notice in live if notice.holds()][-MOST:]
        used = 0
        for n in range(len(held) - 1, -1, -1):
            used += rows(held[n].notification)
            if used > ROWS and n < len(held) - 1:
                held = held[n + 1:]
                break
        self._shown = held
        return None if len(held) == len(live) else [notice.notification for notice in held]

    def forget(self, notification: Notification) -> None:
        """Forget one notice, taken off the screen before its time (a click on it)."""
        self._shown = [notice for notice in self._shown if notice.notification is not notification]

    def clear(self) -> None:
        """Forget every notice."""
        self._shown = []
