"""NCCL_MIN_NCHANNELS and NCCL_MAX_NCHANNELS: the communicator's channels, the calls priced on
them, `predict --min-channels/--max-channels`, and diagnose reading them from a paste."""

from __future__ import annotations

import json

import pytest

from ringsim.cli import main
from ringsim.core.errors import RingsimError
from ringsim.cost.nccl import nccl_choice, nccl_choices
from ringsim.cost.nccl_channels import connected, tune
from ringsim.cost.topology import load

from test_diagnose_readings import NVLS0

MIB = 1 << 20


def reference(natural: int, low: int | None, high: int | None, most: int) -> int:
    """connect.cc, written from its lines: nChannels = min(ncclMaxNchannels(), nChannels), then
    copyChannels(comm, nChannels, max(ncclMinNchannels(), minCTAs = 1)), which copies rings up
    to the minimum and returns the larger of the two; both settings held to MAXCHANNELS."""
    channels = natural
    if high is not None:
        channels = min(channels, max(1, min(high, most)))
    floor = 1 if low is None else min(low, most)
    return max(channels, floor)


@pytest.mark.parametrize("nccl", ["2.18.5", "2.22.3", "2.30.7"])
@pytest.mark.parametrize("topology, gpus", [("dgx-h100", 8), ("dgx-h100", 16), ("dgx-a100", 32)])
@pytest.mark.parametrize("low, high", [(None, 4), (None, 1), (48, None), (2, None), (40, 3),
                                       (None, 64), (64, 64)])
def test_the_communicators_channels_follow_connect_cc(nccl, topology, gpus, low, high):
    topo = load(topology)
    natural = tune(topo, gpus, nccl)
    limited = tune(topo, gpus, nccl, min_channels=low, max_channels=high)
    most = natural.sys.tables["channels"]["max"]
    start, _ = connected(natural)
    assert connected(limited, limited=False) == connected(natural)
    assert connected(limited)[0] == reference(start, low, high, most)


def test_a_release_that_raises_the_rings_to_nvls_does_so_after_the_maximum():
    # 2.22.3 copies the rings up to nvlsChannels after NCCL_MAX_NCHANNELS (connect.cc:
    # copyChannels(comm, comm->nChannels, comm->nvlsChannels)), so a maximum of 4 leaves 16.
    tuned = tune(load("dgx-h100"), 8, "2.22.3", max_channels=4)
    assert connected(tuned) == (4, 16)
    assert connected(tune(load("dgx-h100"), 8, "2.30.7", max_channels=4))[1] == 4


def test_fewer_channels_make_a_ring_call_slower_and_nvls_keeps_its_own():
    sizes = [MIB, 64 * MIB, 1 << 30]
    free = nccl_choices(load("dgx-h100"), 8, sizes, algo="Ring")
    four = nccl_choices(load("dgx-h100"), 8, sizes, algo="Ring", max_channels=4)
    assert [c.channels for c in four] == [min(4, c.channels) for c in free]
    # NCCL still chooses as if every channel ran: its own estimate is unchanged
    assert [c.nccl_seconds for c in four] == [c.nccl_seconds for c in free]
    # at 1 GiB the bandwidth term rules: 4 of the 24 channels take close to 6 times as long
    assert free[2].channels == 24
    assert 5.8 < four[2].seconds / free[2].seconds < 6.0
    nvls = nccl_choice(load("dgx-h100"), 8, 1 << 30, algo="NVLS", max_channels=1)
    assert nvls.channels == 16 and nvls.seconds == nccl_choice(load("dgx-h100"), 8, 1 << 30,
                                                               algo="NVLS").seconds


def test_copies_past_nccls_own_count_add_no_speed():
    big = [1 << 30]
    free = nccl_choices(load("dgx-h100"), 16, big, algo="Ring")[0]
    more = nccl_choices(load("dgx-h100"), 16, big, algo="Ring", min_channels=64)[0]
    assert more.channels == 64 > free.channels
    assert more.seconds <= free.seconds * 1.0001 and more.nccl_seconds == free.nccl_seconds


