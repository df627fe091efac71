"""Measured nccl-tests numbers beside NCCL's model, size by size, and what the gap says.

For every size the measured time and bus bandwidth (nccl-tests' definitions, doc/PERFORMANCE.md:
busbw = algbw × 2(n−1)/n for all-reduce, × (n−1)/n for all-gather and reduce-scatter, × 1 for
broadcast) stand beside the NCCL model's prediction (ringsim.studies.predict: the algorithm and
protocol NCCL's tuner picks, and their time). A size is flagged when it reaches less than
(1 − tolerance) of the modelled bus bandwidth. The measured curve itself is summed up as
t(S) ≈ L + S·f/B — a per-call latency L (the flat start of the curve) and a bus bandwidth B
(Theil–Sen slope of the sizes well past L) — and the model's curve the same way, so that the
verdict can say which regime falls short: the latency-bound sizes (launch, proxy, network
latency) or the bandwidth-bound ones (link or NIC rate, fewer NICs than GPUs, a NIC on the
other CPU socket, no GPUDirect RDMA, PCIe or CPU links).
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import asdict, dataclass, field
from fractions import Fraction

import numpy as np

from ..core.errors import RingsimError
from ..core.fit import theil_sen
from ..core.naming import plural
from ..core.units import format_bandwidth, format_bytes, format_seconds
from . import peers, slowsizes
from .ncclrun import no_nvls, without_nvls
from .nccltests import (DTYPES, MAX_ROWS, ROOTED, SHARE_COUNT, TESTS, Output, Row,
                        test_from_rows)

DEFAULT_TOLERANCE = 0.3
# Below this size every NCCL all-reduce is dominated by its per-call cost (LL's range); a paste
# that starts above it does not show the latency.
SMALLEST_FOR_LATENCY = 64 * 1024
# GPU model names as nccl-tests prints them (cudaDeviceProp.name: "NVIDIA H100 80GB HBM3",
# "NVIDIA A100-SXM4-80GB") → the preset of the 8-GPU NVSwitch server they come in, matched as
# whole words: a GH200 (Grace Hopper) is no DGX H200. PCIe and NVL cards sit in servers of
# every shape, so those names pick no preset.
GPU_PRESETS = (("H200", "dgx-h200"), ("H100", "dgx-h100"), ("A100", "dgx-a100"))
NOT_SXM = ("PCIE", "NVL")
# NCCL turns GPUDirect RDMA on only while the GPU-to-NIC path is no longer than PXB (through PCIe
# switches, not the CPU) unless NCCL_NET_GDR_LEVEL says otherwise (NVIDIA/nccl
# src/graph/paths.cc, ncclTopoCheckGdr: `int netGdrLevel = PATH_PXB;`). These two settings
# let it reach through the CPU's host bridge (PHB) or across CPU sockets (SYS).
GDR_BEYOND_DEFAULT = ("PHB", "SYS")
# `NCCL_NET_GDR_LEVEL set by environment to SYS` (NCCL's echo) or `NCCL_NET_GDR_LEVEL=SYS`
_GDR_LEVEL = re.compile(r"\bNCCL_NET_GDR_LEVEL(?:( set by environment to )|=)([A-Za-z0-9]+)")
# NCCL names the network plugin it chose once per process: "NCCL INFO Using network IB",
# "… Using network Socket", "… Using network AWS Libfabric" (src/init.cc, ncclNetInit).
_NETWORK = re.compile(r"\bNCCL INFO Using network ([A-Za-z][\w ]{0,40}?)\s*$")
# The collectives NCCL's model prices (studies.predict), and the nccl-tests binary of each test.
PRICED = ("all-reduce", "all-gather", "reduce-scatter", "broadcast", "reduce")
PERF = {name: f"{binary}_perf" for binary, name in TESTS.items()}
PERF["gather"] = "gather_perf or scatter_perf"  # the rows of the two look alike
PREDICT_AT_ONCE = 1000  # predict prices at most this many sizes a call


def percent(fraction: float) -> str:
    """A tolerance as the percentage it was given: 0.3 → '30%', 0.005 → '0.5%'."""
    return f"{fraction * 100:.6g}%"


LARGE_PROBE = 1 << 30  # a call this large is mostly bytes on any machine ringsim models


def bus_factor(collective: str, gpus: int) -> Fraction:
    """nccl-tests' busbw / algbw for a collective on n ranks (doc/PERFORMANCE.md)."""
    n = gpus
    if collective == "all-reduce":
        return Fraction(2 * (n - 1), n)
    if collective in ("all-gather", "reduce-scatter", "all-to-all"):
        return Fraction(n - 1, n)
    return Fraction(1)


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
        """Set NCCL's own tuning table and choices (`tuning`, nccltuning.parse_all of the paste
        and its log) beside the model's (nccltuning.beside_model), and add to the verdict what
        NCCL's own numbers say of the measured ones (nccltuning.expected_verdict)."""
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


def preset_for(gpu: str | None, nodes: int, available: list[str]) -> tuple[str, str]:
    """The preset that models the header's GPU, and why; a one-line error when none fits."""
    found = _preset(gpu, available)
    if found is not None:
        return found, f"the header's GPU is {gpu}: preset {found}"
    named = f"the header's GPU ({gpu})" if gpu else "the output names no GPU (no '# Rank' lines), so it"
    raise RingsimError(f"{named} matches no topology preset ({', '.join(available)}): "
                       + _topology_request(gpu))


