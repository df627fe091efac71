"""Helpers for the TUI tests: plain text of what a widget shows."""

import pytest
from rich.console import Console


def plain_text(widget) -> str:
    """What a Static-based widget shows, as plain text (Rich renderables rendered wide)."""
    content = widget.content
    if isinstance(content, str):
        return content
    console = Console(width=200, record=True, file=open("/dev/null", "w"), color_system=None)
    console.print(content)
    return console.export_text()


@pytest.fixture
def plain():
    """The plain_text helper as a fixture."""
    return plain_text
