"""Measured nccl-tests numbers beside NCCL's model, size by size: the report and `diagnose`.

For every size the measured time and bus bandwidth (nccl-tests' definitions, doc/PERFORMANCE.md:
busbw = algbw × 2(n−1)/n for all-reduce, × (n−1)/n for all-gather and reduce-scatter, × 1 for
broadcast) stand beside the NCCL model's prediction (ringsim.studies.predict: the algorithm and
protocol NCCL's tuner picks, and their time). A size is flagged when it reaches less than
(1 − tolerance) of the modelled bus bandwidth. Both curves are summed up as t(S) ≈ L + S·f/B, a
per-call latency L (the flat start of the curve) and a bus bandwidth B (Theil–Sen slope of the
sizes well past L), which split the sizes into latency-bound and bandwidth-bound ones. What the
paste holds and needs is read in diagnose_inputs; NCCL's model held to the run as it ran, in
diagnose_model; what the gap says, in diagnose_verdicts.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

import numpy as np

from ..core.errors import RingsimError
from ..core.fit import theil_sen
from ..core.naming import plural
from ..core.units import format_bytes
from . import diagnose_inputs as inputs
from . import nccl_settings, nccl_unmodelled, peers, slowsizes
from .diagnose_model import RunModel, run_model
from .diagnose_verdicts import checks, percent, ring_check, verdicts
from .ncclrun import without_nvls
from .nccltests import DTYPES, OTHER_NAMES, SHARE_COUNT, Output, bus_factor

DEFAULT_TOLERANCE = 0.3
LARGE_PROBE = 1 << 30  # a call this large is mostly bytes on any machine ringsim models


@dataclass(frozen=True)
class SizeRow:
    """One size: measured beside modelled, in seconds and bytes/s."""

    bytes: int
    count: int
    dtype: str
    measured_seconds: float
    measured_busbw: float
    predicted_seconds: float | None
    predicted_busbw: float | None
    ratio: float | None  # measured / predicted busbw
    flag: bool
    algorithm: str | None
    protocol: str | None
    regime: str  # "latency" or "bandwidth"
    wrong: float | None
    in_place_seconds: float | None = None  # nccl-tests' in-place time, where it printed one
    channels: int | None = None  # the channels the model's pick runs on


@dataclass(frozen=True)
class Curve:
    """t(S) ≈ latency + S·f/busbw, fitted to one curve."""

    latency: float
    busbw: float | None  # None when too few sizes lie past the latency

    def regime(self, nbytes: float, factor: float) -> str:
        """'latency' where moving the bytes takes less than the latency, else 'bandwidth'."""
        if self.busbw is None or self.busbw == math.inf:
            return "latency"
        return "latency" if nbytes * factor / self.busbw < self.latency else "bandwidth"


@dataclass
class Report:
    """The whole diagnosis of one nccl-tests output."""

    source: str
    gpus: int
    nodes: int
    gpu: str | None
    hosts: list[str]
    topology: str
    topology_reason: str
    collective: str
    tolerance: float
    rows: list[SizeRow]
    measured: Curve
    modelled: Curve | None
    verdicts: list[str] = field(default_factory=list)
    checks: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    ring_check: dict | None = None  # the flagged sizes against the model held to rings
    algo: str | None = None  # the NCCL_ALGO the model was held to (given, or in the paste)
    proto: str | None = None  # likewise NCCL_PROTO
    nccl: str | None = None  # the NCCL release whose tuning tables priced it (None: the model's own)
    nvls_off: str | None = None  # the line saying NCCL ran without NVLS, which the model follows
    release_note: str | None = None  # the note naming the NCCL release the model used, if any
    in_place: dict | None = None  # where one of nccl-tests' two time columns is slower (slowsizes)
    dips: list[int] = field(default_factory=list)  # flagged sizes slower than both neighbours
    gpus_per_process: int = 1  # GPUs one process drove (the header's nGpus), as modelled
    min_channels: int | None = None  # the NCCL_MIN_NCHANNELS the model was held to
    max_channels: int | None = None  # likewise NCCL_MAX_NCHANNELS
    nvls_channels: int | None = None  # likewise NCCL_NVLS_NCHANNELS
    # every setting beyond NCCL_ALGO/NCCL_PROTO that held the model, as it was set
    # ('NCCL_MAX_CTAS=4', 'NCCL_BUFFSIZE=16777216')
    settings: tuple[str, ...] = ()
    redop: str = "sum"  # the reduction the run made (nccl-tests' -o), as the model took it
    tuning: list[str] = field(default_factory=list)  # NCCL's own tuning output beside the model's
    tuning_record: dict = field(default_factory=dict)  # the same as JSON
    peers: list = field(default_factory=list)  # published healthy runs like this one (peers.Peer)
    peer_rows: list = field(default_factory=list)  # this run's sizes beside theirs (peers.PeerRow)
    peer_likeness: str = ""  # what the published runs share with this one, besides G and nodes

    @property
    def host_seconds(self) -> float:
        """The model's floor for one process's thread to issue a call (0 with one GPU each)."""
        if self.gpus_per_process == 1:
            return 0.0
        from ..cost.nccl import host_seconds
        return host_seconds(self.gpus_per_process)

    def header(self) -> dict:
        """The run as JSON: G, nodes, GPU, topology, fits and verdicts."""
        return {"type": "summary", "source": self.source, "gpus": self.gpus, "nodes": self.nodes,
                "gpu": self.gpu, "hosts": self.hosts, "topology": self.topology,
                "topology_reason": self.topology_reason, "collective": self.collective,
                "tolerance_percent": round(self.tolerance * 100, 12),
                "measured_latency": self.measured.latency,
                "measured_fit_busbw": self.measured.busbw,
                "model_latency": self.modelled.latency if self.modelled else None,
                "model_fit_busbw": self.modelled.busbw if self.modelled else None,
                "flagged_sizes": [r.bytes for r in self.rows if r.flag],
                "ring_check": self.ring_check, "algo": self.algo, "proto": self.proto,
                "nccl_tables": self.nccl, "nvls_off": self.nvls_off,
                "min_channels": self.min_channels, "max_channels": self.max_channels,
                "nvls_channels": self.nvls_channels,
                "in_place_check": self.in_place, "dips": self.dips,
                "gpus_per_process": self.gpus_per_process,
                "host_seconds": self.host_seconds,
                "published_peers": [{"id": p.id, "hardware": p.hardware, "source": p.source,
                                     "gpus_per_process": p.gpus_per_process} for p in self.peers],
                "published_sizes": [row.to_json() for row in self.peer_rows],
                "verdicts": self.verdicts, "checks": self.checks, "notes": self.notes}

    def series(self) -> dict[str, list[tuple[float, float]]]:
        """Measured and modelled busbw (GB/s) over bytes, the points each plot draws."""
        measured = [(float(x.bytes), x.measured_busbw / 1e9) for x in self.rows if x.measured_busbw > 0]
        modelled = [(float(x.bytes), x.predicted_busbw / 1e9) for x in self.rows if x.predicted_busbw]
        return {"measured busbw": measured, f"NCCL model ({self.topology})": modelled}

    def ticks(self, count: int = 6) -> list[tuple[float, str]]:
        """About `count` of the measured sizes, written as bytes, for a plot's x axis."""
        sizes = [x.bytes for x in self.rows]
        step = max(1, math.ceil(len(sizes) / count))
        return [(float(n), format_bytes(n)) for n in sizes[::step]]

    def svg(self) -> str:
        """Measured vs modelled busbw over size as a log-log SVG chart."""
        from .svgplot import loglog_svg
        try:
            return loglog_svg(f"{self.collective} busbw: measured vs NCCL's model, {self.gpus} GPUs, "
                              f"{self.topology}", "bytes", "busbw (GB/s)", self.series(), self.ticks())
        except ValueError:
            raise RingsimError("nothing to plot: every busbw is 0") from None

    def _repr_svg_(self) -> str | None:
        """Jupyter shows the diagnosis as its measured-vs-modelled busbw chart."""
        try:
            return self.svg()
        except RingsimError:
            return None

    @property
    def model_algo(self) -> str | None:
        """The NCCL_ALGO the model runs: the one held to, less NVLS where the run had none."""
        return without_nvls(self.algo) if self.nvls_off else self.algo

    def tuning_from(self, tuning, topology) -> None:
        """Set NCCL's own tuning table and choices (`tuning`, nccltuning_log.parse_all of the
        paste and its log) beside the model's (nccltuning.beside_model), and add to the verdict
        what NCCL's own numbers say of the measured ones (nccltuning.expected_verdict)."""
        from . import nccltuning
        self.tuning, self.tuning_record = nccltuning.beside_model(
            tuning, topology, self.gpus, self.collective, self.nccl,
            self.model_algo, self.proto, whole_report=True)
        if self.tuning_record.get("cells") and self.release_note in self.notes:
            self.notes.remove(self.release_note)  # the tuning block's heading names the release
        said = nccltuning.expected_verdict(
            self, float(bus_factor(self.collective, self.gpus)),
            percent(self.tolerance)) if self.tuning_record else None
        if said:
            # right after the bandwidth-bound sizes' sentence, whose shortfall it explains
            at = next((i + 1 for i, v in enumerate(self.verdicts)
                       if v.startswith("Bandwidth-bound")), len(self.verdicts))
            self.verdicts.insert(at, said)

    def records(self) -> list[dict]:
        """One JSON object per size (with gpus, nodes, gpu and topology on each)."""
        common = {"gpus": self.gpus, "nodes": self.nodes, "gpu": self.gpu, "topology": self.topology}
        return [{"type": "size", **asdict(r), **common} for r in self.rows]