def _preset(gpu: str | None, available: list[str]) -> str | None:
    """The preset that models a GPU of this name, None where none does."""
    name = (gpu or "").upper()
    for key, preset in GPU_PRESETS:
        whole = re.search(rf"(?<![A-Z0-9]){key}(?![A-Z0-9])", name)
        if whole and not any(word in name for word in NOT_SXM) and preset in available:
            return preset
    return None


def _topology_request(gpu: str | None) -> str:
    """What to give in place of a preset: --topology, and where the published system files are."""
    return ("give --topology NAME or a .toml file describing the machine (`ringsim mpi "
            "--calibrate --write-topology FILE` measures one); " + _published_hint(gpu))


def check_inputs(output: Output, gpus: int | None, topology_given: bool, available: list[str]) -> None:
    """Refuse in one line a run that lacks both its number of GPUs and its machine: both are
    known missing from the parse, so both are asked for at once (one missing alone is asked
    for by `scenario` or `preset_for`)."""
    gpu = output.gpu_names[0] if output.gpu_names else None
    if gpus is not None or output.gpus is not None or topology_given \
            or _preset(gpu, available) is not None:
        return
    named = f"its GPU ({gpu})" if gpu else "it names no GPU either, so it"
    raise RingsimError(f"{output.name} has no '# Rank … on HOST device …' lines, so the number "
                       f"of GPUs is unknown: give --gpus G (and --nodes M); {named} matches no "
                       f"topology preset ({', '.join(available)}): " + _topology_request(gpu))


def assumed_network(topology, nodes: int) -> str:
    """What a preset guessed from the GPU's name takes the network to be, where the run
    crosses nodes ('' on one node): the GPU says nothing of the network, so it is said."""
    if nodes < 2 or "across" not in topology.levels:
        return ""
    across = topology.levels["across"]
    return (f", whose network is {across.name} for each GPU; give --topology if yours "
            "differs")


def _published_hint(gpu: str | None) -> str:
    """Where ringsim's published system files are, and how to pass one as --topology (the one
    named for the header's GPU, where there is one)."""
    import os
    from pathlib import Path
    folder = Path(str(peers.PUBLISHED.joinpath("systems")))
    files = sorted(p.name for p in folder.glob("*.toml"))
    relative = os.path.relpath(folder)
    shown = str(folder) if relative.startswith("..") else relative
    words = set(re.findall(r"[a-z0-9]+", (gpu or "").lower()))
    fits = [name for name in files if name.split("-")[0] in words]
    if fits:
        return (f"ringsim's published system files include {', '.join(fits)} in {shown}: pass "
                f"one as --topology {os.path.join(shown, fits[0])}")
    return (f"ringsim's published system files, each named for its machine, are in {shown}: "
            f"pass one as --topology {os.path.join(shown, 'NAME.toml')}")


def scenario(output: Output, gpus: int | None, nodes: int | None) -> tuple[int, int, list[str]]:
    """G and M from the header (or --gpus/--nodes, which must agree with it), and notes."""
    notes = []
    seen_gpus, hosts = output.gpus, output.hosts
    if gpus is None:
        if seen_gpus is None:
            raise RingsimError(f"{output.name} has no '# Rank … on HOST device …' lines, so the "
                               "number of GPUs is unknown: give --gpus G (and --nodes M)")
        gpus = seen_gpus
    elif seen_gpus is not None and gpus != seen_gpus:
        raise RingsimError(f"--gpus {gpus} disagrees with the {seen_gpus} ranks the header lists")
    if nodes is None:
        nodes = len(hosts) if hosts else 1
        if not hosts:
            notes.append("no host names in the output: one node assumed (give --nodes M)")
    elif hosts and nodes != len(hosts):
        raise RingsimError(f"--nodes {nodes} disagrees with the {len(hosts)} hosts the header names")
    if gpus < 2:
        raise RingsimError(f"{output.name} ran on {gpus} GPU: a collective needs at least 2")
    if gpus % nodes:
        raise RingsimError(f"{gpus} GPUs do not split evenly over {nodes} nodes")
    if hosts and output.gpus_per_host() is None:
        notes.append("the hosts run different numbers of ranks; the model assumes the same on each")
    return gpus, nodes, notes


def measured_rows(output: Output) -> tuple[list[Row], list[str]]:
    """One row per size above 0 bytes (the first when a size repeats), and what was left out."""
    notes, seen, rows = [], set(), []
    for row in output.rows:
        if row.bytes <= 0 or row.bytes in seen:
            continue
        seen.add(row.bytes)
        rows.append(row)
    repeated = sum(1 for r in output.rows if r.bytes > 0) - len(rows)
    if repeated:
        notes.append(f"{repeated} repeated size{'s' * (repeated > 1)} left out (the first row of each kept)")
    if output.skipped:
        notes.append(f"{output.skipped} row{'s' * (output.skipped > 1)} cut short or unreadable left out")
    if output.past_limit:
        notes.append(f"{output.past_limit:,} row{'s' * (output.past_limit > 1)} after the first "
                     f"{MAX_ROWS:,} left out (diagnose reads at most {MAX_ROWS:,})")
    if not rows:
        raise RingsimError(f"{output.name} has only 0-byte rows: nothing to compare")
    return sorted(rows, key=lambda r: r.bytes), notes


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


