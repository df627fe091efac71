"""The TUI in a real terminal (tmux): the replay of what a new user did, read off the pane."""

import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from ringsim import Simulation

TMUX = shutil.which("tmux")
ROOT = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.skipif(TMUX is None, reason="no tmux installed"), pytest.mark.slow]


class Terminal:
    """`ringsim ARGS` in a detached tmux session of a given size."""

    def __init__(self, width: int, height: int, *args: str) -> None:
        self.name = f"ringsim-test-{uuid.uuid4().hex[:8]}"
        # COLUMNS and LINES (pytest sets them) would override the pane's size in Textual.
        command = " ".join(["env", "-u", "COLUMNS", "-u", "LINES", f"PYTHONPATH={ROOT}",
                            sys.executable, "-m", "ringsim", *args])
        subprocess.run([TMUX, "new-session", "-d", "-s", self.name, "-x", str(width), "-y", str(height),
                        command], check=True)

    def screen(self) -> str:
        return subprocess.run([TMUX, "capture-pane", "-p", "-t", self.name], capture_output=True,
                              text=True, check=True).stdout

    def wait_for(self, *texts: str, timeout: float = 30) -> str:
        """The pane once it shows every one of `texts` (or as it is after `timeout` s)."""
        deadline = time.monotonic() + timeout
        while True:
            screen = self.screen()
            if all(t in screen for t in texts) or time.monotonic() > deadline:
                return screen
            time.sleep(0.2)

    def press(self, *keys: str) -> None:
        for key in keys:
            subprocess.run([TMUX, "send-keys", "-t", self.name, key], check=True)
            time.sleep(0.4)

    def close(self) -> None:
        subprocess.run([TMUX, "kill-session", "-t", self.name], capture_output=True)


@pytest.fixture
def terminal():
    opened = []

    def open_terminal(width, height, *args):
        term = Terminal(width, height, *args)
        opened.append(term)
        return term
    yield open_terminal
    for term in opened:
        term.close()


def test_next_back_next_shows_every_sentence_and_no_bottleneck_in_a_real_terminal(terminal):
    term = terminal(140, 45)
    term.wait_for("Press → or n")
    term.press("n", "p", "n")
    sentences = Simulation.create("ring", 4, 8).sentences(0)
    screen = term.wait_for(*sentences, "ports evenly loaded")
    for sentence in sentences:
        assert sentence in screen
    assert "bottleneck" not in screen and "ports evenly loaded" in screen
    term.press("q")


def test_80x24_bidirectional_ring_shows_its_8_segments_and_counts_the_rest(terminal):
    term = terminal(80, 24, "tui", "-a", "bidirectional-ring")
    term.wait_for("Press → or n")
    term.press("n")
    screen = term.wait_for("more below", "a₈+d₈  ← GPU1 +")
    for label in ("a₁  → GPU2", "a₈  → GPU4", "a₈+d₈  ← GPU1 +"):
        assert label in screen
    assert "This iteration · 4 more below: tab here, then ↓" in screen
    term.press("Tab", "End")
    screen = term.wait_for("GPU1 sends a₈", "╭─ This iteration ───")  # End scrolls with an animation
    assert "more below" not in screen
    term.press("q")
