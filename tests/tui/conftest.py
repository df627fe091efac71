"""Helpers for the TUI tests: async tests run on asyncio; plain text of what a widget shows."""

import asyncio
import inspect

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


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem):
    """Run `async def` tests (Textual's Pilot) in a fresh asyncio loop; no plugin needed."""
    if not inspect.iscoroutinefunction(pyfuncitem.obj):
        return None
    args = {name: pyfuncitem.funcargs[name] for name in pyfuncitem._fixtureinfo.argnames}
    asyncio.run(pyfuncitem.obj(**args))
    return True
