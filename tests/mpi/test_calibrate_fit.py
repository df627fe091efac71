"""The ping-pong fit: α and β never negative, and a few slow outliers do not tip the slope."""

import numpy as np
import pytest

from ringsim.cost.topology import parse
from ringsim.mpi.calibrate import SIZES, fit, topology_text


def test_outliers_leave_the_slope_near_the_truth():
    sizes = np.array(SIZES, dtype=np.int64)
    seconds = 5e-6 + 1e-10 * sizes
    seconds[[0, 4, 8]] *= 40  # three ping-pongs caught behind another process
    robust = fit(sizes, seconds)
    assert robust["beta"] == pytest.approx(1e-10, rel=0.05)
    assert robust["alpha"] == pytest.approx(5e-6, rel=0.2)


# Half round trips (µs) measured on this project's shared 2-core machine under load, where the
# weighted least-squares line of before came out with β < 0.
BUSY = [238.041, 262.730, 301.916, 231.990, 234.268, 232.625, 252.054, 288.295, 74.540, 420.308]


def test_a_busy_machines_ping_pong_gives_a_positive_slope():
    sizes = np.array(SIZES, dtype=np.int64)
    seconds = np.array(BUSY) * 1e-6
    weight = 1 / seconds
    design = np.column_stack([np.ones(len(sizes)), sizes.astype(float)])
    old = np.linalg.lstsq(design * weight[:, None], seconds * weight, rcond=None)[0]
    assert old[1] < 0
    robust = fit(sizes, seconds)
    assert robust["beta"] > 0 and robust["alpha"] > 0
    assert seconds[-1] / 2 < robust["alpha"] + robust["beta"] * sizes[-1] < seconds[-1] * 2


def test_a_falling_curve_gives_zero_slope_not_a_negative_one():
    sizes = np.array(SIZES, dtype=np.int64)
    seconds = np.linspace(3e-4, 1e-4, len(SIZES))
    robust = fit(sizes, seconds)
    assert robust["beta"] == 0.0 and robust["alpha"] > 0


def test_the_topology_text_reads_back_as_a_one_level_topology():
    record = {"alpha": 2.5e-6, "beta": 1e-10, "alpha_error": 1e-7, "beta_error": 1e-12, "r2": 0.99,
              "gamma": 2e-10, "mpi_library": "MPICH", "ping_pong": {"bytes": [8], "seconds": [3e-6]}}
    topo = parse(topology_text(record, "here"), "here")
    assert topo.name == "here" and topo.gpus_per_node is None
    assert topo.level("inside").alpha == pytest.approx(2.5e-6)
    assert topo.level("inside").bandwidth == pytest.approx(1e10)
    assert topo.reduce_bandwidth == pytest.approx(5e9)
    free = parse(topology_text({**record, "beta": 0.0}, "free"), "free")
    assert free.level("inside").bandwidth == float("inf")


def test_the_calibration_table_keeps_its_columns_for_long_algorithm_names():
    """`ringsim mpi --calibrate` printed 'recursive-doubling      8.46 ms' past the header's
    10-character algorithm column, so the times no longer lined up under their headings."""
    from ringsim.mpi.calibrate import _text
    names = ["ring", "recursive-doubling", "bidirectional-ring", "nccl-tree"]
    record = {"mpi_library": "MPICH", "alpha": 5e-6, "alpha_error": 1e-7, "beta": 1e-10,
              "beta_error": 1e-12, "r2": 0.99, "gamma": 1e-11, "ranks": 3, "elements": 8,
              "dtype": "float32",
              "algorithms": [{"algorithm": n, "predicted_seconds": 1e-3, "measured_seconds": 2e-3}
                             for n in names]}
    lines = _text(record, 32).splitlines()
    header = next(i for i, line in enumerate(lines) if line.strip().startswith("algorithm"))
    rows = lines[header:header + 1 + len(names)]
    # The columns are right-aligned: each time ends where its heading does.
    predicted = rows[0].index("predicted") + len("predicted")
    measured = rows[0].index("measured") + len("measured")
    for line, name in zip(rows[1:], names):
        assert line.split()[0] == name
        assert line[:predicted].endswith("1.00 ms") and line[:measured].endswith("2.00 ms"), rows
    assert len({len(line) for line in rows}) == 1, rows
