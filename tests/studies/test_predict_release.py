"""predict --nccl: the tuning tables of the NCCL release a user runs."""

from __future__ import annotations

from ringsim.cli import main
from ringsim.cost.nccl import nccl_choices
from ringsim.cost.nccl_tuner import release, versions
from ringsim.cost.topology import load
from ringsim.studies.predict import predict


def test_a_release_is_read_as_nccl_prints_it():
    assert release("2.21.5-1+cuda12.4") == "2.21.5"
    assert release("v2.30.7-1") == "2.30.7"
    assert versions()[0] == "2.30.7" and "2.21.5" in versions()


def test_predict_prices_with_the_release_given():
    topo = load("dgx-h100")
    sizes = [8, 1 << 20]
    rows = predict(topo, 16, sizes, nccl="2.21.5")
    choices = nccl_choices(topo, 16, sizes, nccl="2.21.5")
    assert [r.seconds for r in rows] == [c.seconds for c in choices]
    assert [(r.algorithm, r.protocol) for r in rows] == [(c.algorithm, c.protocol) for c in choices]
    # 2.21.5's NVLSTree network hop (14 µs, 20.9 µs in 2.30.7) makes it NCCL's pick at 1 MiB
    # on two DGX H100s, where 2.30.7's tables pick Tree/LL128
    assert (rows[1].algorithm, rows[1].protocol) == ("NVLSTree", "Simple")
    own = predict(topo, 16, sizes)
    assert (own[1].algorithm, own[1].protocol) == ("Tree", "LL128")


def test_the_cli_takes_nccls_own_spelling_and_refuses_a_release_it_lacks(capsys):
    assert main(["predict", "--gpus", "16", "--sizes", "1MiB", "--nccl", "2.21.5-1+cuda12.4"]) == 0
    out = capsys.readouterr().out
    assert "(NCCL 2.21.5's tuning tables)" in out and "NVLSTree" in out
    assert main(["predict", "--nccl", "2.17.1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "tuning tables of NCCL 2.30.3/4/7, 2.29.2/3/7, 2.28.3/7/9," in err[0]
    assert err[0].endswith("2.20.3/5, 2.19.3/4, 2.18.1/3/5/6, not '2.17.1'")


def test_a_release_whose_tables_are_another_s_prices_as_that_one():
    # 2.26.2 to 2.26.6 carry 2.25.1's tuning tables and formulas word for word; 2.27 changed
    # only Blackwell's speeds and channels, so a Hopper prices the same on all of them.
    topo = load("dgx-h100")
    sizes = [8, 1 << 20, 1 << 26]
    same = [c.seconds for c in nccl_choices(topo, 16, sizes, nccl="2.26.2")]
    assert same == [c.seconds for c in nccl_choices(topo, 16, sizes, nccl="2.25.1")]
    assert same == [c.seconds for c in nccl_choices(topo, 16, sizes, nccl="2.27.7")]
    assert same != [c.seconds for c in nccl_choices(topo, 16, sizes)]
    assert {"2.26.2", "2.27.7", "2.28.3"} <= set(versions()) and "2.17.1" not in versions()


def test_predict_takes_nodes_as_compare_and_sweep_do(capsys):
    from ringsim.cli import main
    assert main(["predict", "--topology", "dgx-h100", "--nodes", "2", "--sizes", "1GiB", "--json"]) == 0
    by_nodes = capsys.readouterr().out
    assert main(["predict", "--topology", "dgx-h100", "-g", "16", "--sizes", "1GiB", "--json"]) == 0
    assert capsys.readouterr().out == by_nodes
    assert main(["predict", "--nodes", "2", "-g", "8"]) == 2
    assert "--gpus 8 disagrees with --nodes 2 × 8 GPUs per node = 16" in capsys.readouterr().err


def test_the_cli_takes_the_nccl_pytorch_2_1_ships_and_2_20_3(capsys):
    # PyTorch 2.1's wheels bring NCCL 2.18.1; both were refused before ringsim carried them.
    for printed, carried in (("2.18.1-1+cuda12.1", "2.18.1"), ("v2.20.3-1", "2.20.3")):
        assert main(["predict", "--gpus", "16", "--sizes", "1MiB", "--nccl", printed]) == 0
        assert f"(NCCL {carried}'s tuning tables)" in capsys.readouterr().out