@pytest.mark.parametrize("value", [0, 65, -1, 2.5, True, "4"])
def test_a_setting_out_of_range_is_refused_in_one_line(value):
    with pytest.raises(RingsimError, match=r"NCCL_MAX_NCHANNELS must be a whole number from 1 to 64"):
        nccl_choice("dgx-h100", 8, MIB, max_channels=value)


def run(capsys, *argv):
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_predict_takes_the_settings_and_says_what_they_do(capsys):
    code, out, _ = run(capsys, "predict", "--gpus", "16", "--sizes", "1MiB,1GiB", "--algo",
                       "Ring,Tree", "--max-channels", "4", "--json")
    assert code == 0
    rows = [json.loads(line) for line in out.splitlines()]
    assert [r["channels"] for r in rows] == [4, 4] and rows[0]["max_channels"] == 4
    assert "min_channels" not in rows[0]
    code, out, _ = run(capsys, "predict", "--gpus", "16", "--sizes", "1GiB", "--min-channels", "48")
    assert code == 0
    assert ("# NCCL_MIN_NCHANNELS=48: calls run on the channels the channels column shows, a copy "
            "of a ring adding speed only up to the blocks a ring gets by default") in \
        out.replace("\n#   ", " ")


@pytest.mark.parametrize("argv, said", [
    (["--max-channels", "0"], "NCCL_MAX_NCHANNELS must be from 1 to 64, got 0"),
    (["--min-channels", "1e400"], "NCCL_MIN_NCHANNELS is too large"),
    (["--tuning", "--max-channels", "4"], "it takes no --max-channels"),
])
def test_predict_refuses_bad_settings_in_one_line(capsys, argv, said):
    code, out, err = run(capsys, "predict", *argv)
    assert code == 2 and not out and said in err and len(err.splitlines()) == 1


def _paste(tmp_path, max_channels: int | None, echoed: bool) -> str:
    """NVLS0's header and rows timed as the model times a ring/tree run held to
    `max_channels`; with `echoed`, NCCL's line saying the setting was made."""
    lines = open(NVLS0).read().splitlines()
    head = [line for line in lines if not line.strip()[:1].isdigit()]
    rows = [line.split() for line in lines if line.strip()[:1].isdigit()]
    sizes = [int(r[0]) for r in rows]
    # priced with the tables diagnose uses by default (its note names the release that ran)
    times = nccl_choices(load("dgx-h100"), 16, sizes, algo="Ring,Tree", max_channels=max_channels)
    body = []
    for r, choice in zip(rows, times):
        us = f"{choice.seconds * 1e6:.2f}"
        body.append(f"{r[0]:>12} {r[1]:>13} {r[2]:>9} {r[3]:>7} {r[4]:>7} {us:>8} 0.00 0.00 0 "
                    f"{us:>8} 0.00 0.00 0")
    at = next(i for i, line in enumerate(head) if "NVLS_ENABLE" in line) + 1
    if echoed:
        head.insert(at, f"node01:1000:1000 [0] NCCL INFO NCCL_MAX_NCHANNELS set by environment "
                        f"to {max_channels}.")
    table = next(i for i, line in enumerate(head) if "(B)" in line) + 1
    path = tmp_path / "paste.txt"
    path.write_text("\n".join(head[:table] + body + head[table:]) + "\n")
    return str(path)


def test_diagnose_holds_the_model_to_a_maximum_the_paste_shows(tmp_path, capsys):
    code, out, err = run(capsys, "diagnose", _paste(tmp_path, 2, echoed=True), "--json")
    assert code == 0, err
    *sizes, summary = [json.loads(line) for line in out.splitlines()]
    assert summary["flagged_sizes"] == []
    assert all(0.999 < s["ratio"] < 1.001 for s in sizes if s.get("ratio") is not None)
    assert ("NCCL_MAX_NCHANNELS=2 in the paste: as in NCCL, the model's ring and tree calls run "
            "on the first that many channels") in summary["notes"]
    # the same run without NCCL's line: the model counts every channel and finds it slow
    code, out, _ = run(capsys, "diagnose", _paste(tmp_path, 2, echoed=False), "--json")
    assert code == 0
    assert len(json.loads(out.splitlines()[-1])["flagged_sizes"]) > 5


