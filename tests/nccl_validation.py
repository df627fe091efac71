"""The NCCL model against published nccl-tests results (ringsim/studies/published/).

`python tests/nccl_validation.py` prints the markdown tables docs/cost.md carries (all-reduce,
then all-gather and reduce-scatter), and with `--docs` writes them there in place of the old
ones; the tests check the fraction within ±25% and that the doc's tables are these.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from ringsim.cost.nccl import nccl_choice  # noqa: E402
from ringsim.cost.nccl_ctas import with_ctas  # noqa: E402
from ringsim.cost.nccl_tuner import versions  # noqa: E402
from ringsim.studies import peers  # noqa: E402
from ringsim.studies.diagnose import DEFAULT_TOLERANCE  # noqa: E402

TOLERANCE = 0.25
SMALL = 1 << 20  # the sizes where a call's fixed costs, not its bandwidth, set the time


@dataclass(frozen=True)
class Check:
    """One published point beside the model: measured and predicted time (µs), NCCL's pick."""

    system: dict
    point: dict
    measured_us: float
    predicted_us: float
    algorithm: str
    protocol: str
    tables: str  # the NCCL release whose tuning tables the model used

    @property
    def ratio(self) -> float:
        """Predicted over measured time (1 is exact)."""
        return self.predicted_us / self.measured_us

    @property
    def healthy(self) -> bool:
        """Whether the source presents this system as working normally (the data file's rule)."""
        return self.system["health"] == "healthy"

    @property
    def collective(self) -> str:
        """The collective the point's run measured."""
        return peers.collective(self.system)

    @property
    def nccl(self) -> str:
        """The NCCL version the source states for this point, or '' where it states none."""
        return self.point.get("nccl", self.system.get("nccl", ""))

    @property
    def per_process(self) -> int | None:
        """GPUs one process drives (all_reduce_perf's `-g`), None where the source shows no command."""
        return self.system.get("gpus_per_process")

    @property
    def within(self) -> bool:
        """Within ±25% of the measurement."""
        return abs(self.ratio - 1) <= TOLERANCE


def checks(ran: str | None = "all-reduce") -> list[Check]:
    """Every point of the validation set of the collective `ran` (None: of every collective)
    with the model's prediction."""
    data = peers.data()
    systems = {s["id"]: s for s in data["system"]}
    found = []
    for p in data["point"]:
        s = systems[p["system"]]
        if ran is not None and peers.collective(s) != ran:
            continue
        g = s["gpus"]
        # The tuning tables of the NCCL the source ran where ringsim has them, else the model's.
        stated = p.get("nccl", s.get("nccl"))
        tables = stated if stated in versions() else versions()[0]
        # The run's NCCL_ALGO / NCCL_PROTO, where the source states them, restrict the pick.
        # One thread issues each call to the GPUs its process drives (`-g`; 1 where unstated),
        # and NCCL_MIN/MAX_NCHANNELS, NCCL_MIN/MAX_CTAS and NCCL_BUFFSIZE hold it where the
        # source set them.
        topology = peers.topology(s["topology"])
        channels = with_ctas(topology, g, tables, {"min_channels": s.get("min_channels"),
                                                   "max_channels": s.get("max_channels")},
                             min_ctas=s.get("min_ctas"), max_ctas=s.get("max_ctas"))
        choice = nccl_choice(topology, g, p["bytes"], peers.collective(s),
                             algo=p.get("algo"), proto=p.get("proto"), nccl=tables,
                             gpus_per_process=s.get("gpus_per_process", 1),
                             dtype=s.get("dtype", "float"), buffsize=s.get("buffsize"),
                             **channels)
        found.append(Check(s, p, peers.measured_seconds(p, g, peers.collective(s)) * 1e6,
                           choice.seconds * 1e6, choice.algorithm, choice.protocol, tables))
    return found


def fraction(found: list[Check]) -> float:
    """The share of points within ±25%."""
    return sum(c.within for c in found) / len(found)


