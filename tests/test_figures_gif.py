"""The animated GIF's structure: one palette in its header for every frame, a frame and a
duration per step, and frames drawn, decoded and written one at a time."""

from __future__ import annotations

import pytest

pytest.importorskip("typst", reason="the figures extra (typst) is not installed")
pytest.importorskip("PIL", reason="the figures extra (pillow) is not installed")

from ringsim.figures import raster, typeset  # noqa: E402

SIZE = (120, 80)


def svg(mark: str = "") -> str:
    """A grey page, with `mark` drawn on it."""
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{SIZE[0]}" height="{SIZE[1]}">'
            f'<rect width="100%" height="100%" fill="#e5e7eb"/>{mark}</svg>')


def blocks(data: bytes) -> tuple[bool, list[tuple[bool, int, int]]]:
    """Whether the GIF has a palette in its header, and each frame's (own palette?, disposal,
    delay in ms), read from the file's blocks."""
    assert data[:6] == b"GIF89a"
    flags, pos = data[10], 13
    if flags & 0x80:
        pos += 3 * (2 << (flags & 7))
    frames, control = [], (0, 0)
    while data[pos] != 0x3B:
        if data[pos] == 0x21:  # an extension: for a frame's timing, the graphic control one
            if data[pos + 1] == 0xF9:
                control = (data[pos + 3] >> 2 & 7, int.from_bytes(data[pos + 4:pos + 6], "little") * 10)
            pos += 2
        else:
            assert data[pos] == 0x2C  # an image: its descriptor, maybe its own palette, its LZW code size
            own = data[pos + 9]
            pos += 10 + (3 * (2 << (own & 7)) if own & 0x80 else 0) + 1
            frames.append((bool(own & 0x80), *control))
        while data[pos]:  # the sub-blocks, up to the empty one
            pos += data[pos] + 1
        pos += 1
    return bool(flags & 0x80), frames


def test_every_frame_uses_the_one_palette_and_keeps_its_duration():
    svgs = [svg(), svg('<circle cx="60" cy="40" r="20" fill="#2563eb"/>'), svg()]
    header, frames = blocks(raster.gif(svgs, [SIZE] * 3))
    assert header
    assert frames == [(False, raster.DISPOSAL_KEEP, raster.GIF_STEP_MS),
                      (False, raster.DISPOSAL_KEEP, raster.GIF_STEP_MS),
                      (False, raster.DISPOSAL_KEEP, raster.GIF_LAST_MS)]


def test_an_unchanged_step_keeps_its_own_frame():
    header, frames = blocks(raster.gif([svg()] * 3, [SIZE] * 3))
    assert [delay for _, _, delay in frames] == [raster.GIF_STEP_MS] * 2 + [raster.GIF_LAST_MS]


def test_a_colour_only_one_step_shows_keeps_its_entry():
    import io

    from PIL import Image
    arrow = '<rect x="10" y="38" width="100" height="3" fill="#dc2626"/>'
    svgs = [svg()] * 8 + [svg(arrow)] + [svg()] * 8
    with Image.open(io.BytesIO(raster.gif(svgs, [SIZE] * len(svgs)))) as gif:
        assert gif.n_frames == len(svgs)
        gif.seek(8)
        assert gif.convert("RGB").getpixel((60, 39)) == (0xDC, 0x26, 0x26)
        gif.seek(9)
        assert gif.convert("RGB").getpixel((60, 39)) == (0xE5, 0xE7, 0xEB)


def test_frames_are_drawn_as_they_are_taken():
    started = []
    for k, value in enumerate(typeset.one_ahead(lambda i: started.append(i) or i * i, range(6))):
        assert value == k * k
        assert len(started) <= k + 2  # this frame and the next, never the whole animation
    assert started == list(range(6))


def test_the_palette_looks_at_about_its_sample_of_pixels():
    sizes = [(1818.2, 982.0)] * 31
    every = raster.sample_step(sizes)
    pixels = 1818 * 982 * 31
    assert pixels / every ** 2 <= raster.PALETTE_SAMPLE < pixels / (every - 1) ** 2
    assert raster.sample_step([SIZE]) == 1


