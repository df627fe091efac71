"""The lessons' sharding figures: reduce-scatter, all-gather and ZeRO (ringsim.algorithms.collectives, ringsim.training.zero).

Every figure comes from the engine: labels from the collectives' plans run on the symbolic
state (ringsim.execute.symbolic), closed forms from the collectives' `closed_form`, volumes and
memory from `ringsim.training.zero.step` (Rajbhandari et al., ZeRO, SC'20), and the sharded training
run from `ringsim.training.zero_train.train_zero`. Ψ (params=) defaults to the lesson's N.
"""

from __future__ import annotations

from fractions import Fraction

from ..core.errors import RingsimError
from .cache import Cache
from ..core.formula import format_number
from .budget import training_cost
from .words import Entry, check_training, ratio, small_number

COLLECTIVE_OPTIONS = ("gpus", "elements", "collective")
ZERO_OPTIONS = ("gpus", "stage", "params")
TRAIN_OPTIONS = ("gpus", "stage", "epochs")
ZERO_MAX_GPUS = 100_000   # zero.step lists every GPU's elements: O(G)
LABEL_MAX_GPUS = 128      # symbolic labels, as every other lesson figure
EQUAL_SEED = 0

_STATES = Cache(64)
_EQUAL = Cache(64)
_TRAIN = Cache(64)


