"""`ringsim diagnose` run end to end on every published run, set beside its source's word.

`python tests/diagnose_published.py` writes each published system's points (one run per
NCCL_ALGO/NCCL_PROTO and release it was measured with) as nccl-tests prints them, diagnoses
it with its topology, GPUs, nodes, settings and release as docs/cost.md's validation prices
it, and counts by health how many runs diagnose calls short: a regime (latency- or
bandwidth-bound sizes) whose median busbw is short of the model's by more than the tolerance,
unless the rings or the published runs like it explain the shortfall.
"""

from __future__ import annotations

import contextlib
import io
import json
import statistics
import sys
import tempfile
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from nccl_pastes import perf_output  # noqa: E402

from ringsim.cli import main  # noqa: E402
from ringsim.cost.nccl_tuner import versions  # noqa: E402
from ringsim.studies import peers  # noqa: E402
from ringsim.studies.diagnose import DEFAULT_TOLERANCE  # noqa: E402
from ringsim.studies.diagnose_verdicts import rings_explain  # noqa: E402

SETTINGS = ("min_channels", "max_channels", "min_ctas", "max_ctas", "buffsize")
CLEARED = "not a fault of this run"  # diagnose's words where the published runs explain a flag


def runs() -> list[tuple[dict, str | None, str | None, str | None, list[dict]]]:
    """The published points grouped into runs: system, NCCL_ALGO, NCCL_PROTO, release."""
    data = peers.data()
    systems = {s["id"]: s for s in data["system"]}
    found: dict[tuple, list[dict]] = {}
    for p in data["point"]:
        s = systems[p["system"]]
        key = (s["id"], p.get("algo"), p.get("proto"), p.get("nccl", s.get("nccl")))
        found.setdefault(key, []).append(p)
    return [(systems[k[0]], *k[1:], v) for k, v in found.items()]


def diagnosis(system: dict, algo, proto, nccl, points: list[dict], folder: Path) -> dict:
    """diagnose --json's summary and size records for one published run."""
    g, ran = system["gpus"], peers.collective(system)
    topo = peers.topology(system["topology"])
    times = {p["bytes"]: peers.measured_seconds(p, g, ran) * 1e6 for p in points}
    paste = perf_output(folder / f"{system['id']}.txt", times, g, ran, system.get("dtype", "float"),
                        gpus_per_process=system.get("gpus_per_process", 1))
    where = system["topology"]
    argv = ["diagnose", str(paste), "--json", "--gpus", str(g), "--nodes", str(topo.nodes(g)),
            "--collective", ran, "--topology",
            where if "/" not in where else str(peers.PUBLISHED.joinpath(where))]
    argv += [*(["--algo", algo] if algo else []), *(["--proto", proto] if proto else []),
             *(["--nccl", nccl] if nccl in versions() else [])]
    for key in SETTINGS:
        if key in system:
            argv += [f"--{key.replace('_', '-')}", str(system[key])]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(argv) == 0, argv
    records = [json.loads(line) for line in out.getvalue().splitlines()]
    return {"summary": records[-1], "sizes": [r for r in records if r.get("type") == "size"]}


def called_short(found: dict) -> bool:
    """Whether diagnose calls the run short (the module's rule)."""
    summary, sizes = found["summary"], found["sizes"]
    medians = [statistics.median(ratios) for regime in ("latency", "bandwidth")
               for ratios in [[r["ratio"] for r in sizes
                               if r["regime"] == regime and r["ratio"] is not None]] if ratios]
    short = any(m < 1 - DEFAULT_TOLERANCE for m in medians)
    return (short and not rings_explain(summary["ring_check"])
            and not any(CLEARED in v for v in summary["verdicts"]))


def counts() -> Counter:
    """(health, collective, called short) → runs."""
    tally: Counter = Counter()
    with tempfile.TemporaryDirectory() as folder:
        for system, algo, proto, nccl, points in runs():
            found = diagnosis(system, algo, proto, nccl, points, Path(folder))
            health = system["health"].split(":")[0]
            tally[(health, peers.collective(system), called_short(found))] += 1
    return tally


if __name__ == "__main__":
    for (health, ran, short), n in sorted(counts().items()):
        print(f"{health:>13}  {ran:<14}  {'called short' if short else 'called healthy':<14}  {n}")