def diagnose(output: Output, topology, predict, *, gpus: int | None = None,
             nodes: int | None = None, collective: str | None = None,
             tolerance: float = DEFAULT_TOLERANCE, topology_reason: str = "",
             algo: str | None = None, proto: str | None = None,
             nccl: str | None = None, ran: str | None = None,
             nvls_off: str | None = None) -> Report:
    """Compare every measured size with `predict(topology, G, sizes, collective, algo, proto,
    dtype=…)`; algo and proto default to the NCCL_ALGO / NCCL_PROTO the paste shows; `nccl`,
    the release whose tuning tables price it (passed on as predict's `nccl=`), to the
    release the model follows. `ran` and `nvls_off` are what the run's NCCL log says where
    the paste does not: the release that ran, and its line saying NVLS was off (nccltests.
    nvls_off), after which the model leaves NVLS and NVLSTree out as NCCL did."""
    if not 0 < tolerance < 1:
        raise RingsimError(f"the tolerance must be between 0 and 100%, got {percent(tolerance)}")
    gpus, nodes, notes = scenario(output, gpus, nodes)
    if collective is not None:
        check_collective(output, gpus, collective)
    collective = collective or which_test(output, gpus, notes)
    notes += _root_notes(output, gpus, collective)
    rows, more = measured_rows(output)
    notes += more
    per_node = gpus // nodes
    if topology.gpus_per_node not in (None, per_node) and nodes > 1:
        raise RingsimError(f"topology {topology.name} has {plural(topology.gpus_per_node, 'GPU')} "
                           f"per node but the run has {per_node} per node on {nodes} nodes: give "
                           f"a topology with gpus_per_node = {per_node}")
    if topology.nodes(gpus) != nodes:
        notes.append(f"topology {topology.name} places {gpus} GPUs in "
                     f"{plural(topology.nodes(gpus), 'node')}; the run used {nodes}")
    factor = float(bus_factor(collective, gpus))
    dtype = rows[0].dtype
    pasted = {name: output.env[name] for name, given in (("NCCL_ALGO", algo), ("NCCL_PROTO", proto))
              if given is None and name in output.env}
    algo = algo if algo is not None else pasted.get("NCCL_ALGO")
    proto = proto if proto is not None else pasted.get("NCCL_PROTO")
    held = len(notes)  # what the paste's NCCL_ALGO/NCCL_PROTO did is said here, once priced
    release_note = _release_note(output.nccl_version or ran, nccl)
    if release_note:
        notes.append(release_note)
    if nccl:
        predict = functools.partial(predict, nccl=nccl)
    per_process = _per_process(output, topology, gpus, nodes, notes)
    if per_process > 1:
        predict = functools.partial(predict, gpus_per_process=per_process)
    predict = functools.partial(_all_sizes, predict)
    nvls_off = output.nvls_off or nvls_off
    if nvls_off:
        # NCCL gives NVLS and NVLSTree no bandwidth once NVLS is off, whatever NCCL_ALGO says
        # (tuning.cc), so every call the model prices leaves them out too.
        predict = functools.partial(no_nvls, predict)
    predicted, algo, proto = _held(lambda a, p: predict(topology, gpus, [r.bytes for r in rows],
                                                        collective=collective, algo=a, proto=p,
                                                        dtype=dtype),
                                   algo, proto, pasted)
    kept = {"NCCL_ALGO": algo, "NCCL_PROTO": proto}
    from ..cost.nccl import path_note  # the model is imported once the paste has passed
    far = path_note(topology, gpus, nccl)
    if far:  # what a NIC far from its GPU does to the model, said where the table is read
        notes.append(far)
    notes[held:held] = [_held_note(name, value, kept[name] is not None, f"{collective} on {topology.name}")
                        for name, value in pasted.items()]
    if nvls_off:
        where = "the paste" if output.nvls_off else "the NCCL log"
        notes.insert(held, f"{nvls_off} in {where}: NCCL ran without NVLS and NVLSTree, and so "
                           "does the model")
    measured = fit_curve([r.bytes for r in rows], [r.seconds for r in rows], factor)
    if rows[0].bytes > SMALLEST_FOR_LATENCY:
        notes.append(f"the output starts at {format_bytes(rows[0].bytes)}: the fitted per-call "
                     "latency is only an upper bound (run from -b 8 to see it)")
    # a size nccl-tests would round down to an empty call has no modelled time (predict)
    priced = [p for p in predicted if p.seconds]
    modelled = fit_curve([p.bytes for p in priced], [p.seconds for p in priced], factor) if priced else None
    split = measured
    if rows[0].bytes > SMALLEST_FOR_LATENCY:
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
    out_rows = []
    for row, model in zip(rows, predicted):
        bus = row.bytes / row.seconds * factor
        ratio = bus / model.busbw if model.busbw else None
        out_rows.append(SizeRow(row.bytes, row.count, row.dtype, row.seconds, bus, model.seconds,
                                model.busbw, ratio, ratio is not None and ratio < 1 - tolerance,
                                model.algorithm, model.protocol, split.regime(row.bytes, factor),
                                row.wrong, row.in_place_seconds))
    report = Report(output.name, gpus, nodes, output.gpu_names[0] if output.gpu_names else None,
                    output.hosts, topology.name, topology_reason, collective, tolerance, out_rows,
                    measured, modelled, notes=notes, algo=algo, proto=proto, nccl=nccl,
                    gpus_per_process=per_process, nvls_off=nvls_off, release_note=release_note)
    report.in_place = slowsizes.in_place_check(out_rows, tolerance)
    report.dips = [r.bytes for r in slowsizes.dips(out_rows, tolerance)]
    if algo is None and nodes == 2 and gpus > nodes and _not_rings(out_rows):
        report.ring_check = ring_check(out_rows, predict(topology, gpus, [r.bytes for r in rows],
                                                         collective=collective, algo="Ring",
                                                         proto=proto, dtype=dtype), tolerance)
    held_to = ", ".join(f"{name}={value}" for name, value in
                        (("NCCL_ALGO", algo), ("NCCL_PROTO", proto)) if value is not None)
    found = peers.peers(topology, gpus, nodes, per_process) if collective == "all-reduce" else []
    if found and held_to:
        # The published runs let NCCL choose: a run held to one algorithm is not like them.
        notes.append(f"this run was held to {held_to}, and the published runs like it let NCCL "
                     "choose, so they are not set beside it")
    elif found and nvls_off:
        # Their machines may have run NVLS, which this one could not: not like it either.
        notes.append("this run had no NVLS, and the published runs like it may have used it, so "
                     "they are not set beside it")
    elif found:
        mine = {r.bytes: r.measured_seconds for r in out_rows}
        itself = [p for p in found if peers.same_run(p, mine)]
        notes += [f"this run is the published {p.id} ({p.source}): it is not set beside itself"
                  for p in itself]
        report.peers = [p for p in found if p not in itself]
        report.peer_rows = peers.beside(sorted(mine.items()), report.peers)
        report.peer_likeness = peers.likeness(topology, nodes)
    report.verdicts = verdicts(report)
    report.checks = checks(report)
    return report


