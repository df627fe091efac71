"""The TUI's commands: export --svg, serve, tui's range checks, and bare `ringsim` in a pipe."""

import asyncio
import html
import subprocess
import sys
import time

import pytest

from ringsim import Simulation
from ringsim.cli import main

from .serving import free_port, serving


def test_export_writes_one_svg_per_iteration_with_its_sentences(tmp_path, capsys):
    folder = tmp_path / "slides"
    # Wide enough that no sentence wraps, so each appears whole in the SVG.
    assert main(["export", "--svg", str(folder), "--size", "160x40"]) == 0
    names = sorted(p.name for p in folder.glob("*.svg"))
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
        ".ringsim-export", "00-start.svg", "01-reduce-to-gpu1.svg", "02-broadcast-from-gpu1.svg"]
    assert main(["export", "--svg", str(tmp_path / "x"), "--gpus", "65"]) == 2
    assert "the TUI shows 1 to 64 GPUs, got 65" in capsys.readouterr().err
    target = tmp_path / "file"
    target.write_text("")
    assert main(["export", "--svg", str(target)]) == 2
    assert "is not a folder" in capsys.readouterr().err


def test_tui_refuses_sizes_the_view_cannot_show(capsys):
    assert main(["tui", "--elements", "5000"]) == 2
    assert capsys.readouterr().err.strip() == \
        "ringsim tui: error: the TUI shows 0 to 4,096 elements per GPU, got 5,000"


def test_serve_without_textual_serve_says_how_to_install_it(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "textual_serve", None)
    monkeypatch.setitem(sys.modules, "textual_serve.server", None)
    assert main(["serve", "--port", str(free_port())]) == 2
    err = capsys.readouterr().err
    assert err == ("ringsim serve: error: textual-serve is not installed: from a clone of ringsim, "
                   "pip install '.[serve]'\n")


async def _first_screen(port: int) -> str:
    """Connect as a browser would and collect the TUI's output until its title shows (≤ 30 s)."""
    import aiohttp
    received = b""
    async with aiohttp.ClientSession() as session:
        async with session.ws_connect(f"http://127.0.0.1:{port}/ws?width=120&height=40",
                                      origin=f"http://127.0.0.1:{port}") as ws:
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
    with serving() as (port, page):
        assert "<div>ringsim</div>" in page
        assert f'data-session-websocket-url="ws://127.0.0.1:{port}/ws"' in page
        # A browser session: the websocket starts `ringsim tui` and streams its screen.
        screen = asyncio.run(_first_screen(port))
        assert "Ring all-reduce · 4 GPUs · 8 elements per GPU" in screen


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


def _in_terminal(args: list[str], term: str, size: tuple[int, int], respond=None):
    """Run `python -m ringsim ARGS` on a pseudo-terminal of `size` (columns, rows) whose TERM is
    `term`, calling respond(output so far, terminal) as output arrives; its exit status (None
    if it had not ended within 30 s, when it is killed) and all it wrote."""
    import os
    import pty
    import select
    import signal
    import struct
    from fcntl import ioctl
    from termios import TIOCSWINSZ

    pid, fd = pty.fork()
    if pid == 0:
        ioctl(0, TIOCSWINSZ, struct.pack("HHHH", size[1], size[0], 0, 0))
        os.environ["TERM"] = term
        os.execv(sys.executable, [sys.executable, "-m", "ringsim", *args])
    output, status = b"", None
    deadline = time.monotonic() + 30
    try:
        while time.monotonic() < deadline and status is None:
            ready, _, _ = select.select([fd], [], [], 0.1)
            if ready:
                try:
                    output += os.read(fd, 65536)
                except OSError:  # the child closed the terminal
                    pass
            if respond is not None:
                respond(output, fd)
            done, code = os.waitpid(pid, os.WNOHANG)
            if done:
                status = os.waitstatus_to_exitcode(code)
    finally:
        if status is None:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        os.close(fd)
    return status, output


@pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")
def test_bare_ringsim_in_a_terminal_opens_the_tui():
    import os
    title, sentence = "Ring all-reduce".encode(), "GPU1 sends a₁ to GPU2".encode()
    pressed = 0.0

    def respond(screen: bytes, fd: int) -> None:
        nonlocal pressed
        # Again if the first press came before the app listened (not sooner than 3 s: a
        # busy machine may take that long to draw, and a second step would hide the first).
        if title in screen and b"step 1 of 6" not in screen and time.monotonic() - pressed > 3:
            os.write(fd, b"n")
            pressed = time.monotonic()
        if sentence in screen:
            os.write(fd, b"q")

    # bare `ringsim` on a 120×40 terminal
    status, screen = _in_terminal([], "xterm-256color", (120, 40), respond)
    assert title in screen, screen[-2000:]
    assert sentence in screen, screen[-2000:]
    assert status == 0


@pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")
def test_a_dumb_terminal_gets_the_walkthrough_not_a_screen_that_never_settles():
    # Rich takes a dumb terminal to be 80×25, the terminal says 100×30, and Textual's layout
    # would resize between the two forever, deaf to q and Ctrl-C.
    status, output = _in_terminal([], "dumb", (100, 30))
    assert status == 0, output[-2000:]
    assert "Every GPU holds the sum: yes".encode() in output
    assert b"\x1b[?1049h" not in output  # no full-screen mode was entered
    status, output = _in_terminal(["tui"], "dumb", (100, 30))
    assert status == 2
    assert b"the TUI needs a terminal that can move its cursor, and TERM=dumb" in output


def _svg_text(path) -> str:
    return html.unescape(path.read_text(encoding="utf-8")).replace("\xa0", " ")


def test_export_validates_before_it_creates_the_folder(tmp_path, capsys):
    target = tmp_path / "out" / "a" / "b" / "c"
    assert main(["export", "--svg", str(target), "--gpus", "65"]) == 2
    assert "the TUI shows 1 to 64 GPUs, got 65" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
    assert main(["export", "--svg", str(target), "--master", "2"]) == 2
    assert not (tmp_path / "out").exists()


def test_export_refuses_a_folder_under_a_file_in_one_line(tmp_path, capsys):
    (tmp_path / "README.md").write_text("a file")
    assert main(["export", "--svg", str(tmp_path / "README.md" / "sub")]) == 2
    err = capsys.readouterr().err  # long paths are shortened in the middle, as every file error does
    assert err.startswith("ringsim export: error: /") and err.count("\n") == 1
    assert err.endswith("README.md/sub is inside " + err.split(" is inside ")[1].split(",")[0]
                        + ", which is a file\n") and "README.md, which" in err


@pytest.mark.parametrize("size", ["30000x10000", "401x40", "120x201", "19x40", "12345678901x5"])
def test_export_bounds_the_size(tmp_path, capsys, size):
    started = time.monotonic()
    # main() returns argparse's usage errors as status 2 rather than raising SystemExit
    assert main(["export", "--svg", str(tmp_path / "x"), "--size", size]) == 2
    assert time.monotonic() - started < 5
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--size" in err
    assert not (tmp_path / "x").exists()


def test_export_svgs_load_no_font_from_the_internet(tmp_path):
    assert main(["export", "--svg", str(tmp_path), "-a", "master"]) == 0
    for path in tmp_path.glob("*.svg"):
        svg = path.read_text(encoding="utf-8")
        assert "url(\"http" not in svg and "@font-face" not in svg
        assert svg.replace("http://www.w3.org/2000/svg", "").count("http") == 0
        assert '"DejaVu Sans Mono"' in svg and "monospace" in svg


def test_export_crop_keeps_the_gpu_panels_and_the_transfer_list_only(tmp_path):
    assert main(["export", "--svg", str(tmp_path), "--crop", "--size", "120x40"]) == 0
    sim = Simulation.create("ring", 4, 8)
    svg = _svg_text(tmp_path / "01-reduce-scatter-1.svg")
    for sentence in sim.sentences(0):
        assert sentence in svg
    assert "GPU1" in svg and "a₁+b₁" in svg and "This iteration" in svg
    for gone in ("Ring all-reduce", "Elements moved", "moved so far", "Quit", "<circle", "ringsim ·"):
        assert gone not in svg, gone
    # Cropped to the rows shown: far fewer than the 40 of the terminal.
    rows = svg.count('clipPath id="') - 1  # one clip path per text row, one for the terminal
    assert 10 <= rows < 25


def test_export_png_writes_one_png_per_svg(tmp_path, capsys):
    pytest.importorskip("resvg_py")
    assert main(["export", "--svg", str(tmp_path), "-a", "master", "--crop", "--png"]) == 0
    assert "wrote 3 SVG and 3 PNG files" in capsys.readouterr().out
    for svg in sorted(tmp_path.glob("*.svg")):
        png = svg.with_suffix(".png").read_bytes()
        assert png[:8] == b"\x89PNG\r\n\x1a\n"
        width, height = int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")
        assert width > 1000 and 200 < height < width


def test_tui_without_a_terminal_refuses_in_one_line_at_once():
    result = subprocess.run([sys.executable, "-m", "ringsim", "tui"], stdin=subprocess.DEVNULL,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.startswith("ringsim tui: error: the TUI needs a terminal")
    assert result.stderr.count("\n") == 1


def test_tui_elements_follow_gpus_by_default():
    from ringsim.cli import build_parser
    from ringsim.cli._view_args import check_scenario
    for argv, elements in ((["tui", "--gpus", "32"], 32), (["tui"], 8), (["tui", "--gpus", "5"], 8),
                           (["tui", "--gpus", "32", "--elements", "4"], 4),
                           (["export", "--svg", "x", "--gpus", "16"], 16),
                           (["serve", "-a", "bidirectional-ring", "--gpus", "8"], 16)):
        args = build_parser().parse_args(argv)
        assert check_scenario(args).layout.elements == elements, argv


def test_help_texts_say_the_4_gpu_example_not_the_seed(capsys):
    for command in ("tui", "serve", "export"):
        assert main([command, "--help"]) == 0  # main() returns --help's status
        out = capsys.readouterr().out
        assert "seed" not in out, command
    assert main(["tui", "--help"]) == 0
    assert "the 4-GPU example" in capsys.readouterr().out
