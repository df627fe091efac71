"""`ringsim serve` refuses what `tui` refuses, a busy port, foreign origins and extra sessions.

The guard is tested over real HTTP and websockets on 127.0.0.1 (aiohttp, which textual-serve
brings): the server's own aiohttp application on a free port, each session a real process.
"""

from __future__ import annotations

import asyncio
import re
import socket
import sys

import pytest

from ringsim.cli import main

from .serving import free_port

aiohttp = pytest.importorskip("aiohttp")
pytest.importorskip("textual_serve")


@pytest.mark.parametrize("argv, message", [
    (["--master", "9"], "--master only applies to the master algorithm"),
    (["-a", "master", "--master", "0"], "--master must be from 1 to 4, got 0"),
    (["--gpus", "65"], "the TUI shows 1 to 64 GPUs, got 65"),
])
def test_serve_refuses_what_tui_refuses_before_serving(capsys, argv, message):
    assert main(["tui", *argv]) == 2
    tui_error = capsys.readouterr().err
    assert main(["serve", "--port", str(free_port()), *argv]) == 2
    out, err = capsys.readouterr()
    # the same message, each headed by its own command
    assert tui_error.startswith("ringsim tui: error: ") and err.startswith("ringsim serve: error: ")
    assert err.split(": error: ", 1)[1] == tui_error.split(": error: ", 1)[1]
    assert message in err and err.count("\n") == 1
    assert "Serving" not in out


def test_serve_refuses_a_backend_that_cannot_run(capsys):
    try:
        import cupy  # noqa: F401
        pytest.skip("CuPy is installed here")
    except ImportError:
        pass
    assert main(["serve", "--port", str(free_port()), "--backend", "cupy"]) == 2
    out, err = capsys.readouterr()
    assert err.startswith("ringsim serve: error: CuPy") and err.count("\n") == 1 and "Serving" not in out


def test_serve_refuses_a_port_in_use_in_one_line(capsys):
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        assert main(["serve", "--port", str(port)]) == 2
    out, err = capsys.readouterr()
    assert err == f"ringsim serve: error: port {port} is in use on 127.0.0.1; choose another with --port\n"
    assert "Serving" not in out


async def _guarded(max_sessions: int):
    """A GuardedServer's application listening on a free 127.0.0.1 port; each session sleeps."""
    from aiohttp import web

    from ringsim.tui.web.server import GuardedServer
    port = free_port()
    # A session's process: any will do for counting; this one lives until textual-serve
    # writes to it (its "quit" when the websocket closes).
    command = f"{sys.executable} -c 'import sys; sys.stdin.buffer.read(1)'"
    server = GuardedServer(command, port=port, max_sessions=max_sessions)
    server.on_startup = server.on_shutdown = _quiet  # no logo on the test's output
    runner = web.AppRunner(await server._make_app())
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    return server, runner, port


async def _quiet(app) -> None:
    return None


async def _refusals(max_sessions: int = 1) -> dict:
    server, runner, port = await _guarded(max_sessions)
    url = f"http://127.0.0.1:{port}/ws?width=80&height=24"
    same = {"Origin": f"http://127.0.0.1:{port}"}
    seen = {}
    try:
        async with aiohttp.ClientSession() as session:
            for name, headers in (("foreign", {"Origin": "http://evil.example"}), ("none", {}),
                                  ("rebound", {"Origin": f"http://evil.example:{port}",
                                               "Host": f"evil.example:{port}"})):
                try:
                    async with session.ws_connect(url, headers=headers):
                        seen[name] = "accepted"
                except aiohttp.WSServerHandshakeError as error:
                    seen[name] = error.status
            async with session.get(f"http://127.0.0.1:{port}/", headers={"Host": f"evil.example:{port}"}) as r:
                seen["page under another name"] = r.status
            async with session.ws_connect(url, headers=same) as first:
                await asyncio.sleep(0.5)
                seen["sessions while one is open"] = server.sessions
                async with session.ws_connect(url, headers=same) as second:
                    message = await asyncio.wait_for(second.receive(), 10)
                    seen["second says"] = message.data.decode() if isinstance(message.data, bytes) else message.data
                    closing = await asyncio.wait_for(second.receive(), 10)
                    seen["second closes"] = (closing.type, second.close_code)
                await first.close()
            for _ in range(50):  # the first session ends: room for another
                if server.sessions == 0:
                    break
                await asyncio.sleep(0.1)
            seen["sessions after"] = server.sessions
    finally:
        await runner.cleanup()
    return seen