def _not_rings(rows: list[SizeRow]) -> bool:
    """Whether the model runs anything but rings at a flagged bandwidth-bound size: where it
    runs rings already, holding it to NCCL_ALGO=Ring would change nothing."""
    return any(r.flag and r.regime == "bandwidth" and r.algorithm != "Ring" for r in rows)


# What each test's rows print (nccltests.test_from_rows): whether its redop column reduces,
# whether its root column holds a rank, and whether its count is the whole size's.
SHOWS = {"all-reduce": (True, False, True), "all-gather": (False, False, False),
         "reduce-scatter": (True, False, False), "broadcast": (False, True, True),
         "reduce": (True, True, True)}


def _columns(output: Output, gpus: int) -> dict[str, tuple[bool, str]]:
    """What the rows' own columns show where every row agrees: 'redop' (reduces?), 'root'
    (a rank?) and 'count' (the whole size's?, read only beside a redop or root column, as
    nccl-tests has printed it since it added them), each with its words; a column the layout
    lacks, or whose rows disagree, shows nothing."""
    rows = [r for r in output.rows if r.bytes > 0]
    shown: dict[str, tuple[bool, str]] = {}
    redops = {r.redop for r in rows if r.redop is not None}
    if len(redops) == 1 or (redops and "none" not in redops):
        op = sorted(redops)[0]
        shown["redop"] = (op != "none", f"redop {op}" if op != "none" else "no reduction")
    roots = {r.root for r in rows if r.root is not None}
    if roots and len({root >= 0 for root in roots}) == 1:
        root = min(roots)
        shown["root"] = (root >= 0, f"root {root}")
    typed = [r for r in rows if r.dtype in DTYPES]
    if typed and shown:  # a layout with a redop or root column: today's count column
        whole = all(r.count * DTYPES[r.dtype] == r.bytes for r in typed)
        share = all(r.count * DTYPES[r.dtype] * gpus == r.bytes for r in typed)
        if whole != share:
            shown["count"] = (whole, "the whole size's count" if whole else
                              f"a count of each rank's share (count x type size x {gpus} = size)")
    return shown


def check_collective(output: Output, gpus: int, collective: str) -> None:
    """Refuse, in one line, a --collective that the paste itself contradicts: the test it
    names, or its redop, root and count columns (SHOWS), where they tell. A paste whose
    columns cannot tell (no root or redop column) takes the flag as it is."""
    flag, perf = f"--collective {collective}", PERF[collective]
    named = output.collective
    if named is not None and named != collective:
        raise RingsimError(f"{output.name} is the output of {PERF.get(named, named)} and {flag} "
                           f"says {perf}: leave --collective out, or give the test that ran")
    shown = _columns(output, gpus)
    wants = dict(zip(("redop", "root", "count"), SHOWS[collective]))
    if all(value == wants[name] for name, (value, _) in shown.items()):
        return
    seen = test_from_rows(output.rows, gpus)
    said = ", ".join(words for _, words in shown.values())
    if seen is None:
        raise RingsimError(f"{output.name}'s rows ({said}) are not {perf}'s, which {flag} says: "
                           "give the --collective that ran")
    raise RingsimError(f"{output.name}'s rows ({said}) are {PERF.get(seen, seen)}'s, and {flag} "
                       f"says {perf}: give the --collective that ran, or leave it out to take "
                       "the one the rows show")


def _root_notes(output: Output, gpus: int, collective: str) -> list[str]:
    """A note where a rooted test's root column names no rank of the run (0 to G-1)."""
    if collective not in ROOTED:
        return []
    roots = sorted({r.root for r in output.rows if r.root is not None and r.root >= gpus})
    if not roots:
        return []
    return [f"the rows' root {roots[0]:,} is not one of the run's {gpus:,} ranks (0 to "
            f"{gpus - 1:,}); every root is priced alike, as NCCL's model does"]