def test_diagnose_holds_a_setting_where_nccl_holds_it(tmp_path, capsys):
    path = tmp_path / "paste.txt"
    text = open(NVLS0).read().replace(
        "NCCL_NVLS_ENABLE set by environment to 0.",
        "NCCL_NVLS_ENABLE set by environment to 0.\nNCCL_MAX_NRINGS=9 NCCL_MAX_NCHANNELS=900 "
        "NCCL_MIN_NCHANNELS=0")
    path.write_text(text)
    code, out, err = run(capsys, "diagnose", str(path), "--json")
    assert code == 0, err
    notes = json.loads(out.splitlines()[-1])["notes"]
    assert any(n.startswith("NCCL_MAX_NCHANNELS=900 in the paste (NCCL holds it to 64)")
               for n in notes)
    assert "NCCL_MIN_NCHANNELS=0 in the paste sets no minimum" in notes


def test_diagnose_takes_the_setting_from_the_command_line_before_the_paste(tmp_path, capsys):
    paste = _paste(tmp_path, 2, echoed=False)
    code, out, err = run(capsys, "diagnose", paste, "--max-channels", "2", "--json")
    assert code == 0, err
    summary = json.loads(out.splitlines()[-1])
    assert summary["flagged_sizes"] == []
    assert any(n.startswith("NCCL_MAX_NCHANNELS=2 (--max-channels): the model's ring and tree "
                            "calls run on the first that many channels") for n in summary["notes"])
    code, out, err = run(capsys, "diagnose", _paste(tmp_path, 2, echoed=True), "--max-channels", "8",
                         "--json")
    assert code == 0 and not any(n.startswith("NCCL_MAX_NCHANNELS=2 in the paste")
                                 for n in json.loads(out.splitlines()[-1])["notes"])
    code, out, err = run(capsys, "diagnose", paste, "--min-channels", "65")
    assert code == 2 and not out and "NCCL_MIN_NCHANNELS must be from 1 to 64, got 65" in err


def test_a_published_run_held_to_its_channels_is_not_a_peer_and_its_copy_says_so():
    from ringsim.studies import peers
    spx = next(s for s in peers.data()["system"] if s["id"] == "spx-xe9680-h200-2x8-roce")
    assert spx["min_channels"] == 32
    assert not any(p.id == spx["id"] for p in peers.peers(load("dgx-h200"), 16, 2, 8))
    theirs = [p for p in peers.data()["point"] if p["system"] == spx["id"]]
    mine = {p["bytes"]: peers.measured_seconds(p, 16, "all-reduce") for p in theirs}
    copy = peers.copy_of(16, 2, 8, "float", "all-reduce", mine)
    assert copy is not None and copy.held == (("min_channels", 32),)
    assert copy.settings == "NCCL_MIN_NCHANNELS=32"


@pytest.mark.parametrize("text, value", [("4", 4), ("010", 8), ("0x10", 16), ("09", 0), ("-1", -1),
                                         ("+7", 7), ("0", 0)])
def test_a_value_is_read_as_nccl_reads_it(text, value):
    from ringsim.studies.nccl_settings import c_integer
    assert c_integer(text) == value


def _with(tmp_path, *lines: str) -> str:
    path = tmp_path / "paste.txt"
    path.write_text(open(NVLS0).read().replace(
        "NCCL_NVLS_ENABLE set by environment to 0.",
        "\n".join(("NCCL_NVLS_ENABLE set by environment to 0.",) + lines)))
    return str(path)


def _notes(capsys, path, *argv):
    code, out, err = run(capsys, "diagnose", path, "--json", *argv)
    assert code == 0, err
    return json.loads(out.splitlines()[-1])["notes"]