def test_serve_accepts_only_its_own_origin_and_caps_sessions():
    seen = asyncio.run(_refusals(max_sessions=1))
    assert seen["foreign"] == 403 and seen["none"] == 403 and seen["rebound"] == 403
    assert seen["page under another name"] == 403
    assert seen["sessions while one is open"] == 1
    assert seen["second says"].startswith("ringsim serve runs at most 1 browser session at once")
    assert "reload this page" in seen["second says"]
    assert seen["second closes"] == (aiohttp.WSMsgType.CLOSE, 1013)
    assert seen["sessions after"] == 0


async def _page_and_font(host: str) -> tuple[str, int, int]:
    server, runner, port = await _guarded(1)
    try:
        async with aiohttp.ClientSession() as session:
            async with session.get(f"http://127.0.0.1:{port}/", headers={"Host": f"{host}:{port}"}) as r:
                page = await r.text()
            font = re.search(r'url\("(/static/fonts/[^"]+)"\)', page).group(1)
            async with session.get(f"http://127.0.0.1:{port}{font}", headers={"Host": f"{host}:{port}"}) as r:
                return page, port, len(await r.read())
    finally:
        await runner.cleanup()


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"])
def test_the_served_page_names_no_other_site_and_serves_its_own_font(host):
    page, port, font_bytes = asyncio.run(_page_and_font(host))
    addresses = re.findall(r"""(?:href|src)\s*=\s*["']([^"']+)""", page)
    addresses += re.findall(r"""url\(\s*["']?([^"')]+)""", page)
    own = [a for a in addresses if a.startswith("/") and not a.startswith("//")
           or a.startswith((f"http://127.0.0.1:{port}/", f"http://localhost:{port}/"))]
    assert "fonts.googleapis.com" not in page
    # Every stylesheet, script, image and font the page names is on this server; the
    # xmlns of its inline SVG logo names a namespace, not something to fetch.
    assert sorted(set(addresses) - set(own)) == [], addresses
    assert any(a.endswith("css/xterm.css") for a in own) and any(a.endswith("js/textual.js") for a in own)
    assert page.count("@font-face") == 2 and 'rel="preload"' in page
    assert font_bytes > 100_000  # Roboto Mono itself, from textual-serve's own files


def test_a_page_without_a_font_file_keeps_only_its_own_links():
    from ringsim.tui.web.page_font import with_local_font
    page = ('<html><head><link rel="stylesheet" href="http://127.0.0.1:8000/static/css/xterm.css" />\n'
            '<link rel="stylesheet" href="https://fonts.googleapis.com/css?family=Roboto%20Mono" />\n'
            "<link rel=stylesheet href=//cdn.example/x.css>\n<link rel=icon href=/favicon.ico>\n"
            "</head><body></body></html>")
    out = with_local_font(page, {}, {"http://127.0.0.1:8000"})
    assert out == ('<html><head><link rel="stylesheet" href="http://127.0.0.1:8000/static/css/xterm.css" />\n'
                   "<link rel=icon href=/favicon.ico>\n</head><body></body></html>")


async def _statuses(paths: list[str]) -> dict[str, int]:
    server, runner, port = await _guarded(1)
    try:
        async with aiohttp.ClientSession() as session:
            seen = {}
            for path in paths:
                async with session.get(f"http://127.0.0.1:{port}{path}") as r:
                    seen[path] = r.status
            return seen
    finally:
        await runner.cleanup()


def test_the_static_files_are_served_but_never_listed():
    folders = ["/static", "/static/", "/static/fonts/", "/static/js/", "/static/js/.", "/static/js/.."]
    seen = asyncio.run(_statuses(folders + ["/static/js/textual.js"]))
    assert seen == {**dict.fromkeys(folders, 404), "/static/js/textual.js": 200}
