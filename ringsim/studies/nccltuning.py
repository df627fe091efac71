"""ringsim's model set beside NCCL's own tuning output in a log (read by nccltuning_log.py):
the table cell by cell, the choices size by size, and what NCCL's own table says of the
measured bandwidth. Where ringsim's model of the machine disagrees with NCCL's, either the
topology file or ringsim's reading of NCCL is wrong, and the difference says which link or
rule to look at.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from ..core.naming import plural
from .nccltuning_log import Cell, Choice, Tuning


@dataclass(frozen=True)
class CellCheck:
    """One (algorithm, protocol) of a function: NCCL's printed cell beside the model's."""

    algorithm: str
    protocol: str
    logged: Cell
    modelled: Cell

    @property
    def agrees(self) -> bool:
        """Equal as NCCL prints them (one decimal); bandwidths 0 in both agree whatever the
        latency, since NCCL never runs what it has no bandwidth for."""
        (lat, bw), (mlat, mbw) = self.logged, self.modelled
        if bw == 0 or mbw == 0:
            return bw == 0 and round(mbw, 1) == 0
        return _same(lat, mlat) and _same(bw, mbw)


def _same(printed: float, value: float) -> bool:
    """The printed value is the model's rounded to one decimal (a rounding tie either way)."""
    return abs(printed - value) <= 0.05 + 1e-6 * abs(value)


def compare(logged: dict, modelled: dict, func: str = "AllReduce") -> list[CellCheck]:
    """Every cell of `func` the log printed, beside the model's (0/0 where it has none)."""
    return [CellCheck(a, p, logged[(f, a, p)], modelled.get((f, a, p), (0.0, 0.0)))
            for (f, a, p) in logged if f == func]


MAX_CHOICES = 64  # distinct sizes shown; NCCL logs every call


def distinct_choices(tuning: Tuning, func: str) -> list[Choice]:
    """The first logged choice of each size for `func`, smallest first, at most MAX_CHOICES."""
    seen: dict[int, Choice] = {}
    for c in tuning.choices:
        if c.func in (func, "") and c.nbytes not in seen:
            seen[c.nbytes] = c
    return [seen[n] for n in sorted(seen)][:MAX_CHOICES]