def which_test(output: Output, gpus: int, notes: list[str]) -> str:
    """The collective the output ran: the test it names, else the one its rows' columns show
    (nccltests.test_from_rows), else all-reduce; a note says which was taken, and a test the
    model cannot price is a one-line error."""
    named = output.collective
    seen = None if named else test_from_rows(output.rows, gpus)
    test = named or seen
    if test is not None and test not in PRICED:
        first = output.rows[0]
        perf = PERF.get(test, test)
        what = (f"is the output of {perf}" if named else f"does not name its test, and its rows "
                f"(redop {first.redop}, root {first.root}) are {perf}'s")
        raise RingsimError(f"{output.name} {what}: NCCL's model prices "
                           f"{', '.join(PERF[c] for c in PRICED[:-1])} and {PERF[PRICED[-1]]} only")
    if named:
        return named
    if seen is None and output.rows and all(r.redop in (None, "none") for r in output.rows):
        # all_reduce_perf always reduces; nccl-tests prints "none" for the tests that do not
        # (all_gather_perf, broadcast_perf, alltoall_perf), so all-reduce cannot be assumed
        count = _columns(output, gpus).get("count")
        odd = ("" if count is not None else "; its count column fits neither the whole size nor "
               "a rank's share of it")
        raise RingsimError(f"{output.name} does not name its test and its rows' redop is "
                           f"'none', so it is not all_reduce_perf{odd}: give --collective")
    if seen in ("reduce-scatter", "all-gather"):
        also = "" if seen == "reduce-scatter" else "; alltoall_perf prints the same columns"
        notes.append(f"the output does not name its test: its count column is each rank's share "
                     f"of the size (count × type size × {gpus} ranks = size), so it is taken as "
                     f"{PERF[seen]}{also} (give --collective)")
        return seen
    if seen in ROOTED:
        # only the rooted tests print a root of 0 or more, and a reduce's redop tells it from a
        # broadcast (nccltests.test_from_rows)
        first = output.rows[0]
        what = f"redop {first.redop}" if seen == "reduce" else "no reduction"
        notes.append(f"the output does not name its test: its rows have root {first.root}, the "
                     f"whole size's count and {what}, so it is taken as {PERF[seen]} (give "
                     "--collective)")
        return seen
    notes.append("the output does not name its test: taken as all_reduce_perf (give --collective)")
    return "all-reduce"


def _all_sizes(predict, topology, gpus: int, sizes: list[int], **options) -> list:
    """predict over any number of sizes, PREDICT_AT_ONCE at a time."""
    return [row for start in range(0, len(sizes), PREDICT_AT_ONCE)
            for row in predict(topology, gpus, sizes[start:start + PREDICT_AT_ONCE], **options)]


def _held(price, algo, proto, pasted: dict[str, str]):
    """price(algo, proto) held to the NCCL_ALGO/NCCL_PROTO given or in the paste, and the
    algo and proto it was held to. A setting from the paste (`pasted`) that leaves NCCL no
    algorithm and protocol on the topology, or that ringsim cannot read, is dropped: the run
    finished, so NCCL ran its own choice, as the published runs that force NVLS on an A100
    are read (docs/cost.md). A setting the caller gave is never dropped."""
    tries = [(algo, proto)]
    if "NCCL_ALGO" in pasted:
        tries.append((None, proto))
    if "NCCL_PROTO" in pasted:
        tries += [(algo, None)] + ([(None, None)] if "NCCL_ALGO" in pasted else [])
    for i, (a, p) in enumerate(tries):
        try:
            return price(a, p), a, p
        except RingsimError:
            if i == len(tries) - 1:
                raise


def _held_note(name: str, value: str, kept: bool, what: str) -> str:
    """What became of an NCCL_ALGO or NCCL_PROTO the paste set (_held)."""
    if kept:
        return f"{name}={value} in the paste: the model is held to it too"
    return (f"{name}={value} in the paste leaves NCCL's model no algorithm and protocol for "
            f"{what} (or is a form ringsim does not read): the model takes NCCL's own choice instead")


def _per_process(output: Output, topology, gpus: int, nodes: int, notes: list[str]) -> int:
    """The GPUs one process drove (the header's nGpus) where they fit the run, else 1; a note
    says which."""
    from ..cost.nccl import check_per_process, host_seconds
    n = output.gpus_per_process or 1
    if n == 1:
        return 1
    try:
        check_per_process(topology, gpus, n)
    except RingsimError:
        notes.append(f"the header's nGpus {n} (GPUs one process drove) does not fit {gpus} GPUs "
                     f"in {plural(nodes, 'node')}: the host's time to issue each call is not modelled")
        return 1
    notes.append(f"one process drove {n} GPUs (nGpus {n}): one thread issues each call to all "
                 f"of them, so the model holds every call to at least "
                 f"{format_seconds(host_seconds(n))} ({format_seconds(host_seconds(1))} per GPU, "
                 "ringsim's estimate); one process per GPU (-g 1) shows the GPUs' own latency")
    return n


def _release_note(version: str | None, nccl: str | None) -> str | None:
    """What the notes say of the release the paste ran, beside the tables the model used."""
    from ..cost.nccl_tuner import release, versions, versions_text
    known = versions()
    used = nccl or known[0]
    if not version:
        return f"the model uses NCCL {used}'s tuning tables" if nccl else None
    ran = release(version)
    if ran == used:
        return f"the run used NCCL {ran}; the model uses that release's tuning tables"
    if ran in known:
        return (f"the run used NCCL {ran}; the model uses NCCL {used}'s tuning tables "
                f"(--nccl {ran} prices it with its own)")
    return (f"the run used NCCL {ran}; ringsim has the tuning tables of NCCL "
            f"{versions_text()}, and the model uses {used}'s")