def test_the_newer_name_wins_and_the_older_counts_where_alone(tmp_path, capsys):
    notes = _notes(capsys, _with(tmp_path, "NCCL_MAX_NCHANNELS set by environment to 4.",
                                 "mpirun -x NCCL_MAX_NRINGS=2"))
    assert any(n.startswith("NCCL_MAX_NCHANNELS=4 in the paste:") for n in notes)
    notes = _notes(capsys, _with(tmp_path, "mpirun -x NCCL_MIN_NRINGS=0x10 ./all_reduce_perf"))
    assert any(n.startswith("NCCL_MIN_NRINGS=16 in the paste: as in NCCL, the model's ring and "
                            "tree calls run on at least that many channels") for n in notes)
    notes = _notes(capsys, _with(tmp_path, "NCCL_MAX_NCHANNELS set by environment to -1."))
    assert any(n.startswith("NCCL_MAX_NCHANNELS=-1 in the paste (NCCL holds it to 1)") for n in notes)


def test_two_values_for_one_setting_are_refused_unless_a_flag_settles_it(tmp_path, capsys):
    path = _with(tmp_path, "NCCL_MAX_NCHANNELS set by environment to 4.",
                 "NCCL_MAX_NCHANNELS set by environment to 4.",
                 "NCCL_MAX_NCHANNELS set by environment to 8.")
    code, out, err = run(capsys, "diagnose", path)
    assert code == 2 and not out and len(err.splitlines()) == 1
    assert "sets NCCL_MAX_NCHANNELS to 4 (line 22) and to 8 (line 24): pass one run's output, " \
        "or give --max-channels" in err
    assert any(n.startswith("NCCL_MAX_NCHANNELS=8 (--max-channels)")
               for n in _notes(capsys, path, "--max-channels", "8"))


def test_the_ctas_settings_bound_the_channels_as_nccl_does(tmp_path, capsys):
    # connect.cc: rings on min(NCCL_MAX_NCHANNELS, maxCTAs); nvls.cc: NVLS held to maxCTAs
    notes = _notes(capsys, _with(tmp_path, "NCCL_MAX_CTAS set by environment to 4."))
    assert any(n.startswith("NCCL_MAX_CTAS=4 in the paste: as NCCL bounds its channels") and
               n.endswith("rings and trees on at most 4") for n in notes)
    notes = _notes(capsys, _with(tmp_path, "NCCL_MIN_CTAS set by environment to 0."))
    assert "NCCL_MIN_CTAS=0 in the paste: NCCL reads a value below 1 as unset (init.cc)" in notes


SHARP = "ringsim/studies/published/systems/h100-ndr-sharp.toml"


def test_nvls_across_nodes_on_fewer_channels_is_that_share_of_its_rate():
    # From 2.28.3 NVLS across nodes runs on at most the communicator's channels (enqueue.cc);
    # NCCL's NVLS formula gives a graph under 2 channels no bandwidth, so the share is priced
    # as that share of the whole graph's rate, never as no rate at all.
    free = nccl_choice(load(SHARP), 32, 1 << 30)
    one = nccl_choice(load(SHARP), 32, 1 << 30, max_channels=1)
    assert free.algorithm == one.algorithm == "NVLS" and one.channels == 1
    assert one.seconds < float("inf") and one.bandwidth > 0
    assert one.bandwidth == pytest.approx(free.bandwidth / free.channels, rel=1e-9)


