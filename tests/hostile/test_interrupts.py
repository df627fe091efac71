"""Ctrl-C at any moment of a command ends it with status 130 and no traceback, from the
first line of main() on: while the commands are read and their modules load, and while
one runs. The interrupt is raised at the Nth Python call, so each case lands in one place."""

from __future__ import annotations

import subprocess
import sys

import pytest

from .conftest import ROOT

# After the ringsim command imports main() (what its entry point does first), the Nth call
# raises KeyboardInterrupt, as a Ctrl-C there would.
INTERRUPTED_AT = """
import sys
from ringsim.cli import main
calls = 0
def interrupt(frame, event, arg):
    global calls
    if event == "call":
        calls += 1
        if calls == {at}:
            raise KeyboardInterrupt
sys.setprofile(interrupt)
status = main({argv!r})
sys.setprofile(None)
print("reached", calls >= {at}, file=sys.stderr)
sys.exit(status)
"""


@pytest.mark.parametrize("at", [2, 30, 300, 3_000, 30_000, 200_000])
def test_ctrl_c_anywhere_in_a_sweep(at):
    argv = ["sweep", "--gpus", "1024", "--topology", "dgx-h100"]
    run = subprocess.run([sys.executable, "-c", INTERRUPTED_AT.format(at=at, argv=argv)],
                         capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert "Traceback" not in run.stderr, run.stderr[-3000:]
    assert "KeyboardInterrupt" not in run.stderr
    assert run.stderr.splitlines()[-1] == "reached True"  # the interrupt was raised
    assert run.returncode == 130, (run.returncode, run.stderr[-2000:])


LOST_IN_A_FINALISER = """
import sys
import ringsim.cli as cli
class Finalised:
    def __del__(self):
        raise KeyboardInterrupt  # a Ctrl-C arriving while Python runs a finaliser
run = cli._main
def interrupted(argv):
    Finalised()  # dropped at once: its __del__ runs where no exception can be raised
    return run(argv)
cli._main = interrupted
sys.exit(cli.main(["walk"]))
"""


def test_a_ctrl_c_python_drops_in_a_finaliser_still_ends_the_command():
    run = subprocess.run([sys.executable, "-c", LOST_IN_A_FINALISER], capture_output=True,
                         text=True, timeout=120, cwd=ROOT)
    assert "Traceback" not in run.stderr and "Exception ignored" not in run.stderr, run.stderr
    assert run.returncode == 130, (run.returncode, run.stdout[-500:])
    assert "Ring all-reduce" not in run.stdout  # stopped before the walk printed


def test_the_entry_point_imports_little_before_main():
    """What runs before main() cannot catch Ctrl-C: the entry point's import stays light."""
    code = "import sys, ringsim.cli; print(sorted(m for m in ('numpy', 'tomllib') if m in sys.modules))"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60, cwd=ROOT)
    assert run.stdout.strip() == "[]", run.stdout + run.stderr
