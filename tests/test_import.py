"""`import ringsim` stays light: no Textual, CuPy or MPI."""

import subprocess
import sys


def test_import_does_not_pull_optional_or_ui_packages():
    code = ("import sys, ringsim, ringsim.cli; ringsim.cli.build_parser(); "
            "print(','.join(m for m in ('textual', 'cupy', 'cupy.cuda.nccl', 'mpi4py', 'rich') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == ""
