"""Updating a Static cheaply: a layout pass only when its height may have changed."""

from __future__ import annotations

from rich.console import RenderableType
from textual.widgets import Static


def update_sized(widget: Static, content: RenderableType, key: object) -> None:
    """Update the widget; lay the screen out again only when `key` (what sets the height) changed."""
    key = (key, widget.size.width)
    widget.update(content, layout=key != getattr(widget, "_layout_key", None))
    widget._layout_key = key
