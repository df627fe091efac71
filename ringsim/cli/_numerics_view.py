"""compare --numerics: each algorithm's float error against the exact sum, float32 and bfloat16;
and walk --values' note on the float sums of its run."""

from __future__ import annotations

import argparse
import json

import numpy as np

from ..core.naming import plural
from ..core.errors import RingsimError
from ..studies.numerics import (DEFAULT_DTYPES, PRECISION, QUOTE, Numerics, has_bfloat16, measure)
from ..core.textout import json_ensure_ascii
from ..core.width import say, table
from ..core.checks import count_arg
from ..execute.backend import to_numpy
from ..sim.simulation import Simulation

DEFAULT_GPUS = 8
DEFAULT_ELEMENTS = 65536
NUMERICS_HELP = (
    "measure, for float32 and bfloat16 random gradients (standard normal, --seed), each "
    "algorithm's maximum and mean error against the exact sum (math.fsum per element), side by "
    f"side (default: {DEFAULT_GPUS} GPUs, {DEFAULT_ELEMENTS:,} elements; bfloat16 needs ml_dtypes)")


def add_numerics_arguments(parser: argparse.ArgumentParser) -> None:
    """--numerics and --seed."""
    parser.add_argument("--numerics", action="store_true", help=NUMERICS_HELP)
    parser.add_argument("--seed", type=count_arg("the seed", minimum=0), default=None,
                        metavar="SEED", help="random seed of --numerics' gradients (default: 0)")


def run_numerics(args: argparse.Namespace, timed: bool) -> int:
    """Measure and print the numerics view (text, or one JSON object per algorithm)."""
    if timed:
        raise RingsimError("--numerics measures rounding, not time: give it without --time and "
                           "the time-model options")
    from ..algorithms import option_flag
    from ._nccl_layout import given_options
    given = given_options(args)
    if given:  # refused, not ignored: the rows would not say which options they ran with
        raise RingsimError(f"--numerics measures every algorithm at its default options: give it "
                           f"without {', '.join(option_flag(k) for k in given)}")
    dtypes = tuple(d for d in DEFAULT_DTYPES if d != "bfloat16" or has_bfloat16())
    result = measure(args.gpus or DEFAULT_GPUS,
                     DEFAULT_ELEMENTS if args.elements is None else args.elements,
                     args.seed or 0, dtypes)
    if args.json:
        ascii_only = json_ensure_ascii()
        for name in result.algorithms:
            record = {"algorithm": name, "gpus": result.gpus, "elements": result.elements,
                      "seed": result.seed}
            for d in result.dtypes:
                e = result.error(name, d)
                record[d] = {"max_error": e.max_error, "mean_error": e.mean_error,
                             "bound_used": e.bound_used,
                             f"differs_from_{result.algorithms[0].replace('-', '_')}": e.differs}
            print(json.dumps(record, ensure_ascii=ascii_only))
        return 0
    _print(result, missing_bfloat16="bfloat16" not in dtypes)
    return 0


def _print(result: Numerics, missing_bfloat16: bool) -> None:
    from ..algorithms import ALGORITHMS
    first = result.algorithms[0]
    say(f"Float error of each algorithm's sum · {plural(result.gpus, 'GPU')} · {result.elements:,} "
        f"random elements per GPU (standard normal, seed {result.seed})")
    say("against the exact sum of the same inputs (math.fsum per element, in float64)\n")
    header = ["algorithm"]
    for d in result.dtypes:
        header += [f"{d} max", "mean", f"≠ {first}"]
    rows = [header]
    for name in result.algorithms:
        row = [ALGORITHMS[name].title]
        for d in result.dtypes:
            e = result.error(name, d)
            row += [f"{e.max_error:.3g}", f"{e.mean_error:.3g}", f"{e.differs:,}"]
        rows.append(row)
    print("\n".join(table(rows, left=(0,))))
    n = result.elements
    say(f"\n≠ {first}: of the {n:,} sums, how many differ in their bits from the "
        f"{ALGORITHMS[first].title.lower()}'s.")
    for d in result.dtypes:
        worst = max(result.error(a, d).bound_used for a in result.algorithms)
        say(f"{d}: every error is within the textbook bound γ(G−1)·Σ|x| ≈ (G−1)·u·Σ|x| "
            f"(u = 2^-{PRECISION[d]}; Higham 2002 §4.2): the worst used {worst:.0%} of it." if worst <= 1 else
            f"{d}: an error EXCEEDS the textbook bound (G−1)·u·Σ|x| ({worst:.2f}×): a bug.")
    if missing_bfloat16:
        say("bfloat16: not measured, the ml_dtypes package is missing (pip install '.[numerics]' "
            "from a clone of ringsim, or pip install ml-dtypes).")
    say("\nThe sums differ in the last bits between algorithms, and between G or channel "
        "counts, because each adds the G contributions in its own order and every float "
        "addition rounds: (a+b)+c need not equal a+(b+c). None is wrong; the ring adds one "
        "value at a time to a growing sum, a tree adds sums of equal weight. " + QUOTE +
        " Every GPU still ends with the same bits.")


def float_sums(sim: Simulation) -> bool:
    """True when every GPU ends with float sums of every segment: what the float note reads."""
    return sim.inputs.dtype.kind == "f" and sim.collective.every_gpu_sums(sim.plan.gpus, sim.plan.segments)


def float_report(sim: Simulation) -> dict:
    """This run's largest error against the exact sum, and in how many elements each other
    algorithm's sums (default options, same gradients) differ from it in their bits."""
    from ..algorithms import ALGORITHMS
    from ..studies.numerics import MAX_CELLS, exact_sum, reduce_with
    inputs = to_numpy(sim.inputs)
    mine = to_numpy(sim.values())[0]
    error = np.abs(mine.astype(np.float64) - exact_sum(inputs))
    differs = {}
    if inputs.size <= MAX_CELLS:
        bits = f"u{mine.dtype.itemsize}"
        for name in ALGORITHMS:
            if name != sim.plan.algorithm:
                other = reduce_with(name, inputs)
                differs[name] = int(np.count_nonzero(other.view(bits) != mine.view(bits)))
    return {"dtype": str(inputs.dtype), "max_error": float(error.max()) if error.size else 0.0,
            "differs": differs}


def float_note(report: dict, elements: int) -> str:
    """The walk's note on its float sums (float_report): their error, and where the other
    algorithms' sums differ from them."""
    from ..studies.numerics import QUOTE
    text = (f"Float sums ({report['dtype']}): every GPU holds the same bits, but the order of "
            f"additions sets the last ones. These sums are off the exact sum (math.fsum) by at "
            f"most {report['max_error']:.3g}.")
    if report["differs"]:
        parts = ", ".join(f"{name} {count} of {elements:,}"
                          for name, count in report["differs"].items())
        text += (f" On the same gradients, the other algorithms' sums differ from these in: "
                 f"{parts} (another G or channel count reorders the additions too).")
    return (text + " " + QUOTE + " `ringsim compare --numerics` measures every algorithm's "
            "error.")
