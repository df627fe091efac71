"""Everything a first run on a CUDA machine should answer, in one command, one JSON line each.

    python benchmarks/gpu_check.py > $OUT/gpu.jsonl

runs, with CuPy on the visible devices: the environment (versions, devices), the race stress
(ring/master/naive, G = 8, N = 2²² + 3, int32 and float32, fused and streams, 3 repeats, bit
for bit against NumPy), the past-2³¹-elements run (uint8, G = 2 and 3; skipped with the reason
where device memory is short), the float corner cases (subnormals, signed zeros, NaN
payloads) and `ringsim bench --backend cupy`'s records; then a summary line. A failing check
prints its error and the rest still run. Exit status 0 when every check passed or was
skipped with its reason, 1 otherwise. Estimated (not yet measured) at 2–4 minutes on one
H200, mostly NumPy computing the reference results on the host.

    python benchmarks/gpu_check.py --standin

runs the same script on the CPU against tests/gpu/standin.py, a CuPy stand-in on NumPy, at
small sizes: it proves the script's plumbing works before a device exists. Every line it
prints says "standin": true and is NOT a GPU result.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

STANDIN_NOTE = "CuPy stand-in on NumPy (tests/gpu/standin.py): tests this script only, NOT a GPU result"


def checks(xp, small: bool):
    """(name, zero-argument callable returning records) for every check, in order."""
    from ringsim.studies import gpu_selfcheck as selfcheck
    from ringsim.studies.gpu_bench import cupy_cases
    if small:
        return [("environment", lambda: [selfcheck.environment(xp)]),
                ("race-stress", lambda: selfcheck.race_stress(xp, gpus=8, elements=2**10 + 3, repeats=3)),
                ("big-index", lambda: selfcheck.big_index(xp, elements=2**12 + 3)),
                ("float-specials", lambda: selfcheck.float_specials(xp, elements=67)),
                ("bench", lambda: cupy_cases(quick=True, xp=xp))]
    return [("environment", lambda: [selfcheck.environment(xp)]),
            ("race-stress", lambda: selfcheck.race_stress(xp)),
            ("big-index", lambda: selfcheck.big_index(xp)),
            ("float-specials", lambda: selfcheck.float_specials(xp)),
            ("bench", lambda: cupy_cases(quick=False, xp=xp))]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--standin", action="store_true",
                        help="run on the CPU against the CuPy stand-in (plumbing only, not results)")
    parser.add_argument("--devices", type=int, default=2,
                        help="stand-in devices (with --standin; default 2)")
    parser.add_argument("--only", nargs="*", help="run only these checks")
    args = parser.parse_args(argv)
    if args.standin:
        sys.path.insert(0, str(ROOT / "tests"))
        from gpu.standin import Cupy
        xp = Cupy(devices=args.devices)
    else:
        from ringsim.execute.backend import array_module
        from ringsim.core.errors import RingsimError
        from ringsim.execute.gpu.probe import kernel_problem
        try:
            xp = array_module("cupy")
        except RingsimError as error:
            print(json.dumps({"check": "environment", "ok": False, "error": str(error)}))
            return 1
        problem = kernel_problem(xp)
        if problem:
            print(json.dumps({"check": "environment", "ok": False, "error": problem}))
            return 1
    failed, counted = [], 0
    for name, run in checks(xp, small=args.standin):
        if args.only and name not in args.only:
            continue
        start = time.perf_counter()
        try:
            for record in run():
                record.setdefault("check", name)
                record["seconds_wall"] = round(time.perf_counter() - start, 3)
                if name == "bench":
                    record.setdefault("ok", record.get("correct", True))
                if args.standin:
                    record.update(standin=True, standin_note=STANDIN_NOTE)
                print(json.dumps(record), flush=True)
                counted += 1
                if record.get("ok") is False:
                    failed.append(name)
                start = time.perf_counter()
        except Exception as exc:  # report and go on: one broken check must not hide the rest
            lines = traceback.format_exception_only(type(exc), exc)
            print(json.dumps({"check": name, "ok": False, "error": lines[-1].strip(),
                              "where": traceback.extract_tb(exc.__traceback__)[-1].filename
                              + ":" + str(traceback.extract_tb(exc.__traceback__)[-1].lineno),
                              **({"standin": True} if args.standin else {})}), flush=True)
            failed.append(name)
    summary = {"check": "summary", "ok": not failed, "records": counted,
               "failed": sorted(set(failed))}
    if args.standin:
        summary.update(standin=True, standin_note=STANDIN_NOTE)
    print(json.dumps(summary), flush=True)
    return 0 if not failed else 1


if __name__ == "__main__":
    sys.exit(main())
