"""The pictures the README and docs show are what `ringsim figure --all docs/figures` draws now:
SVG and HTML byte for byte; the GIF by the digest of its frames' SVG text, which its comment
keeps (its pixels depend on the fonts installed, its drawing does not)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("drawsvg", reason="the figures extra (drawsvg) is not installed")

from ringsim.figures import gallery, raster  # noqa: E402
from ringsim.figures.output import render  # noqa: E402
from ringsim.figures.render import drawn  # noqa: E402

FOLDER = Path(__file__).resolve().parents[1] / "docs" / "figures"
REDRAW = "redraw them with: ringsim figure --all docs/figures"


def test_every_picture_is_committed_and_nothing_else():
    names = {name for name, _, _ in gallery.entries()}
    assert {p.name for p in FOLDER.iterdir()} == names, REDRAW


@pytest.mark.parametrize("name", [n for n, _, step in gallery.entries() if not n.endswith(".gif")])
def test_committed_vector_pictures_match_the_drawing(name):
    drawn_now = gallery.pictures()[name] if name.endswith(".html") else \
        next(render(sim, Path(n).suffix, step) for n, sim, step in gallery.entries() if n == name)
    assert (FOLDER / name).read_bytes() == drawn_now, f"{name} is out of date; {REDRAW}"


def test_the_readme_animation_holds_the_frames_drawn_now():
    from PIL import Image
    for name, sim, step in gallery.entries():
        if name.endswith(".gif"):
            svgs = [d.svg for d in drawn(sim, None if step is None else [step])]
            with Image.open(FOLDER / name) as gif:
                comment = gif.info.get("comment", b"").decode("ascii")
                assert comment == f"ringsim frames sha256 {raster.digest(svgs)}", REDRAW
                assert gif.n_frames == len(svgs)
            assert (FOLDER / name).stat().st_size < 1_000_000


def test_the_readme_and_the_algorithm_docs_show_them():
    readme = (FOLDER.parents[1] / "README.md").read_text(encoding="utf-8")
    assert "docs/figures/ring-4.gif" in readme
    assert readme.index("docs/figures/ring-4.gif") > readme.index("pip install '.[test]' && pytest")
    doc = (FOLDER.parent / "figures.md").read_text(encoding="utf-8")
    for name, _, _ in gallery.entries():
        if name.endswith(".svg"):
            assert f"figures/{name}" in doc


def test_each_caption_names_the_step_its_picture_shows():
    import re
    doc = (FOLDER.parent / "figures.md").read_text(encoding="utf-8")
    for name, sim, step in gallery.entries():
        if name.endswith(".svg") and name != "ring-4.svg":
            caption = re.search(rf"!\[([^\]]*)\]\(figures/{re.escape(name)}\)", doc)[1]
            assert f", step {step}" in caption and 1 <= step <= len(sim.plan), (name, caption)
            # No empty segment: the figure's default N covers every segment of the plan.
            assert sim.layout.elements >= sim.plan.segments, name
