"""Key press to next frame in the TUI, with Textual's Pilot: medians over ~30 presses per case.

Targets: ≤ 50 ms at G = 8 (panels of cells), ≤ 150 ms at G = 64 (heat map).

"Frame" is the moment the App hands a rendered screen update to its display; latency is from
just before `pilot.press(key)` to the last frame that the press caused. Pilot's own settling
(`pilot.press` + `pilot.pause()` wait for the process to go idle: ~0.1 s here even for an
unbound key) is reported separately as "round trip" and for an unbound key as a baseline.
Run: python benchmarks/tui_bench.py [--presses 30]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time

from ringsim import Simulation
from ringsim.tui.app import RingsimApp

CASES = [  # (label, algorithm, G, N, keys cycled through, target in ms[, keys pressed first])
    ("unbound key (baseline), G=8", "ring", 8, 64, "x", None),
    ("ring G=4 next", "ring", 4, 8, "n", 50),
    ("ring G=8 next", "ring", 8, 64, "n", 50),
    ("ring G=8 back", "ring", 8, 64, "nnp", 50),
    ("ring G=8 values on/off", "ring", 8, 64, "v", 50),
    ("ring G=64 next (heat map)", "ring", 64, 4096, "n", 150),
    ("ring G=64 back (replays the plan)", "ring", 64, 4096, "nnp", 150),
    ("naive G=64 next/back (4,032 transfers)", "naive", 64, 64, "np", 150),
    ("ring G=8 next, sweep plot + training step", "ring", 8, 64, "n", 50, "wo"),
    ("ring G=8 next, slow GPU + timeline", "ring", 8, 64, "n", 50, "sT"),
]


async def measure(algorithm: str, gpus: int, elements: int, keys: str,
                  presses: int, setup: str = "") -> tuple[list[float], list[float]]:
    """Per press: ms to the last frame it caused, and ms for Pilot's whole round trip."""
    app = RingsimApp(Simulation.create(algorithm, gpus, elements))
    frames: list[float] = []
    display = app._display

    def timed_display(screen, renderable) -> None:
        display(screen, renderable)
        if renderable is not None:
            frames.append(time.perf_counter())

    app._display = timed_display  # record when each rendered update reaches the display
    to_frame, round_trip = [], []
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        if setup:  # open panes first; their first frame (the sweep) is not timed
            await pilot.press(*setup)
            await pilot.pause()
        for i in range(presses):
            key = keys[i % len(keys)]
            if key == "n" and app.sim.done:
                await pilot.press("r")
                await pilot.pause()
            frames.clear()
            start = time.perf_counter()
            await pilot.press(key)
            await pilot.pause()
            end = time.perf_counter()
            round_trip.append((end - start) * 1000)
            if frames:
                to_frame.append((frames[-1] - start) * 1000)
    return to_frame, round_trip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--presses", type=int, default=30)
    args = parser.parse_args()
    print(f"{'case':<40} {'to frame ms':>11} {'p90':>7} {'round trip ms':>14} {'target':>8}")
    for label, algorithm, gpus, elements, keys, target, *setup in CASES:
        to_frame, round_trip = asyncio.run(measure(algorithm, gpus, elements, keys, args.presses,
                                                   *setup))
        median = statistics.median(to_frame) if to_frame else float("nan")
        p90 = statistics.quantiles(to_frame, n=10)[-1] if len(to_frame) > 1 else float("nan")
        verdict = "" if target is None else f"{target} {'ok' if median <= target else 'SLOW'}"
        frames = f"{median:>11.1f} {p90:>7.1f}" if to_frame else f"{'no frame':>11} {'':>7}"
        print(f"{label:<40} {frames} {statistics.median(round_trip):>14.1f} {verdict:>8}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
