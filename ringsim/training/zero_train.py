"""ZeRO for real on the simulated GPUs: the train demo's model, sharded as ZeRO stage 1, 2 or 3.

Each step: (stage 3: all-gather the parameter shards so every GPU can run its forward
and backward pass,) every GPU computes the gradient of its share of the batch,
reduce-scatter sums the gradients so GPU g holds segment g of the sum, GPU g updates
only its segment with Adam (Kingma & Ba, ICLR 2015) — its shard of the optimizer
state — and (stages 1, 2) an all-gather hands every GPU the updated parameters. Plain
data parallelism runs beside it: the same gradients all-reduced by the same ring halves
joined, every GPU updating all parameters with full Adam state. Adam works element by
element and both runs add the gradients in the same order, so the replicas must end
bitwise identical (Rajbhandari et al., ZeRO, SC'20: "retaining ... the computational
granularity and communication volume of data parallelism").
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..core.naming import plural
from ..algorithms.collectives import ALL_GATHER, REDUCE_SCATTER
from ..execute.backend import make_executor, to_numpy
from ..core.arguments import argument
from ..core.checks import echo
from ..core.errors import RingsimError
from ..core.layout import Layout
from ..execute.ledger import measure
from ..core.plan import Plan
from ..core.width import say
from ..execute.memory import check_memory, train_bytes
from .train import check_training, check_work, gradient, loss, small_difference, synthetic_data

BETA1, BETA2, EPS = 0.9, 0.999, 1e-8  # Adam's defaults (Kingma & Ba 2015, Algorithm 1)


@dataclass(frozen=True)
class ZeroEpoch:
    """Loss, and the largest difference between the ZeRO replicas and data parallelism's."""

    number: int
    loss: float
    difference: float


@dataclass
class ZeroRun:
    """A finished ZeRO run beside plain data parallelism."""

    stage: int
    gpus: int
    parameters: int
    steps: int = 0
    epochs: list[ZeroEpoch] = field(default_factory=list)
    sent_per_step: int = 0          # elements the busiest GPU sends per step under ZeRO
    dp_sent_per_step: int = 0       # … under plain data parallelism
    kept: dict = field(default_factory=dict)     # elements each GPU keeps (ZeRO)
    dp_kept: dict = field(default_factory=dict)  # … (data parallelism)
    zero_weights: np.ndarray | None = None
    dp_weights: np.ndarray | None = None

    @property
    def identical(self) -> bool:
        """True when every ZeRO replica equals every data-parallel replica bit for bit."""
        return bool(np.array_equal(self.zero_weights, self.dp_weights))


class _Collective:
    """One ring collective's executor over (G, N) rows."""

    def __init__(self, plan: Plan, layout: Layout, xp) -> None:
        self.plan, self.xp = plan, xp
        self.executor = make_executor(plan, layout, xp, np.float64)
        self.sent = int(measure(plan, layout).sent.max()) if plan.gpus > 1 else 0

    def __call__(self, rows: np.ndarray) -> np.ndarray:
        self.executor.load(self.xp.asarray(rows))
        self.executor.run()
        return to_numpy(self.executor.result()).copy()


def _adam(p, g, m, v, t: int, lr: float) -> None:
    """One Adam update in place (element by element, so a shard updates as the whole would)."""
    m *= BETA1
    m += (1 - BETA1) * g
    v *= BETA2
    v += (1 - BETA2) * g * g
    p -= lr * (m / (1 - BETA1 ** t)) / (np.sqrt(v / (1 - BETA2 ** t)) + EPS)


