"""predict's all-gather and reduce-scatter on NVLS: the time is NCCL's own figure, which
ringsim keeps (docs/cost.md, deviation 14) and no published run checks, and which rates the
call below an NVLS all-reduce of the same bytes; the table says so where a row runs NVLS."""

from __future__ import annotations

import pytest

from ringsim.cli import main


@pytest.mark.parametrize("collective", ["all-gather", "reduce-scatter"])
def test_an_nvls_gather_row_says_its_time_is_nccls_unchecked_figure(collective, capsys):
    assert main(["predict", "--collective", collective, "--sizes", "1GiB", "--algo", "NVLS"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert (f"# NVLS {collective}: the time is NCCL's own figure (docs/cost.md, deviation 14), "
            "which no published run checks") in out
    # NCCL's own choice there is Ring, whose rows need no such line.
    assert main(["predict", "--collective", collective, "--sizes", "1GiB"]) == 0
    assert "the time is NCCL's own figure" not in capsys.readouterr().out
