"""The GPUs' colours: the 4-GPU example keeps the colours the README's animation shows; at 16
GPUs, GPUs side by side (neighbours in a ring or a chain) are clearly different colours; no
GPU's own colour looks like the complete sum's green; and a cell's label stays readable on
every GPU's colour and on partial sums, in both themes."""

from __future__ import annotations

import math

import pytest

from ringsim.figures.theme import THEMES, gpu_colour, gpu_rgb, mixture


def _lab(rgb: tuple[float, float, float]) -> tuple[float, float, float]:
    """CIE L*a*b* (D65) of an sRGB colour, channels 0–1."""
    r, g, b = (c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb)
    x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047
    y = 0.2126 * r + 0.7152 * g + 0.0722 * b
    z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883

    def f(t: float) -> float:
        return t ** (1 / 3) if t > 0.008856 else 7.787 * t + 16 / 116
    return 116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))


def _rgb(colour: str) -> tuple[float, float, float]:
    return tuple(int(colour[i:i + 2], 16) / 255 for i in (1, 3, 5))  # type: ignore[return-value]


def _contrast(a: str, b: str) -> float:
    """WCAG 2 contrast ratio of two #rrggbb colours."""
    def lum(colour: str) -> float:
        r, g, b = (c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in _rgb(colour))
        return 0.2126 * r + 0.7152 * g + 0.0722 * b
    hi, lo = sorted((lum(a), lum(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def test_the_four_gpu_example_keeps_its_colours():
    assert [gpu_colour(k, 4, THEMES["light"]) for k in range(4)] == ["#5ab0e2", "#9a5ae2", "#e25a95", "#e2b55a"]
    assert [gpu_colour(k, 4, THEMES["dark"]) for k in range(4)] == ["#207fb6", "#6620b6", "#b62061", "#b68420"]


@pytest.mark.parametrize("theme", list(THEMES))
@pytest.mark.parametrize("gpus", [9, 12, 16])
def test_neighbouring_gpus_differ_clearly_beyond_eight(theme, gpus):
    t = THEMES[theme]
    labs = [_lab(gpu_rgb(k, gpus, t)) for k in range(gpus)]
    # ΔE (CIE76) between GPUs one and two apart; in wheel order at 16 GPUs it was 12–15.
    for d in (1, 2):
        assert min(math.dist(labs[k], labs[k + d]) for k in range(gpus - d)) > 30, d
    assert len({gpu_colour(k, gpus, t) for k in range(gpus)}) == gpus  # every GPU its own


@pytest.mark.parametrize("theme", list(THEMES))
def test_no_gpu_looks_like_the_complete_sum(theme):
    t = THEMES[theme]
    done = _lab(_rgb(t.complete))
    # ΔE (CIE76) from the sum's green: GPU4 of 4 was 20 (its cells 27) in the dark theme.
    for gpus in range(1, 65):
        for k in range(gpus):
            own = (gpu_rgb(k, gpus, t), _rgb(mixture((k,), gpus, t)))  # its hue and its cells
            assert min(math.dist(_lab(c), done) for c in own) >= 40, (gpus, k)


@pytest.mark.parametrize("theme", list(THEMES))
@pytest.mark.parametrize("gpus", [2, 3, 4, 5, 6, 8, 12, 16])
def test_labels_stay_readable_on_every_cell(theme, gpus):
    t = THEMES[theme]
    fills = [mixture((k,), gpus, t) for k in range(gpus)]  # a GPU's own segment
    fills += [mixture(tuple(range(k, min(k + n, gpus))), gpus, t)  # partial sums of neighbours
              for n in (2, 3) for k in range(gpus)]
    worst = min(_contrast(t.text, fill) for fill in fills)
    assert worst >= 4.5, worst  # WCAG AA for normal text
