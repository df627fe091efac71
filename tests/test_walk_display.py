"""walk with G not dividing N, the --values cap, bench --quick and the hints a new user reads."""

import json

import pytest

from ringsim import closed_form
from ringsim.cli import main


def run(argv, capsys):
    status = main(argv)
    out = capsys.readouterr()
    return status, out.out, out.err


def ledger_row(out, start):
    return next(line.strip() for line in out.splitlines() if line.strip().startswith(start))


def test_uneven_walk_names_the_busiest_sender_and_receiver_apart(capsys):
    status, out, _ = run(["walk", "--gpus", "5"], capsys)
    assert status == 0
    # N = 8 over 5 GPUs: segments of 2, 2, 2, 1, 1. GPU3 sends most, GPU4 receives most.
    sent = ledger_row(out, "sent by the busiest sender")
    received = ledger_row(out, "received by the busiest receiver")
    assert sent.startswith("sent by the busiest sender (GPU3)") and " 14 " in sent
    assert received.startswith("received by the busiest receiver (GPU4)") and " 14 " in received
    assert sent.endswith("2·(G−1)·N/G = 12.80; exactly 2·(N − ⌊N/G⌋) = 14")
    assert "sent per GPU:     12, 13, 14, 13, 12" in out
    assert "received per GPU: 12, 12, 13, 14, 13" in out
    assert "N mod G = 3: the segments differ by one element (sizes 2 and 1)" in out
    assert "exactly 2·(N − ⌊N/G⌋) = 14, not the textbook 2·(G−1)·N/G = 12.80" in out


def test_the_walk_numbers_come_from_the_closed_forms(capsys):
    _, out, _ = run(["walk", "--gpus", "8", "--elements", "14", "--json"], capsys)
    summary = json.loads(out.splitlines()[-1])
    form = closed_form("ring", 8, 14)
    assert max(summary["sent"]) == form.busiest_sent == 26  # > 2·7·14/8 = 24.5
    assert summary["sent"].index(26) == form.busiest_sender
    assert summary["received"].index(max(summary["received"])) == form.busiest_receiver


def test_even_walk_has_no_uneven_note(capsys):
    _, out, _ = run(["walk"], capsys)
    assert "N mod G" not in out
    assert ledger_row(out, "sent by the busiest sender (GPU1)").endswith("2·(G−1)·N/G = 12")


def test_values_are_capped_unless_forced(capsys):
    status, out, err = run(["walk", "--values", "--elements", "100000"], capsys)
    assert status == 2 and out == ""
    assert err == ("ringsim walk: error: --values would print 2,800,000 numbers (4 GPUs × 100,000 "
                   "elements, at the start and after each of 6 steps); at most 20,000 without --force\n")
    status, out, _ = run(["walk", "--values", "--elements", "700", "--force"], capsys)
    assert status == 0 and out.count("GPU1:") == 7


@pytest.mark.parametrize("argv", [["--help"], ["walk", "--help"], ["train", "--help"],
                                  ["bench", "--help"]])
def test_help_speaks_of_what_users_saw(capsys, argv):
    with pytest.raises(SystemExit):
        from ringsim.cli import build_parser
        build_parser().parse_args(argv)
    out = " ".join(capsys.readouterr().out.split())
    assert "seed" not in out.replace("--seed", "").replace("seed of the", "")
    if argv == ["walk", "--help"]:
        assert "the 4-GPU example" in out


def test_the_cupy_hint_works_from_a_clone():
    from ringsim.execute.backend import INSTALL_CUPY
    assert "pip install '.[gpu]'" in INSTALL_CUPY and "ringsim[gpu]" not in INSTALL_CUPY


def test_halving_doubling_off_a_power_of_two_prints_figures_that_add_up(capsys):
    # G = 6 folds 2 GPUs into p2 = 4: the busiest takes N in, 2·3·N/4 in the halving and
    # doubling, and hands N back.
    _, out, _ = run(["walk", "-a", "halving-doubling", "--gpus", "6", "-n", "24"], capsys)
    assert ledger_row(out, "sent by the busiest sender (GPU2)").endswith("60   2·(p2−1)·N/p2 + N = 60")
    assert "N mod" not in out
    _, out, _ = run(["walk", "-a", "halving-doubling", "--gpus", "6", "-n", "7"], capsys)
    assert ledger_row(out, "sent by the busiest sender (GPU2)").endswith(
        "2·(p2−1)·N/p2 + N = 17.50; exactly N + Σ of its kept ranges + N = 18")
    assert ("N mod 4 = 3: the 4 segments differ by one element (sizes 2 and 1)" in out
            and "which holds when 4 divides N." in out)


def test_all_gather_walk_says_each_gpu_starts_with_its_own_shard(capsys):
    _, out, _ = run(["walk", "--collective", "all-gather", "--values"], capsys)
    lines = out.splitlines()
    assert lines[1] == ("Each GPU's buffer is split into 4 segments of 2 elements; GPU k starts with "
                        "only its own shard, segment k, which carries letter k (GPU1 holds a₁, GPU2 "
                        "b₂); its other segments are empty (0) until they arrive.")
    assert "a₁…a₄" not in out and "its own gradient" not in out
    start = lines.index("Start: every GPU holds only its own shard (GPU k: segment k)")
    assert lines[start + 1].endswith("| 0 0 | 0 0 | 0 0")  # GPU1 holds its shard, the rest is 0
    _, out, _ = run(["walk", "--collective", "reduce-scatter", "--values"], capsys)
    assert "(GPU1 holds a₁…a₄)" in out and "Start: every GPU holds only its own gradient" in out
    from ringsim.algorithms.collectives import ALL_GATHER
    from ringsim.sim.simulation import Simulation
    sim = Simulation(ALL_GATHER.plan(4), 8, collective=ALL_GATHER)
    assert sim.banner == "Start: every GPU holds only its own shard (GPU k: segment k)"