def beside_model(tuning: Tuning, topology, gpus: int, collective: str, nccl: str | None,
                 algo: str | None = None, proto: str | None = None,
                 whole_report: bool = False) -> tuple[list[str], dict]:
    """NCCL's own tuning table and choices from its log beside ringsim's model of the run:
    lines for the report, and the same as JSON. The model takes release `nccl` where given,
    else the log's where ringsim carries it, else its own; and the run's NCCL_ALGO and
    NCCL_PROTO (`algo`, `proto`) for its choices. `whole_report`: the same release prices
    the rest of the report, and the heading says so."""
    from ..cost.nccl import MAX_BYTES, max_threads, nccl_choices, tuning_table
    from ..cost.nccl_tuner import FUNCTIONS, release, versions
    func = FUNCTIONS.get(collective)
    if func is None or not (tuning.tables or tuning.choices):
        return [], {}
    ran = release(tuning.version) if tuning.version else None
    used = nccl or (ran if ran in versions() else versions()[0])
    release_words = (f"NCCL {used}'s tables, the release the log ran" if used == ran else
                     f"NCCL {used}'s tables; the log ran {ran or 'an unstated release'}")
    if whole_report:
        release_words += ", as in the rest of this report"
    lines, record = [], {"type": "nccl_tuning", "function": func, "model_tables": used,
                         "log_release": ran}
    if tuning.tables:
        table = tuning.tables[0]
        modelled = tuning_table(topology, gpus, used, algo, proto)  # as NCCL_ALGO/PROTO zero it
        checks = [c for c in compare(table, modelled, func) if c.logged[1] or c.modelled[1]]
        agree = sum(c.agrees for c in checks)
        lines.append(f"NCCL's own model as its log printed it ({func}), beside ringsim's "
                     f"({release_words}):")
        lines.append(f"  {'algorithm/protocol':>20}  {'NCCL: latency / algbw':>24}  "
                     f"{'ringsim: latency / algbw':>24}")
        for c in checks:
            lines.append(f"  {c.algorithm + '/' + c.protocol:>20}  {_cell(c.logged):>24}  "
                         f"{_cell(c.modelled):>24}{'' if c.agrees else '  ◀'}")
        # A ◀ is either side's: NCCL may have found other links than the topology gives, or
        # ringsim may read NCCL otherwise; the measured times tell which (expected_verdict).
        lines.append(f"  {agree} of {len(checks)} agree to the decimal NCCL prints"
                     + ("" if agree == len(checks) else "; ◀ where they differ: NCCL found "
                        "other links than the topology gives, or ringsim reads NCCL otherwise "
                        "(docs/cost.md lists its deviations)")
                     + (f"; the first of the log's {len(tuning.tables)} tables"
                        if len(tuning.tables) > 1 else ""))
        if tuning.unread:
            lines.append(f"  {plural(tuning.unread, 'cell')} of the log's tables "
                         f"{'is' if tuning.unread == 1 else 'are'} not two numbers from 0 up as "
                         "NCCL prints them (%8.1f/%6.1f), and left out")
        logged_threads = tuning.threads[0] if tuning.threads else {}
        if logged_threads:
            model_threads = max_threads(topology, gpus, used)
            differ = sorted(f"{a}/{p} {n} (ringsim {model_threads.get((a, p), 0)})"
                            for (a, p), n in logged_threads.items()
                            if model_threads.get((a, p), 0) != n)
            lines.append(f"  Max NThreads: {len(logged_threads) - len(differ)} of "
                         f"{len(logged_threads)} the same"
                         + (f"; NCCL's differ at {', '.join(differ[:4])}" if differ else ""))
            record["threads_same"] = not differ
        record["cells"] = [{"algorithm": c.algorithm, "protocol": c.protocol,
                            "nccl_latency": c.logged[0] * 1e-6, "nccl_algbw": c.logged[1] * 1e9,
                            "model_latency": c.modelled[0] * 1e-6,
                            "model_algbw": c.modelled[1] * 1e9, "agrees": c.agrees}
                           for c in checks]
    picks = []
    per_rank = gpus if func in ("AllGather", "ReduceScatter") else 1  # NCCL logs one rank's part
    # An empty call moves nothing, and the model has no choice for it to set beside NCCL's.
    shown = [c for c in distinct_choices(tuning, func) if 0 < c.nbytes * per_rank <= MAX_BYTES]
    models = nccl_choices(topology, gpus, [c.nbytes * per_rank for c in shown], collective,
                          algo, proto, nccl=used)
    for c, model in zip(shown, models):
        same = (model.algorithm, model.protocol) == (c.algorithm, c.protocol)
        picks.append({"bytes": c.nbytes * per_rank, "nccl": f"{c.algorithm}/{c.protocol}",
                      "nccl_channels": c.channels,
                      "model": f"{model.algorithm}/{model.protocol}",
                      "model_channels": model.channels, "same": same})
    if picks:
        from ..core.units import format_bytes
        same = sum(p["same"] for p in picks)
        counted = [p for p in picks if p["same"] and p["nccl_channels"]]
        alike = sum(p["nccl_channels"] == p["model_channels"] for p in counted)
        lines.append(f"NCCL's choices in the log, beside the model's: {same} of {len(picks)} "
                     "sizes the same algorithm and protocol"
                     + (f", {alike} of those {len(counted)} on as many channels"
                        if counted else ""))
        for p in picks:
            channels = f" on {p['nccl_channels']}" if p["nccl_channels"] else ""
            lines.append(f"  {format_bytes(p['bytes']):>8}  NCCL {p['nccl']}{channels}; "
                         f"model {p['model']} on {p['model_channels']}"
                         f"{'' if p['same'] else '  ◀'}")
        record["choices"] = picks
    return lines, record


