"""`import ringsim` stays light: no Textual, CuPy or MPI, and none of the figures' libraries."""

import subprocess
import sys

# The figures' libraries load only when a picture is drawn; the notebook's only in its test.
FIGURE_LIBRARIES = ("drawsvg", "resvg_py", "typst", "PIL", "nbformat", "nbclient")


def test_import_does_not_pull_optional_or_ui_packages():
    heavy = ("textual", "cupy", "cupy.cuda.nccl", "mpi4py", "rich") + FIGURE_LIBRARIES
    code = ("import sys, ringsim, ringsim.cli; ringsim.cli.build_parser(); "
            "import ringsim.figures, ringsim.cli.figure; "
            f"print(','.join(m for m in {heavy!r} if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == ""
