"""The App's notices (Textual toasts) as a record: one copy of the same words at a time, and each
notice known by what it speaks of, so that it can go as soon as that changes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from textual.notifications import Notification

# Notices on screen at once, the newest (an older one goes for a new one): each takes a row of
# the status line, and more would squeeze the counters out of an 80×24 terminal.
MOST = 3


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

    def drop_stale(self) -> list[Notification] | None:
        """Forget the notices that no longer hold (and past MOST): those that stay, None if all do."""
        live = self._live()
        held = [notice for notice in live if notice.holds()][-MOST:]
        self._shown = held
        return None if len(held) == len(live) else [notice.notification for notice in held]

    def clear(self) -> None:
        """Forget every notice."""
        self._shown = []
