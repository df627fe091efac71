"""The checks a real CUDA device answers: each returns JSON-able records with `ok` and why.

- race stress: ring, master and naive at G = 8, N = 2²² + 3, int32 and float32, fused and
  streams, several repeats from freshly loaded buffers, bit for bit against NumPy's
  executor (and integers against the element-wise sum): a missing event or an overlapping
  launch shows as a differing or unstable result at this size;
- past 2³¹ elements: uint8, G = 2 and 3, N = 2³¹ + 3 per GPU, the whole result compared on the
  device with CuPy's own sum of the inputs and chosen elements (the last three, those around
  2³¹) with a formula evaluated on the host; skipped, saying so, when device memory is short;
- float specials: subnormals, signed zeros, infinities and NaN payloads in float16/32/64,
  bit for bit against NumPy wherever NumPy's result is not NaN; NaN where NumPy has NaN;
  every GPU holding the same bits; whether NaN payloads match NumPy is reported, not required
  (a NaN produced by GPU arithmetic may be the canonical one).

benchmarks/gpu_check.py runs them all plus the benchmark and prints one line per record.
"""

from __future__ import annotations

from typing import Any, Iterator

import numpy as np

from ..algorithms import make_plan
from ..core.layout import Layout
from ..core.reference import reference_sum
from ..execute.backend import make_executor
from ..execute.gpu.executor import visible_devices

# The executor's two ways of running a step, each with a race of its own: the ring's steps
# send to distinct buffers (one fused launch a step), the master's and naive's bring several
# arrivals to one buffer (gathered, then added in arrival order).
RACE_ALGORITHMS = ("ring", "master", "naive")
PERIOD = 65521  # the big-index inputs repeat with this prime period: no power-of-two shift hides


def numpy_result(algorithm: str, data: np.ndarray) -> np.ndarray:
    """The plan's result with NumPy's executor: the bits the GPU must reproduce."""
    plan, layout = make_plan(algorithm, len(data)), Layout(*data.shape)
    ex = make_executor(plan, layout, np, data.dtype)
    ex.load(data)
    ex.run()
    return ex.gradients()


