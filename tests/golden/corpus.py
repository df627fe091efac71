"""The golden corpus's commands and how one is run: a fresh process, no terminal; --help at 100
columns, everything else with no width (what a pipe gets: every line whole)."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).parent
OUTPUTS = HERE / "outputs"


def commands() -> list[str]:
    """The commands of commands.txt, in order (comments and blank lines left out)."""
    lines = (HERE / "commands.txt").read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def output_name(number: int, command: str) -> str:
    """The file that keeps command `number`'s output: 03-walk-a-master.txt."""
    slug = re.sub(r"[^A-Za-z0-9]+", "-", command).strip("-")[:60]
    return f"{number:02d}-{slug}.txt"


def run(command: str) -> str:
    """What `ringsim COMMAND` prints, stdout then stderr, and its exit status."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("COLUMNS", "LINES", "TERM"))}
    env.update(LINES="40", TERM="dumb", PYTHONIOENCODING="utf-8", NO_COLOR="1")
    if "--help" in shlex.split(command):  # argparse wraps help to COLUMNS, else to 80
        env.update(COLUMNS="100")
    proc = subprocess.run([sys.executable, "-m", "ringsim", *shlex.split(command)],
                          capture_output=True, text=True, encoding="utf-8", env=env,
                          stdin=subprocess.DEVNULL, timeout=120)
    return (f"$ ringsim {command}\n{proc.stdout}"
            f"--- stderr\n{proc.stderr}--- exit {proc.returncode}\n")