def fit_curve(nbytes: list[int], seconds: list[float], factor: float) -> Curve:
    """The per-call latency (median of the sizes within 1.5× the fastest time) and the bus
    bandwidth (Theil–Sen slope of the sizes slower than 4× that latency)."""
    t = np.asarray(seconds, dtype=float)
    s = np.asarray(nbytes, dtype=float) * factor
    fastest = float(t.min())
    latency = float(np.median(t[t <= 1.5 * fastest]))
    return Curve(latency, fit_busbw(s, t, 4 * latency))


def fit_busbw(bus_bytes, seconds, above: float) -> float | None:
    """The bus bandwidth of the sizes slower than `above` seconds (Theil–Sen slope of time
    over bus bytes); None where fewer than two are."""
    past = seconds > above
    if past.sum() < 2:
        return None
    _, slope = theil_sen(bus_bytes[past], seconds[past])
    return math.inf if slope == 0 else 1 / slope


def _check_layout(output: Output, topology, gpus: int, nodes: int, assumed: bool,
                  notes: list[str]) -> None:
    """Refuse a run the topology cannot hold as it ran, in one line: the model places G GPUs
    on the topology's nodes in order (the last one possibly in part), so the run's nodes must
    be those (a part of one node is one node), and where the header names its hosts, each
    must hold what the topology places there."""
    per = topology.gpus_per_node
    if per is None:
        if topology.nodes(gpus) != nodes:
            notes.append(f"topology {topology.name} places {gpus} GPUs in "
                         f"{plural(topology.nodes(gpus), 'node')}; the run used {nodes}")
        return
    placed = [topology.node_size(i, gpus) for i in range(topology.nodes(gpus))]
    held = {}
    for r in output.ranks:
        held[r.host] = held.get(r.host, 0) + 1
    # A header with rank lines left out (renumbered, or fewer than the run's G) cannot say what
    # each host held.
    whole = output.ranks_numbered_in_order and output.gpus == gpus
    counts = sorted(held.values(), reverse=True) if held and whole else None
    if assumed or (len(placed) == nodes and counts in (None, placed)):
        from ..cost.nccl_notes import last_node_note  # the model's, imported once the paste has passed
        if (last := last_node_note(topology, gpus)) is not None:
            notes.append(f"{last}; the run's GPUs as topology {topology.name} places them in order")
        return
    even = gpus % nodes == 0 and (counts is None or len(set(counts)) == 1)
    ran = (f"{gpus:,} in one node" if nodes == 1 else
           f"{gpus // nodes:,} per node on {nodes:,} nodes" if even else
           f"{', '.join(map(str, counts or []))} on its {nodes:,} nodes" if counts else
           f"{gpus:,} on {nodes:,} nodes")
    want = f"gpus_per_node = {gpus // nodes}" if even else "its nodes' GPUs"
    raise RingsimError(f"topology {topology.name} has {plural(per, 'GPU')} per node but the run "
                       f"has {ran}: give a topology with {want}")


