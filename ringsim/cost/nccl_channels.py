"""The channels and threads NCCL runs an algorithm on: connect.cc's comm->nChannels (the ring
graph connected twice, CollNet's extra half, Hopper's doubling, the raise to NVLS's channels),
transport/nvls.cc's nvlsChannels, NCCL_MIN_NCHANNELS and NCCL_MAX_NCHANNELS, and enqueue.cc's
topoGetAlgoInfo, which runs a small call on fewer channels than NCCL tuned for.
"""

from __future__ import annotations

from dataclasses import dataclass

from .nccl_graph import System, graphs, system
from .nccl_tuner import NVLS_FAMILY, carried_release
from .topology_model import Topology


@dataclass(frozen=True)
class Tuned:
    """One machine as a release of NCCL tunes it: what it sees, its searched graphs, the release."""

    sys: System
    graphs: dict
    nccl: str | None = None
    min_channels: int | None = None  # NCCL_MIN_NCHANNELS, None where unset
    max_channels: int | None = None  # NCCL_MAX_NCHANNELS, None where unset
    nvls: bool = True  # False where NVLS is off (NCCL_NVLS_ENABLE=0 or no multicast support)
    nvls_count: int | None = None  # NCCL_NVLS_NCHANNELS, None where unset
    nthreads: int | None = None  # NCCL_NTHREADS, None where unset
    ll128_nthreads: int | None = None  # NCCL_LL128_NTHREADS, None where unset
    buffsize: int | None = None  # NCCL_BUFFSIZE (Simple's buffer, bytes), None where unset


def tune(topology: Topology, gpus: int, nccl: str | None = None, *,
         min_channels: int | None = None, max_channels: int | None = None,
         nvls: bool = True, nvls_channels: int | None = None, nthreads: int | None = None,
         ll128_nthreads: int | None = None, buffsize: int | None = None) -> Tuned:
    """G GPUs on a topology as release `nccl` (None: the model's own) sees and searches them,
    with NCCL_MIN_NCHANNELS / NCCL_MAX_NCHANNELS / NCCL_NVLS_NCHANNELS set to `min_channels` /
    `max_channels` / `nvls_channels`, NCCL_NTHREADS / NCCL_LL128_NTHREADS to `nthreads` /
    `ll128_nthreads`, NCCL_BUFFSIZE to `buffsize`, and NVLS off where `nvls` is False."""
    release = carried_release(nccl)  # an unknown version is an error before any work
    sys = system(topology, gpus, release)
    return Tuned(sys, graphs(sys), release, min_channels, max_channels, nvls, nvls_channels,
                 nthreads, ll128_nthreads, buffsize)


def nvls_channels(tuned: Tuned, limited: bool = True) -> int:
    """comm->nvlsChannels: NVLS_NCHANNELS by architecture and nodes, and from 2.30.3 on
    Blackwell across nodes what ncclNvlsTreeSm100Tuning (transport/nvls.cc) picks from the
    NIC's rate and the GPUs per node; NCCL_NVLS_NCHANNELS in its place where set (and
    `limited`), held to 1..MAXCHANNELS as ncclNvlsInit/ncclNvlsTuning hold it to the CTAs."""
    if limited and tuned.nvls_count is not None:
        return max(1, min(tuned.nvls_count, tuned.sys.tables["channels"]["max"]))
    sys = tuned.sys
    limits = sys.tables["channels"]
    table = limits["nvls_channels_nodes" if sys.nodes > 1 else "nvls_channels"]
    channels = table.get(sys.arch, tuned.graphs["NVLS"].channels)
    if sys.tables["rules"]["sm100_nvls_tuning"] and sys.arch == "blackwell" and sys.nodes > 1:
        t = limits["sm100_tuning"]
        ppn = sys.min_local
        if sys.nodes == 2 and sys.net_bw >= t["nic"]:
            channels = t["two_nodes"]
        elif sys.net_bw >= t["fast_nic"]:
            channels = t["fewer"] if ppn <= t["few_gpus"] else t["two_nodes"]
        elif sys.net_bw >= t["nic"]:
            channels = t["fewer"]
    return channels


