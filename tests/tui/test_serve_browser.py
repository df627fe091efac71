"""`ringsim serve` in a real browser: headless Chromium loads the page, the TUI draws its GPU
panels, a key press steps the simulation, and the screenshot shows the step's colours.

Chromium is driven over its DevTools protocol (a websocket, spoken here with aiohttp, which
textual-serve installs). Skips, saying why, where no Chromium is installed (.ci/run installs
Debian's `chromium` package when apt can). Set RINGSIM_BROWSER_SHOT=path.png to keep the
screenshot for a person to look at.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest

from .serving import count_colour, free_port, png_pixels, serving, stop

CHROMIUM = next(filter(None, map(shutil.which, ("chromium", "chromium-browser", "google-chrome"))), None)

# The cell colours of a sending and a receiving GPU cell, as ringsim.tcss sets them.
PANEL_SENDING, PANEL_RECEIVING = "#8a4b00", "#6b1f7a"

pytestmark = [
    pytest.mark.skipif(CHROMIUM is None, reason="no Chromium installed (apt-get install chromium)"),
    pytest.mark.slow,
]


class DevTools:
    """The few DevTools protocol calls the test needs, on one page's websocket."""

    def __init__(self, ws) -> None:
        self.ws, self.next_id = ws, 0

    async def call(self, method: str, **params):
        self.next_id += 1
        await self.ws.send_json({"id": self.next_id, "method": method, "params": params})
        while True:
            message = json.loads((await asyncio.wait_for(self.ws.receive(), 30)).data)
            if message.get("id") == self.next_id:
                if "error" in message:
                    raise AssertionError(f"{method}: {message['error']}")
                return message["result"]

    async def evaluate(self, expression: str):
        """The value of a JavaScript expression on the page."""
        return (await self.call("Runtime.evaluate", expression=expression, returnByValue=True))["result"].get("value")

    async def screenshot(self) -> bytes:
        return base64.b64decode((await self.call("Page.captureScreenshot", format="png"))["data"])

    async def click(self, x: int, y: int) -> None:
        for kind in ("mousePressed", "mouseReleased"):
            await self.call("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left", clickCount=1)

    async def press(self, key: str) -> None:
        for kind in ("keyDown", "keyUp"):
            await self.call("Input.dispatchKeyEvent", type=kind, key=key, text=key if kind == "keyDown" else "",
                            code=f"Key{key.upper()}", windowsVirtualKeyCode=ord(key.upper()))


async def _until(devtools: DevTools, ready, timeout: float = 40) -> bytes:
    """Screenshots every 0.5 s until ready(pixels) holds; the last screenshot."""
    deadline = time.monotonic() + timeout
    while True:
        shot = await devtools.screenshot()
        if ready(png_pixels(shot)) or time.monotonic() > deadline:
            return shot
        await asyncio.sleep(0.5)


@contextlib.asynccontextmanager
async def _page(url: str, debug_port: int):
    """A new Chromium tab at url, its DevTools session open and its page events on."""
    import aiohttp
    async with aiohttp.ClientSession() as session:
        deadline = time.monotonic() + 30
        while True:  # Chromium's DevTools endpoint comes up a moment after the process
            try:
                async with session.put(f"http://127.0.0.1:{debug_port}/json/new?{url}") as response:
                    target = await response.json(content_type=None)
                break
            except aiohttp.ClientError:
                if time.monotonic() > deadline:
                    raise
                await asyncio.sleep(0.3)
        async with session.ws_connect(target["webSocketDebuggerUrl"], max_msg_size=0) as ws:
            devtools = DevTools(ws)
            await devtools.call("Page.enable")
            yield devtools