def diagnose(output: Output, topology, predict, *, gpus: int | None = None,
             nodes: int | None = None, collective: str | None = None,
             tolerance: float = DEFAULT_TOLERANCE, topology_reason: str = "",
             algo: str | None = None, proto: str | None = None,
             nccl: str | None = None, ran: str | None = None,
             nvls_off: str | None = None, min_channels: int | None = None,
             max_channels: int | None = None, nvls_channels: int | None = None,
             **settings: int | None) -> Report:
    """Compare every measured size with `predict(topology, G, sizes, collective, algo, proto,
    dtype=…)`; algo and proto default to the NCCL_ALGO / NCCL_PROTO the paste shows; `nccl`,
    the release whose tuning tables price it (passed on as predict's `nccl=`), to the
    release the model follows. `ran` and `nvls_off` are what the run's NCCL log says where
    the paste does not: the release that ran, and its line saying NVLS was off (nccltests.
    nvls_off), after which the model leaves NVLS and NVLSTree out as NCCL did.
    `min_channels` / `max_channels` / `nvls_channels` (NCCL_MIN_NCHANNELS / NCCL_MAX_NCHANNELS
    / NCCL_NVLS_NCHANNELS) default to what the paste shows, as do `settings`: min_ctas,
    max_ctas, nthreads, ll128_nthreads and buffsize (NCCL_MIN_CTAS … NCCL_BUFFSIZE)."""
    gpus, nodes, collective, rows, notes = _checked_run(output, topology, gpus, nodes, collective,
                                                        tolerance)
    factor = float(bus_factor(collective, gpus))
    dtype = OTHER_NAMES.get(rows[0].dtype, rows[0].dtype)
    unknown = set(settings) - set(nccl_settings.NAMES)
    if unknown:
        raise RingsimError(f"diagnose takes no setting {sorted(unknown)[0][:40]!r}")
    given = {"min_channels": min_channels, "max_channels": max_channels,
             "nvls_channels": nvls_channels, **settings}
    model = run_model(output, topology, predict, gpus, nodes, collective, rows, dtype, notes,
                   algo, proto, nccl, ran, nvls_off, given)
    notes += nccl_unmodelled.notes(output.unmodelled) + nccl_unmodelled.header_notes(
        output.run_options)
    measured, modelled, split = _curves(rows, model, topology, gpus, collective, dtype, factor,
                                        notes)
    out_rows = _size_rows(rows, model.predicted, factor, tolerance, split)
    report = Report(output.name, gpus, nodes, output.gpu_names[0] if output.gpu_names else None,
                    output.hosts, topology.name, topology_reason, collective, tolerance, out_rows,
                    measured, modelled, notes=notes, algo=model.algo, proto=model.proto, nccl=nccl,
                    gpus_per_process=model.per_process, nvls_off=model.nvls_off,
                    release_note=model.release_note, settings=model.settings, redop=model.redop,
                    **{key: value for key, value in model.limits.items() if key.endswith("_channels")})
    report.in_place = slowsizes.in_place_check(out_rows, tolerance)
    report.dips = [r.bytes for r in slowsizes.dips(out_rows, tolerance)]
    if model.algo is None and nodes == 2 and gpus > nodes and _not_rings(out_rows):
        report.ring_check = ring_check(out_rows, model.price(topology, gpus, [r.bytes for r in rows],
                                                             collective=collective, algo="Ring",
                                                             proto=model.proto, dtype=dtype),
                                       tolerance)
    _peer_notes(report, topology, dtype)
    report.verdicts = verdicts(report)
    report.checks = checks(report)
    return report


