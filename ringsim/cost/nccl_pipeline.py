"""The wait NCCL's model leaves out: a call's first step crossing its pipeline, stage by stage.

NCCL prices a call at latency + bytes / bandwidth, as if its pipeline ran at the steady rate
from the first byte. With the Simple protocol a GPU hands a step on only when all of it has
arrived (its FIFO's tail moves a whole step at a time), and a network's proxy sends a step
only when all of it is there, whatever the protocol; so before the pipeline runs at that
rate the first step crosses those stages one after another. A pipeline of stages t₁ … tₛ
carrying k steps takes t₁ + … + tₛ + (k − 1) × the slowest stage; NCCL's bandwidth term is
k × the steady time of one step, so the call waits t₁ + … + tₛ − that steady time more.
Inside a node LL and LL128 hand on each line as soon as its flag arrives, within the per-hop
latency NCCL already charges, and a ring keeps every link busy from its first step: neither
waits there. The step sizes are NCCL's (calcCollChunking in src/enqueue.cc); the stages are
what its kernels and proxies run (src/device/all_reduce.h, src/transport/net.cc).
"""

from __future__ import annotations

from .nccl_graph import System, constants, log2i


def chunk_bytes(algo: str, proto: str, nbytes: int, channels: int, heads: int,
                ranks: int = 1, nodes: int = 1, buffsize: int | None = None) -> int:
    """The data bytes of one step NCCL moves (calcCollChunking) for a call of `nbytes` on
    `channels` channels: NVLS's on one node with `heads` heads, a tree's with LL128 on `ranks`
    GPUs in `nodes` nodes, else one step of the protocol's buffer (Simple's: `buffsize`,
    NCCL_BUFFSIZE, where set: init.cc, computeBuffSizes)."""
    c = constants()["chunks"]
    buffer = buffsize if buffsize is not None and proto == "Simple" else c["buffer"][proto]
    step = buffer // c["steps"]
    if proto == "LL":
        return step // 2  # half of each 16-byte line is flags
    if proto == "LL128":
        chunk = step // c["ll128_line"] * c["ll128_data"]
        if algo == "Tree":
            # Smaller steps for smaller calls, so that the tree's pipeline has steps to run.
            ppn = ranks / nodes
            depth = 1 + log2i(nodes) + 0.1 * ppn
            while nbytes // (channels * chunk) < depth * 64 / ppn and chunk > 131072:
                chunk //= 2
            while nbytes // (channels * chunk) < depth * 16 / ppn and chunk > 32768:
                chunk //= 2
        return chunk
    chunk = step
    if algo == "NVLS":
        chunk = min(chunk, c["nvls_chunk"])
        ops = channels * heads
        # Smaller chunks for smaller calls, so that every channel and head has steps to run.
        for times, above in ((64, 65536), (8, 32768), (2, 16384)):
            if nbytes < times * ops * chunk and chunk > above:
                chunk = above
    return chunk


def stages(sys: System, algo: str, proto: str, nbytes: int, channels: int, heads: int,
           inside: float, across: float, buffsize: int | None = None) -> tuple[float, list[float]]:
    """The data bytes one channel moves per step, and the rate (data bytes per second, one
    channel's share) of each stage a step crosses only once all of it has arrived; `inside`
    and `across` are one channel's share of the links' rate inside a node and across nodes;
    `buffsize`: NCCL_BUFFSIZE (None: unset). None: (0, [])."""
    ppn = max(1, sys.ranks // sys.nodes)
    per_channel = nbytes / channels
    if algo == "Tree":
        # A chain inside each node and a tree across: a step goes up ppn − 1 hops inside and
        # log2(nodes) network hops, and the sum comes back down the same way. The network's
        # proxy sends a step only once all of it is there (sendProxyProgress in
        # src/transport/net.cc checks every line's flag), whatever the protocol; inside a node
        # only Simple waits for whole steps.
        loop = min(chunk_bytes(algo, proto, nbytes, channels, 1, sys.ranks, sys.nodes, buffsize),
                   per_channel)
        wire = constants()["chunks"]["data_share"][proto]
        inside_hops = 2 * (ppn - 1) if proto == "Simple" else 0
        return loop, [inside] * inside_hops + [across * wire] * (2 * log2i(sys.nodes))
    if algo == "NVLS" and proto == "Simple" and sys.nodes == 1 and ppn > 1:
        # One node runs three stages on every step, each moving the whole step: the copy into
        # this GPU's share of the multicast buffer (scatter), the switch's reduction and
        # multicast, the copy out (gather). NCCL sizes each stage's warps to keep pace with
        # the others, so each is priced at NVLS's rate.
        loop = min(heads * chunk_bytes(algo, proto, nbytes, channels, heads, buffsize=buffsize),
                   per_channel)
        return loop, [inside] * 3
    # Across nodes (NVLS with the network's reduction, NVLSTree) the same reading of the
    # kernel gives waits 1.3-2.4 times what two-node pairs measure (docs/cost.md, deviation
    # 12), so nothing is added.
    return 0.0, []


def fill_seconds(loop: float, rates: list[float], steady: float) -> float:
    """Seconds a call waits, beyond NCCL's model, for its first step of `loop` bytes to cross
    stages of these rates, when NCCL prices every step at the `steady` rate (bytes/s each)."""
    if loop <= 0 or not rates or steady <= 0 or min(rates) <= 0:
        return 0.0
    # No stage is slower than the steady rate NCCL prices: the slowest stage is what sets it.
    step = loop / steady
    return max(0.0, sum(min(loop / r, step) for r in rates) - step)
