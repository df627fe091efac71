"""What the terminal plots of sweep and diagnose share: the log-log figure, a character and a
colour per series, round ticks on the log y axis, and the legend under the plot."""

from __future__ import annotations

import math

from ..core.width import display_width, wrap

# Plain text cannot tell curves apart by colour: each series draws with its own character,
# named in the legend printed under the plot (outside the data, where it hides no curve).
# No two are alike in ASCII either ("•" prints as "*" there, so "*" is not one of them), and
# there are more than the series a sweep draws (NCCL's model and every algorithm).
MARKERS = "•+xo#@%&$=~^?!<>"
COLOURS = (12, 9, 10, 11, 13, 14, 208, 15, 245, 3, 141, 130)  # 256-colour codes


def log_log_figure(plt, limit: int | None, height: int, colour: bool) -> None:
    """Start a plotext figure with both axes logarithmic, `height` rows tall and 100 columns wide
    (`limit` where the output is narrower), in colour or plain."""
    plt.clear_figure()
    plt.plotsize(100 if limit is None else min(100, limit), height)
    plt.theme("pro" if colour else "clear")
    plt.xscale("log")
    plt.yscale("log")


def series_style(number: int) -> tuple[str, int]:
    """The marker and 256-colour code of the series drawn `number`-th."""
    return MARKERS[number % len(MARKERS)], COLOURS[number % len(COLOURS)]


def legend_entry(number: int, name: str, colour: bool) -> tuple[str, str]:
    """A legend entry as plain text and as shown (its marker in the series' colour)."""
    marker, code = series_style(number)
    key = f"\x1b[38;5;{code}m{marker}\x1b[0m" if colour else marker
    return f"{marker} {name}", f"{key} {name}"


def legend_rows(legend: list[tuple[str, str]], limit: int | None) -> list[str]:
    """The legend's entries, up to three a row, in as many as `limit` columns hold; one too
    wide for its own row wraps, under its name."""
    width = max((display_width(plain) for plain, _ in legend), default=0) + 3
    per = 3 if limit is None else max(1, min(3, (limit - 2 + 3) // width))  # the last pads nothing
    if per == 1 and limit is not None and width - 3 + 2 > limit:
        return [line for plain, shown in legend for line in _wrapped_entry(plain, shown, limit)]
    return ["  " + "".join(shown + " " * (width - display_width(plain))
                           for plain, shown in legend[i:i + per]).rstrip()
            for i in range(0, len(legend), per)]


def _wrapped_entry(plain: str, shown: str, limit: int) -> list[str]:
    """One legend entry's lines within `limit` columns: its marker (coloured as in `shown`),
    then its name, wrapped under itself."""
    marker, name = plain.split(" ", 1)
    lines = wrap("  " + plain, limit, hang=" " * (3 + display_width(marker))).split("\n")
    return ["  " + shown[:len(shown) - len(name) - 1] + lines[0][2 + len(marker):], *lines[1:]]


def round_yticks(plt, values: list[float], metric: str, scale: float = 1.0) -> None:
    """Put a plotext log y axis's ticks at powers of ten ('10 µs', '100 GB/s'), spanning the
    values; `scale` turns a value into seconds or bytes per second (1e9 for GB/s)."""
    from ..studies.ticks import decade_ticks, tick_label
    # Left to plotext, a log axis is labelled at evenly spaced logs, values like 36.3129
    # that no reader can round in their head.
    marks = decade_ticks(values)
    if marks:
        # plotext takes a log axis's limits as logs
        plt.ylim(math.log10(marks[0]), math.log10(marks[-1]))
        plt.yticks(marks, [tick_label(v * scale, metric) for v in marks])
