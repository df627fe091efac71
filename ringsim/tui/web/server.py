"""textual-serve's Server, guarded: same-origin websockets only, and a cap on open sessions.

textual-serve starts one `ringsim tui` process per websocket and accepts a websocket from
any page. A page on another site (or a DNS-rebinding name pointing at 127.0.0.1) could then
drive ringsim and start processes without limit. Browsers always send `Origin` with a
websocket request and pages cannot forge it, so a websocket is accepted only when its
Origin and Host name this server itself (OWASP's WebSocket cheat sheet: "validate the
Origin header"); and at most `max_sessions` run at once.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import signal
from pathlib import Path

from aiohttp import WSMsgType, web
from textual_serve.app_service import AppService
from textual_serve.server import Server, to_int

# A terminal a browser may ask for: a 4K screen at a 6-pixel font is about 640 × 360 cells;
# past that a session only costs memory (Textual keeps every cell of the screen).
MAX_COLUMNS, MAX_ROWS = 640, 360
STOP_SECONDS = 3.0  # a session's process gets this long to quit, then SIGTERM, then SIGKILL
log = logging.getLogger("ringsim.serve")


def terminal_size(width, height) -> tuple[int, int]:
    """A client's terminal size as whole cells within 1..MAX_COLUMNS × 1..MAX_ROWS (80 × 24 if unreadable)."""
    def whole(value, default: int, top: int) -> int:
        if isinstance(value, bool) or not isinstance(value, (int, float, str)):
            return default
        number = to_int(str(value), default) if isinstance(value, str) else value
        try:
            number = int(number)
        except (OverflowError, ValueError):  # inf, nan
            return default
        return max(1, min(top, number))
    return whole(width, 80, MAX_COLUMNS), whole(height, 24, MAX_ROWS)


class _Session(AppService):
    """textual-serve's AppService, its process in a session of its own so it can be ended whole."""

    async def _open_app_process(self, width: int = 80, height: int = 24):
        environment = self._build_environment(width=width, height=height)
        self._process = process = await asyncio.create_subprocess_shell(
            self.command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, env=environment, start_new_session=True)
        self._stdin = process.stdin
        return process

    async def end(self) -> None:
        """Ask the app to quit; past STOP_SECONDS SIGTERM its process group, then SIGKILL; wait."""
        process = getattr(self, "_process", None)
        try:
            await asyncio.wait_for(self.stop(), STOP_SECONDS)
        except (asyncio.TimeoutError, Exception):  # a process that does not answer quit
            pass
        if process is None:
            return
        # The shell textual-serve starts may be gone while the app it started lives on: the
        # whole process group gets SIGTERM, a moment, then SIGKILL (a no-op when none is left).
        for signum in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(process.pid, signum)
            except (ProcessLookupError, PermissionError):
                break
            try:
                await asyncio.wait_for(process.wait(), STOP_SECONDS)
            except asyncio.TimeoutError:
                pass
            if signum == signal.SIGTERM:
                await asyncio.sleep(0.2)
        task = getattr(self, "_task", None)
        if task is not None and not task.done():
            task.cancel()

from .page_focus import with_focus
from .page_font import FONT_FILES, with_local_font

