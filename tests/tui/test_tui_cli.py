"""The TUI's commands: export --svg, serve, tui's range checks, and bare `ringsim` in a pipe."""

import asyncio
import html
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

from ringsim import Simulation
from ringsim.cli import main


def test_export_writes_one_svg_per_iteration_with_its_sentences(tmp_path, capsys):
    folder = tmp_path / "slides"
    # Wide enough that no sentence wraps, so each appears whole in the SVG.
    assert main(["export", "--svg", str(folder), "--size", "160x40"]) == 0
    names = sorted(p.name for p in folder.iterdir())
    assert names == ["00-start.svg", "01-reduce-scatter-1.svg", "02-reduce-scatter-2.svg",
                     "03-reduce-scatter-3.svg", "04-all-gather-1.svg", "05-all-gather-2.svg",
                     "06-all-gather-3.svg"]
    assert "wrote 7 SVG files" in capsys.readouterr().out
    sim = Simulation.create("ring", 4, 8)
    for index, name in enumerate(names[1:]):
        svg = html.unescape((folder / name).read_text(encoding="utf-8")).replace("\xa0", " ")
        assert svg.startswith("<svg")
        for sentence in sim.sentences(index):
            assert sentence in svg, (name, sentence)
        assert "GPU1 sends a₁ to GPU2" in svg if index == 0 else "GPU1 sends a₁ to GPU2" not in svg
    start = html.unescape((folder / names[0]).read_text(encoding="utf-8")).replace("\xa0", " ")
    assert "Start: every GPU holds only its own gradient" in start
    last = html.unescape((folder / names[-1]).read_text(encoding="utf-8")).replace("\xa0", " ")
    assert "Done: every GPU holds the sum" in last


def test_export_names_the_master_steps_and_refuses_bad_input(tmp_path, capsys):
    assert main(["export", "--svg", str(tmp_path), "-a", "master"]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "00-start.svg", "01-reduce-to-gpu1.svg", "02-broadcast-from-gpu1.svg"]
    assert main(["export", "--svg", str(tmp_path / "x"), "--gpus", "65"]) == 2
    assert "the TUI shows 1 to 64 GPUs, got 65" in capsys.readouterr().err
    target = tmp_path / "file"
    target.write_text("")
    assert main(["export", "--svg", str(target)]) == 2
    assert "is not a folder" in capsys.readouterr().err


def test_tui_refuses_sizes_the_view_cannot_show(capsys):
    assert main(["tui", "--elements", "5000"]) == 2
    assert capsys.readouterr().err.strip() == \
        "ringsim: error: the TUI shows 0 to 4,096 elements per GPU, got 5,000"


def test_serve_without_textual_serve_says_how_to_install_it(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "textual_serve", None)
    monkeypatch.setitem(sys.modules, "textual_serve.server", None)
    assert main(["serve"]) == 2
    err = capsys.readouterr().err
    assert err == "ringsim: error: textual-serve is not installed: pip install 'ringsim[serve]'\n"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def _first_screen(port: int) -> str:
    """Connect as a browser would and collect the TUI's output until its title shows (≤ 30 s)."""
    import aiohttp
    received = b""
    async with aiohttp.ClientSession() as session:
        async with session.ws_connect(f"http://127.0.0.1:{port}/ws?width=120&height=40") as ws:
            deadline = time.monotonic() + 30
            while "Ring all-reduce".encode() not in received and time.monotonic() < deadline:
                message = await asyncio.wait_for(ws.receive(), timeout=30)
                if message.type not in (aiohttp.WSMsgType.BINARY, aiohttp.WSMsgType.TEXT):
                    break
                data = message.data
                received += data if isinstance(data, bytes) else data.encode()
    return received.decode("utf-8", errors="replace")


def test_serve_answers_over_http_on_localhost():
    pytest.importorskip("textual_serve")
    port = _free_port()
    server = subprocess.Popen([sys.executable, "-m", "ringsim", "serve", "--port", str(port)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 30
        page = None
        while time.monotonic() < deadline and page is None:
            if server.poll() is not None:
                pytest.fail(f"ringsim serve exited: {server.stderr.read().decode()}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=2) as response:
                    assert response.status == 200
                    page = response.read().decode()
            except OSError:
                time.sleep(0.2)
        assert page is not None, "no answer within 30 s"
        assert "<div>ringsim</div>" in page
        assert f'data-session-websocket-url="ws://127.0.0.1:{port}/ws"' in page
        # A browser session: the websocket starts `ringsim tui` and streams its screen.
        screen = asyncio.run(_first_screen(port))
        assert "Ring all-reduce · 4 GPUs · 8 elements per GPU" in screen
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def test_bare_ringsim_in_a_pipe_prints_the_walkthrough():
    result = subprocess.run([sys.executable, "-m", "ringsim"], stdin=subprocess.DEVNULL,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("Ring all-reduce · 4 GPUs · 8 elements per GPU")
    assert "    GPU1 sends a₁ to GPU2, where it is added to b₁" in result.stdout
    assert "\x1b[" not in result.stdout  # plain text, no TUI escape codes


def test_tui_refuses_a_lesson_that_does_not_exist(capsys):
    from ringsim.lessons import load_lessons
    count = len(load_lessons())
    assert main(["tui", "--lesson", str(count + 1)]) == 2
    assert f"--lesson must be from 1 to {count}, got {count + 1}" in capsys.readouterr().err


@pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")
def test_bare_ringsim_in_a_terminal_opens_the_tui():
    import os
    import pty
    import select
    import signal
    import struct
    from fcntl import ioctl
    from termios import TIOCSWINSZ

    title, sentence = "Ring all-reduce".encode(), "GPU1 sends a₁ to GPU2".encode()
    pid, fd = pty.fork()
    if pid == 0:  # the child: bare `ringsim` on a 120×40 terminal
        ioctl(0, TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
        os.environ["TERM"] = "xterm-256color"
        os.execv(sys.executable, [sys.executable, "-m", "ringsim"])
    screen, pressed, status = b"", 0.0, None
    deadline = time.monotonic() + 30
    try:
        while time.monotonic() < deadline and status is None:
            ready, _, _ = select.select([fd], [], [], 0.1)
            if ready:
                try:
                    screen += os.read(fd, 65536)
                except OSError:  # the child closed the terminal
                    pass
            if title in screen and sentence not in screen and time.monotonic() - pressed > 1:
                os.write(fd, b"n")  # again if the first press came before the app listened
                pressed = time.monotonic()
            if sentence in screen:
                os.write(fd, b"q")
            done, code = os.waitpid(pid, os.WNOHANG)
            if done:
                status = os.waitstatus_to_exitcode(code)
    finally:
        if status is None:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        os.close(fd)
    assert title in screen, screen[-2000:]
    assert sentence in screen, screen[-2000:]
    assert status == 0