def healthy(found: list[Check]) -> list[Check]:
    """The points from systems whose source does not report them misbehaving."""
    return [c for c in found if c.healthy]


def _health(c: Check) -> str:
    h = c.system["health"]
    return "healthy" if h == "healthy" else h.split(":")[0]


def _tables(found: list[Check], first: str = "system") -> list[str]:
    """One row per point, then one per machine (its points, how many within, the ratios)."""
    collective = first != "system"
    lines = [f"| {first} | health | {'collective | ' * collective}NCCL run (tables used) | GPUs | "
             "GPUs per process | size (B) | NCCL_ALGO | measured (µs) | NCCL model (µs) | "
             "model's pick | model / measured | within ±25% |",
             "| --- | --- | " + "--- | " * collective +
             "--- | ---: | ---: | ---: | --- | ---: | ---: | --- | ---: | :---: |"]
    for c in found:
        lines.append(f"| [{c.system['id']}]({c.system['source']}) | {_health(c)} | "
                     + f"{c.collective} | " * collective +
                     f"{c.nccl or '?'} ({c.tables}) | {c.system['gpus']} | "
                     f"{c.per_process or '?'} | {c.point['bytes']:,} | {c.point.get('algo', '')} | "
                     f"{c.measured_us:,.1f} | {c.predicted_us:,.1f} | "
                     f"{c.algorithm}/{c.protocol} | {c.ratio:.2f} | "
                     f"{'yes' if c.within else 'no'} |")
    by_source: dict[str, list[Check]] = {}
    for c in found:
        by_source.setdefault((c.system["source"], c.system["health"]), []).append(c)
    lines += ["", "| machine (source) | health | points | within ±25% | model / measured |",
              "| --- | --- | ---: | ---: | --- |"]
    for (source, _), group in by_source.items():
        ratios = [c.ratio for c in group]
        lines.append(f"| {group[0].system['hardware']} ({source}) | {_health(group[0])} | "
                     f"{len(group)} | {sum(c.within for c in group)} | "
                     f"{min(ratios):.2f} to {max(ratios):.2f} |")
    return lines


def markdown(found: list[Check]) -> str:
    """The all-reduce validation table docs/cost.md prints."""
    lines = _tables(found)
    good = healthy(found)
    lines.append("")
    # One process launching on several GPUs pays their launches one after another (docs/cost.md).
    small = [c for c in good if c.point["bytes"] <= SMALL]
    shared = [c for c in small if (c.per_process or 1) > 1]
    rest = [c for c in small if (c.per_process or 1) == 1]
    lines.append(f"Healthy points up to {SMALL >> 20} MiB from runs where one process drives "
                 f"several GPUs (`-g` > 1): {sum(c.within for c in shared)} of {len(shared)} "
                 f"within ±25%; the other healthy points up to {SMALL >> 20} MiB: "
                 f"{sum(c.within for c in rest)} of {len(rest)}.")
    lines.append("")
    # What diagnose would flag here: measured busbw short of the model's by more than its
    # default tolerance, i.e. the model's time below (1 - tolerance) of the measured.
    slow = [c for c in found if c.system["health"].startswith("reported slow")]
    flag = [c for c in found if c.ratio < 1 - DEFAULT_TOLERANCE]
    lines.append(f"`ringsim diagnose` (flagging busbw short of the model's by more than "
                 f"{DEFAULT_TOLERANCE:.0%}) would flag {sum(c in flag for c in good)} of the "
                 f"{len(good)} healthy points, on {_systems([c for c in good if c in flag])} of "
                 f"{_systems(good)} healthy systems, and {sum(c in flag for c in slow)} of the "
                 f"{len(slow)} points of systems their source reports slow, on "
                 f"{_systems([c for c in slow if c in flag])} of {_systems(slow)} such systems.")
    # Beside the other healthy published runs like it (diagnose's second yardstick).
    (g_have, g_over), (s_have, s_over) = _beside_peers(good), _beside_peers(slow)
    lines.append(f"Set beside the other published healthy runs like them, as `diagnose` does (at "
                 f"least two at that size, NCCL's own choice and settings, no tuner plugin), {g_over} of the {g_have} healthy "
                 f"points that have them take more than {1 + DEFAULT_TOLERANCE:.1f}× their "
                 f"median time ({_share(g_over, g_have)}), and {s_over} of the {s_have} such "
                 f"points of systems their source reports slow ({_share(s_over, s_have)}).")
    lines.append("")
    lines.append(f"Within ±25% on healthy systems (target 85%): {sum(c.within for c in good)} "
                 f"of {len(good)} points ({fraction(good):.0%}), from "
                 f"{len({c.system['id'] for c in good})} systems. On every point: "
                 f"{sum(c.within for c in found)} of {len(found)} ({fraction(found):.0%}), "
                 f"from {len({c.system['id'] for c in found})} systems.")
    return "\n".join(lines)