@pytest.fixture
def browse(tmp_path):
    """browse(visit, *serve_args): `ringsim serve ARGS` opened in headless Chromium; returns the
    served page's HTML and what `await visit(devtools)` returned."""
    def run(visit, *serve_args: str):
        debug_port = free_port()
        with serving(*serve_args) as (port, html):
            browser = subprocess.Popen(
                [CHROMIUM, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
                 f"--user-data-dir={tmp_path / 'profile'}", f"--remote-debugging-port={debug_port}",
                 "--window-size=1280,900", "about:blank"],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            try:
                async def session():
                    async with _page(f"http://127.0.0.1:{port}/", debug_port) as devtools:
                        return await visit(devtools)
                return html, asyncio.run(session())
            finally:
                stop(browser)
    return run


async def _step_after_a_click(devtools: DevTools) -> tuple[bytes, bytes]:
    # The start: the TUI has drawn (the page is no longer one colour).
    start = await _until(devtools, _drawn)
    await devtools.click(640, 700)  # focus the terminal (a blank part of the page)
    await devtools.press("n")
    stepped = await _until(devtools, lambda px: count_colour(px, PANEL_SENDING) > 1000 and
                           count_colour(px, PANEL_RECEIVING) > 1000)
    return start, stepped


def _keep(shots: dict[str, bytes]) -> None:
    """Write screenshots beside RINGSIM_BROWSER_SHOT (path.png, path.start.png, …) when it is set."""
    if os.environ.get("RINGSIM_BROWSER_SHOT"):
        shot = Path(os.environ["RINGSIM_BROWSER_SHOT"])
        for suffix, png in shots.items():
            (shot.with_suffix(f"{suffix}.png") if suffix else shot).write_bytes(png)


def _drawn(pixels) -> bool:
    """More than a tenth of the page differs from its most common colour."""
    flat = pixels.reshape(-1, 3)
    colours, counts = np.unique(flat, axis=0, return_counts=True)
    return counts.max() < 0.9 * len(flat)


def test_a_browser_shows_the_gpu_panels_and_steps_with_a_key(browse):
    _, (start, stepped) = browse(_step_after_a_click)
    _keep({"": stepped, ".start": start})
    first, after = png_pixels(start), png_pixels(stepped)
    assert _drawn(first), "the browser's page stayed blank"
    assert count_colour(first, PANEL_SENDING) == 0
    # After `n`: the ring's first step, 4 sending and 4 receiving cells, orange and purple.
    assert count_colour(after, PANEL_SENDING) > 1000, "no sending cell after pressing n"
    assert count_colour(after, PANEL_RECEIVING) > 1000, "no receiving cell after pressing n"


HINT_YELLOW = "#ffcc00"  # ringsim/tui/page_focus.py's hint


def _footer_has_keys(pixels) -> bool:
    """The footer (the page's last text row) shows key names: many colours, not one bar."""
    stripe = pixels[-14:-2, :700].reshape(-1, 3)
    return len(np.unique(stripe, axis=0)) > 8


async def _keys_without_a_click(devtools: DevTools) -> dict:
    seen = {}
    seen["start"] = await _until(devtools, lambda px: _drawn(px) and _footer_has_keys(px))
    seen["active"] = await devtools.evaluate("document.activeElement.className")
    await devtools.press("n")  # no click first
    seen["stepped"] = await _until(devtools, lambda px: count_colour(px, PANEL_SENDING) > 1000)
    # The terminal loses the keys (another element takes the focus): the hint says so.
    await devtools.evaluate("document.activeElement.blur()")
    seen["blurred"] = await _until(devtools, lambda px: count_colour(px, HINT_YELLOW) > 500, 10)
    seen["hint"] = await devtools.evaluate(
        "document.body.classList.contains('-ringsim-unfocused') && "
        "document.getElementById('ringsim-keys-hint').textContent")
    box = await devtools.evaluate(
        "JSON.stringify(document.getElementById('ringsim-keys-hint').getBoundingClientRect())")
    box = json.loads(box)
    await devtools.click(int(box["x"] + box["width"] / 2), int(box["y"] + box["height"] / 2))
    seen["back"] = await _until(devtools, lambda px: count_colour(px, HINT_YELLOW) == 0, 10)
    seen["active again"] = await devtools.evaluate("document.activeElement.className")
    return seen


def test_the_page_takes_the_keys_without_a_click_and_says_when_it_lost_them(browse):
    html, seen = browse(_keys_without_a_click)
    assert "ringsim-keys-hint" in html  # the page carries the focus script
    _keep({f".noclick-{name}": seen[name] for name in ("start", "stepped", "blurred")})
    assert _footer_has_keys(png_pixels(seen["start"])), "the footer is blank before a click"
    assert seen["active"] == "xterm-helper-textarea"
    assert count_colour(png_pixels(seen["stepped"]), PANEL_SENDING) > 1000, "n did nothing before a click"
    assert count_colour(png_pixels(seen["blurred"]), HINT_YELLOW) > 500
    assert seen["hint"].startswith("Click the page to use the keys")
    assert count_colour(png_pixels(seen["back"]), HINT_YELLOW) == 0
    assert seen["active again"] == "xterm-helper-textarea"
