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
    assert err == ("ringsim: error: --values would print 2,800,000 numbers (4 GPUs × 100,000 "
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