def markdown_others(found: list[Check]) -> str:
    """The table of the other collectives' points (all-gather, reduce-scatter) docs/cost.md
    prints, which the all-reduce fraction does not count."""
    lines = _tables(found, "system (other collectives)")
    good = healthy(found)
    each = "; ".join(f"{name} {sum(c.within for c in mine)} of {len(mine)}"
                     for name in sorted({c.collective for c in good})
                     for mine in [[c for c in good if c.collective == name]])
    lines += ["", f"Other collectives within ±25% on healthy systems: {sum(c.within for c in good)} "
                  f"of {len(good)} points ({_share(sum(c.within for c in good), len(good))}), from "
                  f"{_systems(good)} systems ({each}). On every point: "
                  f"{sum(c.within for c in found)} of {len(found)}, from {_systems(found)} systems."]
    return "\n".join(lines)


def others() -> list[Check]:
    """The points of every collective but all-reduce."""
    return [c for c in checks(None) if c.collective != "all-reduce"]


def _share(part: int, whole: int) -> str:
    return f"{part / whole:.0%}" if whole else "no such point"


def _beside_peers(found: list[Check]) -> tuple[int, int]:
    """Of these points (NCCL's own choice only, no tuner plugin: the runs diagnose sets beside
    others), how many have two or more other healthy published runs like their system at
    their size, and how many of those take more than (1 + diagnose's tolerance) × those runs'
    median time."""
    have = over = 0
    for c in found:
        if "algo" in c.point or "proto" in c.point or "tuner" in c.system:
            continue
        topo, g = peers.topology(c.system["topology"]), c.system["gpus"]
        theirs = [p for p in peers.peers(topo, g, topo.nodes(g), c.system.get("gpus_per_process", 1),
                                         c.collective, c.system.get("dtype", "float"))
                  if p.id != c.system["id"]]
        rows = peers.beside([(c.point["bytes"], c.measured_us / 1e6)], theirs)
        if rows and rows[0].systems > 1:
            have += 1
            over += rows[0].ratio > 1 + DEFAULT_TOLERANCE
    return have, over


def _systems(found: list[Check]) -> int:
    return len({c.system["id"] for c in found})


DOCS = HERE.parent / "docs" / "cost.md"
FIRST, LAST = "| system | health | NCCL run", "Within ±25% on healthy systems"
OTHERS_FIRST, OTHERS_LAST = "| system (other collectives) |", "Other collectives within ±25%"


def write_docs() -> None:
    """Replace the validation tables in docs/cost.md by the ones the data and model give now."""
    text = DOCS.read_text(encoding="utf-8")
    for first, last, made in ((FIRST, LAST, markdown(checks())),
                              (OTHERS_FIRST, OTHERS_LAST, markdown_others(others()))):
        start = text.index(first)
        end = text.index("\n", text.index(last, start))  # a table ends with its summary line
        text = text[:start] + made + text[end:]
    DOCS.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    if sys.argv[1:] == ["--docs"]:
        write_docs()
    else:
        print(markdown(checks()))
        print()
        print(markdown_others(others()))
