"""docs/notebook.ipynb runs top to bottom in a real Jupyter kernel, and its pictures are the figures."""

from __future__ import annotations

from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat", reason="the test extra's nbformat is not installed")
nbclient = pytest.importorskip("nbclient", reason="the test extra's nbclient is not installed")
pytest.importorskip("drawsvg", reason="the figures extra (drawsvg) is not installed")

NOTEBOOK = Path(__file__).resolve().parents[1] / "docs" / "notebook.ipynb"


def test_the_notebook_runs_top_to_bottom(tmp_path):
    from jupyter_client.kernelspec import NoSuchKernel
    book = nbformat.read(NOTEBOOK, as_version=4)
    client = nbclient.NotebookClient(book, timeout=120, kernel_name="python3",
                                     resources={"metadata": {"path": str(tmp_path)}})
    try:
        client.execute()
    except NoSuchKernel:
        pytest.skip("no python3 Jupyter kernel is installed (pip install ipykernel)")
    outputs = [o for cell in book.cells if cell.cell_type == "code" for o in cell.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    svgs = [o["data"]["image/svg+xml"] for o in outputs if "image/svg+xml" in o.get("data", {})]
    pictures = [s for s in svgs if 'class="gpu"' in s]  # a simulation's or a timeline's
    assert len(pictures) >= 7 and len(svgs) == len(pictures) + 1  # and the sweep's chart
    assert "<polyline" in svgs[-1]
    assert any("GPU1 sends a₁ to GPU2, where it is added to b₁" in o.get("text", "") for o in outputs)
    assert any('data-part="play"' in o.get("data", {}).get("text/html", "") for o in outputs)
