"""`ringsim diagnose`: real nccl-tests outputs beside NCCL's model, flags, verdicts, JSON, SVG."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ringsim.cli import main

# diagnose compares with NCCL's model (ringsim.studies.predict); without it these cannot run
pytest.importorskip("ringsim.studies.predict", reason="the NCCL model is not in this ringsim")

DATA = Path(__file__).resolve().parent / "data"
OUT = DATA / "nccl_outputs"
A100_4HDR = str(DATA / "topologies" / "a100-4hdr.toml")


def ringsim_process(*argv, stdin=None):
    """The command as a user runs it, in its own process (one test: standard input)."""
    proc = subprocess.run([sys.executable, "-m", "ringsim", *argv], capture_output=True, text=True,
                          timeout=120, input=stdin, env={**os.environ, "PYTHONIOENCODING": "utf-8"})
    return proc.returncode, proc.stdout, proc.stderr


@pytest.fixture
def ringsim(capsys):
    """The command in this process (cli.main), its exit status, standard output and error."""
    def run(*argv):
        code = main(list(argv))
        captured = capsys.readouterr()
        return code, captured.out, captured.err
    return run


@pytest.fixture
def json_run(ringsim):
    return lambda *argv: _json(ringsim, *argv)


def _json(ringsim, *argv):
    code, out, err = ringsim("diagnose", *argv, "--json")
    assert code == 0, err
    *sizes, summary = [json.loads(line) for line in out.splitlines()]
    return sizes, summary


def test_a_run_the_model_reproduces_is_reported_within_tolerance(ringsim, json_run):
    # NVIDIA/nccl issue 652: 32 nodes of 8 A100 with 4 HDR NICs each, small all-reduces
    sizes, summary = json_run(str(OUT / "nccl652_a100_32node_error_column_excerpt.txt"), "--gpus", "256",
                              "--nodes", "32", "--topology", A100_4HDR)
    assert summary["flagged_sizes"] == [] and summary["gpus"] == 256 and summary["nodes"] == 32
    assert all(0.8 < s["ratio"] < 1.25 for s in sizes)
    assert summary["topology"] == "a100-4hdr"
    assert any(v.startswith("Latency-bound sizes (4B–128B, 6 sizes)") and "as modelled" in v
               for v in summary["verdicts"])


def test_the_three_node_run_that_collapses_is_flagged_where_it_falls_short(ringsim, json_run):
    # NVIDIA/nccl issue 1453: three H100 nodes over two racks, ~5 GB/s busbw from 64 MiB up
    sizes, summary = json_run(str(OUT / "nccl1453_h100_3node_bracket_prefix_excerpt.txt"), "--gpus", "24",
                              "--nodes", "3", "--topology", "dgx-h100")
    flagged = set(summary["flagged_sizes"])
    assert {s["bytes"] for s in sizes if s["bytes"] >= 64 << 20} <= flagged
    assert all(s["ratio"] < 0.2 for s in sizes if s["bytes"] >= 64 << 20)
    assert {"bytes", "measured_busbw", "predicted_busbw", "ratio", "flag", "gpus", "nodes", "gpu",
            "topology", "algorithm", "protocol", "channels"} <= set(sizes[0])
    # the model's pick per size is predict's: algorithm, protocol and the channels it runs on
    from ringsim.studies.predict import predict
    picked = predict("dgx-h100", 24, [s["bytes"] for s in sizes], printed=True)
    assert [(s["algorithm"], s["protocol"], s["channels"]) for s in sizes] == \
        [(p.algorithm, p.protocol, p.channels) for p in picked]
    assert any("Bandwidth-bound" in v and "across nodes" in v for v in summary["verdicts"])


def test_the_preset_comes_from_the_header_and_the_table_shows_every_size(ringsim, json_run):
    code, out, err = ringsim("diagnose", str(OUT / "a3mega_h100_2node_all_reduce.txt"), "--no-plot")
    assert code == 0, err
    assert "all-reduce, 16 GPUs on 2 nodes, NVIDIA H100 80GB HBM3" in out
    # the GPU's name says nothing of the network, so the report says what the preset assumes
    assert ("(the header's GPU is NVIDIA H100 80GB HBM3: preset dgx-h100, whose network is "
            "InfiniBand NDR 400 Gb/s for each GPU; give --topology if yours differs)") in out
    table = out.split("Fitted to the measured curve")[0]
    rows = [line for line in table.splitlines() if line.strip().split(" ")[0].endswith("B")]
    assert len(rows) == 31 and rows[-1].lstrip().startswith("8GiB")
    assert "Fitted to the measured curve: per-call latency" in out and "Verdict:" in out


def test_standard_input_and_mpirun_prefixes_read_like_a_file(tmp_path, ringsim):
    text = (OUT / "eks_efa_t4_2node_mpirun.txt").read_text()
    code, out, err = ringsim_process("diagnose", "-", "--topology", "ethernet-100g", "--json", stdin=text)
    assert code == 0, err
    *sizes, summary = [json.loads(line) for line in out.splitlines()]
    assert len(sizes) == 29 and summary["gpu"] == "Tesla T4" and summary["nodes"] == 2


def test_the_svg_holds_measured_and_modelled_curves(tmp_path, ringsim):
    svg = tmp_path / "d.svg"
    code, out, err = ringsim("diagnose", str(OUT / "a3mega_h100_2node_all_reduce.txt"), "--svg", str(svg))
    assert code == 0, err
    text = svg.read_text()
    assert text.count("<polyline") == 2 and 'data-series="measured busbw"' in text
    assert f"SVG written to {svg}" in out


@pytest.mark.parametrize("argv, message", [
    ([str(OUT / "nccl1184_h100_wrong_results_excerpt.txt")], "number of GPUs is unknown: give --gpus"),
    ([str(OUT / "eks_efa_t4_2node_mpirun.txt")], "Tesla T4) matches no topology preset"),
    ([str(OUT / "nccltests107_v100_old_header_no_rows.txt")], "rank 0 twice"),
    ([str(OUT / "a3mega_h100_2node_all_reduce.txt"), "--tolerance", "150%"], "above 0% and below 100%"),
    ([str(OUT / "a3mega_h100_2node_all_reduce.txt"), "--svg", "/"], "is a folder"),
    ([str(OUT / "a3mega_h100_2node_all_reduce.txt"), "--gpus", "8"], "disagrees with the 16 ranks"),
    (["/dev/zero"], "not a regular file"),
    ([str(DATA / "nccl_outputs")], "is a folder"),
])
def test_bad_input_exits_2_with_one_line(argv, message, ringsim):
    code, out, err = ringsim("diagnose", *argv)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1 and not out


@pytest.mark.parametrize("gpu, named", [
    ("NVIDIA B200", " include b200-8-ndr.toml in "),
    ("NVIDIA GB200", " include gb200-4-nvl.toml, gb200-nvl72.toml in "),
    ("NVIDIA GH200 480GB", " include gh200-4-slingshot.toml in "),
    ("NVIDIA L40S", ", each named for its machine, are in "),
    # A PCIe card is pointed at the PCIe machines' files, never at the SXM servers' of its model.
    ("NVIDIA A100-PCIE-40GB", " include a100pcie-nvlink-pair.toml in "),
    ("NVIDIA H100 PCIe", " include h100pcie-nvlink-pair.toml in "),
    ("NVIDIA H100 NVL", ", each named for its machine, are in "),
])
def test_a_gpu_with_no_preset_is_pointed_at_the_published_system_files(gpu, named, tmp_path,
                                                                        ringsim, monkeypatch):
    from nccl_pastes import all_reduce_perf
    # 8 GPUs, as their machines hold them: Grace boards have 4 a node, so 2 nodes of 4
    hosts = ["n1"] * 4 + ["n2"] * 4 if "GH200" in gpu or "GB200" in gpu else ["n1"] * 8
    if "PCIE" in gpu.upper():  # the published PCIe machines are pairs
        hosts = ["n1"] * 2
    paste = all_reduce_perf(tmp_path / "run.txt", {8: 20.0, 1 << 30: 5000.0}, gpu, hosts)
    monkeypatch.chdir(Path(__file__).resolve().parents[1])
    code, out, err = ringsim("diagnose", str(paste))
    assert code == 2 and not out and len(err.strip().splitlines()) == 1
    assert f"{gpu}) matches no topology preset" in err
    # The folder as this installation has it: relative to here in a clone, else absolute.
    assert f"ringsim's published system files{named}" in err
    assert "ringsim/studies/published/systems: pass one as --topology " in err
    assert ("without NVLink bridges: --topology pcie-gen4" in err) == ("PCIE" in gpu.upper())
    given = err.split("--topology ")[-1].strip()
    if "NAME.toml" not in given:  # the file it names is one --topology takes
        code, out, err = ringsim("diagnose", str(paste), "--topology", given, "--no-plot")
        assert code == 0, err
        assert f"on topology {Path(given).stem} (given with --topology)" in out


def test_log_lines_in_the_paste_or_beside_it_name_the_links(ringsim, json_run):
    code, out, err = ringsim("diagnose", str(OUT / "eks_efa_t4_2node_mpirun.txt"), "--topology",
                             "ethernet-100g", "--no-plot")
    assert code == 0, err
    assert "the NCCL log lines show 4 of 4 ring hops crossing nodes, over NET/AWS Libfabric/0 (4)" in out
    assert "run again with NCCL_DEBUG=INFO" not in out
    assert "NCCL_PROTO=simple in the paste: the model is held to it too" in out
    assert "The log points at GPUDirect RDMA: none of the 4 hops that cross nodes" in out
    assert " Ring/Simple " in out and "/LL " not in out
    code, out, err = ringsim("diagnose", str(OUT / "nccltests252_h100_2node_after_acs_fix_ring.txt"),
                             "--gpus", "8", "--nodes", "2", "--topology", "flat", "--no-plot",
                             "--nccl-log", str(DATA / "nccl_logs" / "deepspeed4715_2node_channel_hops_excerpt.log"))
    assert code == 0, err
    assert "inside a node the rings use P2P/IPC/read (6)" in out
    assert "nET/IB without /GDRDMA".lower() in out.lower()


def test_a_model_held_to_an_algorithm_says_so(ringsim, json_run):
    # NVIDIA/nccl-tests issue 252 after its ACS fix: an NCCL_ALGO=RING run on 2 nodes of 4 H100
    # with one 200 Gb/s NIC per GPU; the paste has no '# Rank' lines, so its shape is given
    argv = (str(OUT / "nccltests252_h100_2node_after_acs_fix_ring.txt"), "--gpus", "8", "--nodes",
            "2", "--topology", str(DATA / "topologies" / "h100-4gpu-4x200g.toml"), "--algo", "Ring")
    code, out, err = ringsim("diagnose", *argv, "--no-plot")
    assert code == 0, err
    assert "Model: NCCL's model held to NCCL_ALGO=Ring on topology h100-4gpu-4x200g" in out
    rows = [line for line in out.splitlines() if "Ring/Simple" in line]
    assert len(rows) == 5 and not any(line.endswith("◀") for line in rows)
    sizes, summary = json_run(*argv)
    assert (summary["algo"], summary["proto"], summary["flagged_sizes"]) == ("Ring", None, [])
    assert [s["bytes"] for s in sizes] == [512 << 20, 1 << 30, 2 << 30, 4 << 30, 8 << 30]
    # the EFA example's paste sets NCCL_PROTO=simple itself: the model is held to it too
    code, out, err = ringsim("diagnose", str(OUT / "eks_efa_t4_2node_mpirun.txt"), "--topology",
                             "ethernet-100g", "--no-plot")
    assert code == 0, err
    assert "Model: NCCL's model held to NCCL_PROTO=simple on topology ethernet-100g" in out


def test_the_svg_is_never_written_over_a_file_diagnose_reads(tmp_path, ringsim):
    paste = tmp_path / "run.svg"  # a paste saved under an odd name
    paste.write_text((OUT / "a3mega_h100_2node_all_reduce.txt").read_text())
    before = paste.read_bytes()
    link = tmp_path / "link.svg"
    link.symlink_to(paste)
    log = tmp_path / "nccl.svg"
    log.write_text((DATA / "nccl_logs" / "deepspeed4715_2node_channel_hops_excerpt.log").read_text())
    for argv, what in (([str(paste), "--svg", str(paste)], "is FILE, which diagnose reads"),
                       ([str(paste), "--svg", str(link)], "is FILE, which diagnose reads"),
                       ([str(paste), "--svg", str(tmp_path / "." / "run.svg")], "is FILE"),
                       ([str(paste), "--nccl-log", str(log), "--svg", str(log)],
                        "is the --nccl-log file, which diagnose reads"),
                       ([str(paste), "--svg", str(tmp_path / "plot.png")],
                        "the file name must end in .svg, not 'plot.png'")):
        code, out, err = ringsim("diagnose", *argv, "--no-plot")
        assert code == 2 and what in err and len(err.strip().splitlines()) == 1 and not out
    assert paste.read_bytes() == before and not (tmp_path / "plot.png").exists()


@pytest.mark.parametrize("given, percent", [("30%", 30.0), ("30", 30.0), ("0.5", 0.5),
                                            ("0.5%", 0.5), ("1", 1.0), ("99.9", 99.9)])
def test_the_tolerance_is_always_a_percentage(given, percent, json_run, ringsim):
    paste = str(OUT / "a3mega_h100_2node_all_reduce.txt")
    sizes, summary = json_run(paste, "--tolerance", given)
    # the JSON states it in --tolerance's own unit, so it can be given back as it reads
    assert summary["tolerance_percent"] == percent and "tolerance" not in summary
    again = json_run(paste, "--tolerance", str(summary["tolerance_percent"]))[1]
    assert again["flagged_sizes"] == summary["flagged_sizes"]
    code, out, err = ringsim("diagnose", paste, "--tolerance", given, "--no-plot")
    shown = given if given.endswith("%") else given + "%"
    assert f"short of the model's by more than {shown}" in out


@pytest.mark.parametrize("given", ["0", "100", "-5", "nan", "abc", "0.3x"])
def test_a_tolerance_outside_0_to_100_is_refused(given, ringsim):
    code, out, err = ringsim("diagnose", str(OUT / "a3mega_h100_2node_all_reduce.txt"), "--tolerance", given)
    assert code == 2 and "--tolerance must be" in err and len(err.strip().splitlines()) == 1


def test_a_log_of_another_run_is_refused(ringsim):
    # The 16-GPU A3 Mega pair beside a 2-rank T4 log; an 8-GPU one-node run beside a log of 8
    # ranks on two nodes: one line naming both, not a diagnosis of someone else's machine.
    logs = DATA / "nccl_logs"
    code, out, err = ringsim("diagnose", str(OUT / "a3mega_h100_2node_all_reduce.txt"), "--nccl-log",
                             str(logs / "eks_efa_t4_2node_full.log"))
    assert code == 2 and not out and len(err.strip().splitlines()) == 1
    assert "is another run's log: its communicator has 2 ranks, and " in err
    assert "ran 16 GPUs on 2 nodes" in err
    code, out, err = ringsim("diagnose", str(OUT / "nccltests252_h100_2node_after_acs_fix_ring.txt"),
                             "--gpus", "8", "--nodes", "1", "--topology", "dgx-h100", "--nccl-log",
                             str(logs / "deepspeed4715_2node_channel_hops_excerpt.log"))
    assert code == 2 and "is another run's log: its ranks run on 2 nodes, and " in err
    assert "ran 8 GPUs on 1 node" in err


def test_a_log_without_hop_lines_is_named_in_what_to_check(tmp_path, ringsim):
    # A flagged four-GPU run, and its log of ring lists and trees but no hop lines: the advice
    # is not to run again with NCCL_DEBUG=INFO, as if no log had been given.
    from nccl_pastes import all_reduce_perf
    times = {8 << k: 200.0 + (8 << k) / 2e3 for k in range(20)}  # far slower than NVLink
    paste = all_reduce_perf(tmp_path / "slow.txt", times, "NVIDIA H100 80GB HBM3", ["node0"] * 4)
    log = DATA / "nccl_logs" / "nccl1706_single_node_4gpu_channels_trees_excerpt.log"
    code, out, err = ringsim("diagnose", str(paste), "--no-plot", "--nccl-log", str(log))
    assert code == 0, err
    assert "◀" in out and "run again with NCCL_DEBUG=INFO" not in out
    assert f"the log given ({log}) has no hop lines" in out


def test_a_paste_that_forces_an_algorithm_nccl_cannot_run_there_is_still_diagnosed(tmp_path, ringsim):
    paste = tmp_path / "nvls.txt"
    paste.write_text("mpirun -np 16 -x NCCL_ALGO=NVLS ./all_reduce_perf -b 8 -e 8G -f 2 -g 1\n"
                     + (OUT / "a3mega_h100_2node_all_reduce.txt").read_text())
    code, out, err = ringsim("diagnose", str(paste), "--topology", "dgx-a100", "--no-plot")
    assert code == 0, err
    assert "Model: NCCL's algorithm and protocol choice on topology dgx-a100" in out
    assert "Note: NCCL_ALGO=NVLS in the paste leaves NCCL's model no algorithm and protocol" in out
    code, out, err = ringsim("diagnose", str(paste), "--topology", "dgx-a100", "--algo", "NVLS")
    assert code == 2 and "--algo/--proto given" in err


def test_a_row_with_an_impossible_size_is_left_out_with_a_note(tmp_path, ringsim):
    lines = (OUT / "a3mega_h100_2node_all_reduce.txt").read_text().splitlines()
    row = next(i for i, line in enumerate(lines) if line.split()[:1] == ["65536"])
    lines[row] = lines[row].replace("65536", "99999999999999999999999999999", 1)
    paste = tmp_path / "garbled.txt"
    paste.write_text("\n".join(lines) + "\n")
    code, out, err = ringsim("diagnose", str(paste), "--no-plot")
    assert code == 0, err
    assert "Note: 1 row cut short or unreadable left out" in out


def test_a_log_whose_ring_lists_nccl_may_have_cut_is_not_called_another_runs(tmp_path, capsys):
    # 32 ranks on 4 nodes; the log shows ranks 0 to 19 in order with no communicator line: an
    # older NCCL cut its ring lists at 20 ranks, so this may be the run's own log. It is noted
    # and left unread, not refused as another run's.
    from nccl_pastes import all_reduce_perf
    paste = all_reduce_perf(tmp_path / "run.txt", {8: 40.0, 1 << 20: 300.0, 1 << 30: 5000.0},
                            "NVIDIA H100 80GB HBM3", [f"node{n}" for n in range(4) for _ in range(8)])
    first = " ".join(f"{r:3d}" for r in range(20))
    log = tmp_path / "cut.log"
    log.write_text(f"node0:1:1 [0] NCCL INFO Channel 00/02 : {first}\n", encoding="utf-8")
    assert main(["diagnose", str(paste), "--nccl-log", str(log), "--no-plot"]) == 0
    out = capsys.readouterr().out
    assert "Note: --nccl-log shows rings of 20 ranks and no communicator line, so it was not read" in out


def test_a_paste_that_starts_past_the_small_sizes_gives_its_per_call_time_as_a_bound(tmp_path, capsys):
    from nccl_pastes import all_reduce_perf
    paste = all_reduce_perf(tmp_path / "from1M.txt", {1 << 20: 30.0, 2 << 20: 40.0, 1 << 30: 5000.0},
                            "NVIDIA H100 80GB HBM3", ["node0"] * 8)
    assert main(["diagnose", str(paste), "--no-plot"]) == 0
    out = capsys.readouterr().out
    assert "per-call time at most " in out and "measured (the output starts at 1MiB)" in out


def test_a_paste_of_a_few_large_sizes_is_read_as_bandwidth_bound(tmp_path, ringsim):
    # One 1 GiB row at 180 GB/s busbw on two DGX H100 (the model expects about 455): too few
    # sizes to fit a bandwidth, yet 1 GiB is bytes, not per-call latency.
    paste = tmp_path / "one.txt"
    paste.write_text("  1073741824     268435456     float     sum      -1    11215   95.74  179.52"
                     "      0    11215   95.74  179.52      0\n", encoding="utf-8")
    code, out, err = ringsim("diagnose", str(paste), "--gpus", "16", "--nodes", "2",
                             "--topology", "dgx-h100", "--no-plot")
    assert code == 0, err
    assert "Bandwidth-bound sizes (1GiB, 1 size): measured busbw is 39% of the model's" in out
    assert "Latency-bound" not in out and "The links move less than modelled across nodes" in out


def test_the_terminal_plot_tells_measured_from_modelled_without_colour(ringsim):
    # Piped output has no colour: each curve has its own character, named under the plot.
    pytest.importorskip("plotext")
    code, out, err = ringsim("diagnose", str(OUT / "a3mega_h100_2node_all_reduce.txt"))
    assert code == 0, err
    legend = out.rstrip().splitlines()[-1]
    assert legend.split() == ["•", "measured", "busbw", "+", "NCCL", "model", "(dgx-h100)"]
    plot = out[out.index("busbw over size"):]
    assert "•" in plot and "+" in plot and "⢕" not in plot


def test_nccl_saying_it_chose_sockets_settles_a_cross_node_shortfall(tmp_path, ringsim):
    # Two DGX H100 at 1% of the model's bus bandwidth, and NCCL's own line "Using network
    # Socket" in the paste, though no whole ring: the verdict names the TCP socket transport.
    from nccl_pastes import all_reduce_perf
    sizes = [1 << k for k in range(3, 34, 2)]
    times = {n: 150.0 + n / 2.8e3 for n in sizes}  # µs: 150 µs per call, 2.8 GB/s of bus
    paste = all_reduce_perf(tmp_path / "sock.txt", times, "NVIDIA H100 80GB HBM3",
                            ["node0"] * 8 + ["node1"] * 8)
    paste.write_text("node0:1:1 [0] NCCL INFO NET/IB : No device found.\n"
                     "node0:1:1 [0] NCCL INFO Using network Socket\n"
                     + paste.read_text(encoding="utf-8"), encoding="utf-8")
    code, out, err = ringsim("diagnose", str(paste), "--no-plot")
    assert code == 0, err
    assert "NCCL chose its TCP socket transport (Using network Socket)" in out
    plain = paste.read_text(encoding="utf-8").replace("Using network Socket", "Using network IB")
    paste.write_text(plain, encoding="utf-8")
    code, out, err = ringsim("diagnose", str(paste), "--no-plot")
    assert code == 0 and "socket transport" not in out


@pytest.mark.parametrize("time, words", [
    ("1e-30", "its time 1e-30 µs is not from 0.01 µs to 10^6 s"),
    ("1e30", "its time 1e30 µs is not from 0.01 µs to 10^6 s"),
    ("-100", "its time -100 µs is not from 0.01 µs to 10^6 s")])
def test_a_time_no_run_could_print_is_refused_and_the_message_says_which_line(tmp_path, capsys, time, words):
    # A time past what nccl-tests can print would make a busbw of 10^37 TB/s, or of nothing.
    paste = tmp_path / "paste.txt"
    paste.write_text("# nThread 1 nGpus 1 minBytes 8 maxBytes 8 step: 2(factor) warmup iters: 5\n"
                     "#  Rank  0 Group  0 Pid 1 on host device  0 [0x07] NVIDIA H100 80GB HBM3\n"
                     f"           8             2     float     sum      -1   {time}    0.00    0.00"
                     "      0   10.0    0.00    0.00      0\n", encoding="utf-8")
    assert main(["diagnose", str(paste), "--topology", "dgx-h100", "--gpus", "8"]) == 2
    err = capsys.readouterr().err
    assert err.endswith(f"holds 1 row of nccl-tests' layout, none readable (at line 3: {words})\n")


def test_a_log_whose_rings_are_cut_short_still_lets_the_run_be_read(ringsim):
    # NCCL cuts each ring list at 128 characters; a log pasted from an issue often has no hop
    # lines to complete them. The run is still diagnosed, with a note, not refused.
    code, out, err = ringsim(
        "diagnose", str(OUT / "nccl1453_h100_3node_bracket_prefix_excerpt.txt"), "--gpus", "24",
        "--nodes", "3", "--topology", "dgx-h100", "--nccl-log",
        str(OUT.parent / "nccl_logs" / "nccl1453_h100_3node_channels_excerpt.log"), "--no-plot")
    assert code == 0, err
    assert "Bandwidth-bound sizes" in out
    assert "Note: --nccl-log: NCCL printed only the first 20 ranks of channel 05's ring" in out
    assert "the rings' transports are left out" in out


# Microsoft SuperBench's test data (tests/data/nccl_outputs/README.md): broadcast_perf and
# reduce_perf -g 8 on one node of 8 A100-SXM4-40GB; neither output names its test.
ROOTED_RUNS = {"broadcast": OUT / "superbench_a100x8_g8_broadcast.txt",
               "reduce": OUT / "superbench_a100x8_g8_reduce.txt"}


def _printed(path: Path) -> list[tuple[int, float, float]]:
    """(bytes, out-of-place seconds, busbw GB/s) of each row above 0 B, as the file prints them."""
    rows = []
    for line in path.read_text().splitlines():
        fields = line.split()
        if fields and fields[0].isdigit() and int(fields[0]) > 0:
            # ... time algbw busbw error, out of place then in place
            rows.append((int(fields[0]), float(fields[-8]) * 1e-6, float(fields[-6])))
    return rows


@pytest.mark.parametrize("collective", ["broadcast", "reduce"])
def test_broadcast_and_reduce_perf_are_read_with_busbw_equal_to_algbw(collective, json_run):
    path = ROOTED_RUNS[collective]
    sizes, summary = json_run(str(path))
    printed = _printed(path)
    assert (summary["collective"], summary["gpus"], summary["nodes"], summary["gpus_per_process"],
            summary["topology"]) == (collective, 8, 1, 8, "dgx-a100")
    # the two 0-byte rows (-b 1 rounds 1 and 2 bytes down to no float) are left out
    assert [s["bytes"] for s in sizes] == [b for b, _, _ in printed] == [4 << i for i in range(32)]
    # busbw = algbw (factor 1): size / time, and the file's own busbw column (to its 2 decimals
    # and the time's 4 digits)
    for s, (nbytes, seconds, busbw) in zip(sizes, printed):
        assert s["measured_seconds"] == pytest.approx(seconds)
        assert s["measured_busbw"] == pytest.approx(nbytes / seconds)
        assert s["measured_busbw"] / 1e9 == pytest.approx(busbw, rel=1e-3, abs=0.006)
        assert s["algorithm"] == "Ring" and s["predicted_busbw"] == pytest.approx(
            s["bytes"] / s["predicted_seconds"])
    assert [v.split(" (")[0] for v in summary["verdicts"]] == ["Latency-bound sizes",
                                                               "Bandwidth-bound sizes"]
    assert summary["flagged_sizes"] == [s["bytes"] for s in sizes if s["flag"]]
    assert any(n.startswith("the output does not name its test: its rows have root 0") and
               n.endswith(f"so it is taken as {collective}_perf (give --collective)")
               for n in summary["notes"])
    assert summary["published_peers"] == []  # the published runs are all_reduce_perf's


def test_a_named_or_given_test_is_taken_as_it_is(tmp_path, json_run):
    named = tmp_path / "named.txt"
    named.write_text("mpirun -np 1 ./build/broadcast_perf -b 1 -e 8G -f 2 -g 8\n"
                     + ROOTED_RUNS["broadcast"].read_text())
    _, summary = json_run(str(named))
    assert summary["collective"] == "broadcast"
    assert not any("does not name its test" in n for n in summary["notes"])
    sizes, summary = json_run(str(ROOTED_RUNS["reduce"]), "--collective", "reduce")
    assert summary["collective"] == "reduce"
    assert not any("does not name its test" in n for n in summary["notes"])


@pytest.mark.parametrize("paste, given, said", [
    # the columns say broadcast (root 0, the whole size's count; this layout has no redop)
    ("superbench_a100x8_g8_broadcast.txt", "all-reduce",
     "'s rows (root 0, the whole size's count) are broadcast_perf's, and --collective "
     "all-reduce says all_reduce_perf"),
    ("superbench_a100x8_g8_reduce.txt", "all-reduce",
     "'s rows (redop sum, root 0, the whole size's count) are reduce_perf's, and --collective "
     "all-reduce says all_reduce_perf"),
    # the reverse: an all-reduce's rows (redop sum, root -1) read as a broadcast
    ("a3mega_h100_2node_all_reduce.txt", "broadcast",
     " is the output of all_reduce_perf and --collective broadcast says broadcast_perf"),
])
def test_a_collective_the_pastes_own_columns_contradict_is_refused_in_one_line(
        ringsim, paste, given, said):
    code, out, err = ringsim("diagnose", str(OUT / paste), "--collective", given, "--no-plot")
    assert code == 2 and not out and len(err.strip().splitlines()) == 1
    assert err.startswith(f"ringsim diagnose: error: {OUT / paste}{said}")


def test_an_all_reduce_that_does_not_name_its_test_is_not_read_as_a_broadcast(ringsim, tmp_path):
    # a3mega's all_reduce_perf without the lines that name it: its redop and root columns tell
    unnamed = tmp_path / "unnamed.txt"
    unnamed.write_text("\n".join(line for line in (OUT / "a3mega_h100_2node_all_reduce.txt")
                                 .read_text().splitlines() if "all_reduce" not in line) + "\n")
    code, out, err = ringsim("diagnose", str(unnamed), "--collective", "broadcast", "--no-plot")
    assert code == 2 and not out
    assert err.strip() == (f"ringsim diagnose: error: {unnamed}'s rows (redop sum, root -1, the whole "
                           "size's count) are all_reduce_perf's, and --collective broadcast says "
                           "broadcast_perf: give the --collective that ran, or leave it out to "
                           "take the one the rows show")
    code, out, err = ringsim("diagnose", str(unnamed), "--collective", "all-reduce", "--no-plot")
    assert code == 0 and "all-reduce, 16 GPUs on 2 nodes" in out


def test_a_root_that_is_no_rank_of_the_run_is_noted(json_run, tmp_path):
    # broadcast_perf prints the root it ran (-r); 99999 is none of this run's 8 ranks
    text = ROOTED_RUNS["broadcast"].read_text().splitlines()
    rows = [line.replace("   float       0 ", "   float   99999 ", 1) for line in text]
    assert rows != text
    odd = tmp_path / "root.txt"
    odd.write_text("\n".join(rows) + "\n")
    _, summary = json_run(str(odd))
    assert summary["collective"] == "broadcast"
    assert ("the rows' root 99,999 is not one of the run's 8 ranks (0 to 7); every root is "
            "priced alike, as NCCL's model does") in summary["notes"]
    _, summary = json_run(str(ROOTED_RUNS["broadcast"]))
    assert not any("is not one of the run's" in n for n in summary["notes"])


def test_a_rooted_run_held_to_another_algorithm_than_the_ring_is_refused(ringsim):
    code, out, err = ringsim("diagnose", str(ROOTED_RUNS["reduce"]), "--algo", "Tree")
    assert code == 2 and not out
    assert err.strip() == ("ringsim diagnose: error: --algo Tree: NCCL tunes only Ring for reduce "
                           "(src/graph/tuning.cc); give --algo Ring or leave --algo out")


def test_a_paste_that_gives_neither_g_nor_the_gpu_asks_for_both_in_one_line(ringsim, monkeypatch):
    # The excerpt has no '# Rank' lines and no algbw of 1 GB/s, so its busbw/algbw is too coarse
    # to tell G: neither how many GPUs ran nor which GPU they were.
    monkeypatch.chdir(Path(__file__).resolve().parents[1])
    paste = "tests/data/nccl_outputs/nccl1184_h100_wrong_results_excerpt.txt"
    code, out, err = ringsim("diagnose", paste)
    assert code == 2 and not out and len(err.splitlines()) == 1
    assert err.startswith(f"ringsim diagnose: error: {paste} has no '# Rank … on HOST device …' lines, so "
                          "the number of GPUs is unknown: give --gpus G (and --nodes M); it names "
                          "no GPU either, so it matches no topology preset (flat, dgx-a100, ")
    assert "): give --topology NAME or a .toml file describing the machine" in err
    # Given both, it runs (on 2 GPUs: its busbw = algbw, to the 10% its sub-GB/s rows print,
    # is 2(n-1)/n at n = 2 only); given one, the other alone is asked for, as before.
    assert ringsim("diagnose", paste, "-g", "2", "--topology", "dgx-h100", "--no-plot")[0] == 0
    code, _, err = ringsim("diagnose", paste, "--topology", "dgx-h100")
    assert code == 2 and err.rstrip().endswith("the number of GPUs is unknown: give --gpus G (and --nodes M)")
    code, _, err = ringsim("diagnose", paste, "-g", "16", "--nodes", "2")
    assert code == 2 and "--gpus" not in err and "matches no topology preset" in err


def test_a_nic_on_the_other_socket_is_named_among_the_causes_and_said_when_the_file_gives_it(
        ringsim, tmp_path):
    # NVIDIA/nccl-tests issue 293: one A100 PCIe and one HDR NIC per node on different AMD
    # sockets. On the machine as bought (NIC beside the GPU) the bandwidth-bound sizes fall
    # short, and the causes to look at include a NIC on the other socket.
    paste = OUT / "nccltests293_a100pcie_2node_nps1_gdr_across_sockets.txt"
    bought = Path(__file__).parent / "data" / "topologies" / "a100pcie-1hdr.toml"
    code, out, err = ringsim("diagnose", str(paste), "--topology", str(bought), "--no-plot")
    assert code == 0, err
    flat = " ".join(out.split())
    assert ("The links move less than modelled across nodes: the NIC rate, fewer NICs than GPUs "
            "(the model gives each GPU its own), a NIC on the other CPU socket (nic_path = \"sys\" "
            "in the topology's [across] prices it), GPUDirect RDMA off") in flat
    assert "Note: nic_path" not in out
    # the file saying so: one note says what the model then does, and with what rate
    far = tmp_path / "across.toml"
    far.write_text(bought.read_text().replace('[across]\n', '[across]\nnic_path = "SYS"\n')
                   .replace('arch = "ampere"\n', 'arch = "ampere"\ncpu = "amd"\n'))
    code, out, err = ringsim("diagnose", str(paste), "--topology", str(far), "--no-plot")
    assert code == 0, err
    notes = [line for line in out.splitlines() if line.startswith("Note: nic_path")]
    # the paste ran NCCL 2.21.5, whose tables price it
    assert notes == ["Note: nic_path sys: each GPU's NIC is on the other CPU socket, so NCCL "
                     "2.21.5 turns LL128 off across nodes (src/graph/tuning.cc), and every channel "
                     "of a node crosses the link between the sockets, which they share: 16 GB/s "
                     "each way, NCCL 2.21.5's AMD_BW for cpu = \"amd\" (src/graph/topo.cc, "
                     "ncclTopoGetInterCpuBw)"]


@pytest.mark.parametrize("printed, width, nccl", [("uint32", 4, "uint32"), ("uint64", 8, "uint64"),
                                                  ("f8e4m3", 1, "f8e4m3"), ("char", 1, "int8"),
                                                  ("int", 4, "int32")])
def test_every_type_nccl_tests_prints_is_diagnosed(tmp_path, ringsim, printed, width, nccl):
    # nccl-tests' -d takes NCCL's every type (src/common.cu's test_typenames: the unsigned ones
    # and, from NCCL 2.24, the 8-bit floats); before NCCL 2.0 it printed char and int. Each is
    # read as NCCL's type and priced so: the model's time is the one predict gives that type.
    from nccl_pastes import all_reduce_perf
    from ringsim.studies.predict import predict
    sizes = [1 << k for k in range(12, 28, 3)]
    paste = all_reduce_perf(tmp_path / "f.txt", {n: 30 + n / 2e5 for n in sizes},
                            "NVIDIA H100 80GB HBM3", ["node0"] * 8)
    rows = []
    for line in paste.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            cells = line.split()
            cells[1], cells[2] = str(int(cells[0]) // width), printed
            line = " ".join(f"{c:>9}" for c in cells)
        rows.append(line)
    paste.write_text("\n".join(rows) + "\n", encoding="utf-8")
    code, out, err = ringsim("diagnose", str(paste), "--json")
    assert code == 0, err
    got = [json.loads(line) for line in out.splitlines() if '"size"' in line]
    want = predict("dgx-h100", 8, sizes, dtype=nccl)
    assert [g["bytes"] for g in got] == sizes
    assert [g["predicted_seconds"] for g in got] == pytest.approx([w.seconds for w in want])


def test_bad_counts_and_words_are_refused_as_the_run_could_not_have_been(ringsim, tmp_path):
    from nccl_pastes import all_reduce_perf
    # 16 GPUs in one node of a topology of 8 a node: another machine, not 2 nodes' model.
    sixteen = all_reduce_perf(tmp_path / "16.txt", {1 << k: 30 + (1 << k) / 2e5 for k in range(10, 30, 4)},
                              "NVIDIA H100 80GB HBM3", ["node0"] * 16)
    code, _, err = ringsim("diagnose", str(sixteen), "--topology", "dgx-h100")
    assert code == 2 and err.count("\n") == 1
    assert "topology dgx-h100 has 8 GPUs per node but the run has 16 in one node" in err
    paste = str(OUT / "nccl1184_h100_wrong_results_excerpt.txt")
    # Every algbw under 1 GB/s still tells 2 ranks from 16: busbw = algbw is 2(n-1)/n at n = 2.
    code, _, err = ringsim("diagnose", paste, "-g", "16", "--topology", "dgx-h100")
    assert code == 2 and "2(n−1)/n for n = 2 GPUs" in err
    # A tolerance far below a percent is that tolerance, not 0%.
    code, out, err = ringsim("diagnose", paste, "-g", "2", "--topology", "dgx-h100",
                             "--tolerance", "1e-30", "--no-plot")
    assert code == 0, err
    assert "by more than 1e-30%" in out
    # An extra word is said under the command's name, as its other errors are.
    code, _, err = ringsim("diagnose", paste, paste)
    assert (code, err) == (2, f"ringsim diagnose: error: unrecognized arguments: {paste}\n")


def test_a_last_node_of_fewer_gpus_is_diagnosed_as_the_topology_places_it(ringsim, tmp_path):
    # 9 ranks on hosts of 8 and 1: the topology's own placement of 9 GPUs in order, which the
    # model prices (every node aligned on the emptiest); 5 and 5 is another machine.
    from nccl_pastes import all_reduce_perf
    times = {1 << k: 30 + (1 << k) / 2e4 for k in range(10, 30, 4)}
    nine = all_reduce_perf(tmp_path / "9.txt", times, "NVIDIA H100 80GB HBM3", ["a"] * 8 + ["b"])
    code, out, err = ringsim("diagnose", str(nine), "--no-plot", "--json")
    assert code == 0, err
    summary = json.loads(out.splitlines()[-1])
    assert (summary["gpus"], summary["nodes"]) == (9, 2)
    assert any(n.startswith("the last node holds 1 GPU of the 8 a node holds: every node runs on "
                            "the fewest channels") and n.endswith("as topology dgx-h100 places "
                                                                  "them in order")
               for n in summary["notes"])
    ten = all_reduce_perf(tmp_path / "10.txt", times, "NVIDIA H100 80GB HBM3", ["a"] * 5 + ["b"] * 5)
    code, _, err = ringsim("diagnose", str(ten), "--no-plot")
    assert code == 2 and err == ("ringsim diagnose: error: topology dgx-h100 has 8 GPUs per node but "
                                 "the run has 5 per node on 2 nodes: give a topology with "
                                 "gpus_per_node = 5\n")
    uneven = all_reduce_perf(tmp_path / "u.txt", times, "NVIDIA H100 80GB HBM3", ["a"] * 6 + ["b"] * 4)
    code, _, err = ringsim("diagnose", str(uneven), "--no-plot")
    assert code == 2 and "the run has 6, 4 on its 2 nodes: give a topology with its nodes' GPUs" in err
