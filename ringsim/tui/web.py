"""textual-serve's Server, guarded: same-origin websockets only, and a cap on open sessions.

textual-serve starts one `ringsim tui` process per websocket and accepts a websocket from
any page. A page on another site (or a DNS-rebinding name pointing at 127.0.0.1) could then
drive ringsim and start processes without limit. Browsers always send `Origin` with a
websocket request and pages cannot forge it, so a websocket is accepted only when its
Origin and Host name this server itself (OWASP's WebSocket cheat sheet: "validate the
Origin header"); and at most `max_sessions` run at once.
"""

from __future__ import annotations

from aiohttp import web
from textual_serve.server import Server

from .page_focus import with_focus

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

    async def handle_index(self, request: web.Request):
        """The page, only under this server's own names (a rebinding name gets 403)."""
        if request.host not in self.hosts:
            raise web.HTTPForbidden(text=f"ringsim serve answers only as {self.public_url}\n")
        response = await super().handle_index(request)
        if isinstance(response, web.Response) and response.text is not None:
            response.text = with_focus(response.text)  # the terminal takes the keys at once
        return response

    async def handle_websocket(self, request: web.Request) -> web.WebSocketResponse:
        """Start a session for a same-origin websocket while fewer than max_sessions run."""
        origin = request.headers.get("Origin")
        if request.host not in self.hosts or origin not in self.origins:
            raise web.HTTPForbidden(text="ringsim serve accepts websockets only from its own "
                                         f"page, {self.public_url}\n")
        if self.sessions >= self.max_sessions:
            return await self._refuse(request)
        self.sessions += 1
        try:
            return await super().handle_websocket(request)
        finally:
            self.sessions -= 1

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