def _cell(cell: Cell) -> str:
    latency, bandwidth = cell
    return f"{latency:.1f} us / {bandwidth:.1f} GB/s" if bandwidth else "none"


def expected(record: dict, smallest: int) -> dict | None:
    """What NCCL's own table rates the algorithm and protocol it runs at the large sizes:
    its logged choice at the largest size of at least `smallest` bytes, else the cell of its
    table with the most bandwidth (what it runs once latency no longer counts); None where
    the log has no such cell."""
    cells = {(c["algorithm"], c["protocol"]): c for c in record.get("cells", [])}
    picks = [p for p in record.get("choices", []) if p["bytes"] >= smallest]
    if picks:
        chosen = tuple(max(picks, key=lambda p: p["bytes"])["nccl"].split("/", 1))
        at = max(p["bytes"] for p in picks)
    else:
        chosen = max(cells, key=lambda k: cells[k]["nccl_algbw"], default=None)
        at = None
    cell = cells.get(chosen)
    if cell is None or not cell["nccl_algbw"]:
        return None
    return {"algorithm": "/".join(chosen), "at": at, "nccl_algbw": cell["nccl_algbw"],
            "model_algbw": cell["model_algbw"]}


def expected_verdict(report, factor: float, tolerance: str) -> str | None:
    """Where ringsim's model expects far more bandwidth than was measured but NCCL's own table
    in the log expected about what was measured: NCCL found less bandwidth on the machine than
    the topology gives, and the sentence says where to look (None otherwise). `report` is a
    diagnose.Report with its tuning record set, `factor` its busbw / algbw and `tolerance` its
    tolerance in words."""
    from ..core.units import format_bandwidth, format_bytes
    rows = [x for x in report.rows if x.regime == "bandwidth" and x.ratio is not None]
    tol = report.tolerance
    if not rows or statistics.median(x.ratio for x in rows) >= 1 - tol:
        return None
    found = expected(report.tuning_record, rows[0].bytes)
    if found is None:
        return None
    measured = report.measured.busbw
    if not measured or measured == float("inf"):
        measured = rows[-1].measured_busbw
    theirs = found["nccl_algbw"] * factor
    if abs(measured / theirs - 1) > tol:
        return None
    report.tuning_record["nccl_expected"] = {**found, "nccl_busbw": theirs,
                                             "measured_busbw": measured}
    which = (f"{found['algorithm']}, its choice at {format_bytes(found['at'])}"
             if found["at"] else f"{found['algorithm']}, the fastest in its table")
    said = (f"NCCL itself expected about this: its own table in the log rates {which}, at "
            f"{format_bandwidth(found['nccl_algbw'])} algbw, {format_bandwidth(theirs)} busbw, "
            f"and the run measured {format_bandwidth(measured)} ({measured / theirs:.0%} of "
            f"it, within {tolerance})")
    if found["model_algbw"] > found["nccl_algbw"] * (1 + tol):
        said += (f"; topology {report.topology} gives the same cell "
                 f"{format_bandwidth(found['model_algbw'])}, so NCCL found less bandwidth on "
                 "this machine than the topology describes: a NIC linked at a lower rate, fewer "
                 "NICs than GPUs, or GPUs that reach their NIC through PCIe switches or the CPU. "
                 "Look there (ibstat for each NIC's rate, nvidia-smi topo -m, "
                 "NCCL_DEBUG_SUBSYS=GRAPH for the bandwidths NCCL found), not at ringsim's "
                 "model of NCCL")
    else:
        said += ("; ringsim's model picks another algorithm there, which NCCL rated lower or "
                 "did not have on this machine (NVLS off or unavailable? NCCL_ALGO?)")
    return said