def _checked_run(output: Output, topology, gpus: int | None, nodes: int | None,
                 collective: str | None, tolerance: float) -> tuple[int, int, str, list, list[str]]:
    """The run the paste shows, checked before anything is priced: G, its nodes, the test, the
    rows that can be read, and the notes on what was read or assumed. A paste the topology
    cannot hold as it ran, or that fits no one test, is refused in one line."""
    if not 0 < tolerance < 1:
        raise RingsimError(f"the tolerance must be above 0% and below 100%, got {percent(tolerance)}")
    inputs.check_one_test(output)
    gpus, nodes, notes = inputs.scenario(output, gpus, nodes, collective)
    named = collective is not None or output.collective is not None
    if collective is not None:
        inputs.check_collective(output, gpus, collective)
        inputs.check_gpus(output, gpus, collective, named)
    # a count column that fits no test on G ranks is said before a test is read from it
    inputs.check_count(output, gpus)
    if collective is None:
        collective = inputs.which_test(output, gpus, notes)
        inputs.check_gpus(output, gpus, collective, named)
    notes += inputs.root_notes(output, gpus, collective)
    rows, more = inputs.measured_rows(output)
    notes += more
    assumed = nodes is None
    if assumed:
        # Nothing says how the run's GPUs sat: as the topology places them, in order.
        nodes = topology.nodes(gpus)
        named = "the output names only some of its hosts" if output.hosts else "no host names in the output"
        notes.append(f"{named}: {plural(nodes, 'node')} assumed, as topology "
                     f"{topology.name} places {plural(gpus, 'GPU')} (give --nodes M)")
    _check_layout(output, topology, gpus, nodes, assumed, notes)
    return gpus, nodes, collective, rows, notes


