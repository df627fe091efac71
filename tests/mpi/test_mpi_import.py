"""ringsim.mpi loads mpi4py only when used, and says how to install it when it is missing."""

from __future__ import annotations

import subprocess
import sys

from .conftest import ROOT, environment


def _python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                          env=environment(), cwd=ROOT)


def test_importing_ringsim_mpi_and_its_cli_does_not_load_mpi4py():
    run = _python("import sys, ringsim, ringsim.mpi, ringsim.cli.mpi, ringsim.execute.backend\n"
                  "print('mpi4py' in sys.modules)")
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "False"


def test_without_mpi4py_allreduce_says_how_to_install_it():
    run = _python("import sys; sys.modules['mpi4py'] = None\n"
                  "import numpy as np, ringsim.mpi\n"
                  "from ringsim.core.errors import RingsimError\n"
                  "try:\n    ringsim.mpi.allreduce(np.ones(3))\n"
                  "except RingsimError as e:\n    print(e)\n")
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "mpi4py is not installed: pip install '.[mpi]' from a clone of ringsim"