class GuardedServer(Server):
    """A textual-serve Server on one local port that refuses foreign origins and extra sessions."""

    def __init__(self, command: str, *, host: str = "127.0.0.1", port: int = 8000,
                 title: str | None = None, max_sessions: int = 8) -> None:
        super().__init__(command, host=host, port=port, title=title)
        self.max_sessions = max_sessions
        self.sessions = 0
        # The names a browser may use for this server: the address printed, and localhost.
        names = {host, "127.0.0.1", "localhost"}
        where = [f"{name}:{port}" for name in names] + (list(names) if port == 80 else [])
        self.hosts = set(where)
        self.origins = {f"http://{name}" for name in where}

    async def _make_app(self) -> web.Application:
        """textual-serve's app, every path (the page, /ws, /static/, downloads) behind the Host guard."""
        app = await super()._make_app()

        @web.middleware
        async def own_host(request: web.Request, handler):
            if request.host not in self.hosts:
                raise web.HTTPForbidden(text=f"ringsim serve answers only as {self.public_url}\n")
            response = await handler(request)
            # textual-serve lists its static folders (/static, /static/js/..); the page needs
            # only their files, which come as file responses.
            if request.path.startswith("/static") and not isinstance(response, web.FileResponse):
                raise web.HTTPNotFound()
            return response
        app.middlewares.append(own_host)
        return app

    async def handle_index(self, request: web.Request):
        """The page, only under this server's own names (a rebinding name gets 403)."""
        if request.host not in self.hosts:
            raise web.HTTPForbidden(text=f"ringsim serve answers only as {self.public_url}\n")
        response = await super().handle_index(request)
        if isinstance(response, web.Response) and response.text is not None:
            # The terminal takes the keys at once, and its font comes from this server.
            response.text = with_focus(with_local_font(response.text, self._font_urls(request), self.origins))
        return response

    def _font_urls(self, request: web.Request) -> dict[str, str]:
        """This server's addresses (paths on the same origin) of textual-serve's font files."""
        static = request.app.router["static"]
        return {style: str(static.url_for(filename=name)) for name, style in FONT_FILES
                if (Path(self.statics_path) / name).is_file()}

    async def handle_websocket(self, request: web.Request) -> web.WebSocketResponse:
        """Start a session for a same-origin websocket while fewer than max_sessions run."""
        origin = request.headers.get("Origin")
        if request.host not in self.hosts or origin not in self.origins:
            raise web.HTTPForbidden(text="ringsim serve accepts websockets only from its own "
                                         f"page, {self.public_url}\n")
        if self.sessions >= self.max_sessions:
            return await self._refuse(request)
        self.sessions += 1  # freed only once the session's process has ended
        try:
            return await self._session(request)
        finally:
            self.sessions -= 1

    async def _session(self, request: web.Request) -> web.WebSocketResponse:
        """textual-serve's websocket handler, with the terminal size bounded and the process
        ended (escalating to SIGKILL) when the socket closes, whatever happened."""
        websocket = web.WebSocketResponse(heartbeat=15)
        width, height = terminal_size(request.query.get("width", "80"), request.query.get("height", "24"))
        service = None
        try:
            await websocket.prepare(request)
            service = _Session(self.command, write_bytes=websocket.send_bytes,
                               write_str=websocket.send_str, close=websocket.close,
                               download_manager=self.download_manager, debug=self.debug)
            await service.start(width, height)
            await self._messages(websocket, service)
        except asyncio.CancelledError:
            await websocket.close()
        except Exception as error:  # one line on the console, never a traceback
            log.warning("ringsim serve: a session ended: %s", error)
        finally:
            if service is not None:
                await service.end()
        return websocket

    async def _messages(self, websocket: web.WebSocketResponse, service: _Session) -> None:
        """The browser's messages: malformed ones are ignored, sizes bounded."""
        async for message in websocket:
            if message.type != WSMsgType.TEXT:
                continue
            try:
                envelope = json.loads(message.data)
            except ValueError:
                continue
            if not isinstance(envelope, list) or len(envelope) < 1:
                continue
            kind, data = envelope[0], envelope[1] if len(envelope) > 1 else None
            if kind == "stdin" and isinstance(data, str):
                await service.send_bytes(data.encode("utf-8", "replace"))
            elif kind == "resize" and isinstance(data, dict):
                await service.set_terminal_size(*terminal_size(data.get("width"), data.get("height")))
            elif kind == "ping" and isinstance(data, (str, int, float)):
                await websocket.send_json(["pong", data])
            elif kind == "blur":
                await service.blur()
            elif kind == "focus":
                await service.focus()

    async def _refuse(self, request: web.Request) -> web.WebSocketResponse:
        """Say in the browser's terminal why no session starts, then close (code 1013: try later)."""
        websocket = web.WebSocketResponse()
        await websocket.prepare(request)
        count = self.max_sessions
        message = (f"ringsim serve runs at most {count} browser session{'s' * (count != 1)} at "
                   f"once, and that many are open.\r\nClose another ringsim tab (or press q in "
                   f"it), then reload this page.\r\n")
        await websocket.send_bytes(message.encode("utf-8"))
        await websocket.close(code=1013, message=b"too many sessions")
        return websocket