def _curves(rows: list, model: RunModel, topology, gpus: int, collective: str, dtype: str,
            factor: float, notes: list[str]) -> tuple[Curve, Curve | None, Curve]:
    """The measured curve, the modelled one (None where no size is priced), and the one that
    splits the sizes into latency- and bandwidth-bound; a note where the paste starts too
    large to show the per-call latency."""
    predict, predicted, algo, proto = model.price, model.predicted, model.algo, model.proto
    measured = fit_curve([r.bytes for r in rows], [r.seconds for r in rows], factor)
    if rows[0].bytes > inputs.SMALLEST_FOR_LATENCY:
        notes.append(f"the output starts at {format_bytes(rows[0].bytes)}: the fitted per-call "
                     "latency is only an upper bound (run from -b 8 to see it)")
    # a size nccl-tests would round down to an empty call has no modelled time (predict)
    priced = [p for p in predicted if p.seconds]
    modelled = fit_curve([p.bytes for p in priced], [p.seconds for p in priced], factor) if priced else None
    split = measured
    if rows[0].bytes > inputs.SMALLEST_FOR_LATENCY:
        # No size of the paste shows the per-call latency, so the fitted one is the time of its
        # smallest size; splitting there would call every size but that one "latency-bound".
        # The model's time for the smallest call nccl-tests makes is the per-call latency the
        # split needs: one element, or for all-gather and reduce-scatter a share of 16 bytes
        # per GPU (fewer is rounded down to an empty call, which NCCL discards).
        width = DTYPES.get(dtype, 4)
        least = max(width, 16) * gpus if collective in SHARE_COUNT else width
        probe = predict(topology, gpus, [least], collective=collective,
                        algo=algo, proto=proto, dtype=dtype)[0]
        modelled = Curve(probe.seconds, modelled.busbw if modelled else None)
        if measured.busbw is None:
            # The paste's smallest time stood in for the latency, so no size was 4× past it;
            # past 4× the model's per-call latency the sizes are bytes, and they give the slope.
            measured = Curve(measured.latency, fit_busbw(
                np.asarray([r.bytes for r in rows], dtype=float) * factor,
                np.asarray([r.seconds for r in rows], dtype=float), 4 * probe.seconds))
        split = Curve(probe.seconds, measured.busbw or modelled.busbw)
    if split.busbw is None:
        # Too few sizes to fit a bandwidth (one 1 GiB row, or -b 1G -e 8G): the model's bus
        # bandwidth for a call large enough to be mostly bytes says which sizes are bytes too,
        # so that 1 GiB is not "latency-bound" and 128 B is not "bandwidth-bound".
        big = predict(topology, gpus, [max(LARGE_PROBE, rows[-1].bytes)], collective=collective,
                      algo=algo, proto=proto, dtype=dtype)[0]
        split = Curve(split.latency, big.busbw or None)
    return measured, modelled, split


