"""The colours of a figure: a light and a dark theme, one hue per GPU, and how sums are tinted."""

from __future__ import annotations

import colorsys
import functools
import math
from dataclasses import dataclass

from ..core.errors import RingsimError


@dataclass(frozen=True)
class Theme:
    """Background, text and accent colours of one theme."""

    name: str
    background: str
    panel: str       # a GPU column's frame and a node's box
    text: str
    muted: str       # captions, counters, empty buffers
    complete: str    # a buffer holding the complete sum
    complete_text: str
    reduce: str      # an arrow that adds
    copy: str        # an arrow that copies
    halo: str        # drawn under arrows so they stay readable over cells
    lightness: float  # of the GPU hues


THEMES = {
    "light": Theme("light", "#ffffff", "#f3f4f6", "#111827", "#6b7280", "#15803d", "#ffffff",
                   "#c2410c", "#1d4ed8", "#ffffff", 0.62),
    "dark": Theme("dark", "#111827", "#1f2937", "#f9fafb", "#9ca3af", "#22c55e", "#052e16",
                  "#fb923c", "#60a5fa", "#111827", 0.42),
}

# A channel's (a lane's) colour, when several rings or trees share the segments.
LANE_COLOURS = ("#d97706", "#0891b2", "#db2777", "#65a30d", "#7c3aed", "#dc2626")


def theme(name: str) -> Theme:
    """The theme called `name`, or a RingsimError naming those there are."""
    try:
        return THEMES[name]
    except (KeyError, TypeError):
        raise RingsimError(f"unknown theme {name!r}; choose one of: {', '.join(THEMES)}") from None


def _hex(rgb: tuple[float, float, float]) -> str:
    return "#" + "".join(f"{round(max(0.0, min(1.0, c)) * 255):02x}" for c in rgb)


def _rgb(colour: str) -> tuple[float, float, float]:
    return tuple(int(colour[i:i + 2], 16) / 255 for i in (1, 3, 5))  # type: ignore[return-value]


IN_ORDER_MAX_GPUS = 8  # up to here neighbours' hues are 45 degrees or more apart in wheel order


@functools.cache
def hue_stride(gpus: int) -> int:
    """How many places round the wheel one GPU's hue is from the next GPU's: 1 up to
    IN_ORDER_MAX_GPUS (the wheel in order); beyond, a stride prime to G that puts GPUs one and
    two apart furthest apart, since at 16 hues in order neighbours (side by side in a ring) are
    shades of one colour."""
    if gpus <= IN_ORDER_MAX_GPUS:
        return 1

    def apart(s: int, d: int) -> int:
        return min(d * s % gpus, gpus - d * s % gpus)
    strides = [s for s in range(2, gpus // 2 + 1) if math.gcd(s, gpus) == 1]
    return max(strides, key=lambda s: (min(apart(s, 1), apart(s, 2)), apart(s, 3)), default=1)


def gpu_rgb(gpu: int, gpus: int, t: Theme) -> tuple[float, float, float]:
    """GPU `gpu`'s own hue (0-based): G hues evenly spaced around the colour wheel, taken in
    strides (hue_stride) so that neighbouring GPUs differ."""
    place = gpu * hue_stride(max(gpus, 1)) % max(gpus, 1)
    return colorsys.hls_to_rgb((place / max(gpus, 1) + 0.58) % 1.0, t.lightness, 0.7)


def gpu_colour(gpu: int, gpus: int, t: Theme) -> str:
    """GPU `gpu`'s colour as #rrggbb."""
    return _hex(gpu_rgb(gpu, gpus, t))


def mixture(contributors: tuple[int, ...], gpus: int, t: Theme) -> str:
    """A partial sum's fill: the mean of its GPUs' hues, stronger the more GPUs it holds."""
    if not contributors:
        return t.panel
    return _mixture(frozenset(contributors), gpus, t)


@functools.lru_cache(maxsize=4096)  # an animation asks for the same few sums again and again
def _mixture(contributors: frozenset[int], gpus: int, t: Theme) -> str:
    parts = [gpu_rgb(g, gpus, t) for g in sorted(contributors)]
    mean = tuple(sum(p[i] for p in parts) / len(parts) for i in range(3))
    strength = 0.55 + 0.45 * len(parts) / gpus  # one GPU's own copy is its hue, lightened
    back = _rgb(t.background)

    def fill(strength: float) -> tuple[float, float, float]:
        return tuple(b + (m - b) * strength for b, m in zip(back, mean))
    # A label is drawn on it in the theme's text colour: where a hue is too near the text's
    # lightness (yellow-greens under white text in the dark theme), it moves toward the
    # background until the label has WCAG's 4.5:1 contrast.
    text = _luminance(_rgb(t.text))
    while _contrast(text, _luminance(fill(strength))) < MIN_CONTRAST and strength > 0:
        strength -= 0.02
    return _hex(fill(strength))


MIN_CONTRAST = 4.5  # WCAG AA for normal text: a label on a cell


def _luminance(rgb: tuple[float, float, float]) -> float:
    """WCAG's relative luminance of an sRGB colour (channels 0–1)."""
    r, g, b = (c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def _contrast(a: float, b: float) -> float:
    """WCAG's contrast ratio of two luminances."""
    return (max(a, b) + 0.05) / (min(a, b) + 0.05)


def lane_colour(lane: int) -> str:
    """The colour of ring or tree number `lane` (0-based)."""
    return LANE_COLOURS[lane % len(LANE_COLOURS)]