def connected(tuned: Tuned, limited: bool = True) -> tuple[int, int]:
    """connect.cc's comm->collChannels and comm->nChannels (raised to nvlsChannels), held to
    NCCL_MIN_NCHANNELS / NCCL_MAX_NCHANNELS unless `limited` is False."""
    sys = tuned.sys
    limits, rules = sys.tables["channels"], sys.tables["rules"]
    ring, chain = tuned.graphs["Ring"], tuned.graphs["CollNetChain"]
    # The ring graph's channels connected twice; with CollNet half as many again; on Hopper
    # and later across nodes twice again (before 2.25.1 Hopper only: minCompCap == 90).
    channels = min(limits["max"], 2 * ring.channels)
    if sys.collnet and chain.channels and chain.bw_intra > chain.bw_inter and sys.ranks > sys.nodes:
        # "Add more channels to saturate intra-node bandwidth, except the 1 PPN case"
        channels = min(limits["max"], channels + channels // limits["collnet_add_divisor"])
    if (sys.arch in rules["comm_double_archs"] and sys.nodes > 1
            and ring.bw_intra > limits["comm_double_above"]
            and channels < limits["comm_double_below"]):
        channels = min(limits["max"], 2 * channels)
    if limited:
        channels = set_channels(tuned, channels)
    # collChannels is taken here; from 2.20.5 to 2.27.7 comm->nChannels is then raised to
    # nvlsChannels where NVLS runs.
    raised = channels
    # With NVLS off ncclNvlsInit leaves nvlsChannels at 0 (transport/nvls.cc): nothing to raise to.
    if rules["comm_nvls_raise"] != "none" and tuned.graphs["NVLS"].channels and tuned.nvls:
        raised = min(limits["max"], max(channels, nvls_channels(tuned, limited)))
    return channels, raised


def set_channels(tuned: Tuned, channels: int) -> int:
    """The communicator's channels after NCCL_MAX_NCHANNELS, then NCCL_MIN_NCHANNELS
    (connect.cc, ncclTopoPostset): at most the maximum, then copies of the first channels up
    to the minimum; either is held to MAXCHANNELS as ncclMaxNchannels/ncclMinNchannels do."""
    if tuned.max_channels is not None:
        channels = min(channels, _kept(tuned))
    if tuned.min_channels is not None:
        # copyChannels(comm, nChannels, min) adds copies of the rings, never removes any
        channels = max(channels, min(tuned.min_channels, tuned.sys.tables["channels"]["max"]))
    return channels


def _kept(tuned: Tuned) -> int:
    """NCCL_MAX_NCHANNELS as ncclMaxNchannels holds it: 1 to the release's MAXCHANNELS."""
    return max(1, min(tuned.max_channels, tuned.sys.tables["channels"]["max"]))


def distinct_channels(tuned: Tuned, algo: str, run: int) -> float:
    """Of the `run` channels a call runs on, how many NCCL's own pricing counts: each of the
    communicator's channels is its share of the searched graph's rings, the way NCCL connects
    every ring twice (and again on Hopper across nodes) to drive it with more blocks. Comm
    channel c runs ring c mod the graph's rings, so the first channels NCCL_MAX_NCHANNELS
    keeps hold that many rings at most; the copies NCCL_MIN_NCHANNELS or the raise to
    nvlsChannels add after it drive those rings only, up to NCCL's own count of blocks a ring.
    NVLS's channels are each its own."""
    rings = tuned.graphs[algo].channels
    if algo in NVLS_FAMILY or tuned.max_channels is None or rings <= 0:
        return run
    natural = comm_channels(tuned, algo, limited=False)
    kept = _kept(tuned)
    # the kept rings, each driven by at most as many blocks as NCCL's own communicator gives it
    return min(run, min(kept, rings) * natural / rings, natural)


def comm_channels(tuned: Tuned, algo: str, limited: bool = True) -> int:
    """Channels an algorithm starts from: nvlsChannels for NVLS, else connect.cc's; with
    `limited` False, as if NCCL_MIN_NCHANNELS / NCCL_MAX_NCHANNELS were unset (the count
    NCCL's tuning prices, since its bandwidths count the searched graph's channels)."""
    if algo in NVLS_FAMILY:
        return nvls_channels(tuned, limited)  # nvlsChannels has its own setting, NCCL_NVLS_NCHANNELS
    # Ring, Tree and CollNetDirect start from the raised count from 2.22.3 (enqueue.cc:
    # comm->nChannels), from collChannels in 2.20.5 and 2.21.5.
    start, raised = connected(tuned, limited)
    return raised if tuned.sys.tables["rules"]["comm_nvls_raise"] == "rings" else start


def run_channels(tuned: Tuned, algo: str, proto: str, nbytes: int) -> int:
    """The channels NCCL launches one call on (topoGetAlgoInfo in enqueue.cc): rings, trees
    and CollNetChain drop a channel while the call is under channels × threads × threshold
    bytes, CollNetDirect while it is under that × its heads, in stages; NVLS runs on
    nvlsChannels (across nodes at most the communicator's channels)."""
    channels = comm_channels(tuned, algo)
    if algo == "NVLS" and tuned.sys.nodes > 1 and tuned.sys.tables["rules"]["nvls_across_capped"]:
        return min(channels, comm_channels(tuned, "Ring"))
    if algo in ("NVLS", "NVLSTree", "PAT"):
        return channels  # PAT's comm->maxThreads is never set (0), so its loop never runs
    t = tuned.sys.tables["threads"]
    if algo == "CollNetDirect":
        heads = min(tuned.graphs[algo].channels, max(1, tuned.sys.ranks // tuned.sys.nodes))
        return _collnet_direct_run(channels, channel_threads(tuned, algo, proto) * heads,
                                   t["collnet_threshold"], nbytes)
    threshold = t["threshold"][proto] * (tuned.sys.ranks if algo == "Ring" and proto == "LL" else 1)
    if algo == "CollNetChain":
        threshold = t["collnet_threshold"]
    threads = channel_threads(tuned, algo, proto)
    # `while (nBytes < nc * nt * threadThreshold) nc--` down to one channel: the largest nc
    # whose nc × nt × threshold bytes fit in the call.
    return max(1, min(channels, nbytes // (threads * threshold)))


def _collnet_direct_run(channels: int, per_channel: int, threshold: int, nbytes: int) -> int:
    """topoGetAlgoInfo's CollNet channel tuning: from `channels`, drop one while the call is
    under channels × `per_channel` (threads × heads) × threshold bytes, but not below 16, then
    8, 4, 2 and 1 in turn, halving the threshold as the count passes 1.5 times each floor."""
    nc, floor, short = channels, 16, True
    while floor >= 1 and short:
        while True:
            short = nbytes < nc * per_channel * threshold
            if not (short and nc > floor):
                break
            if nc == floor + floor // 2:
                threshold //= 2
            nc -= 1
        floor //= 2
    return nc


def channel_threads(tuned: Tuned, algo: str, proto: str) -> int:
    """comm->maxThreads (ncclTopoTuneModel): the threads a channel runs with, 0 where NCCL
    sets none. A Simple ring gets fewer when its graph's channels × speed is at most PCI_BW;
    NCCL_NTHREADS (LL and Simple) and NCCL_LL128_NTHREADS (LL128) set them as getNthreads
    holds them."""
    t = tuned.sys.tables["threads"]
    if algo in ("Ring", "Tree"):
        ring = tuned.graphs["Ring"]
        most = t["max_threads"][proto]
        default = most
        if (algo, proto) == ("Ring", "Simple") and ring.bw_intra * ring.channels <= t["pci_bw"]:
            default = t["ring_simple_small"]
        if proto == "LL128":
            return _nthreads(tuned.ll128_nthreads, most // 4, most, default, t["warp"])
        return _nthreads(tuned.nthreads, 2 * t["warp"], most, default, t["warp"])
    if proto == "Simple" and algo in ("CollNetDirect", "CollNetChain", *NVLS_FAMILY):
        return t["nccl_max"]
    return 0  # PAT's is never set


def _nthreads(given: int | None, least: int, most: int, default: int, warp: int) -> int:
    """tuning.cc's getNthreads: a positive setting that is a multiple of a warp, held to
    [least, most]; one that is not a multiple of a warp is `most`; 0 or less, or none, the
    default."""
    if given is None or given <= 0:
        return default
    if given % warp:
        return most
    return min(max(given, least), most)
