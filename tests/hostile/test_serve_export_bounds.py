"""serve and export, bounded: a client's terminal size, a session's process ended with its
socket (SIGKILL when it ignores the rest), the Host guard on every path, malformed messages;
export's frames and bytes estimated first, a used folder left with only the new frames, and
a .ringsim-export that is not a small file refused before anything is written."""

from __future__ import annotations

import asyncio
import os
import sys
import uuid

import pytest

from .conftest import bounded, refused


def _alive(mark: str) -> list[int]:
    """Processes whose command line holds `mark`."""
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/cmdline", "rb") as handle:
                    if mark.encode() in handle.read():
                        found.append(int(name))
            except OSError:
                pass
    return found


async def _sessions(tmp_path, mark: str) -> dict:
    import aiohttp
    from aiohttp import web

    from ringsim.tui.web.server import GuardedServer
    from tests.tui.serving import free_port
    port = free_port()
    size = tmp_path / "size"
    # A stubborn session: ignores SIGTERM and never reads stdin (textual-serve's "quit").
    program = (f"import os, signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
               f"open({str(size)!r}, 'w').write(os.environ.get('COLUMNS', '') + 'x' + "
               f"os.environ.get('ROWS', '')); time.sleep(600)  # {mark}")
    server = GuardedServer(f"{sys.executable} -c \"{program}\"", port=port, max_sessions=2)

    async def quiet(app):
        return None
    server.on_startup = server.on_shutdown = quiet
    runner = web.AppRunner(await server._make_app())
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    same = {"Origin": f"http://127.0.0.1:{port}"}
    seen = {}
    try:
        async with aiohttp.ClientSession() as client:
            async with client.get(f"http://127.0.0.1:{port}/static/",
                                  headers={"Host": f"evil.example:{port}"}) as r:
                seen["static, foreign host"] = r.status
            for cycle in range(4):  # open and close more sessions than the cap
                # Each session writes the size anew: wait for this one's, not the last one's
                # (on a busy machine its process may start well after the socket opens).
                size.unlink(missing_ok=True)
                async with client.ws_connect(f"http://127.0.0.1:{port}/ws?width=20000&height=20000",
                                             headers=same) as ws:
                    for _ in range(400):
                        if size.exists() and size.read_text():
                            break
                        await asyncio.sleep(0.05)
                    for junk in ("{not json", "[]", '["resize", {"width": 1e308, "height": "x"}]',
                                 '["resize", {"width": 6000, "height": 3000}]', '["stdin", 5]', "5"):
                        await ws.send_str(junk)
                    seen.setdefault("processes while open", []).append(len(_alive(mark)))
                for _ in range(200):  # ended within STOP_SECONDS × 3, then the place is free
                    if server.sessions == 0 and not _alive(mark):
                        break
                    await asyncio.sleep(0.05)
                seen.setdefault("processes after close", []).append(len(_alive(mark)))
                seen.setdefault("sessions after close", []).append(server.sessions)
        seen["size"] = size.read_text()
    finally:
        await runner.cleanup()
    return seen


def test_a_session_process_ends_with_its_socket_and_sizes_are_bounded(tmp_path, monkeypatch):
    pytest.importorskip("aiohttp")
    pytest.importorskip("textual_serve")
    from ringsim.tui.web import server as web
    # The same escalation (quit, SIGTERM, SIGKILL) with shorter waits: four stubborn
    # sessions at 3 s a stage kept this test waiting 25 s.
    monkeypatch.setattr(web, "STOP_SECONDS", 0.5)
    mark = uuid.uuid4().hex
    try:
        seen = asyncio.run(asyncio.wait_for(_sessions(tmp_path, mark), 120))
    finally:
        for pid in _alive(mark):
            os.kill(pid, 9)
    assert seen["static, foreign host"] == 403
    assert seen["size"] == "640x360"
    assert all(1 <= n <= 2 for n in seen["processes while open"])  # sh -c and the app, or the app alone
    assert seen["processes after close"] == [0] * 4
    assert seen["sessions after close"] == [0] * 4


def test_export_bounds_and_refusals(tmp_path):
    refused(bounded("export", "--svg", "", cwd=tmp_path), "needs a folder name")
    big = tmp_path / "big"
    refused(bounded("export", "--svg", str(big), "--gpus", "64", "--channels", "64", "--size",
                    "400x200", timeout=60), "127 frames of 400x200", "MiB")
    assert not big.exists()


def test_export_into_a_used_folder_keeps_the_files_it_did_not_write(tmp_path):
    # A slides folder holds the user's own numbered files: only frames export wrote itself
    # (listed in .ringsim-export) are ever replaced.
    folder = tmp_path / "slides"
    folder.mkdir()
    (folder / "99-old-frame.svg").write_text("mine too")
    (folder / "notes.txt").write_text("mine")
    for gpus in ("8", "4"):  # the second export replaces the first one's 15 frames by 7
        run = bounded("export", "--svg", str(folder), "-g", gpus, timeout=120)
        assert run.returncode == 0, run.stderr
    names = sorted(p.name for p in folder.iterdir())
    assert names == [".ringsim-export", "00-start.svg", "01-reduce-scatter-1.svg",
                     "02-reduce-scatter-2.svg", "03-reduce-scatter-3.svg", "04-all-gather-1.svg",
                     "05-all-gather-2.svg", "06-all-gather-3.svg", "99-old-frame.svg",
                     "notes.txt"]
    assert (folder / "99-old-frame.svg").read_text() == "mine too"
    assert all(p.read_text().startswith("<svg") for p in folder.glob("0*.svg"))


def _hostile_manifest(folder, kind: str, outside) -> None:
    """Put a .ringsim-export of `kind` into `folder` (a link points at `outside`)."""
    path = folder / ".ringsim-export"
    if kind == "link":
        path.symlink_to(outside)
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "folder":
        path.mkdir()
    elif kind == "zero":
        path.symlink_to("/dev/zero")
    else:  # a sparse 2 MiB file: more than any list of frames
        with open(path, "wb") as handle:
            handle.truncate(2 << 20)


@pytest.mark.parametrize("kind, what", [("link", "a symbolic link"), ("fifo", "a named pipe (FIFO)"),
                                        ("folder", "a folder"), ("zero", "a symbolic link"),
                                        ("big", "a file of 2.0 MiB")])
def test_export_refuses_a_manifest_that_is_not_a_small_file(tmp_path, kind, what):
    # The manifest is read only as a small regular file: a link would let the export write
    # through it to a file outside the folder, a FIFO would block, /dev/zero fill memory.
    outside = tmp_path / "precious.txt"
    outside.write_text("precious\n")
    folder = tmp_path / "slides"
    folder.mkdir()
    (folder / "notes.txt").write_text("mine")
    _hostile_manifest(folder, kind, outside)
    before = sorted(p.name for p in folder.iterdir())
    refused(bounded("export", "--svg", str(folder), "-a", "master", "-g", "4", timeout=60),
            f"slides/.ringsim-export is {what}", "remove it, or export into another folder")
    assert outside.read_text() == "precious\n"
    assert sorted(p.name for p in folder.iterdir()) == before  # nothing written, nothing moved