def _data(gpus: int, elements: int, dtype: str, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return rng.integers(info.min, info.max, size=(gpus, elements), dtype=dt, endpoint=True)
    return (rng.standard_normal((gpus, elements), dtype=np.float32) * 1e3).astype(dt)


def _modes(xp: Any) -> list[tuple[str, int]]:
    """(mode, devices) to run: the fused kernel on one device, the streams on all of them."""
    return [("fused", 1), ("streams", visible_devices(xp))]


def _run(xp: Any, ex, data: np.ndarray) -> np.ndarray:
    ex.load(xp.asarray(data))
    ex.run()
    return xp.asnumpy(ex.gradients())


def race_stress(xp: Any, *, gpus: int = 8, elements: int = 2**22 + 3, repeats: int = 3,
                dtypes=("int32", "float32")) -> Iterator[dict]:
    """One record per (algorithm, dtype, mode): every repeat bit for bit equal to NumPy."""
    layout = Layout(gpus, elements)
    for algorithm in RACE_ALGORITHMS:
        plan = make_plan(algorithm, gpus)
        for dtype in dtypes:
            data = _data(gpus, elements, dtype, seed=len(algorithm) + elements)
            expected = numpy_result(algorithm, data)
            reference = True
            if data.dtype.kind in "iu":  # integers: also the plain element-wise sum
                reference = bool(np.array_equal(expected, np.broadcast_to(reference_sum(data), expected.shape)))
            for mode, devices in _modes(xp):
                ex = make_executor(plan, layout, xp, data.dtype, backend="cupy",
                                   devices=devices, mode=mode)
                differing = []
                for _ in range(repeats):
                    got = _run(xp, ex, data)
                    differing.append(int(np.count_nonzero(got.view(np.uint8) != expected.view(np.uint8))))
                yield {"check": "race-stress", "algorithm": algorithm, "dtype": dtype, "mode": mode,
                       "devices": devices, "gpus": gpus, "elements": elements, "repeats": repeats,
                       "differing_bytes": differing, "numpy_equals_sum": reference,
                       "ok": reference and not any(differing)}


def _pattern(xp: Any, gpu: int, elements: int):
    """GPU `gpu`'s uint8 input of `elements` elements: ((i mod P)·(2g+1) + 7g) mod 256."""
    base = ((np.arange(PERIOD, dtype=np.int64) * (2 * gpu + 1) + 7 * gpu) % 256).astype(np.uint8)
    reps = -(-elements // PERIOD)
    full = xp.empty((reps, PERIOD), dtype=np.uint8)
    full[...] = xp.asarray(base)[None, :]
    return full.reshape(-1)[:elements]


def _expected_at(gpus: int, index: int) -> int:
    """The sum of every GPU's input at `index`, mod 256, from the formula alone."""
    return sum(((index % PERIOD) * (2 * g + 1) + 7 * g) % 256 for g in range(gpus)) % 256


def big_index(xp: Any, *, gpus_list=(2, 3), elements: int = 2**31 + 3) -> Iterator[dict]:
    """One record per (G, mode): a uint8 all-reduce of more than 2³¹ elements per GPU."""
    pool = getattr(xp, "get_default_memory_pool", None)
    for gpus in gpus_list:
        # Inputs, the executor's buffers and the result are G·N each, plus the expected row
        # and a gathered block: (3G + 3)·N bytes, and 1 GiB to spare.
        need = (3 * gpus + 3) * elements + (1 << 30)
        for mode, devices in _modes(xp):
            record = {"check": "big-index", "gpus": gpus, "elements": elements, "dtype": "uint8",
                      "mode": mode, "devices": devices}
            free = _free(xp, 0)  # inputs, expected row and result live on device 0
            if free < need:
                yield {**record, "ok": None, "skipped": f"needs about {need / 2**30:.1f} GiB free "
                       f"on device 0; {free / 2**30:.1f} GiB free"}
                continue
            rows = [_pattern(xp, g, elements) for g in range(gpus)]
            expected = rows[0].copy()
            for row in rows[1:]:
                expected += row  # CuPy's own uint8 add (wraps), not ringsim's
            plan, layout = make_plan("ring", gpus), Layout(gpus, elements)
            ex = make_executor(plan, layout, xp, np.uint8, backend="cupy", devices=devices,
                               mode=mode)
            ex.load(rows)
            ex.run()
            out = ex.gradients()
            whole = all(bool((out[k] == expected).all()) for k in range(gpus))
            probes = sorted(i for i in {elements - 3, elements - 2, elements - 1, 2**31 - 1, 2**31,
                                        2**31 + 1} if 0 <= i < elements)
            got = xp.asnumpy(out[:, probes]).tolist()
            want = [_expected_at(gpus, i) for i in probes]
            del rows, expected, ex, out
            if pool is not None:
                pool().free_all_blocks()
            yield {**record, "whole_array_equal": whole, "probes": probes, "got": got, "want": want,
                   "ok": whole and all(row == want for row in got)}


def _free(xp: Any, device: int) -> int:
    with xp.cuda.Device(device):
        return int(xp.cuda.runtime.memGetInfo()[0])


def specials(dtype: str, gpus: int, elements: int, seed: int = 0) -> np.ndarray:
    """Values whose sums test IEEE corners: subnormals (and sums that become subnormal),
    signed zeros, infinities, NaNs with payloads and signs, and ordinary numbers."""
    dt = np.dtype(dtype)
    info = np.finfo(dt)
    uint = {2: np.uint16, 4: np.uint32, 8: np.uint64}[dt.itemsize]
    bits = dt.itemsize * 8
    mantissa = info.nmant
    exp_all = ((1 << (bits - 1 - mantissa)) - 1) << mantissa  # exponent all ones
    nans = np.array([exp_all | (1 << (mantissa - 1)) | 0x2A5,            # quiet NaN, payload
                     exp_all | 0x15,                                      # signalling NaN
                     (1 << (bits - 1)) | exp_all | (1 << (mantissa - 1)) | 0x3],  # negative NaN
                    dtype=uint).view(dt)
    tiny, least = info.tiny, info.smallest_subnormal
    pool = np.concatenate([
        np.array([least, -least, 3 * least, tiny / 2, -tiny / 4, tiny, -tiny * 0.75, tiny * 1.5,
                  0.0, -0.0, np.inf, -np.inf, 1.0, -2.5], dtype=dt), nans])
    rng = np.random.default_rng(seed)
    # Mostly subnormals and zeros; NaNs and infinities rarely, so most sums stay finite.
    weights = np.array([4.0] * 10 + [0.2, 0.2, 1.0, 1.0] + [0.15] * len(nans))
    return rng.choice(pool, size=(gpus, elements), p=weights / weights.sum()).astype(dt)


def float_specials(xp: Any, *, gpus_list=(3, 4, 8), elements: int = 4099) -> Iterator[dict]:
    """One record per (dtype, algorithm, mode): IEEE corner cases against NumPy."""
    for dtype in ("float16", "float32", "float64"):
        for algorithm in RACE_ALGORITHMS:
            for mode, devices in _modes(xp):
                ok, payloads, notes = True, True, []
                for gpus in gpus_list:
                    data = specials(dtype, gpus, elements, seed=gpus)
                    with np.errstate(invalid="ignore", over="ignore"):
                        expected = numpy_result(algorithm, data)
                    plan, layout = make_plan(algorithm, gpus), Layout(gpus, elements)
                    ex = make_executor(plan, layout, xp, data.dtype, backend="cupy",
                                       devices=devices, mode=mode)
                    with np.errstate(invalid="ignore", over="ignore"):  # a NumPy stand-in warns
                        got = _run(xp, ex, data)
                    nan = np.isnan(expected)
                    same_finite = got[~nan].tobytes() == expected[~nan].tobytes()
                    same_nan = bool(np.array_equal(np.isnan(got), nan))
                    agree = bool((got.view(f"u{got.itemsize}") == got[:1].view(f"u{got.itemsize}")).all())
                    payloads &= got[nan].tobytes() == expected[nan].tobytes()
                    if not (same_finite and same_nan and agree):
                        ok = False
                        notes.append({"gpus": gpus, "non_nan_bits_equal": same_finite,
                                      "nan_where_numpy_has_nan": same_nan, "gpus_agree": agree})
                yield {"check": "float-specials", "dtype": dtype, "algorithm": algorithm,
                       "mode": mode, "devices": devices, "gpus": list(gpus_list),
                       "elements": elements, "nan_payloads_equal_numpy": bool(payloads),
                       "failures": notes, "ok": ok}


def environment(xp: Any) -> dict:
    """What ran the checks: CuPy, CUDA runtime and driver versions, the devices."""
    record: dict = {"check": "environment", "ok": True, "module": getattr(xp, "__name__", "?"),
                    "version": getattr(xp, "__version__", None)}
    runtime = xp.cuda.runtime
    for key, call in (("runtime", "runtimeGetVersion"), ("driver", "driverGetVersion")):
        if hasattr(runtime, call):
            record[key] = getattr(runtime, call)()
    count = visible_devices(xp)
    record["devices"] = count
    if hasattr(runtime, "getDeviceProperties"):
        names = [runtime.getDeviceProperties(d)["name"] for d in range(count)]
        record["names"] = [n.decode() if isinstance(n, bytes) else str(n) for n in names]
    return record
