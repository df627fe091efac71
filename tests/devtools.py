"""Headless Chromium for the browser tests: start it, open a tab, speak DevTools to the tab.

The serve test and the figure player's test drive the same browser the same way; this is the
one copy of how (aiohttp's websocket, the protocol's Page, Runtime and Input domains).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
import socket
import subprocess
import time

CHROMIUM = next(filter(None, map(shutil.which, ("chromium", "chromium-browser", "google-chrome"))), None)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_chromium(debug_port: int, profile) -> subprocess.Popen:
    """Headless Chromium with its DevTools endpoint on debug_port and a fresh profile."""
    return subprocess.Popen(
        [CHROMIUM, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
         f"--user-data-dir={profile}", f"--remote-debugging-port={debug_port}",
         "--window-size=1280,900", "about:blank"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def stop(process: subprocess.Popen) -> None:
    """Terminate a child process, killing it if it has not ended within 10 s."""
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


class DevTools:
    """The few DevTools protocol calls the tests need, on one page's websocket."""

    def __init__(self, ws) -> None:
        self.ws, self.next_id = ws, 0
        self.requests: list[str] = []  # every address the page asked for, websockets included
        self.listeners = {"Network.requestWillBeSent": lambda p: self.requests.append(p["request"]["url"]),
                          "Network.webSocketCreated": lambda p: self.requests.append(p["url"])}

    async def _until(self, done) -> dict:
        """Read messages (passing events to their listeners) until done(message); that message."""
        while True:
            message = json.loads((await asyncio.wait_for(self.ws.receive(), 30)).data)
            if message.get("method") in self.listeners:
                self.listeners[message["method"]](message["params"])
            if done(message):
                return message

    async def call(self, method: str, **params):
        """Send one command and wait for its result."""
        self.next_id += 1
        await self.ws.send_json({"id": self.next_id, "method": method, "params": params})
        message = await self._until(lambda m: m.get("id") == self.next_id)
        if "error" in message:
            raise AssertionError(f"{method}: {message['error']}")
        return message["result"]

    async def open(self, url: str) -> None:
        """Go to url and wait for the page's load event."""
        await self.call("Page.navigate", url=url)
        await self._until(lambda m: m.get("method") == "Page.loadEventFired")

    async def evaluate(self, expression: str):
        """The value of a JavaScript expression on the page."""
        return (await self.call("Runtime.evaluate", expression=expression, returnByValue=True))["result"].get("value")

    async def click_at(self, x: float, y: float) -> None:
        """A left click at (x, y) in the page's CSS pixels."""
        for kind in ("mousePressed", "mouseReleased"):
            await self.call("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left", clickCount=1)


@contextlib.asynccontextmanager
async def tab(url: str, debug_port: int, devtools=DevTools):
    """A new Chromium tab at url, its DevTools session open (a `devtools` instance), its page
    and network events on from the first request."""
    import aiohttp
    async with aiohttp.ClientSession() as session:
        deadline = time.monotonic() + 30
        while True:  # Chromium's DevTools endpoint comes up a moment after the process
            try:
                async with session.put(f"http://127.0.0.1:{debug_port}/json/new?about:blank") as response:
                    target = await response.json(content_type=None)
                break
            except aiohttp.ClientError:
                if time.monotonic() > deadline:
                    raise
                await asyncio.sleep(0.3)
        async with session.ws_connect(target["webSocketDebuggerUrl"], max_msg_size=0) as ws:
            page = devtools(ws)
            await page.call("Page.enable")
            await page.call("Network.enable")
            await page.open(url)
            yield page
