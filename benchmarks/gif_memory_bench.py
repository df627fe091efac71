"""Peak memory of `ringsim figure X.gif`, each run as its own process as a user runs it.

Targets: the 16-GPU ring's GIF within 250 MB, and (with --largest) the largest ring animation
the command accepts (58 GPUs: MAX_ANIMATED_CELLS) within 600 MB; Python's start-up and the SVG
frames drawn beforehand included. The GIF is written a frame at a time, so its pixels cost about
one frame's worth, whatever the number of steps.
Run: python benchmarks/gif_memory_bench.py [--largest]
"""

from __future__ import annotations

import argparse
import os
import tempfile

from ringsim.studies.bench import command_run

CASES = [(["-g", "16"], 250e6)]
LARGEST = (["-g", "58"], 600e6)  # 58² cells × 115 frames: the most a ring animation may hold


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--largest", action="store_true",
                        help="also the largest ring animation accepted (about a minute)")
    args = parser.parse_args()
    ok = True
    with tempfile.TemporaryDirectory() as folder:
        for flags, budget in CASES + ([LARGEST] if args.largest else []):
            run = command_run(["figure", os.path.join(folder, "ring.gif"), *flags])
            if run["max_rss"] is None:
                print("this system does not tell a process's peak memory")
                return 0
            within = run["max_rss"] <= budget
            ok &= within
            print(f"  figure ring.gif {' '.join(flags):<8} {run['max_rss'] / 1e6:6.0f} MB "
                  f"(budget {budget / 1e6:.0f} MB) {run['seconds']:6.1f} s  {'ok' if within else 'OVER'}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