def test_copies_drive_the_kept_rings_up_to_nccls_own_blocks_a_ring():
    # NCCL connects each of 12 searched rings twice on one DGX H100 (24 channels, connect.cc:
    # channel c + nChannels copies channel c); keeping 12 and copying them up to 24 builds
    # that same communicator, so it runs at NCCL's own speed.
    free = nccl_choice(load("dgx-h100"), 8, 8 << 30, algo="Ring")
    same = nccl_choice(load("dgx-h100"), 8, 8 << 30, algo="Ring", max_channels=12, min_channels=24)
    assert (free.channels, same.channels) == (24, 24) and same.seconds == free.seconds
    half = nccl_choice(load("dgx-h100"), 8, 8 << 30, algo="Ring", max_channels=12)
    assert half.bandwidth == pytest.approx(free.bandwidth / 2, rel=1e-6)
    # 2.24.3 copies one kept ring up to NVLS's 16 channels after NCCL_MAX_NCHANNELS=1
    # (copyChannels(comm, comm->nChannels, comm->nvlsChannels)): the 16 copies of ring 0 cross
    # its one NIC, driven by NCCL's own two blocks a ring, no more.
    old = nccl_choice(load("dgx-h100"), 16, 8 << 30, algo="Ring", nccl="2.24.3", max_channels=1)
    one = nccl_choice(load("dgx-h100"), 16, 8 << 30, algo="Ring", max_channels=1)
    two = nccl_choice(load("dgx-h100"), 16, 8 << 30, algo="Ring", max_channels=1, min_channels=2)
    many = nccl_choice(load("dgx-h100"), 16, 8 << 30, algo="Ring", max_channels=1, min_channels=8)
    assert (old.channels, one.channels, two.channels, many.channels) == (16, 1, 2, 8)
    assert two.bandwidth == pytest.approx(2 * one.bandwidth, rel=1e-6)
    assert old.bandwidth == pytest.approx(two.bandwidth, rel=1e-6)
    assert many.bandwidth == pytest.approx(two.bandwidth, rel=1e-6)


def test_with_nvls_off_the_rings_are_not_raised_to_nvls_channels():
    tuned = tune(load("dgx-h100"), 16, "2.26.2", max_channels=4, nvls=False)
    assert connected(tuned) == (4, 4)
    assert connected(tune(load("dgx-h100"), 16, "2.26.2", max_channels=4)) == (4, 16)
    off = nccl_choices(load("dgx-h100"), 16, [1 << 20, 1 << 30], nvls=False)
    assert not {c.algorithm for c in off} & {"NVLS", "NVLSTree"}


def test_predict_no_nvls_is_nccl_nvls_enable_0(capsys):
    code, out, _ = run(capsys, "predict", "--gpus", "16", "--sizes", "1GiB", "--no-nvls", "--json")
    assert code == 0 and json.loads(out)["algorithm"] == "Ring"
    # 2.26.2 copies the rings up to NVLS's 16 channels after NCCL_MAX_NCHANNELS, unless NVLS is off
    code, out, _ = run(capsys, "predict", "--gpus", "16", "--sizes", "8GiB", "--nccl", "2.26.2",
                       "--algo", "Ring", "--max-channels", "4", "--json")
    assert json.loads(out)["channels"] == 16
    code, out, _ = run(capsys, "predict", "--gpus", "16", "--sizes", "8GiB", "--nccl", "2.26.2",
                       "--no-nvls", "--max-channels", "4")
    assert code == 0 and "# NCCL_NVLS_ENABLE=0 (--no-nvls): NVLS and NVLSTree are off" in out
    row = next(line for line in out.splitlines() if line.strip().startswith("8589934592"))
    assert row.split()[-3:] == ["Ring", "Simple", "4"]
    code, out, err = run(capsys, "predict", "--gpus", "16", "--no-nvls", "--algo", "NVLS")
    assert code == 2 and "--algo NVLS names only what --no-nvls turns off (NVLS, NVLSTree)" in err
    for algo in ("Ring", "ring,tree", "^tree", "NVLS,Ring"):
        code, out, err = run(capsys, "predict", "--gpus", "16", "--sizes", "1GiB", "--no-nvls",
                             "--algo", algo, "--json")
        assert code == 0, err
        row = json.loads(out)
        assert row["algorithm"] not in ("NVLS", "NVLSTree") and row["nvls_enable"] == 0