def ring_check(rows: list[SizeRow], ring, tolerance: float) -> dict:
    """The flagged sizes beside the model held to NCCL_ALGO=Ring: how many of them reach it.

    nccl-tests does not print the algorithm that ran. On two nodes NCCL's trees send each byte
    across the network once where rings send it 2(n-1)/n times, so the tree's bus bandwidth can
    exceed the ring's (S. Jeaugey, NVIDIA/nccl issue 307); a run that used rings, or a machine
    whose tuning picked them, falls short of a Tree prediction without anything being wrong."""
    by_size = {p.bytes: p for p in ring}
    # only where bandwidth counts: the algorithms differ in bytes moved, not in calls
    flagged = [r for r in rows if r.flag and r.regime == "bandwidth"]
    ratios = [r.measured_busbw / by_size[r.bytes].busbw for r in flagged
              if r.bytes in by_size and by_size[r.bytes].busbw]
    within = sum(x >= 1 - tolerance for x in ratios)
    return {"flagged": len(flagged), "within_ring": within,
            "median_ratio": _median(ratios),
            "ring_busbw": max((p.busbw for p in ring if p.busbw), default=None)}


def rings_explain(check: dict | None) -> bool:
    """Whether every flagged bandwidth-bound size reaches the model held to rings (ring_check)."""
    return bool(check and check["flagged"] and check["within_ring"] == check["flagged"])


def _median(values: list[float]) -> float | None:
    return float(np.median(values)) if values else None


def verdicts(r: Report) -> list[str]:
    """One sentence per regime: how far measured falls from the model there, and why it may."""
    out = []
    tol = r.tolerance
    for regime in ("latency", "bandwidth"):
        rows = [x for x in r.rows if x.regime == regime and x.ratio is not None]
        if not rows:
            continue
        ratio = _median([x.ratio for x in rows])
        flagged = sum(x.flag for x in rows)
        span = f"{format_bytes(rows[0].bytes)}–{format_bytes(rows[-1].bytes)}" if len(rows) > 1 \
            else format_bytes(rows[0].bytes)
        head = (f"{regime.capitalize()}-bound sizes ({span}, {len(rows)} size"
                f"{'s' * (len(rows) > 1)}): measured busbw is {ratio:.0%} of the model's "
                f"(median), {flagged} flagged")
        short, above = ratio < 1 - tol, ratio > 1 + tol
        if regime == "latency":
            lat_m, lat_p = r.measured.latency, r.modelled.latency if r.modelled else None
            # An output that starts past the smallest sizes only bounds the per-call time: the
            # sentence after it goes by the sizes' busbw, so the figure must not read as exact.
            bound = r.rows[0].bytes > SMALLEST_FOR_LATENCY
            head += (f"; per-call time at most {format_seconds(lat_m)} measured (the output starts "
                     f"at {format_bytes(r.rows[0].bytes)})" if bound else
                     f"; per-call time {format_seconds(lat_m)} measured")
            if lat_p:
                head += f" vs {format_seconds(lat_p)} modelled"
            # the model's per-call time is the host's floor, not the GPUs' latency
            host_set = bool(r.host_seconds and lat_p and lat_p <= r.host_seconds * (1 + 1e-9))
            if host_set and lat_m < lat_p * (1 - tol):
                head += (f". The model's per-call time is the host's ({r.gpus_per_process} GPUs "
                         f"in one process × ringsim's estimate of "
                         f"{format_seconds(r.host_seconds / r.gpus_per_process)} each), and this "
                         "host issues calls faster than that; run one process per GPU to see "
                         "the GPUs' own latency")
            elif short:
                head += (". Every call costs more than NCCL's model: kernel launch and proxy-thread "
                         "overhead, CPU binding far from the GPU, the protocol (LL disabled? "
                         "NCCL_PROTO)" + (", or network latency on the hops that cross nodes"
                                          if r.nodes > 1 else ""))
            elif above:
                head += (". Calls are cheaper than modelled: NCCL's model takes its latencies from "
                         "its own tables, not the topology's α; across nodes the file's "
                         "net_latency (or net_plugin_latency, added to every hop that crosses "
                         "nodes) may be set higher than the network's" if r.nodes > 1 else
                         ". Calls are cheaper than modelled: NCCL's model takes its latencies "
                         "from its own tables, not the topology's α")
            elif host_set:
                head += (f". The per-call cost is as modelled: the host's, one thread issuing "
                         f"each call to {r.gpus_per_process} GPUs")
            else:
                head += ". The per-call cost is as modelled"
        else:
            bw_m = r.measured.busbw
            bw_p = r.modelled.busbw if r.modelled else None
            if bw_m and bw_m != math.inf:
                head += f"; fitted bus bandwidth {format_bandwidth(bw_m)}"
                if bw_p and bw_p != math.inf:
                    head += f" vs {format_bandwidth(bw_p)} modelled ({bw_m / bw_p:.0%})"
            if short:
                where = (" across nodes: the NIC rate, fewer NICs than GPUs (the model gives each "
                         "GPU its own), a NIC on the other CPU socket (nic_path = \"sys\" in the "
                         "topology's [across] prices it), GPUDirect RDMA off (data staged "
                         "through host memory), the switch fabric (rails, oversubscription)"
                         if r.nodes > 1 else
                         " inside the node: the NVLink or PCIe rate, P2P off (data through host "
                         "memory), GPUs under different CPU sockets")
                if _in_place_fine(r):
                    head += (". These are the out-of-place calls, which diagnose reads; the "
                             "in-place calls beside them do not fall short (next)")
                elif r.in_place and r.in_place["slower"] == "out-of-place":
                    head += (". Out of place they are slower than in place (next), and in place "
                             f"still short of the model, so the links may also move less than "
                             f"modelled{where}")
                else:
                    head += f". The links move less than modelled{where}"
            elif above:
                head += (". Measured exceeds the model: NCCL used a path the model does not price "
                         "(reduction in the switch: NVLink SHARP or CollNet; trees over two nodes) "
                         f"or {r.topology}'s rates are below this machine's")
            elif flagged:
                head += (f". The median size is as modelled, but {flagged} "
                         f"{'are' if flagged > 1 else 'is'} short by more than {percent(tol)}")
            else:
                head += ". The links deliver what the model expects"
        out.append(head)
    if r.in_place:
        out.append(slowsizes.in_place_verdict(r.in_place, tol))
    dipped = slowsizes.dips_verdict(r.dips, sum(x.flag for x in r.rows), percent(tol))
    if dipped:
        out.append(dipped)
    if r.ring_check and r.ring_check["flagged"]:
        c = r.ring_check
        n, within = c["flagged"], c["within_ring"]
        head = (f"Held to rings (NCCL_ALGO=Ring) the model expects up to "
                f"{format_bandwidth(c['ring_busbw'])}; {within} of the {n} flagged "
                f"bandwidth-bound size{'s' * (n > 1)} come{'s' * (within == 1)} within {percent(tol)} "
                f"of the rings' busbw at that size (they reach {c['median_ratio']:.0%} of it, "
                "median)")
        if rings_explain(c):
            head += (": nccl-tests does not print which algorithm ran, and on two nodes NCCL's "
                     "trees can beat the ring's bus bandwidth, so this run may simply have used "
                     "rings; run it again with NCCL_ALGO=Ring to compare like with like")
        elif within == 0:
            head += ": the shortfall is not the choice of algorithm"
        out.append(head)
    if r.peer_rows:
        out.append(peer_verdict(r))
    return out


