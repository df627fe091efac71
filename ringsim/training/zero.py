"""ZeRO stages 0–3: what each GPU sends, receives and keeps per training step.

Rajbhandari, Rasley, Ruwase & He, "ZeRO: Memory Optimizations Toward Training Trillion
Parameter Models" (SC'20). Mixed-precision Adam keeps per parameter 2 bytes of fp16
parameters, 2 of fp16 gradients and K = 12 of optimizer state (fp32 parameters, momentum,
variance) — (2 + 2 + K)Ψ bytes per GPU for Ψ parameters (§3.1, Figure 1). Stage 1 (P_os)
shards the optimizer state over the N_d GPUs: 2Ψ + 2Ψ + KΨ/N_d; stage 2 (P_os+g) also the
gradients: 2Ψ + (2 + K)Ψ/N_d; stage 3 (P_os+g+p) also the parameters: (2 + 2 + K)Ψ/N_d.
Communication (§7): data parallelism all-reduces the gradients, a reduce-scatter and an
all-gather of Ψ each, 2Ψ per GPU; stages 1 and 2 reduce-scatter the gradients and
all-gather the updated parameters, 2Ψ; stage 3 all-gathers the parameters for the forward
and again for the backward pass and reduce-scatters the gradients, 3Ψ (1.5×). PyTorch FSDP's
FULL_SHARD is stage 3 and SHARD_GRAD_OP stage 2 (torch.distributed.fsdp.ShardingStrategy).

The paper's Ψ per collective is the ring's (G−1)/G·Ψ rounded up; ringsim counts the ring's
exact elements, with GPU g's shard being segment g of Layout(G, Ψ).

Times are the ring's: one ring, GPUs in order 1, 2, ..., G, by default. With the ring's options
(channels=K, ring_order='rails:P' as NCCL lays its rings out one per NIC) each reduce-scatter
or all-gather is priced as that phase of the ring all-reduce on those rings, so that a
reduce-scatter and an all-gather together take what `estimate('ring', ...)` gives the
all-reduce; the element counts stay the single ring's.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ..algorithms.collectives import ALL_GATHER, ALL_REDUCE, REDUCE_SCATTER, Collective
from ..core.checks import check_count, check_gpus, echo
from ..core.arguments import argument
from ..core.errors import RingsimError
from ..core.layout import Layout

# The algorithm whose halves ZeRO's reduce-scatters and all-gathers run, and whose options
# lay out their rings: the ring's (the only one that builds them).
ALGORITHM = REDUCE_SCATTER.algorithms[0]
PARAM_BYTES, GRAD_BYTES, ADAM_BYTES = 2, 2, 12  # fp16 parameters, fp16 gradients, K = 12
STAGES = (0, 1, 2, 3)
STAGE_NAMES = {0: "data parallelism, nothing sharded", 1: "P_os: optimizer states sharded",
               2: "P_os+g: optimizer states and gradients sharded",
               3: "P_os+g+p: optimizer states, gradients and parameters sharded (FSDP full shard)"}

# Per step: (collective, what it moves), in the order they run.
COLLECTIVES = {
    0: ((ALL_REDUCE, "gradients"),),
    1: ((REDUCE_SCATTER, "gradients"), (ALL_GATHER, "updated parameters")),
    2: ((REDUCE_SCATTER, "gradients"), (ALL_GATHER, "updated parameters")),
    3: ((ALL_GATHER, "parameters for the forward pass"),
        (ALL_GATHER, "parameters for the backward pass"),
        (REDUCE_SCATTER, "gradients")),
}


@dataclass(frozen=True)
class Memory:
    """Bytes one GPU keeps for parameters, gradients and Adam states (the largest shard's GPU)."""

    parameters: int
    gradients: int
    optimizer: int

    @property
    def total(self) -> int:
        """All three together."""
        return self.parameters + self.gradients + self.optimizer


@dataclass(frozen=True)
class ZeroStep:
    """One training step of a ZeRO stage: the collectives, the elements per GPU, memory, time."""

    stage: int
    gpus: int
    params: int
    collectives: tuple[tuple[Collective, str], ...]
    sent: int          # elements the busiest GPU sends per step
    received: int      # elements the busiest GPU receives per step
    memory: Memory
    seconds: float | None = None

    @property
    def paper_elements(self) -> int:
        """The paper's figure: Ψ per collective (2Ψ, or 3Ψ for stage 3)."""
        return len(self.collectives_flat()) * self.params

    def collectives_flat(self) -> list[Collective]:
        """The collectives as reduce-scatters and all-gathers (an all-reduce is one of each)."""
        return [part for c, _ in self.collectives for part in c.parts()]


def check_stage(stage) -> None:
    """Refuse a stage ZeRO does not have, in one line."""
    if isinstance(stage, bool) or stage not in STAGES:
        raise RingsimError(f"the ZeRO stage must be 0, 1, 2 or 3, got {echo(stage)}")


def memory(stage: int, params: int, gpus: int) -> Memory:
    """Bytes per GPU in mixed-precision Adam (Figure 1 of the paper), shards as Layout(G, Ψ) cuts them."""
    check_stage(stage)
    shard = Layout(gpus, params).width  # the largest shard: ⌈Ψ/G⌉
    return Memory(PARAM_BYTES * (shard if stage >= 3 else params),
                  GRAD_BYTES * (shard if stage >= 2 else params),
                  ADAM_BYTES * (shard if stage >= 1 else params))


def paper_memory(stage: int, params: int, gpus: int) -> Fraction:
    """The paper's formula in bytes: (2 + 2 + 12)Ψ, 4Ψ + 12Ψ/N_d, 2Ψ + 14Ψ/N_d, 16Ψ/N_d."""
    check_stage(stage)
    psi, nd = Fraction(params), gpus
    return {0: 16 * psi, 1: 4 * psi + 12 * psi / nd, 2: 2 * psi + 14 * psi / nd,
            3: 16 * psi / nd}[stage]


def ring_options(gpus: int, options: dict | None) -> dict:
    """The ring's options as users give them (channels=, ring_order=), checked; {} for none.

    Another algorithm's option is refused in the one line `ringsim compare` and `timeline`
    give ('ring takes --channels, --ring-order, not --chunks ...')."""
    from ..algorithms import check_options
    given = {k: v for k, v in (options or {}).items() if v is not None}
    if given:
        check_options(ALGORITHM, gpus, given)
    return given


def step(stage: int, params: int, gpus: int, model=None, options: dict | None = None) -> ZeroStep:
    """One training step of ZeRO `stage` for Ψ = `params` on G GPUs (time when a CostModel is
    given, on the ring with `options`: channels=, ring_order= as users give them)."""
    check_stage(stage)
    gpus = check_gpus(gpus)
    params = check_count(params, "the number of parameters", minimum=1)
    if params > 10**15:
        raise RingsimError(f"{argument('params')} {params:,} is more than 10^15 parameters")
    plan = COLLECTIVES[stage]
    given = ring_options(gpus, options)
    prices: dict = {}  # each kind of collective priced once (stage 3 runs two all-gathers)
    sent = np.zeros(gpus, np.int64)  # at most 3 collectives × 10^15 elements: far below 2^63
    received = np.zeros(gpus, np.int64)
    seconds = 0.0 if model is not None else None
    flat = ZeroStep(stage, gpus, params, plan, 0, 0, memory(stage, params, gpus)).collectives_flat()
    for part in flat:
        s, r = part.per_gpu_arrays(gpus, params)
        sent += s
        received += r
        if model is not None:
            if part.name not in prices:
                prices[part.name] = part.seconds(gpus, params, model, **given).seconds
            seconds += prices[part.name]
    return ZeroStep(stage, gpus, params, plan, int(sent.max()), int(received.max()),
                    memory(stage, params, gpus), seconds)