def test_nvls_enable_is_read_as_nccl_reads_it_and_both_values_are_refused(tmp_path, capsys):
    base = open(NVLS0).read().replace("NCCL_NVLS_ENABLE set by environment to 0.", "")
    path = tmp_path / "paste.txt"
    for said in ("mpirun -x NCCL_NVLS_ENABLE=0x0 ./all_reduce_perf", "NCCL_NVLS_ENABLE=-0"):
        path.write_text(base.replace("NCCL version 2.26.2+cuda12.4",
                                     f"NCCL version 2.26.2+cuda12.4\n{said}"))
        code, out, err = run(capsys, "diagnose", str(path), "--json")
        assert code == 0, err
        assert json.loads(out.splitlines()[-1])["nvls_off"] == "NCCL_NVLS_ENABLE=0"
    path.write_text(base.replace("NCCL version 2.26.2+cuda12.4", "NCCL version 2.26.2+cuda12.4\n"
                                 "NCCL_NVLS_ENABLE set by environment to 0.\n"
                                 "NCCL_NVLS_ENABLE set by environment to 1."))
    code, out, err = run(capsys, "diagnose", str(path))
    assert code == 2 and not out and len(err.splitlines()) == 1
    assert "sets NCCL_NVLS_ENABLE to 0 (line 21) and to another value (line 22)" in err


def test_a_value_stops_where_strtoll_stops(tmp_path, capsys):
    notes = _notes(capsys, _with(tmp_path, "mpirun -x NCCL_MAX_NCHANNELS=4.5 ./all_reduce_perf"))
    assert any(n.startswith("NCCL_MAX_NCHANNELS=4 in the paste:") for n in notes)


def test_a_setting_is_held_to_the_cap_of_the_release_that_ran(tmp_path, capsys):
    path = tmp_path / "paste.txt"
    path.write_text(open(NVLS0).read().replace("NCCL version 2.26.2", "NCCL version 2.24.3").replace(
        "NCCL_NVLS_ENABLE set by environment to 0.",
        "NCCL_NVLS_ENABLE set by environment to 0.\nNCCL_MIN_NCHANNELS set by environment to 100."))
    notes = _notes(capsys, str(path))
    assert any(n.startswith("NCCL_MIN_NCHANNELS=100 in the paste (NCCL holds it to 32)") for n in notes)


def test_nvls_nchannels_replaces_nccls_own_count_and_fewer_run_at_that_share():
    # transport/nvls.cc: a set NCCL_NVLS_NCHANNELS (config nvlsCTAs) takes the place of
    # NVLS_NCHANNELS (16 on Hopper); NCCL's tuning still prices the searched NVLS graph.
    free = nccl_choice(load("dgx-h100"), 8, 1 << 30, algo="NVLS")
    four = nccl_choice(load("dgx-h100"), 8, 1 << 30, algo="NVLS", nvls_channels=4)
    more = nccl_choice(load("dgx-h100"), 8, 1 << 30, algo="NVLS", nvls_channels=32)
    assert (free.channels, four.channels, more.channels) == (16, 4, 32)
    assert four.bandwidth == pytest.approx(free.bandwidth / 4, rel=1e-9)
    assert more.seconds == free.seconds and four.nccl_seconds == free.nccl_seconds
    tree = nccl_choice(load("dgx-h100"), 16, 1 << 30, algo="NVLSTree", nvls_channels=8)
    assert tree.channels == 8
    # 2.24.3 copies the rings up to the NVLS count it has: the setting's
    assert connected(tune(load("dgx-h100"), 16, "2.24.3", max_channels=2, nvls_channels=6)) == (2, 6)


def test_nvls_nchannels_in_a_paste_and_on_the_command_line(tmp_path, capsys):
    base = open(NVLS0).read().replace("NCCL_NVLS_ENABLE set by environment to 0.", "")
    path = tmp_path / "paste.txt"
    path.write_text(base.replace("NCCL version 2.26.2+cuda12.4", "NCCL version 2.26.2+cuda12.4\n"
                                 "NCCL_NVLS_NCHANNELS set by environment to 4."))
    code, out, err = run(capsys, "diagnose", str(path), "--json")
    assert code == 0, err
    summary = json.loads(out.splitlines()[-1])
    assert summary["nvls_channels"] == 4
    assert ("NCCL_NVLS_NCHANNELS=4 in the paste: as in NCCL, the model's NVLS and NVLSTree calls "
            "run on that many channels") in summary["notes"]
    code, out, _ = run(capsys, "predict", "--gpus", "8", "--sizes", "1GiB", "--nvls-channels", "4",
                       "--json")
    assert code == 0 and json.loads(out)["channels"] == 4 and json.loads(out)["nvls_channels"] == 4