def _in_place_fine(r: Report) -> bool:
    """Whether only the out-of-place calls fall short: in place the same sizes reach the model."""
    return bool(r.in_place and r.in_place["slower"] == "out-of-place"
                and r.in_place["in_place_as_modelled"])


def peer_verdict(r: Report) -> str:
    """How this run stands among the published healthy runs on machines like it."""
    rows, n = r.peer_rows, len(r.peers)
    theirs = "its" if n == 1 else "their median"
    # One median over every size would let the many latency-bound sizes hide a shortfall at
    # the large ones: each regime gets its own, as the model's verdict does.
    regime = {y.bytes: y.regime for y in r.rows}
    parts = []
    for name in ("latency", "bandwidth"):
        mine = [x.ratio for x in rows if regime.get(x.bytes) == name]
        if mine:
            whose = "" if parts else f" {theirs} time"
            parts.append(f"{_median(mine):.2f}×{whose} over the {len(mine)} {name}-bound "
                         f"size{'s' * (len(mine) > 1)}")
    head = (f"Beside {n} published healthy run{'s' * (n > 1)} on machines like this one, at the "
            f"{len(rows)} size{'s' * (len(rows) > 1)} {'they share' if n > 1 else 'it shares'}: "
            f"this run takes {' and '.join(parts)} (the median of each)")
    if n == 1:
        return head
    slower = [x for x in rows if x.slower_than_all]
    if not slower:
        head += ", never longer than the slowest of them"
    elif len(slower) == len(rows):
        head += ", longer than every one of them at every size"
    else:
        sizes = ", ".join(format_bytes(x.bytes) for x in slower[:8]) + (", …" if len(slower) > 8
                                                                          else "")
        head += f", longer than every one of them at {len(slower)} ({sizes})"
    # A ◀ says the model expects more; the published runs say what machines like it do.
    flagged_sizes = {y.bytes for y in r.rows if y.flag}
    flagged = [x for x in rows if x.bytes in flagged_sizes]
    if flagged:
        k, near = len(flagged), sum(x.ratio <= 1 + r.tolerance for x in flagged)
        head += (f"; of the {k} size{'s' * (k > 1)} flagged against the model, {near} "
                 f"{'is' if near == 1 else 'are'} within {percent(r.tolerance)} of their median or "
                 "faster")
        # Healthy machines of this kind measure the same there, so the model is what misses:
        # docs/cost.md lists the sizes where it is faster than what such runs measure.
        if near == k:
            head += (": machines like this one take as long there or longer, so those flags show "
                     "where NCCL's model is faster than real runs (docs/cost.md lists its known "
                     "misses), not a fault of this run")
        elif near:
            other = (f"the other {k - near} take", "those") if k - near > 1 else (
                "the other one takes", "it")
            head += (f": {other[0]} longer than machines like this one do, so look at "
                     f"{other[1]} first")
        else:
            head += ": machines like this one are faster there, so this run falls short of them too"
    return head


def gdr_level(lines) -> str | None:
    """The NCCL_NET_GDR_LEVEL a paste was run with, as NCCL echoes it or the command line sets it.

    NCCL prints `NCCL_NET_GDR_LEVEL set by environment to SYS` with the level as a word (an
    old numeric setting such as `=2` is echoed as `PXB`), so the echo wins over the command line.
    `lines` are the paste's cleaned lines (studies.textfile.Text.lines)."""
    found = None
    for line in lines:
        for match in _GDR_LEVEL.finditer(line):
            if match.group(1) or found is None:
                found = match.group(2).upper()
    return found


# What NCCL's socket transport means for a run across nodes, and what to check.
SOCKETS = ("through host memory and the kernel's network stack, not InfiniBand/RoCE verbs "
           "(check NCCL_IB_HCA, the RDMA drivers and devices in the container, NCCL_IB_DISABLE)")


def network_used(lines) -> str | None:
    """The network NCCL says it used ('IB', 'Socket', 'AWS Libfabric'), from its
    `Using network …` line; the last one where processes disagree is as good as any."""
    found = None
    for line in lines:
        if match := _NETWORK.search(line):
            found = match.group(1)
    return found