def train_zero(gpus: int = 4, stage: int = 2, epochs: int = 5, *, samples: int = 4096,
               features: int = 8, batch: int = 256, lr: float = 0.05, seed: int = 0,
               xp=np, algorithm: str = REDUCE_SCATTER.algorithms[0]) -> ZeroRun:
    """Train the demo's logistic regression with ZeRO `stage` (1–3) and with plain data parallelism,
    syncing with `algorithm`'s reduce-scatter and all-gather (the ring's: no other has them)."""
    if stage not in (1, 2, 3):
        raise RingsimError(f"{argument('stage', shown_flag='--zero')} must be ZeRO stage 1, 2 or 3, "
                           f"got {echo(stage)}")
    gpus, epochs, samples, features, batch = check_training(gpus, epochs, samples, features, batch)
    scatter_plan, gather_plan = REDUCE_SCATTER.plan(gpus, algorithm), ALL_GATHER.plan(gpus, algorithm)
    # Per batch: the ZeRO model and the data-parallel one, each with its own gradients and syncs.
    lr = check_work(gpus, epochs, samples, features, batch,
                    scatter_plan.transfer_count() + gather_plan.transfer_count(), lr, runs=2)
    check_memory(train_bytes(scatter_plan, samples, features, batch) * 2,
                 f"ZeRO training on {samples:,} samples of {features:,} features with {gpus:,} GPUs",
                 instead="fewer samples, features or GPUs")
    x, y = synthetic_data(samples, features, seed)
    n = features + 1
    layout = Layout(gpus, n)
    cut = [slice(layout.offset(g), layout.offset(g + 1)) for g in range(gpus)]
    scatter = _Collective(scatter_plan, layout, xp)
    gather = _Collective(gather_plan, layout, xp)

    # Data parallelism: full replicas, full Adam state on every GPU.
    dp = np.zeros((gpus, n))
    dp_m, dp_v = np.zeros((gpus, n)), np.zeros((gpus, n))
    # ZeRO: GPU g keeps Adam state for its shard only; parameters whole (stages 1, 2) or its shard (3).
    shards = [np.zeros(cut[g].stop - cut[g].start) for g in range(gpus)]
    m = [np.zeros_like(s) for s in shards]
    v = [np.zeros_like(s) for s in shards]
    replicas = np.zeros((gpus, n))  # stages 1, 2: every GPU's whole parameters
    run = ZeroRun(stage, gpus, n)
    per_step = {1: 2, 2: 2, 3: 3}[stage]
    run.sent_per_step = scatter.sent + (per_step - 1) * gather.sent
    run.dp_sent_per_step = scatter.sent + gather.sent
    width = layout.width
    run.kept = {"parameters": n if stage < 3 else width, "gradients": n if stage < 2 else width,
                "optimizer": 2 * width}
    run.dp_kept = {"parameters": n, "gradients": n, "optimizer": 2 * n}

    def gathered() -> np.ndarray:
        """Stage 3: every GPU all-gathers the parameter shards before it needs them."""
        rows = np.zeros((gpus, n))
        for g in range(gpus):
            rows[g, cut[g]] = shards[g]
        return gather(rows)

    t = 0
    for number in range(1, epochs + 1):
        for start in range(0, samples, batch):
            t += 1
            xb, yb = x[start:start + batch], y[start:start + batch]
            parts = np.array_split(np.arange(len(yb)), gpus)
            params = gathered() if stage == 3 else replicas
            local = np.stack([gradient(params[g], xb[s], yb[s], 1 / len(yb))
                              for g, s in enumerate(parts)])
            dp_local = np.stack([gradient(dp[g], xb[s], yb[s], 1 / len(yb))
                                 for g, s in enumerate(parts)])
            # ZeRO: reduce-scatter, then each GPU updates its own shard.
            summed = scatter(local)
            for g in range(gpus):
                if stage < 3:
                    shards[g] = replicas[g, cut[g]].copy()
                _adam(shards[g], summed[g, cut[g]], m[g], v[g], t, lr)
            if stage < 3:  # hand every GPU the updated parameters
                rows = np.zeros((gpus, n))
                for g in range(gpus):
                    rows[g, cut[g]] = shards[g]
                replicas = gather(rows)
            # Data parallelism: all-reduce (the same two ring halves), full update everywhere.
            total = gather(scatter(dp_local) * _owned(gpus, n, cut))
            for g in range(gpus):
                _adam(dp[g], total[g], dp_m[g], dp_v[g], t, lr)
            run.steps += 1
        final = gathered() if stage == 3 else replicas
        run.epochs.append(ZeroEpoch(number, loss(final[0], x, y), float(np.max(np.abs(final - dp)))))
    run.zero_weights, run.dp_weights = (gathered() if stage == 3 else replicas), dp
    return run


def _owned(gpus: int, n: int, cut: list[slice]) -> np.ndarray:
    """A mask keeping GPU g's segment g (what reduce-scatter completed) and zero elsewhere,
    so that the all-gather after it copies complete sums only."""
    mask = np.zeros((gpus, n))
    for g in range(gpus):
        mask[g, cut[g]] = 1.0
    return mask


def report_lines(run: ZeroRun) -> list[str]:
    """The run as text: a row per epoch, what each GPU sent and kept, identical or not."""
    lines = [f"ZeRO stage {run.stage} beside plain data parallelism · {plural(run.gpus, 'GPU')} · logistic "
             f"regression, {run.parameters} parameters, Adam · {run.steps} steps",
             "epoch  loss     ZeRO vs data-parallel replicas"]
    for e in run.epochs:
        lines.append(f"{e.number:>5}  {e.loss:.5f}  {small_difference(e.difference):>12}")
    lines.append(f"Per step the busiest GPU sends {run.sent_per_step:,} elements with ZeRO, "
                 f"{run.dp_sent_per_step:,} with data parallelism.")
    if run.stage == 3:
        # The count is FSDP's; this model's gradient needs its forward output only, not the
        # weights again, so the demo itself gathers them once.
        lines.append("(Stage 3 as FSDP runs it: the parameters all-gathered for the forward pass "
                     "and again for the backward, then a reduce-scatter; this one-layer model's "
                     "backward needs no weights, so the demo gathers them once.)")
    kept = lambda d: ", ".join(f"{k} {v:,}" for k, v in d.items())  # noqa: E731
    lines.append(f"Each GPU keeps (elements): ZeRO {kept(run.kept)}; data parallelism {kept(run.dp_kept)}.")
    lines.append("Replicas identical to plain data parallelism, bit for bit: "
                 + ("yes" if run.identical else "NO"))
    return lines


def run_from_args(args, options: dict) -> int:
    """`ringsim train --zero STAGE` with the algorithm options given (none may be): run, print,
    exit status 0."""
    from ..execute.backend import array_module
    if args.no_sync:
        raise RingsimError("--zero shards the synced update; it cannot run with --no-sync")
    if options:
        raise RingsimError("--zero runs the ring's reduce-scatter and all-gather: no algorithm options")
    run = train_zero(args.gpus, args.zero, args.epochs, samples=args.samples, features=args.features,
                     batch=args.batch, lr=0.05 if args.lr is None else args.lr, seed=args.seed,
                     xp=array_module(args.backend), algorithm=args.algorithm)
    say("\n".join(report_lines(run)))
    return 0
