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


IN_ORDER_MAX_GPUS = 8  # up to here neighbours' hues are 33 degrees or more apart in wheel order

# How far (CIE76 delta E) every GPU's own colour stays from its theme's complete-sum colour:
# at 4 GPUs the 4th GPU's cells were green, delta E 27 from the dark theme's sum, and read as
# complete. At 40 the nearest GPU hues are a yellow and a teal, plainly not the sum's green,
# and the band kept out is about a quarter of the wheel, leaving the GPUs room for distinct hues.
MIN_SUM_DELTA_E = 40.0


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


def _lab(rgb: tuple[float, float, float]) -> tuple[float, float, float]:
    """CIE L*a*b* (D65) of an sRGB colour, channels 0–1."""
    r, g, b = (c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb)
    x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047
    y = 0.2126 * r + 0.7152 * g + 0.0722 * b
    z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883

    def f(v: float) -> float:
        return v ** (1 / 3) if v > 0.008856 else 7.787 * v + 16 / 116
    return 116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))


def _wheel_rgb(hue: float, t: Theme) -> tuple[float, float, float]:
    return colorsys.hls_to_rgb(hue % 1.0, t.lightness, 0.7)


@functools.cache
def _gpu_hues() -> tuple[float, float]:
    """Where the GPUs' arc of the wheel starts and how long it is: the whole wheel less the band
    of hues, round the sums' green, whose colour in some theme is within MIN_SUM_DELTA_E of that
    theme's sum colour. One band for both themes, so that a GPU has the same hue in each."""
    def edge(t: Theme, step: float) -> float:
        # Walk out from the sum's hue until a colour is far enough. The band is lopsided: at
        # the GPUs' lightness yellow-greens stay near the sum's green further than blue-greens.
        sum_lab = _lab(_rgb(t.complete))
        hue = colorsys.rgb_to_hls(*_rgb(t.complete))[0]
        for _ in range(180):  # half the wheel at most: a bound that no theme could make loop forever
            if math.dist(_lab(_wheel_rgb(hue, t)), sum_lab) >= MIN_SUM_DELTA_E:
                return hue
            hue += step
        raise ValueError(f"theme {t.name}: no GPU hue is {MIN_SUM_DELTA_E} from its sum colour")
    below = min(edge(t, -1 / 360) for t in THEMES.values())
    above = max(edge(t, 1 / 360) for t in THEMES.values())
    return above, 1.0 - (above - below)


def gpu_rgb(gpu: int, gpus: int, t: Theme) -> tuple[float, float, float]:
    """GPU `gpu`'s own hue (0-based): G hues evenly spaced round the colour wheel less the sum's
    green (_gpu_hues), taken in strides (hue_stride) so that neighbouring GPUs differ."""
    gpus = max(gpus, 1)
    start, arc = _gpu_hues()
    place = gpu * hue_stride(gpus) % gpus
    # Half a step in from each end, so that the first and last GPUs are as far from the band.
    return _wheel_rgb(start + (place + 0.5) * arc / gpus, t)


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