def _size_rows(rows: list, predicted: list, factor: float, tolerance: float,
               split: Curve) -> list[SizeRow]:
    """Each measured size beside the model's, flagged where it reaches less than (1 − tolerance)
    of the modelled bus bandwidth, and called latency- or bandwidth-bound by `split`."""
    out_rows = []
    for row, model in zip(rows, predicted):
        bus = row.bytes / row.seconds * factor
        ratio = bus / model.busbw if model.busbw else None
        out_rows.append(SizeRow(row.bytes, row.count, row.dtype, row.seconds, bus, model.seconds,
                                model.busbw, ratio, ratio is not None and ratio < 1 - tolerance,
                                model.algorithm, model.protocol, split.regime(row.bytes, factor),
                                row.wrong, row.in_place_seconds, model.channels))
    return out_rows


def _peer_notes(report: Report, topology, dtype: str) -> None:
    """Set the published runs like this one beside it (report.peers), or say in the notes why
    they are not: the paste is one of them forced or unhealthy, or this run was held to an
    algorithm or ran without NVLS where they let NCCL choose."""
    notes, gpus, nodes = report.notes, report.gpus, report.nodes
    per_process, collective, nvls_off = report.gpus_per_process, report.collective, report.nvls_off
    held_to = ", ".join([f"{name}={value}" for name, value in
                         (("NCCL_ALGO", report.algo), ("NCCL_PROTO", report.proto))
                         if value is not None] + list(report.settings))
    mine = {r.bytes: r.measured_seconds for r in report.rows}
    copy = peers.copy_of(gpus, nodes, per_process, dtype, collective, mine)
    found = peers.peers(topology, gpus, nodes, per_process, collective, dtype)
    if copy is not None and (copy.settings or copy.health != "healthy"):
        notes.append(copy_note(copy, held_to))
        if copy.settings and not held_to:
            found = []  # the paste alone does not show its settings: no runs NCCL chose for
    if found and held_to:
        # The published runs let NCCL choose: a run held to one algorithm is not like them.
        notes.append(f"this run was held to {held_to}, and the published runs like it let NCCL "
                     "choose, so they are not set beside it")
    elif found and report.redop != "sum":
        # The published runs summed: a max or a product runs other algorithms (no NVLS for
        # a float's max) and reduces at another speed.
        notes.append(f"this run reduced with {report.redop}, and the published runs like it "
                     "summed, so they are not set beside it")
    elif found and nvls_off:
        # Their machines may have run NVLS, which this one could not: not like it either.
        notes.append("this run had no NVLS, and the published runs like it may have used it, so "
                     "they are not set beside it")
    elif found:
        itself = [p for p in found if peers.same_run(p, mine)]
        notes += [f"this run is the published {p.id} ({p.source}): it is not set beside itself"
                  for p in itself]
        report.peers = [p for p in found if p not in itself]
        report.peer_rows = peers.beside(sorted(mine.items()), report.peers)
        report.peer_likeness = peers.likeness(topology, nodes, dtype)


def copy_note(copy: peers.Copy, held_to: str) -> str:
    """The note on a paste that is a published run forced, tuned or not healthy: what it ran
    with, the flags that hold the model to it, and its source's word on its health."""
    words = f"this run is the published {copy.id} ({copy.source})"
    if copy.settings:
        words += f", which its source ran with {copy.settings}"
        flags = " ".join(f"{flag} {value}" for flag, value in (
            ("--algo", copy.algo), ("--proto", copy.proto),
            *((f"--{key.replace('_', '-')}", value) for key, value in copy.held)) if value)
        if not held_to:
            words += (": the paste does not show it, "
                      + (f"{flags} holds the model to it, " if flags else "")
                      + "and the published runs where NCCL chose are not set beside it")
        if copy.tuner:
            words += " (ringsim models no tuner plugin)"
    if copy.health != "healthy":
        words += f"; its source: {copy.health}"
    return words


def _not_rings(rows: list[SizeRow]) -> bool:
    """Whether the model runs anything but rings at a flagged bandwidth-bound size: where it
    runs rings already, holding it to NCCL_ALGO=Ring would change nothing."""
    return any(r.flag and r.regime == "bandwidth" and r.algorithm != "Ring" for r in rows)


