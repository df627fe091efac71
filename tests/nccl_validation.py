"""The NCCL model against published all_reduce_perf results (tests/data/nccl_measurements.toml).

`python tests/nccl_validation.py` prints the markdown table docs/cost.md carries, and with
`--docs` writes it there in place of the old one; the tests check the fraction within ±25% and
that the doc's table is this one.
"""

from __future__ import annotations

import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from ringsim.cost.nccl import nccl_choice  # noqa: E402
from ringsim.cost.topology import load, presets  # noqa: E402

DATA = HERE / "data" / "nccl_measurements.toml"
TOLERANCE = 0.25


@dataclass(frozen=True)
class Check:
    """One published point beside the model: measured and predicted time (µs), NCCL's pick."""

    system: dict
    point: dict
    measured_us: float
    predicted_us: float
    algorithm: str
    protocol: str

    @property
    def ratio(self) -> float:
        """Predicted over measured time (1 is exact)."""
        return self.predicted_us / self.measured_us

    @property
    def within(self) -> bool:
        """Within ±25% of the measurement."""
        return abs(self.ratio - 1) <= TOLERANCE


def _topology(name: str):
    return load(name if name in presets() else str(HERE / "data" / name))


def checks() -> list[Check]:
    """Every point of the validation set with the model's prediction."""
    data = tomllib.loads(DATA.read_text(encoding="utf-8"))
    systems = {s["id"]: s for s in data["system"]}
    found = []
    for p in data["point"]:
        s = systems[p["system"]]
        g = s["gpus"]
        choice = nccl_choice(_topology(s["topology"]), g, p["bytes"], algo=p.get("algo"))
        if "time_us" in p:
            measured = p["time_us"]
        else:  # busbw = size / time × 2(G−1)/G (nccl-tests doc/PERFORMANCE.md)
            measured = p["bytes"] / (p["busbw_GBps"] * 1e9 / (2 * (g - 1) / g)) * 1e6
        found.append(Check(s, p, measured, choice.seconds * 1e6, choice.algorithm,
                           choice.protocol))
    return found


def fraction(found: list[Check]) -> float:
    """The share of points within ±25%."""
    return sum(c.within for c in found) / len(found)


def markdown(found: list[Check]) -> str:
    """The validation table docs/cost.md prints."""
    lines = ["| system | GPUs | size (B) | NCCL_ALGO | measured (µs) | NCCL model (µs) | "
             "model's pick | model / measured | within ±25% |",
             "| --- | ---: | ---: | --- | ---: | ---: | --- | ---: | :---: |"]
    for c in found:
        lines.append(f"| [{c.system['id']}]({c.system['source']}) | {c.system['gpus']} | "
                     f"{c.point['bytes']:,} | {c.point.get('algo', '')} | "
                     f"{c.measured_us:,.1f} | {c.predicted_us:,.1f} | "
                     f"{c.algorithm}/{c.protocol} | {c.ratio:.2f} | "
                     f"{'yes' if c.within else 'no'} |")
    by_source: dict[str, list[Check]] = {}
    for c in found:
        by_source.setdefault(c.system["source"], []).append(c)
    lines += ["", "| machine (source) | points | within ±25% | model / measured |",
              "| --- | ---: | ---: | --- |"]
    for source, group in by_source.items():
        ratios = [c.ratio for c in group]
        lines.append(f"| {group[0].system['hardware']} ({source}) | {len(group)} | "
                     f"{sum(c.within for c in group)} | {min(ratios):.2f} to {max(ratios):.2f} |")
    lines.append("")
    lines.append(f"Within ±25%: {sum(c.within for c in found)} of {len(found)} points "
                 f"({fraction(found):.0%}), from {len(by_source)} machines.")
    return "\n".join(lines)


DOCS = HERE.parent / "docs" / "cost.md"
FIRST, LAST = "| system | GPUs | size (B)", " machines."


def write_docs() -> None:
    """Replace the validation table in docs/cost.md by the one the data and model give now."""
    text = DOCS.read_text(encoding="utf-8")
    start = text.index(FIRST)
    end = text.index(LAST, start) + len(LAST)
    DOCS.write_text(text[:start] + markdown(checks()) + text[end:], encoding="utf-8")


if __name__ == "__main__":
    if sys.argv[1:] == ["--docs"]:
        write_docs()
    else:
        print(markdown(checks()))