# --- reduce-scatter, then all-gather --------------------------------------------------------
def states(a):
    """The symbolic state after the ring's reduce-scatter, and after the all-gather that follows it."""
    from ..algorithms.collectives import ALL_GATHER, REDUCE_SCATTER
    g = a.scenario.gpus
    if g > LABEL_MAX_GPUS:
        raise RingsimError(f"{a.expr.head!r} keeps labels for at most {LABEL_MAX_GPUS} GPUs (got {g:,})")
    if g not in _STATES:
        # Labels only, no values: measured about 0.2 s at G = 128 on a 2-core machine.
        a.ctx.budget.spend(g * g * 2 * (g - 1) // 20_000 + 1, f"{a.expr.head!r} (labels of {g:,} GPUs)")
        state = REDUCE_SCATTER.initial_state(g)
        for step in REDUCE_SCATTER.plan(g).steps:
            state.apply(step)
        scattered = [list(row) for row in state.held]
        for step in ALL_GATHER.plan(g).steps:
            state.apply(step)
        _STATES[g] = (scattered, state)
    return _STATES[g]


def _label(a, which: int) -> str:
    from ..core.naming import sum_label
    gpu, segment = a.indices
    g = a.scenario.gpus
    for index, what in ((gpu, "GPU"), (segment, "segment")):
        if not 1 <= index <= g:
            raise RingsimError(f"{what} {index} does not exist: they are 1..{g}")
    scattered, gathered = states(a)
    if which == 0:
        held = scattered[gpu - 1][segment - 1]
        complete = sorted(held) == list(range(g))
        return sum_label(tuple(range(g)) if complete else held, segment - 1, max_terms=8)
    return gathered.label(gpu - 1, segment - 1, max_terms=8)


def _equal(a) -> str:
    """'yes' when reduce-scatter then all-gather is the all-reduce: labels, values and traffic."""
    import numpy as np

    from ..algorithms.collectives import ALL_GATHER, ALL_REDUCE, REDUCE_SCATTER
    from ..api import allreduce
    from ..api import all_gather, reduce_scatter
    s = a.scenario
    key = (s.gpus, s.elements)
    if key not in _EQUAL:
        if s.gpus * s.elements > 1_000_000:
            raise RingsimError(f"{a.expr.head!r} sums real arrays: at most 1,000,000 elements in all")
        _, gathered = states(a)
        a.ctx.budget.spend(s.gpus * s.elements // 10_000 + s.gpus, f"{a.expr.head!r} (three collectives)")
        complete = all(gathered.is_complete(g, j) for g in range(s.gpus) for j in range(s.gpus))
        rng = np.random.default_rng(EQUAL_SEED)
        arrays = [rng.integers(-1000, 1000, s.elements) for _ in range(s.gpus)]
        shards = reduce_scatter(arrays).outputs
        joined = all_gather_shards(all_gather, shards, s.elements)
        whole = allreduce(arrays).outputs
        same = all(np.array_equal(joined, out) for out in whole)
        moved = sum(c.closed_form(s.gpus, s.elements).total.value for c in (REDUCE_SCATTER, ALL_GATHER))
        traffic = moved == ALL_REDUCE.closed_form(s.gpus, s.elements).total.value
        _EQUAL[key] = "yes" if complete and same and traffic else "no"
    return _EQUAL[key]


def all_gather_shards(all_gather, shards, elements: int):
    """ringsim.all_gather of unequal shards (G need not divide N): pad each to the widest, gather, trim."""
    import numpy as np
    width = max(len(x) for x in shards)
    padded = [np.concatenate([x, np.zeros(width - len(x), x.dtype)]) for x in shards]
    stacked = all_gather(padded).outputs[0]
    return np.concatenate([stacked[g, :len(x)] for g, x in enumerate(shards)])[:elements]


def _collective(a):
    from ..algorithms.collectives import collective
    name = a.options.get("collective")
    if name is None:
        raise RingsimError(f"{a.expr.head!r} needs collective=reduce-scatter, all-gather or all-reduce")
    return collective(name)


def _closed(a, field: str):
    s = a.scenario
    return getattr(_collective(a).closed_form(s.gpus, s.elements), field)


# --- ZeRO -------------------------------------------------------------------------------------
def _stage(a) -> int:
    stage = a.options.get("stage", 0)
    if stage not in (0, 1, 2, 3):
        raise RingsimError(f"stage must be 0, 1, 2 or 3, got {stage}")
    return stage


def zero_step(a, stage: int | None = None):
    """ringsim.training.zero.step for the figure's stage, Ψ (params=, else N) and G."""
    from ..training import zero
    g = a.scenario.gpus
    if g > ZERO_MAX_GPUS:
        raise RingsimError(f"{a.expr.head!r} counts every GPU: at most {ZERO_MAX_GPUS:,} GPUs (got {g:,})")
    params = a.options.get("params", a.scenario.elements)
    return zero.step(_stage(a) if stage is None else stage, params, g)


def bytes_text(value) -> str:
    """Bytes in powers of 1,000 as the ZeRO paper writes them: '120 GB', '31.4 GB', '1.9 GB'."""
    for unit, scale in (("TB", 10**12), ("GB", 10**9), ("MB", 10**6), ("kB", 10**3)):
        if value >= scale:
            return f"{float(Fraction(value) / scale):,.1f}".removesuffix(".0") + f" {unit}"
    return f"{int(value):,} bytes"


def _table(a) -> str:
    first = zero_step(a, 0)
    lines = [f"  Ψ = {first.params:,} parameters, N_d = {first.gpus:,} GPUs",
             f"  {'stage':<5}  {'moves per GPU':>17}  {'× Ψ':>5}  {'memory per GPU':>14}"]
    for stage in (0, 1, 2, 3):
        z = zero_step(a, stage)
        lines.append(f"  {stage:<5}  {z.sent:>17,}  {float(Fraction(z.sent, z.params)):>5.3f}  "
                     f"{bytes_text(z.memory.total):>14}")
    return "\n".join(lines)


def _ratio(a) -> str:
    return ratio(zero_step(a).paper_elements / zero_step(a, 0).paper_elements)


def _ratio_why(a, value: str) -> str:
    z, dp = zero_step(a), zero_step(a, 0)
    names = ", ".join(c.name for c in z.collectives_flat())
    return (f"The paper counts Ψ per collective. Stage {z.stage} runs {names}: "
            f"{len(z.collectives_flat())}Ψ; data parallelism's all-reduce is a reduce-scatter and an "
            f"all-gather: {len(dp.collectives_flat())}Ψ. {len(z.collectives_flat())}Ψ ÷ "
            f"{len(dp.collectives_flat())}Ψ = {value}.")


def _label_why(which: int):
    def why(a, value: str) -> str:
        gpu, segment = a.indices
        if which == 0:
            return (f"The ring's reduce-scatter (ringsim.algorithms.collectives) adds each segment's copies GPU by "
                    f"GPU so that GPU k ends with segment k complete; GPU{gpu}'s segment {segment} holds "
                    f"{value}.")
        return (f"After the reduce-scatter GPU{segment} holds segment {segment} complete; the all-gather "
                f"copies it around the ring to every GPU, so GPU{gpu} holds {value}.")
    return why


def _sent_why(a, value: str) -> str:
    z = zero_step(a)
    names = " + ".join(c.name for c in z.collectives_flat())
    return (f"ZeRO stage {z.stage} runs {names} of Ψ = {z.params:,} per step on {z.gpus:,} GPUs; each "
            f"ring collective moves N − ⌊N/G⌋ from the busiest GPU: {value} in all "
            f"(the paper rounds each to Ψ: {z.paper_elements:,}).")


def _memory_why(a, value: str) -> str:
    z = zero_step(a)
    m = z.memory
    return (f"Stage {z.stage}, Ψ = {z.params:,}, N_d = {z.gpus:,}: fp16 parameters {m.parameters:,} + "
            f"fp16 gradients {m.gradients:,} + Adam states {m.optimizer:,} bytes = {m.total:,} bytes "
            f"({bytes_text(m.total)}); a sharded part keeps ⌈Ψ/N_d⌉ per GPU.")


# --- ZeRO trained for real ------------------------------------------------------------------
def training(a):
    """ringsim.training.zero_train.train_zero at the figure's G, stage (default 2) and epochs (default 5)."""
    from ..training.zero_train import train_zero
    g, stage, epochs = a.scenario.gpus, a.options.get("stage", 2), a.options.get("epochs", 5)
    if stage not in (1, 2, 3):
        raise RingsimError(f"ZeRO training takes stage 1, 2 or 3, got {stage}")
    check_training(epochs, g)
    key = (g, stage, epochs)
    if key not in _TRAIN:
        a.ctx.budget.spend(training_cost(epochs, 16, g, 2 * (g - 1)),
                           f"{a.expr.head!r} (ZeRO training on {g:,} GPUs for {epochs} epochs)")
        _TRAIN[key] = train_zero(g, stage, epochs)
    return _TRAIN[key]


def _train_why(a, value: str) -> str:
    run = training(a)
    return (f"ringsim.training.zero_train trained the demo's model ({run.parameters} parameters, Adam, "
            f"{run.steps} steps) on {run.gpus} GPUs twice: ZeRO stage {run.stage} (reduce-scatter, "
            f"update a shard, all-gather) and plain data parallelism (all-reduce, update all); "
            f"largest difference between their replicas: {value}.")


def entries() -> dict:
    """The sharding words, as vocabulary Entries."""
    words = {
        "scattered[][]": Entry(lambda a: _label(a, 0), ("gpus",),
                               "what GPU k's segment j holds after the ring's reduce-scatter "
                               "(segment k: its shard, complete)", _label_why(0)),
        "gathered[][]": Entry(lambda a: _label(a, 1), ("gpus",),
                              "what GPU k's segment j holds after reduce-scatter, then all-gather", _label_why(1)),
        "collective.equal": Entry(_equal, ("gpus", "elements"),
                                  "'yes' when reduce-scatter then all-gather ends as the all-reduce: "
                                  "labels, values (ringsim.reduce_scatter, all_gather, allreduce), traffic"),
        "zero.sent": Entry(lambda a: format_number(zero_step(a).sent), ZERO_OPTIONS,
                           "elements the busiest GPU sends per ZeRO step (the ring's exact count)", _sent_why),
        "zero.paper": Entry(lambda a: format_number(zero_step(a).paper_elements), ZERO_OPTIONS,
                            "the paper's figure: Ψ per collective (2Ψ, or 3Ψ at stage 3)"),
        "zero.ratio": Entry(_ratio, ZERO_OPTIONS, "the stage's volume ÷ data parallelism's, the paper's way",
                            _ratio_why),
        "zero.collectives": Entry(lambda a: ", ".join(c.name for c in zero_step(a).collectives_flat()), ZERO_OPTIONS,
                                  "the stage's collectives in order, all-reduce as its two halves"),
        "zero.memory": Entry(lambda a: bytes_text(zero_step(a).memory.total), ZERO_OPTIONS,
                             "memory per GPU for parameters, gradients, Adam: '31.4 GB'", _memory_why),
        "zero.memory.bytes": Entry(lambda a: format_number(zero_step(a).memory.total), ZERO_OPTIONS,
                                   "the same in bytes", _memory_why),
        "zero.table": Entry(_table, ZERO_OPTIONS, "stages 0–3: elements per GPU and memory (a block)"),
        "zero.train.identical": Entry(lambda a: "yes" if training(a).identical else "no", TRAIN_OPTIONS,
                                      "'yes' when ZeRO's replicas equal data parallelism's bit for bit",
                                      _train_why),
        "zero.train.difference": Entry(lambda a: small_number(training(a).epochs[-1].difference), TRAIN_OPTIONS,
                                       "largest difference between ZeRO's and data parallelism's "
                                       "replicas at the end", _train_why),
        "zero.train.sent": Entry(lambda a: format_number(training(a).sent_per_step), TRAIN_OPTIONS,
                                 "elements the busiest GPU sends per step with ZeRO"),
        "zero.train.dp_sent": Entry(lambda a: format_number(training(a).dp_sent_per_step), TRAIN_OPTIONS,
                                    "… with plain data parallelism"),
        "zero.train.parameters": Entry(lambda a: format_number(training(a).parameters), TRAIN_OPTIONS,
                                       "the demo model's parameters"),
        "zero.train.steps": Entry(lambda a: format_number(training(a).steps), TRAIN_OPTIONS,
                                  "training steps run"),
    }
    for field, words_ in (("total", "elements moved in all"), ("busiest_sent", "elements the busiest GPU sends"),
                          ("steps", "steps")):
        words[f"collective.{field}"] = Entry(
            (lambda f: lambda a: str(_closed(a, f)))(field), COLLECTIVE_OPTIONS,
            f"the collective's closed form of {words_}, with its value")
        words[f"collective.{field}.value"] = Entry(
            (lambda f: lambda a: format_number(_closed(a, f).value))(field), COLLECTIVE_OPTIONS,
            "its value")
    return words
