"""`ringsim serve` in a real browser: headless Chromium loads the page, the TUI draws its GPU
panels, a key press steps the simulation, and the screenshot shows the step's colours; the
page asks nothing of any other site (its font too comes from this server).

Chromium is driven over its DevTools protocol (a websocket, spoken here with aiohttp, which
textual-serve installs). Skips, saying why, where no Chromium is installed (.ci/run installs
Debian's `chromium` package when apt can). Set RINGSIM_BROWSER_SHOT=path.png to keep the
screenshot for a person to look at.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import time
from pathlib import Path

import numpy as np
import pytest

from devtools import CHROMIUM, DevTools, free_port, start_chromium, stop, tab
from .serving import count_colour, png_pixels, serving


# The cell colours of a sending and a receiving GPU cell, as ringsim.tcss sets them.
PANEL_SENDING, PANEL_RECEIVING = "#8a4b00", "#6b1f7a"

pytestmark = [
    pytest.mark.skipif(CHROMIUM is None, reason="no Chromium installed (apt-get install chromium)"),
    pytest.mark.slow,
    # One Chromium at a time under pytest-xdist: each starts several busy processes, and
    # the test waits on what the page draws after each key.
    pytest.mark.xdist_group("chromium"),
]


class Served(DevTools):
    """A served page's tab: screenshots, clicks at a point, and key presses as letters."""

    async def screenshot(self) -> bytes:
        return base64.b64decode((await self.call("Page.captureScreenshot", format="png"))["data"])

    async def click(self, x: int, y: int) -> None:
        await self.click_at(x, y)

    async def press(self, key: str) -> None:
        for kind in ("keyDown", "keyUp"):
            await self.call("Input.dispatchKeyEvent", type=kind, key=key, text=key if kind == "keyDown" else "",
                            code=f"Key{key.upper()}", windowsVirtualKeyCode=ord(key.upper()))


async def _until(devtools: Served, ready, timeout: float = 40) -> bytes:
    """Screenshots every 0.5 s until ready(pixels) holds; the last screenshot."""
    deadline = time.monotonic() + timeout
    while True:
        shot = await devtools.screenshot()
        if ready(png_pixels(shot)) or time.monotonic() > deadline:
            return shot
        await asyncio.sleep(0.5)


@pytest.fixture
def browse(tmp_path):
    """browse(visit, *serve_args): `ringsim serve ARGS` opened in headless Chromium; returns the
    served page's HTML and what `await visit(devtools)` returned."""
    def run(visit, *serve_args: str):
        debug_port = free_port()
        with serving(*serve_args) as (port, html):
            browser = start_chromium(debug_port, tmp_path / "profile")
            try:
                async def session():
                    async with tab(f"http://127.0.0.1:{port}/", debug_port, Served) as devtools:
                        return await visit(devtools), devtools.requests
                seen, requests = asyncio.run(session())
            finally:
                stop(browser)
        # Whatever the visit did, the page asked only this server for anything.
        own = (f"http://127.0.0.1:{port}/", f"ws://127.0.0.1:{port}/")
        assert requests and all(url.startswith(own) for url in requests), requests
        return html, seen
    return run


async def _step_after_a_click(devtools: Served) -> dict:
    # The start: the TUI has drawn (the page is no longer one colour).
    seen = {"start": await _until(devtools, _drawn)}
    await devtools.click(640, 700)  # focus the terminal (a blank part of the page)
    await devtools.press("n")
    seen["stepped"] = await _until(devtools, lambda px: count_colour(px, PANEL_SENDING) > 1000 and
                                   count_colour(px, PANEL_RECEIVING) > 1000)
    seen["fonts"] = json.loads(await devtools.evaluate(
        "JSON.stringify([...document.fonts].map(f => [f.family, f.style, f.status]))"))
    seen["requests"] = list(devtools.requests)
    return seen


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


def test_a_browser_shows_the_gpu_panels_in_the_served_font_and_steps_with_a_key(browse):
    # (browse itself checks that every request, the websocket's too, went to this server.)
    html, seen = browse(_step_after_a_click)
    _keep({"": seen["stepped"], ".start": seen["start"]})
    # The page names Roboto Mono from this server (never Google Fonts), and it has loaded.
    assert "fonts.googleapis.com" not in html and "@font-face" in html
    assert any(url.endswith("/static/fonts/RobotoMono-VariableFont_wght.ttf") for url in seen["requests"])
    assert any(url.startswith("ws://") for url in seen["requests"])
    assert ["Roboto Mono", "normal", "loaded"] in seen["fonts"], seen["fonts"]
    first, after = png_pixels(seen["start"]), png_pixels(seen["stepped"])
    assert _drawn(first), "the browser's page stayed blank"
    assert count_colour(first, PANEL_SENDING) == 0
    # After `n`: the ring's first step, 4 sending and 4 receiving cells, orange and purple.
    assert count_colour(after, PANEL_SENDING) > 1000, "no sending cell after pressing n"
    assert count_colour(after, PANEL_RECEIVING) > 1000, "no receiving cell after pressing n"


HINT_YELLOW = "#ffcc00"  # ringsim/tui/web/page_focus.py's hint


FOOTER_BAR = (36, 47, 56)  # the footer's background (Textual's panel colour), #242f38


def _footer_has_keys(pixels) -> bool:
    """The footer (the terminal's last text row, wherever the font's line height puts it: the
    lowest rows whose right half is the footer's bar) shows key names: many colours, not one bar."""
    bar = np.flatnonzero((pixels[:, 1000] == FOOTER_BAR).all(axis=1))
    bar = bar[bar > len(pixels) // 2]  # not the header, which has the same colour
    if len(bar) == 0:
        return False
    stripe = pixels[bar[-1] - min(len(bar), 20) + 1:bar[-1] + 1, :700].reshape(-1, 3)
    return len(np.unique(stripe, axis=0)) > 8


async def _keys_without_a_click(devtools: Served) -> dict:
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
