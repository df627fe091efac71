"""Wall time of the simple commands, side by side: `ringsim lesson` (the list) against the rest.

Target: the course list takes at most 1.5× the median of the other simple commands (it reads
the lesson files' structure and computes no figure). Each command runs `--repeats` times,
interleaved, so a busy machine slows every command alike; the ratio is what is checked.
Run: python benchmarks/command_bench.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

SIMPLE = ["walk", "compare", "zero --params 7B", "overlap", "timeline"]
LISTING = "lesson"
TARGET = 1.5


def seconds(command: str) -> float:
    """One run of `python -m ringsim COMMAND`, output discarded."""
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "ringsim", *command.split()], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    times: dict[str, list[float]] = {c: [] for c in [LISTING, *SIMPLE]}
    for _ in range(args.repeats):
        for command in times:
            times[command].append(seconds(command))
    medians = {c: statistics.median(t) for c, t in times.items()}
    for command, median in medians.items():
        print(f"  {command:<20} {median * 1000:7.0f} ms")
    others = statistics.median(medians[c] for c in SIMPLE)
    ratio = medians[LISTING] / others
    verdict = "ok" if ratio <= TARGET else "SLOW"
    print(f"lesson list / median of the others: {ratio:.2f} (target ≤ {TARGET}) {verdict}")
    return 0 if ratio <= TARGET else 1


if __name__ == "__main__":
    raise SystemExit(main())
