"""ZeRO: volumes and memory against Rajbhandari et al. (SC'20), and the sharded update run for real."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings, strategies as st

from ringsim import RingsimError
from ringsim.algorithms import collectives as C
from ringsim.cli import main
from ringsim.core.layout import Layout
from ringsim.execute.ledger import measure
from ringsim.core.units import parse_params
from ringsim.training.zero import STAGES, memory, paper_memory, step
from ringsim.training.zero_train import train_zero


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 64), st.integers(1, 10**6), st.sampled_from([0, 1, 2, 3]))
def test_memory_and_volume_follow_the_paper(gpus, per_gpu, stage):
    psi = gpus * per_gpu  # N_d divides Ψ, as the paper's formulas assume
    z = step(stage, psi, gpus)
    assert z.memory.total == paper_memory(stage, psi, gpus)
    # Unsharded: (2 + 2 + 12)Ψ bytes; each stage shards one more of the three.
    assert paper_memory(0, psi, gpus) == 16 * psi
    collectives_per_step = 3 if stage == 3 else 2  # 2Ψ, or 3Ψ for stage 3: 1.5×
    assert z.paper_elements == collectives_per_step * psi
    assert z.sent == z.received == collectives_per_step * (gpus - 1) * per_gpu


def test_figure_1_of_the_paper():
    # Ψ = 7.5B, N_d = 64: 120 GB, 31.4 GB, 16.6 GB, 1.9 GB per GPU.
    psi = 7_500_000_000
    assert [round(memory(s, psi, 64).total / 1e9, 1) for s in range(4)] == [120.0, 31.4, 16.6, 1.9]


@pytest.mark.parametrize("gpus, psi", [(3, 10), (4, 9), (5, 5), (7, 3), (1, 4)])
def test_elements_against_the_ledgers_of_the_plans(gpus, psi):
    # Independent of zero.py's arithmetic: add up the plans' own ledgers GPU by GPU.
    layout = Layout(gpus, psi)
    rs = measure(C.REDUCE_SCATTER.plan(gpus), layout).sent
    ag = measure(C.ALL_GATHER.plan(gpus), layout).sent
    assert step(1, psi, gpus).sent == max(rs + ag) == step(0, psi, gpus).sent
    assert step(3, psi, gpus).sent == max(rs + 2 * ag)


def test_parse_params_and_errors():
    assert parse_params("7.5B") == 7_500_000_000 and parse_params("125M") == 125_000_000
    assert parse_params("1.3e9") == 1_300_000_000 and parse_params("350,000") == 350_000
    for bad in ("7.5X", "0", "1.5", "-3"):
        with pytest.raises(RingsimError):
            parse_params(bad)
    with pytest.raises(RingsimError):
        step(4, 10, 2)


@pytest.mark.parametrize("stage", [1, 2, 3])
def test_sharded_training_matches_data_parallelism(stage):
    run = train_zero(5, stage, 2, samples=512, features=11, batch=64)
    assert run.identical and all(e.difference == 0 for e in run.epochs)
    assert run.epochs[-1].loss < 0.69  # it learned (log 2 is the untrained loss)
    assert run.sent_per_step == (3 if stage == 3 else 2) * (12 - 12 // 5)
    assert run.kept["optimizer"] == 2 * 3 < run.dp_kept["optimizer"]


def test_cli_zero_json_and_train(capsys):
    assert main(["zero", "--params", "7.5B", "--gpus", "64", "--stage", "3", "--json"]) == 0
    row = json.loads(capsys.readouterr().out)
    assert row["memory_bytes_per_gpu"] == 1_875_000_000
    assert row["elements_sent_per_gpu"] == 3 * 63 * 7_500_000_000 // 64
    assert main(["zero", "--params", "1B", "--topology", "dgx-h100", "--nodes", "2"]) == 0
    out = capsys.readouterr().out
    assert "16 GPUs" in out and "FSDP full shard" in out
    assert main(["train", "--zero", "2", "--epochs", "1", "--backend", "numpy"]) == 0
    assert "bit for bit: yes" in capsys.readouterr().out
    assert main(["train", "--zero", "2", "--no-sync"]) == 2
    assert main(["zero", "--params", "lots"]) == 2


# --- the ring's layout: --ring-order / --channels, and NCCL's rails beside the plain ring ----

def _zero_json(capsys, *flags):
    assert main(["zero", "--params", "7.5B", "--topology", "dgx-h100", "--nodes", "8", "--json",
                 *flags]) == 0
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def test_ring_order_prices_the_stages_on_the_rails(capsys):
    from ringsim.algorithms.timing import estimate
    from ringsim.cost.model import CostModel
    cost = CostModel.of("dgx-h100", "float16")
    psi = 7_500_000_000
    rows = _zero_json(capsys, "--ring-order", "rails:8")
    allreduce = estimate("ring", 64, psi, cost, ring_order="rails:8").seconds
    assert [r["options"] for r in rows] == [{"ring_order": "rails:8"}] * 4
    assert all(r["rails"] is None and r["gpus"] == 64 for r in rows)
    for r in rows[:3]:  # stages 0-2: a reduce-scatter and an all-gather, one all-reduce's work
        assert r["seconds"] == pytest.approx(allreduce, rel=1e-12)
    gather = step(3, psi, 64, cost, {"ring_order": "rails:8"}).seconds - allreduce
    assert rows[3]["seconds"] == pytest.approx(allreduce + gather, rel=1e-12)
    assert 0.4 * allreduce < gather < 0.6 * allreduce
    plain = _zero_json(capsys)
    assert plain[0]["seconds"] == pytest.approx(estimate("ring", 64, psi, cost).seconds, rel=1e-12)
    assert plain[0]["seconds"] > 5 * rows[0]["seconds"]
    # the note's figures are the rails run's, stage by stage
    assert [p["rails"] for p in plain] == [{"ring_order": "rails:8", "seconds": r["seconds"]}
                                           for r in rows]


@pytest.mark.parametrize("options", [{"ring_order": "rails:8"}, {"channels": 3},
                                     {"channels": 2, "ring_order": "1,3,2,4,5,6,7,8,9,10,11,12,13,14,15,16"}])
def test_phases_against_the_priced_plan(options):
    """Independent of the closed forms: the ring all-reduce's plan priced step by step, its
    first G-1 steps the reduce-scatter, the last G-1 the all-gather."""
    from ringsim.algorithms import make_plan
    from ringsim.cost.model import CostModel, price
    cost = CostModel.of("dgx-h100", "float16")
    for psi in (1000, 1_234_567):
        steps = price(make_plan("ring", 16, **options), psi, cost).steps
        rs = sum(s.seconds for s in steps[:15])
        ag = sum(s.seconds for s in steps[15:])
        assert C.REDUCE_SCATTER.seconds(16, psi, cost, **options).seconds == pytest.approx(rs, rel=1e-9)
        assert C.ALL_GATHER.seconds(16, psi, cost, **options).seconds == pytest.approx(ag, rel=1e-9)
        assert step(3, psi, 16, cost, options).seconds == pytest.approx(rs + 2 * ag, rel=1e-9)


def test_no_options_keep_the_collectives_own_times():
    from ringsim.cost.model import CostModel
    cost = CostModel.of("dgx-h100", "float16")
    for stage in STAGES:
        plain = step(stage, 1_000_003, 24, cost)
        assert step(stage, 1_000_003, 24, cost, {}).seconds == plain.seconds
        assert step(stage, 1_000_003, 24, cost, {"channels": 1}).seconds == plain.seconds


def test_the_note_says_what_the_rails_give(capsys):
    from ringsim.core.units import format_seconds
    rows = _zero_json(capsys, "--ring-order", "rails:8")
    assert main(["zero", "--params", "7.5B", "--topology", "dgx-h100", "--nodes", "8"]) == 0
    out = capsys.readouterr().out
    assert "Time: the ring's collectives (one ring, GPUs in order 1, 2, …, 64)" in out
    (line,) = [x for x in out.splitlines() if "one per NIC" in x]
    assert line.endswith("--ring-order rails:8 gives " + ", ".join(
        f"stage {r['stage']} {format_seconds(r['seconds'])}" for r in rows) + ".")
    assert main(["zero", "--params", "7.5B", "--topology", "dgx-h100", "--nodes", "8", "--stage", "3",
                 "--ring-order", "rails:8"]) == 0
    out = capsys.readouterr().out
    assert "Time: the ring's collectives (ring order rails:8)" in out and "one per NIC" not in out
    assert f"  {format_seconds(rows[3]['seconds'])}  " in out
    for flags in (["--gpus", "64"], ["--topology", "dgx-h100", "-g", "8"]):  # no nodes, one node
        assert main(["zero", "--params", "7.5B", "--json", *flags]) == 0
        assert all(json.loads(x)["rails"] is None for x in capsys.readouterr().out.splitlines())


@pytest.mark.parametrize("flag, value, users", [("--chunks", "2", "tree, double-tree, nccl-tree, nvls"),
                                                ("--tree-parents", "0,1", "nccl-tree"),
                                                ("--gpus-per-node", "8", "nccl-tree")])
def test_zero_refuses_another_algorithms_option_in_one_line(capsys, flag, value, users):
    assert main(["zero", "--params", "7B", "--topology", "dgx-h100", "--nodes", "2", flag, value]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (f"ringsim zero: error: ring takes --channels, --ring-order, not {flag} "
                            f"({flag} is for {users})\n")


def test_gpu_memory_names_the_stages_whose_states_do_not_fit(capsys):
    import json
    from ringsim.cli import main
    argv = ["zero", "--params", "7B", "--topology", "dgx-h100", "--nodes", "8"]
    assert main([*argv, "--gpu-memory", "80GB", "--json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    # 16 bytes per parameter unsharded (2 + 2 + 12): 112 GB at stage 0, sharded below 80 GB after
    assert [(r["stage"], r["fits"]) for r in rows] == [(0, False), (1, True), (2, True), (3, True)]
    assert all(r["fits"] == (r["memory_bytes_per_gpu"] <= 80e9) for r in rows)
    assert main([*argv, "--gpu-memory", "80GB"]) == 0
    assert "Stage 0 does not fit 80.00 GB per GPU" in capsys.readouterr().out
    assert main([*argv, "--gpu-memory", "1e400"]) == 2
    assert main([*argv, "--gpu-memory", "10kB"]) == 2
    assert "from 1MB to 100TB" in capsys.readouterr().err


def test_the_topologys_gpu_memory_gives_the_verdict_where_gpu_memory_is_not_given(capsys, tmp_path):
    import json
    from ringsim.cli import main
    argv = ["zero", "--params", "7B", "--topology", "dgx-h100", "--nodes", "8"]
    assert main([*argv, "--json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    # dgx-h100's GPUs have 80 GB: 112 GB of states at stage 0, sharded below it after
    assert [(r["stage"], r["fits"]) for r in rows] == [(0, False), (1, True), (2, True), (3, True)]
    assert {(r["gpu_memory_bytes"], r["gpu_memory_from"]) for r in rows} == {(80 * 10**9, "topology")}
    assert main(argv) == 0
    assert ("Stage 0 does not fit 80.00 GB per GPU (topology dgx-h100's gpu_memory; --gpu-memory "
            "sets another), before activations") in capsys.readouterr().out
    # The option still wins, and says whose figure it replaced.
    assert main([*argv, "--gpu-memory", "120GB", "--json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert all(r["fits"] and r["gpu_memory_bytes"] == 120 * 10**9 and r["gpu_memory_from"] == "option"
               for r in rows)
    assert main([*argv, "--gpu-memory", "120GB"]) == 0
    assert ("Every stage's states fit 120.00 GB per GPU (--gpu-memory, in place of 80.00 GB from "
            "topology dgx-h100)") in capsys.readouterr().out
    # A topology that gives none (flat): no verdict, as before.
    assert main(["zero", "--params", "7B", "--json", "--stage", "0"]) == 0
    row = json.loads(capsys.readouterr().out)
    assert (row["fits"], row["gpu_memory_bytes"], row["gpu_memory_from"]) == (None, None, None)
    # A file's gpu_memory is read as --gpu-memory is, with the same bounds.
    path = tmp_path / "small.toml"
    path.write_text('gpu_memory = "24GiB"\n[inside]\nalpha = "1us"\nbandwidth = "100GB/s"\n')
    assert main(["zero", "--params", "2B", "-g", "8", "--topology", str(path)]) == 0
    # 24 GiB = 25.77 GB; 2B parameters keep 32 GB of states unsharded, 11 GB at stage 1
    assert "Stage 0 does not fit 25.77 GB per GPU (topology small's gpu_memory" in \
        capsys.readouterr().out
    path.write_text('gpu_memory = "10kB"\n[inside]\nalpha = "1us"\nbandwidth = "100GB/s"\n')
    assert main(["zero", "--params", "1.3B", "--topology", str(path)]) == 2
    assert capsys.readouterr().err == ("ringsim zero: error: topology small: gpu_memory must be from "
                                       "1MB to 100TB, got '10kB'\n")


def test_memory_written_in_bits_is_refused_not_read_as_an_eighth(capsys, tmp_path):
    # 80Gb is 10 GB: a typo for 80GB that would name every stage as not fitting
    assert main(["zero", "--params", "70B", "--topology", "dgx-h100", "--nodes", "2",
                 "--gpu-memory", "80Gb"]) == 2
    err = capsys.readouterr().err
    assert err.endswith("--gpu-memory '80Gb' is in bits (b); memory is counted in bytes: write "
                        "80GB\n") and len(err.splitlines()) == 1
    path = tmp_path / "gm.toml"
    path.write_text('gpu_memory = "80Gb"\ngpus_per_node = 8\n[inside]\nalpha = "1us"\n'
                    'bandwidth = "100GB/s"\n')
    assert main(["zero", "--params", "70B", "--topology", str(path), "--stage", "3"]) == 2
    assert capsys.readouterr().err == ("ringsim zero: error: topology gm: gpu_memory '80Gb' is in "
                                       "bits (b); memory is counted in bytes: write 80GB\n")


@pytest.mark.parametrize("rate", ["500GB/s", "inf", "4Tb/s"])
def test_a_what_if_network_rate_on_the_command_line_is_taken_as_given(capsys, rate):
    # --bandwidth is a what-if (its help says so): any rate, inf for latency alone, no warning
    from ringsim.core.units import parse_bandwidth
    argv = ["zero", "--params", "7B", "--topology", "dgx-h100", "--nodes", "2", "--stage", "1",
            "--json", "--bandwidth", f"across={rate}"]
    assert main(argv) == 0
    out, err = capsys.readouterr()
    assert err == "" and json.loads(out)["seconds"] > 0
    assert main(["compare", "--time", "--topology", "dgx-h100", "--nodes", "2", "--size", "1GiB",
                 "--bandwidth", f"across={rate}"]) == 0
    out, err = capsys.readouterr()
    shown = "inf" if rate == "inf" else f"{parse_bandwidth(rate) / 1e9:.2f} GB/s"
    assert err == "" and f"2.70 µs, {shown} per GPU per direction" in out


def test_the_bandwidth_help_says_it_is_a_what_if():
    import argparse

    from ringsim.cli._cost_args import add_cost_arguments
    parser = argparse.ArgumentParser()
    add_cost_arguments(parser)
    action = next(a for a in parser._actions if a.dest == "bandwidth")
    assert "not checked against real NICs" in action.help and "inf" in action.help


def test_a_bad_gpu_memory_names_the_flag_once(capsys):
    assert main(["zero", "--params", "7B", "--gpu-memory", "inf"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["ringsim zero: error: argument --gpu-memory: cannot read 'inf'; write it like "
                   "80GB or 192GiB"]


def test_stage_times_by_hand_on_the_flat_machine(capsys):
    """Psi = 7.5B fp16 on 64 GPUs of flat (alpha 5 us, 100 GB/s, reduce 1 TB/s), one ring.
    Each ring step moves Psi/64 = 117,187,500 elements = 234,375,000 bytes: 5 us + 2.34375 ms
    on the wire, plus 234.375 us of adds in a reduce-scatter step (Thakur et al. 2005).
    A reduce-scatter or an all-gather is 63 steps. Stages 0-2 (all-reduce, or reduce-scatter
    then all-gather): 126 wire steps + 63 adds = 310.708125 ms. Stage 3 (FSDP: two all-gathers
    of the parameters and a reduce-scatter of the gradients, Rajbhandari et al. SC'20 and
    PyTorch FSDP FULL_SHARD): 189 wire steps + 63 adds = 458.679375 ms, 1.5x stage 0's traffic."""
    wire, add = 5e-6 + 234_375_000 / 100e9, 234_375_000 / 1e12
    assert main(["zero", "--params", "7.5B", "--gpus", "64", "--json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    for row in rows:
        steps = 189 if row["stage"] == 3 else 126
        assert row["seconds"] == pytest.approx(steps * wire + 63 * add, rel=1e-12)
    assert [rows[0]["seconds"], rows[3]["seconds"]] == pytest.approx([0.310708125, 0.458679375], rel=1e-12)
    assert rows[3]["elements_sent_per_gpu"] * 2 == 3 * rows[0]["elements_sent_per_gpu"]


@pytest.mark.parametrize("stage", [4, -1, True, 2.5, "1"])
def test_every_stage_helper_refuses_a_stage_zero_does_not_have(stage):
    for ask in (memory, paper_memory, step):
        with pytest.raises(RingsimError, match="stage must be 0, 1, 2 or 3"):
            ask(stage, 1000, 4)


def test_stage_3_says_its_count_is_fsdps_three_collectives(capsys):
    # 9 parameters on 4 GPUs in shards of 3, 2, 2, 2: the busiest GPU sends 7 elements in each
    # ring collective; stage 3 counts three collectives (21), data parallelism two (14), and
    # the line under it says why three.
    assert main(["train", "--zero", "3", "-g", "4", "--epochs", "1"]) == 0
    out = capsys.readouterr().out
    assert "sends 21 elements with ZeRO, 14 with data parallelism" in out
    assert "all-gathered for the forward pass and again for the backward" in out
    assert main(["train", "--zero", "2", "-g", "4", "--epochs", "1"]) == 0
    assert "again for the backward" not in capsys.readouterr().out