def log_verdict(r: Report, crossing: dict[str, int], gdr: str | None = None,
                network: str | None = None) -> str | None:
    """What the NCCL log's cross-node hops say about a cross-node shortfall, in one sentence.

    `crossing` counts the transports of the hops that leave a node (`NET/IB/0/GDRDMA`,
    `NET/Socket/0`, …). NCCL's net transport prints `via NET/<plugin>/<dev>` and appends
    `/GDRDMA` exactly when the NIC reads and writes GPU memory itself (src/transport/net.cc);
    without it every message is copied through host memory on both sides. `gdr` is the
    NCCL_NET_GDR_LEVEL the run set (gdr_level), if any."""
    rows = [x for x in r.rows if x.regime == "bandwidth" and x.ratio is not None]
    known = {via: n for via, n in crossing.items() if via}
    if r.nodes < 2 or not rows or _median([x.ratio for x in rows]) >= 1 - r.tolerance:
        return None
    if _in_place_fine(r):  # the same links move the in-place calls as modelled
        return None
    if not known and network is not None and network.lower() == "socket":
        # No whole ring to read, but NCCL said which network it chose: sockets settle it.
        return ("The NCCL lines show why the bandwidth-bound sizes fall short: NCCL chose its "
                f"TCP socket transport (Using network Socket), {SOCKETS}")
    if not known:
        return None
    total = sum(known.values())
    names = ", ".join(f"{via} ({n})" for via, n in sorted(known.items(), key=lambda kv: -kv[1])[:3])
    if all("/SOCKET" in via.upper() for via in known):
        return (f"The log shows why the bandwidth-bound sizes fall short: all {total} hops that "
                f"cross nodes use NCCL's TCP socket transport ({names}), {SOCKETS}")
    if not any("GDRDMA" in via.upper() for via in known):
        said = (f"The log points at GPUDirect RDMA: none of the {total} hops that cross nodes "
                f"({names}) carries /GDRDMA, which NCCL adds only when the NIC reads and writes "
                "GPU memory directly, so every message is staged through host memory (is "
                "nvidia-peermem or DMA-BUF support loaded? PCIe ACS or the IOMMU in the way? "
                "NCCL_NET_GDR_LEVEL)")
        if gdr is not None and gdr not in GDR_BEYOND_DEFAULT:
            said += (f"; this run sets NCCL_NET_GDR_LEVEL={gdr}, which keeps it off wherever a "
                     "GPU and its NIC are further apart than that (nvidia-smi topo -m)")
        return said
    if all("GDRDMA" in via.upper() for via in known):
        if gdr in GDR_BEYOND_DEFAULT:
            return (f"The log shows GPUDirect RDMA on all {total} hops that cross nodes ({names}) "
                    f"only because NCCL_NET_GDR_LEVEL={gdr} allows it past NCCL's default (PXB: "
                    "GPU and NIC under a common PCIe switch), so the NIC reads and writes GPU "
                    "memory through the CPU (PHB) or across the link between CPU sockets (SYS): "
                    "check the GPU-to-NIC path with nvidia-smi topo -m and the BIOS NUMA "
                    "settings, and put each GPU next to its NIC rather than forcing the level")
        return (f"The log shows GPUDirect RDMA on all {total} hops that cross nodes ({names}), so "
                "the shortfall is in the NICs or the fabric: their rate and number per node "
                "(ibstat), the switches between the nodes, other traffic; or on the PCIe path "
                "between each GPU and its NIC (nvidia-smi topo -m)")
    return None


def checks(r: Report) -> list[str]:
    """What to look at next."""
    out = []
    wrong = [x.bytes for x in r.rows if x.wrong not in (None, 0) and x.wrong >= 1]
    if wrong:
        out.append(f"#wrong is not 0 at {len(wrong)} size{'s' * (len(wrong) > 1)} (from "
                   f"{format_bytes(wrong[0])}): the results were corrupted; fix that before any "
                   "timing (driver, GPUDirect RDMA, NVIDIA/nccl issue 133)")
    flagged = sum(x.flag for x in r.rows)
    # The verdicts' own next steps first, where they explain the flagged sizes.
    if _in_place_fine(r):
        out.append("run it again with a larger -w (warm-up iterations), then with "
                   "NCCL_LOCAL_REGISTER=0 and with NCCL_NVLS_ENABLE=0: the out-of-place calls "
                   "alone fall short, so their output buffer, not the links, is the question")
    dipped = slowsizes.mostly_dips(r.dips, flagged)
    if dipped:
        out.append("run it again with more iterations (nccl-tests -n 100 -w 20) and check for "
                   "other jobs on the same nodes and switches: the flagged sizes are dips")
    c = r.ring_check
    if rings_explain(c):
        out.append("run it again with NCCL_ALGO=Ring: held to rings the model expects what was "
                   "measured, so this run may simply have used rings")
    if flagged and not (_in_place_fine(r) or dipped):
        out.append("run again with NCCL_DEBUG=INFO and read which transport every hop uses: "
                   "ringsim walk --nccl-log LOG (P2P/IPC and NET/IB/…/GDRDMA are the fast paths; "
                   "SHM, NET/Socket or NET/IB without GDRDMA go through host memory)")
        if r.nodes == 2 and r.gpus > 2 and not r.ring_check and any(
                x.flag and x.algorithm not in (None, "Ring") for x in r.rows):
            out.append("with two nodes NCCL picks trees, which can exceed the ring's bus bandwidth; "
                       "NCCL_ALGO=Ring makes the numbers easier to read (S. Jeaugey, NVIDIA/nccl "
                       "issue 307)")
    return out
