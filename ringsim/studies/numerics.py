"""How far each algorithm's float sum lies from the exact sum: the order of additions, measured.

Floating-point addition rounds, so (a+b)+c and a+(b+c) can differ in the last bits. Every
all-reduce adds the same G contributions per element, but each algorithm (and each G, and
each number of channels) adds them in its own order (order.py states the rule): the ring
adds one GPU's value at a time to a growing partial sum, a tree adds sums of equal weight.
NCCL's maintainers: "Ring, by nature, has a worse precision than say Tree, because of the
order in which it performs the sums" (NVIDIA/nccl issue 1055, 2023; see also NVIDIA/nccl issue
1026: the tree "adds values of equal weights"). Every GPU still ends with the same bits
(NVIDIA/nccl issue 855).

`measure` runs every algorithm on the same random gradients through the numeric executor,
in the dtype itself (bfloat16 through the ml_dtypes package, whose adds round the exact sum
to nearest even), and compares each result with the exact sum: math.fsum per element over
the inputs widened to float64 (exactly rounded; Shewchuk 1997), an independent reference
that no plan touches. Any order of adding G terms stays within the textbook bound
|ŝ − s| ≤ γ_{G−1}·Σ|x|, γ_k = k·u/(1 − k·u), u the unit roundoff (Higham, "Accuracy and
Stability of Numerical Algorithms", 2nd ed. 2002, §4.2): (G−1)·u·Σ|x| to first order.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..algorithms import ALGORITHMS, make_plan
from ..core.checks import check_count, check_gpus
from ..core.errors import RingsimError
from ..execute.backend import make_executor
from ..core.layout import Layout
from ..execute.memory import allreduce_bytes, check_memory

# Significand bits (with the implicit one) of the float types measured: u = 2^-bits.
PRECISION = {"float64": 53, "float32": 24, "float16": 11, "bfloat16": 8}
DEFAULT_DTYPES = ("float32", "bfloat16")
MAX_CELLS = 1 << 21  # G·N: the exact reference runs math.fsum once per element, in Python
MAX_GPUS = 256  # the naive flood's G² transfers: larger G makes minutes, not seconds
QUOTE = ('NCCL\'s maintainers: "Ring, by nature, has a worse precision than say Tree, because '
         'of the order in which it performs the sums" (NVIDIA/nccl issue #1055).')


def has_bfloat16() -> bool:
    """True when the ml_dtypes package (NumPy's bfloat16) can be imported."""
    try:
        import ml_dtypes  # noqa: F401
    except ImportError:
        return False
    return True


def dtype_of(name: str) -> np.dtype:
    """The NumPy dtype of a float type's name; bfloat16 comes from ml_dtypes."""
    if name == "bfloat16":
        try:
            import ml_dtypes
        except ImportError:
            raise RingsimError("bfloat16 needs the ml_dtypes package: pip install ml-dtypes "
                               "(or ringsim[numerics])") from None
        return np.dtype(ml_dtypes.bfloat16)
    if name not in PRECISION:
        raise RingsimError(f"the numerics view measures float types only ({', '.join(PRECISION)}), "
                           f"got {name!r}")
    return np.dtype(name)


def unit_roundoff(name: str) -> float:
    """u = 2^-p for a float type with p significand bits: 2^-24 for float32, 2^-8 for bfloat16."""
    dtype_of(name)  # refuses unknown names
    return 2.0 ** -PRECISION[name]


def random_gradients(gpus: int, elements: int, dtype: str = "float32", seed: int = 0) -> np.ndarray:
    """(G, N) standard-normal gradients rounded to `dtype` (float64 draws, one rounding)."""
    rng = np.random.default_rng(seed)
    return rng.standard_normal((gpus, elements)).astype(dtype_of(dtype))


def exact_sum(gradients: np.ndarray) -> np.ndarray:
    """The element-wise sum over GPUs, exactly rounded to float64 (math.fsum per element)."""
    columns = np.asarray(gradients).astype(np.float64).T.tolist()
    return np.array([math.fsum(column) for column in columns], dtype=np.float64)


def textbook_bound(gradients: np.ndarray, name: str) -> np.ndarray:
    """γ_{G−1}·Σ|x| per element: the most any order of G−1 rounded additions can be off."""
    k = gradients.shape[0] - 1
    u = unit_roundoff(name)
    gamma = k * u / (1 - k * u) if k * u < 1 else math.inf
    return gamma * np.abs(np.asarray(gradients).astype(np.float64)).sum(axis=0)


def _checked_plan(algorithm: str, gpus: int, elements: int, itemsize: int, **options):
    plan = make_plan(algorithm, gpus, **options)
    layout = Layout(plan.segments, elements)
    check_memory(allreduce_bytes(plan, layout, itemsize),
                 f"a {algorithm} all-reduce of {gpus:,} × {elements:,} {itemsize}-byte elements",
                 instead="use fewer GPUs or elements")
    return plan, layout


def reduce_with(algorithm: str, gradients: np.ndarray, plan=None, **options) -> np.ndarray:
    """GPU1's result of running `algorithm` on the (G, N) gradients, in their own dtype."""
    gpus, elements = gradients.shape
    if plan is None:
        plan, layout = _checked_plan(algorithm, gpus, elements, gradients.dtype.itemsize, **options)
    else:
        layout = Layout(plan.segments, elements)
    executor = make_executor(plan, layout, np, gradients.dtype)
    executor.load(list(gradients))  # copied in, never written
    executor.run()
    return executor.result()[0].copy()


@dataclass(frozen=True)
class Error:
    """One algorithm's error in one dtype against the exact sum, over every element."""

    algorithm: str
    dtype: str
    max_error: float
    mean_error: float
    bound_used: float      # the largest |error| / (γ_{G−1}·Σ|x|) over the elements: ≤ 1 always
    differs: int           # elements whose bits differ from the first algorithm's result


@dataclass(frozen=True)
class Numerics:
    """Every algorithm's error per dtype for G GPUs of N random elements (seed)."""

    gpus: int
    elements: int
    seed: int
    dtypes: tuple[str, ...]
    algorithms: tuple[str, ...]
    errors: dict  # (algorithm, dtype) -> Error

    def error(self, algorithm: str, dtype: str) -> Error:
        """The Error of one algorithm in one dtype."""
        return self.errors[(algorithm, dtype)]


def errors_of(result: np.ndarray, exact: np.ndarray, bound: np.ndarray) -> tuple[float, float, float]:
    """(max |error|, mean |error|, max |error|/bound) of a result against the exact sums."""
    if result.size == 0:
        return 0.0, 0.0, 0.0
    error = np.abs(result.astype(np.float64) - exact)
    with np.errstate(divide="ignore", invalid="ignore"):
        used = np.where(error == 0, 0.0, error / bound)
    return float(error.max()), float(error.mean()), float(used.max())


def measure(gpus: int = 8, elements: int = 65536, seed: int = 0,
            dtypes: tuple[str, ...] = DEFAULT_DTYPES,
            algorithms: tuple[str, ...] | None = None) -> Numerics:
    """Run every algorithm (default options) on the same random gradients in each dtype and
    measure its error against the exact sum; the first algorithm (ring) is the one others'
    bits are compared with."""
    gpus = check_count(check_gpus(gpus), "the number of GPUs", minimum=1, maximum=MAX_GPUS)
    elements = check_count(elements, "the number of elements per GPU", minimum=0)
    seed = check_count(seed, "the seed", minimum=0)
    if gpus * elements > MAX_CELLS:
        raise RingsimError(f"the numerics view sums at most {MAX_CELLS:,} values (G × N) exactly, "
                           f"one math.fsum per element; {gpus:,} × {elements:,} is "
                           f"{gpus * elements:,}: use fewer elements")
    names = tuple(algorithms or ALGORITHMS)
    widest = max((dtype_of(d).itemsize for d in dtypes), default=1)
    plans = {a: _checked_plan(a, gpus, elements, widest)[0] for a in names}  # refuse before running
    found: dict = {}
    for name in dtypes:
        gradients = random_gradients(gpus, elements, name, seed)
        exact, bound = exact_sum(gradients), textbook_bound(gradients, name)
        first = None
        for algorithm in names:
            result = reduce_with(algorithm, gradients, plans[algorithm])
            bits = result.view(f"u{result.dtype.itemsize}")
            first = bits if first is None else first
            high, mean, used = errors_of(result, exact, bound)
            found[(algorithm, name)] = Error(algorithm, name, high, mean, used,
                                             int(np.count_nonzero(bits != first)))
    return Numerics(gpus, elements, seed, tuple(dtypes), names, found)