def test_nvls_channels_with_nvls_off_is_refused(capsys):
    code, out, err = run(capsys, "predict", "--no-nvls", "--nvls-channels", "4")
    assert code == 2 and not out and len(err.splitlines()) == 1
    assert "--nvls-channels sets the channels of NVLS, which --no-nvls turns off" in err


def test_a_paste_from_the_release_the_model_follows_is_read(tmp_path, capsys):
    path = tmp_path / "paste.txt"
    path.write_text(open(NVLS0).read().replace("NCCL version 2.26.2", "NCCL version 2.30.7"))
    code, out, err = run(capsys, "diagnose", str(path), "--json")
    assert code == 0 and not err


def test_nvls_nchannels_where_nvls_did_not_run_changes_nothing(tmp_path, capsys):
    # NVLS off in the paste: its NVLS count holds nothing back, and the published runs stay
    notes = _notes(capsys, _with(tmp_path, "NCCL_NVLS_NCHANNELS set by environment to 8."))
    assert "NCCL_NVLS_NCHANNELS=8 in the paste: NCCL ran no NVLS here, so it changes nothing" in notes
    assert not any("held to NCCL_NVLS_NCHANNELS" in n for n in notes)
    code, out, err = run(capsys, "diagnose", _with(tmp_path), "--nvls-channels", "8", "--json")
    notes = json.loads(out.splitlines()[-1])["notes"]
    assert code == 0 and ("NCCL_NVLS_NCHANNELS=8 (--nvls-channels): NCCL ran no NVLS here, so it "
                          "changes nothing the model prices") in notes
    code, out, _ = run(capsys, "predict", "--topology", "dgx-a100", "--sizes", "1GiB",
                       "--nvls-channels", "4")
    assert "# NCCL_NVLS_NCHANNELS=4: NCCL runs no NVLS for this call here" in out


@pytest.mark.parametrize("release, value, said", [
    ("2.24.3", -1, "NCCL_NVLS_NCHANNELS=-1 in the paste (NCCL holds it to 1)"),
    ("2.26.2", 0, "NCCL_NVLS_NCHANNELS=0 in the paste (NCCL holds it to 1)"),
    ("2.26.2", -1, "NCCL_NVLS_NCHANNELS=-1 in the paste: this release keeps its own NVLS channels "
                   "below 0"),
    ("2.27.7", 0, "NCCL_NVLS_NCHANNELS=0 in the paste: this release keeps its own NVLS channels "
                  "below 1"),
])
def test_a_pasted_nvls_count_below_one_is_read_as_its_release_reads_it(tmp_path, capsys, release,
                                                                       value, said):
    base = open(NVLS0).read().replace("NCCL_NVLS_ENABLE set by environment to 0.", "")
    path = tmp_path / "paste.txt"
    path.write_text(base.replace("NCCL version 2.26.2+cuda12.4", f"NCCL version {release}+cuda12.4\n"
                                 f"NCCL_NVLS_NCHANNELS set by environment to {value}."))
    notes = _notes(capsys, str(path))
    assert any(n.startswith(said) for n in notes), notes


def test_nvls_channels_past_nccls_own_count_leave_the_time_as_it_is():
    sizes = [8 << 20, 16 << 20, 1 << 30]
    own = nccl_choices(load("dgx-h100"), 8, sizes, nccl="2.27.7")
    more = nccl_choices(load("dgx-h100"), 8, sizes, nccl="2.27.7", nvls_channels=64)
    assert [c.seconds for c in more] == [c.seconds for c in own]
