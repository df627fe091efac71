"""Real MPI runs: every registered algorithm on 2–8 ranks against MPI_Allreduce and the engine."""

from __future__ import annotations

import json

import pytest

import ringsim

from .conftest import CASES, json_lines, launch

pytestmark = pytest.mark.mpi
# Every algorithm, NVLS's switch included: rank 0 plays it beside its GPU (mpi/executor.py).
MPI_ALGORITHMS = list(ringsim.ALGORITHMS)


@pytest.mark.parametrize("ranks", [2, 5, 8])
def test_every_algorithm_dtype_and_size_matches_mpi_allreduce_and_ringsim(mpiexec, ranks):
    out = launch(mpiexec, ranks, [str(CASES)], timeout=150)
    assert out.returncode == 0, out.stderr[-2000:]
    rows = json_lines(out.stdout)
    cases = [r for r in rows if "algorithm" in r]
    assert {r["algorithm"] for r in cases} == set(MPI_ALGORITHMS)
    assert {r["dtype"] for r in cases} == {"int32", "int64", "float32", "float64"}
    assert len(cases) == len(MPI_ALGORITHMS) * 4 * 4
    for case in cases:
        where = json.dumps({k: case[k] for k in ("algorithm", "dtype", "n", "ranks")})
        assert case["mpi"], f"differs from MPI_Allreduce: {where}"
        assert case["bitwise"], f"not bitwise equal to ringsim.allreduce: {where}"
        assert case["unchanged"], f"input modified: {where}"
        assert case["sent"] == case["ledger_sent"], where
        assert case["received"] == case["ledger_received"], where
        # What the switch carried, counted on the rank that plays it (rank 0), as the ledger says
        hosted = [sum(x) for x in zip(*case["switch"])]
        assert hosted == [sum(x) for x in case["ledger_switch"]], where
        assert all(s == [0, 0] for s in case["switch"][1:]), where
        assert case["ranks"] == ranks
    assert rows[-1] == {"drop_in": True}
