"""Bad input gets a clear one-line error: RingsimError in Python, exit status 2 on the CLI."""

import subprocess
import sys

import numpy as np
import pytest

from ringsim import RingsimError, Simulation, allreduce, make_plan
from ringsim.cli import main


@pytest.mark.parametrize("gpus, message", [
    (0, "the number of GPUs must be from 1"),
    (-3, "the number of GPUs must be from 1"),
    (2.5, "the number of GPUs must be a whole number"),
    ("4", "the number of GPUs must be a whole number"),
    (True, "the number of GPUs must be a whole number"),
])
def test_bad_gpu_counts(gpus, message):
    with pytest.raises(RingsimError, match=message):
        make_plan("ring", gpus)


def test_bad_elements_unknown_algorithm_and_master():
    with pytest.raises(RingsimError, match="elements per GPU must be at least 0"):
        Simulation.create("ring", 4, -1)
    with pytest.raises(RingsimError, match="unknown algorithm 'butterfly'; choose one of: ring, master, naive"):
        make_plan("butterfly", 4)
    with pytest.raises(RingsimError, match="^master must be from 1 to 4, got 5$"):
        make_plan("master", 4, master=5)
    with pytest.raises(RingsimError, match="^master must be from 1 to 4, got 0$"):
        make_plan("master", 4, master=0)


def test_bad_arrays():
    with pytest.raises(RingsimError, match=r"same shape: GPU1 has \(3,\), GPU2 has \(4,\)"):
        allreduce([np.zeros(3), np.zeros(4)])
    with pytest.raises(RingsimError, match="same dtype: GPU1 has float64, GPU2 has int64"):
        allreduce([np.zeros(3), np.zeros(3, dtype=np.int64)])
    with pytest.raises(RingsimError, match="must be numeric .* got bool"):
        allreduce([np.zeros(3, dtype=bool)] * 2)
    with pytest.raises(RingsimError, match="must be numeric .* got <U1"):
        allreduce([np.array(["a"]), np.array(["b"])])
    with pytest.raises(RingsimError, match="at least one array"):
        allreduce([])
    with pytest.raises(RingsimError, match="a sequence with one array per GPU"):
        allreduce(5)


def test_any_iterable_of_arrays_and_any_shape():
    result = allreduce((np.full((2, 3), g, dtype=np.int16) for g in range(4)), "naive")
    assert len(result.outputs) == 4
    assert all(o.shape == (2, 3) and (o == 6).all() for o in result.outputs)


@pytest.mark.parametrize("argv, message", [
    (["walk", "--gpus", "0"], "the number of GPUs must be from 1"),
    (["walk", "--gpus", "2.5"], "the number of GPUs must be a whole number"),
    (["walk", "--gpus", "four"], "expected a whole number, got 'four'"),
    (["walk", "--elements", "-1"], "elements per GPU must be at least 0"),
    (["walk", "--algorithm", "butterfly"], "invalid choice: 'butterfly'"),
    (["walk", "--algorithm", "master", "--master", "9"], "--master must be from 1 to 4, got 9"),
    (["walk", "--master", "2"], "--master only applies to the master algorithm"),
    (["walk", "--gpus", "500"], "walk prints every transfer"),
    (["compare", "--gpus", "0"], "the number of GPUs must be from 1"),
    (["bench", "--backend", "tpu"], "invalid choice: 'tpu'"),
])
def test_cli_errors_are_one_line_with_status_2(argv, message):
    proc = subprocess.run([sys.executable, "-m", "ringsim", *argv], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 2
    assert message in proc.stderr
    assert "Traceback" not in proc.stderr
    assert proc.stderr.strip().splitlines()[-1].startswith("ringsim")


def test_main_returns_2_in_process(capsys):
    assert main(["walk", "--algorithm", "master", "--master", "0"]) == 2
    err = capsys.readouterr().err
    assert err == "ringsim walk: error: --master must be from 1 to 4, got 0\n"


def test_plans_that_no_executor_could_run_are_refused():
    from ringsim import Plan, Step
    with pytest.raises(RingsimError, match="a GPU sends to itself"):
        Plan("custom", 3, (Step.build("x", 1, 1, "reduce", [0], [0], [1]),))
    with pytest.raises(RingsimError, match="outside 1..3"):
        Plan("custom", 3, (Step.build("x", 1, 1, "reduce", [0], [1], [3]),))
    with pytest.raises(RingsimError, match="two copies land in the same buffer"):
        Plan("custom", 3, (Step.build("x", 1, 1, "copy", [0, 2], [1, 1], [0]),))
    with pytest.raises(RingsimError, match="overlap only partly"):
        Plan("custom", 3, (Step.build("x", 1, 1, "reduce", [0, 2], [1, 1], [0, 1], [1, 2]),))
    with pytest.raises(RingsimError, match="unknown transfer op"):
        Step.build("x", 1, 1, "multiply", [0], [1], [0])


@pytest.mark.parametrize("argv, message", [
    (["walk", "--alpha", "-1us"], "--alpha: cannot read '-1us'"),
    (["walk", "--bandwidth", "-5GB/s"], "--bandwidth: cannot read '-5GB/s'"),
    (["predict", "--sizes", "-1KiB"], "--sizes: cannot read '-1KiB'"),
])
def test_a_negative_quantity_with_a_unit_reaches_its_options_own_check(argv, message, capsys):
    # argparse alone would say "expected one argument", as if the value were missing
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1
    # a plain negative number and a flag after an option stay argparse's to read
    assert main(["walk", "-g", "-4"]) == 2
    assert "got -4" in capsys.readouterr().err


def test_a_path_with_escape_sequences_is_named_with_them_spelled_out(capsys):
    from ringsim.cli import main
    # the message names the file given, not a look-alike with the escapes dropped
    assert main(["predict", "--topology", "a\x1b[31mb.toml"]) == 2
    err = capsys.readouterr().err
    assert err == "ringsim predict: error: cannot read topology file a\\x1b[31mb.toml: No such file or directory\n"
    assert "\x1b" not in err
