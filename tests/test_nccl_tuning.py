"""ringsim's NCCL model against NCCL's own tuning output on real machines.

tests/data/nccl_tuning.toml quotes, from published NCCL_DEBUG=INFO logs, the tuning table rank 0
printed at init (latency µs / algorithm bandwidth GB/s for every algorithm and protocol) and the
algorithm, protocol and channels it chose per call. These are NCCL's model's own numbers on
those machines, so the model must print the same, cell for cell, to NCCL's one decimal.
"""

import json
import tomllib
from pathlib import Path

import pytest

from ringsim.cli import main
from ringsim.cost.nccl import TABLE_FUNCTIONS, max_threads, nccl_choice, tuning_table
from ringsim.cost.topology import presets
from ringsim.studies import nccltuning, nccltuning_log, peers
from ringsim.studies.textfile import Text

DATA = Path(__file__).parent / "data"
LOGS = tomllib.loads((DATA / "nccl_tuning.toml").read_text(encoding="utf-8"))["log"]


def _topology(name: str) -> str:
    return name if name in presets() else str(peers.PUBLISHED.joinpath(name))


def _as_log(text: str, prefix: str = "host:1:2 [0] NCCL INFO ") -> Text:
    return Text("log", tuple(prefix + line for line in text.splitlines() if line), 0)


def _ids(entry: dict) -> str:
    return f"{entry['gpu'].split()[0]}-{entry['gpus']}gpu"


@pytest.mark.parametrize("entry", LOGS, ids=_ids)
def test_every_cell_of_nccls_printed_table_is_the_models(entry):
    logged = nccltuning_log.parse(_as_log(entry["table"]))
    assert len(logged.tables) == 1
    table = logged.tables[0]
    # 7 algorithms × 3 protocols × NCCL's 5 functions
    assert len(table) == 105
    modelled = tuning_table(_topology(entry["topology"]), entry["gpus"], entry["nccl"])
    for func in TABLE_FUNCTIONS:
        for cell in nccltuning.compare(table, modelled, func):
            # every latency NCCL prints, bandwidth 0 or not, is the model's to the decimal
            assert round(cell.modelled[0], 1) == cell.logged[0], (func, cell)
            if entry.get("checks") == "latency":
                # NCCL has bandwidth exactly where the model has, and the cells it turned off
                # by its own rules agree: LL128, off where the NIC is reached through the CPU
                assert (cell.logged[1] > 0) == (cell.modelled[1] > 0), (func, cell)
                if cell.protocol == "LL128":
                    assert cell.agrees, (func, cell)
            else:
                assert cell.agrees, (func, cell)
    # the table is not all zeros: the cells NCCL can run are there, and agree
    runnable = [c for c in nccltuning.compare(table, modelled, "AllReduce") if c.logged[1]]
    assert len(runnable) >= 4
    # a broadcast and a reduce run on the ring only, one hop of latency and nRanks / nsteps = 1
    assert {c.algorithm for c in nccltuning.compare(table, modelled, "Reduce")
            if c.logged[1]} == {"Ring"}
    # the threads a channel runs with, every (algorithm, protocol), as NCCL printed them
    assert len(logged.threads[0]) == 21
    assert logged.threads[0] == max_threads(_topology(entry["topology"]), entry["gpus"],
                                            entry["nccl"])


@pytest.mark.parametrize("entry", [e for e in LOGS if e["choices"]], ids=_ids)
def test_nccls_choice_per_call_is_the_models(entry):
    logged = nccltuning_log.parse(_as_log(entry["choices"]))
    assert logged.choices
    for c in logged.choices:
        model = nccl_choice(_topology(entry["topology"]), entry["gpus"], c.nbytes,
                            nccl=entry["nccl"])
        assert (model.algorithm, model.protocol, model.channels) == (
            c.algorithm, c.protocol, c.channels), c


def test_two_h100s_have_nvls_and_a_faster_tree_than_their_rings():
    # NCCL 2.29.2 on two H100s of an NVSwitch box: NVLS at 102.0 GB/s, and tree channels that
    # take their one hop either way round (12 at 60 GB/s, capped at 12 × 38.7 for Simple).
    two = tuning_table("dgx-h100", 2, "2.29.2")
    assert two[("AllReduce", "NVLS", "Simple")] == pytest.approx((25.0, 102.0), abs=0.05)
    assert two[("AllReduce", "Tree", "Simple")][1] == pytest.approx(232.2, abs=0.05)
    four = tuning_table("dgx-h100", 4, "2.29.2")
    assert four[("AllReduce", "Tree", "Simple")][1] == pytest.approx(165.6, abs=0.05)


def test_the_old_one_header_form_and_trace_lines_parse():
    text = "\n".join([
        "Latency/AlgBw |    Tree/    LL |    Tree/ LL128 |    Tree/Simple |    Ring/    LL |"
        "    Ring/ LL128 |    Ring/Simple |",
        " Max NThreads |            512 |            640 |            512 |            512 |"
        "            640 |            256 |",
        "    AllReduce |    15.0/  32.3 |    21.9/ 117.4 |    60.0/ 139.2 |     9.4/  37.9 |"
        "    18.4/ 127.5 |    29.0/ 144.0 |"])
    found = nccltuning_log.parse(_as_log(text))
    assert found.old_form
    assert found.tables[0][("AllReduce", "Ring", "LL128")] == (18.4, 127.5)
    assert found.threads[0][("Ring", "Simple")] == 256
    trace = nccltuning_log.parse(_as_log("64 Bytes -> Algo 0 proto 0 time 25.207382",
                                     prefix="[0] h100:4978:4978 [0] NCCL TRACE "))
    assert trace.choices == [nccltuning_log.Choice("", 64, "Tree", "LL", None, 25.207382)]


def test_a_second_communicator_starts_a_second_table_and_a_cut_row_keeps_its_cells():
    block = LOGS[0]["table"].splitlines()
    first = "\n".join(block)
    cut = "\n".join(block[:8])[:-40]  # the first block, its AllReduce row cut mid-cell
    found = nccltuning_log.parse(_as_log(first + "\n" + cut))
    assert len(found.tables) == 2
    assert ("AllReduce", "Tree", "LL") in found.tables[1]
    assert ("AllReduce", "CollNetDirect", "Simple") not in found.tables[1]


def test_predict_tuning_prints_the_table_nccl_would(capsys):
    assert main(["predict", "--tuning", "-g", "4", "--nccl", "2.29.2"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert "2.29.2" in out[0] and "4 GPUs in 1 node" in out[0]
    # line for line NCCL's, the latencies of cells it has no bandwidth for too (CollNetDirect's
    # 2.4/0.0 on one node: its graph is not searched, so tuning.cc reads the PCIe row)
    logged_lines = [line for line in LOGS[1]["table"].splitlines() if line]
    assert out[1:] == logged_lines
    all_reduce = next(line for line in out if line.strip().startswith("AllReduce"))
    assert all_reduce.split("|")[7] == "     2.4/   0.0 "  # CollNetDirect/LL
    printed_log = nccltuning_log.parse(_as_log("\n".join(out[1:])))
    printed, logged_log = printed_log.tables[0], nccltuning_log.parse(_as_log(LOGS[1]["table"]))
    logged = logged_log.tables[0]
    assert set(printed) == set(logged) and printed_log.threads == logged_log.threads
    for func in TABLE_FUNCTIONS:
        for cell in nccltuning.compare(logged, printed, func):
            assert cell.agrees, cell
            # where NCCL has bandwidth the print is the same to the digit
            assert not cell.logged[1] or cell.logged == cell.modelled
    assert main(["predict", "--tuning", "--json", "-g", "4", "--nccl", "2.29.2"]) == 0
    cells = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    ring = next(c for c in cells if (c["function"], c["algorithm"], c["protocol"])
                == ("AllReduce", "Ring", "Simple"))
    assert ring["algbw"] == pytest.approx(240e9) and ring["latency"] == pytest.approx(28.8e-6)
    assert ring["max_threads"] == 512 and len(cells) == 105


def test_diagnose_sets_the_logs_table_and_choices_beside_the_model(tmp_path, capsys):
    entry = LOGS[1]  # four H100s, NCCL 2.29.2
    log = tmp_path / "nccl.log"
    log.write_text("h:1:2 [0] NCCL INFO NCCL version 2.29.2+cuda13.1\n" + "\n".join(
        _as_log(entry["table"] + entry["choices"]).lines) + "\n", encoding="utf-8")
    paste = tmp_path / "out.txt"
    paste.write_text("\n".join([
        "# nThread 1 nGpus 4 minBytes 268435456 maxBytes 536870912 step: 2(factor)",
        "#  Rank  0 Group  0 Pid   1391 on host device  0 [0x41] NVIDIA H100 80GB HBM3",
        "#  Rank  1 Group  0 Pid   1391 on host device  1 [0x42] NVIDIA H100 80GB HBM3",
        "#  Rank  2 Group  0 Pid   1391 on host device  2 [0x43] NVIDIA H100 80GB HBM3",
        "#  Rank  3 Group  0 Pid   1391 on host device  3 [0x44] NVIDIA H100 80GB HBM3",
        "#       size         count      type   redop    root     time   algbw   busbw #wrong",
        "   268435456      67108864     float     sum      -1   1620.0  165.70  248.55      0",
        "   536870912     134217728     float     sum      -1   3180.0  168.83  253.24      0",
    ]) + "\n", encoding="utf-8")
    assert main(["diagnose", str(paste), "--nccl-log", str(log), "--no-plot"]) == 0
    out = capsys.readouterr().out
    assert "NCCL's own model as its log printed it (AllReduce)" in out
    assert "NCCL 2.29.2's tables, the release the log ran" in out
    assert "7 of 7 agree to the decimal NCCL prints" in out
    assert "Max NThreads: 21 of 21 the same" in out
    assert "6 of 6 sizes the same" in out
    assert main(["diagnose", str(paste), "--nccl-log", str(log), "--json"]) == 0
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    tuning = next(r for r in records if r.get("type") == "nccl_tuning")
    assert tuning["model_tables"] == "2.29.2" and all(c["agrees"] for c in tuning["cells"])
    assert all(p["same"] for p in tuning["choices"])


def test_nccl_algo_and_proto_zero_the_bandwidth_they_leave_out_as_nccl_prints_them():
    table = tuning_table("dgx-h100", 16, algo="Ring", proto="^LL")
    assert table[("AllReduce", "Tree", "LL128")] == pytest.approx((48.5, 0.0), abs=0.05)
    assert table[("AllReduce", "Ring", "LL")][1] == 0.0
    assert table[("AllReduce", "Ring", "LL128")][1] == pytest.approx(156.6, abs=0.05)


def test_a_hostile_log_stays_bounded():
    long_number = "9" * 5000  # past Python's 4,300-digit limit on int()
    lines = [f"AllReduce: {n} Bytes -> Algo RING proto LL channel{{Lo..Hi}}={{0..3}}"
             for n in range(nccltuning_log.MAX_SIZES + 10)]
    lines += [f"AllReduce: {long_number} Bytes -> Algo RING proto LL channel{{Lo..Hi}}={{0..3}}",
              f"AllReduce: 64 Bytes -> Algo TREE proto LL channel{{Lo..Hi}}={{0..{long_number}}}",
              f" Max NThreads | {long_number} |", f"    AllReduce | {long_number}/1.0 |"]
    found = nccltuning_log.parse(_as_log("\n".join(lines)))
    assert len(found.choices) == nccltuning_log.MAX_SIZES
    assert found.tables == []
    assert max(c.nbytes for c in found.choices) == nccltuning_log.MAX_SIZES - 1


def test_one_gpu_per_node_trees_keep_085_and_pat_prices_with_the_trees_graph():
    # Two GB10s, one GPU each, 200 Gb/s: the ring's graph is 1 channel at 24 GB/s. The tree's
    # raises its speed inside one step at a time while it is under twice the 24 across
    # (search.cc, pass 2: `tmpGraph.bwIntra < tmpGraph.bwInter*2` before each raise), so
    # 30, 40, 42, 45.1 and then 48, which is not under 48 and ends it. tuning.cc:
    # Tree/Simple = min(48 × 0.92 (all-reduce), 1 channel × 42.8 (perChMaxTreeBw, Blackwell,
    # two nodes; 82.8 in 2.25.1)) × 0.85 (NCCL_TOPO_PATTERN_TREE, which search.cc gives every
    # graph but the ring's with one GPU per node: v2.25.1-1:995) × ½;
    # PAT (all-gather) = the tree's 48 × 0.75, with no bus-to-algorithm ratio.
    pair = peers.system_file("gb10-pair")
    new, old = tuning_table(pair, 2, "2.29.7"), tuning_table(pair, 2, "2.25.1")
    assert new[("AllReduce", "Tree", "Simple")][1] == pytest.approx(42.8 * 0.85 / 2)
    # 2.25.1 (tuning.cc:260: graphs[a]->pattern == NCCL_TOPO_PATTERN_TREE) and its caps
    assert old[("AllReduce", "Tree", "Simple")][1] == pytest.approx(48 * 0.92 * 0.85 / 2)
    assert new[("AllGather", "PAT", "Simple")][1] == pytest.approx(48 * 0.75)
    assert new[("AllReduce", "Ring", "Simple")][1] == pytest.approx(24.0)


def test_two_nics_per_gpu_are_two_network_devices_as_the_socket_pairs_log_shows():
    # NCCL's socket transport on the RTX 5090 pair runs two interfaces of 10 Gb/s (1.2 GB/s as
    # NCCL rates them): its rings get 2 channels of 1.2, and its tree 2 channels raised inside
    # from 1.2 to 2.4, twice the speed across (search.cc). Tree/Simple: 2 × 2.4 × 0.92 × 0.85
    # × ½ = 1.88, which NCCL 2.29.7's log prints as 1.9. With one 20 Gb/s network the tree
    # would be 1 channel raised from 2.4 to 6.0, and priced 1 × 6.0 × 0.92 × 0.85 × ½ = 2.3.
    from dataclasses import replace
    from ringsim.cost.nccl_graph import graphs, system
    from ringsim.cost.topology import load
    pair = load(_topology("systems/rtx5090-socket-pair.toml"))
    tree = graphs(system(pair, 2, "2.29.7"))["Tree"]
    assert (tree.channels, tree.bw_intra, tree.bw_inter) == (2, 2.4, 1.2)
    assert tuning_table(pair, 2, "2.29.7")[("AllReduce", "Tree", "Simple")][1] == pytest.approx(
        2 * 2.4 * 0.92 * 0.85 / 2)
    one = replace(pair, levels={**pair.levels,
                                "across": replace(pair.level("across"), nics_per_gpu=None)})
    tree = graphs(system(one, 2, "2.29.7"))["Tree"]
    assert (tree.channels, tree.bw_intra, tree.bw_inter) == (1, 6.0, 2.4)


def test_predict_sets_any_programs_log_beside_the_model(tmp_path, capsys):
    entry = LOGS[0]  # two H100s, NCCL 2.29.2
    log = tmp_path / "train.log"
    log.write_text("h:1:2 [0] NCCL INFO NCCL version 2.29.2+cuda13.1\n" + "\n".join(
        _as_log(entry["table"] + entry["choices"]).lines) + "\n", encoding="utf-8")
    assert main(["predict", "--tuning", "--nccl-log", str(log), "-g", "2"]) == 0
    out = capsys.readouterr().out
    assert "NCCL 2.29.2's tables, the release the log ran" in out
    assert "7 of 7 agree" in out and "6 of 6 sizes the same" in out
    # --nccl names another release: the model follows it, and says so
    assert main(["predict", "--tuning", "--nccl-log", str(log), "-g", "2", "--nccl",
                 "2.25.1"]) == 0
    out = capsys.readouterr().out
    assert "NCCL 2.25.1's tables; the log ran 2.29.2" in out and "◀" in out
    empty = tmp_path / "empty.log"
    empty.write_text("nothing here\n", encoding="utf-8")
    assert main(["predict", "--tuning", "--nccl-log", str(empty)]) == 2
    assert "shows no tuning table" in capsys.readouterr().err
    assert main(["predict", "--nccl-log", str(log)]) == 2
    assert "give --tuning too" in capsys.readouterr().err


def test_a_log_run_with_nccl_algo_is_set_beside_the_model_held_to_it(tmp_path, capsys):
    # Under NCCL_ALGO=Ring NCCL prints every other algorithm's bandwidth as 0: the model
    # compared with that log must be held to rings too, or every tree cell would differ.
    entry = LOGS[1]  # four H100s, NCCL 2.29.2
    rows, block = [], -1
    for line in entry["table"].splitlines():
        block += line.strip().startswith("Algorithm")
        if line.strip().startswith("AllReduce"):
            head, *cells = line.split("|")
            ring = (3, 4, 5) if block == 0 else ()  # Ring's columns in the first block
            cells = [c if i in ring or not c.strip() else c.split("/")[0] + "/   0.0 "
                     for i, c in enumerate(cells)]
            line = "|".join([head] + cells)
        rows.append(line)
    log = tmp_path / "ring.log"
    log.write_text("h:1:2 [0] NCCL INFO NCCL version 2.29.2+cuda13.1\n" + "\n".join(
        _as_log("\n".join(rows)).lines) + "\n", encoding="utf-8")
    assert main(["predict", "--tuning", "--nccl-log", str(log), "-g", "4", "--algo", "Ring"]) == 0
    assert "3 of 3 agree" in capsys.readouterr().out
    assert main(["predict", "--tuning", "--nccl-log", str(log), "-g", "4"]) == 0
    assert "3 of 7 agree" in capsys.readouterr().out


def test_predict_reads_nvls_off_in_a_log_as_diagnose_does(capsys):
    # The made-up half-network log says "NVLS multicast support is not available": NCCL ran
    # without NVLS and NVLSTree, so the model's choices and cells leave them out too.
    log = DATA / "nccl_outputs" / "synthetic" / "h100_2node_half_network_tuning.log"
    assert main(["predict", "--tuning", "--nccl-log", str(log), "--topology", "dgx-h100",
                 "-g", "16"]) == 0
    out = capsys.readouterr().out
    assert "1 of 1 sizes the same" in out and "NVLSTree" not in out.split("Note:")[0]
    assert "NCCL ran without NVLS and NVLSTree, and so does the model" in out
    assert main(["predict", "--tuning", "--nccl-log", str(log), "--topology", "dgx-h100",
                 "-g", "16", "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["nvls_off"].startswith("NVLS multicast support is not available")
    assert all(p["same"] for p in record["choices"])


def test_the_socket_pairs_ll128_is_off_as_its_log_prints_and_its_rings_agree():
    # The RTX 5090 pair over NCCL's socket transport (the last log): a socket device has no
    # GPUDirect RDMA, so NCCL reaches it through the CPU (nic_path "phb"), past PATH_PXN, and
    # NCCL 2.29.7 prints every LL128 cell at bandwidth 0; the rings' cells agree to the decimal.
    entry = next(e for e in LOGS if e["topology"] == "systems/rtx5090-socket-pair.toml")
    table = nccltuning_log.parse(_as_log(entry["table"])).tables[0]
    modelled = tuning_table(_topology(entry["topology"]), entry["gpus"], entry["nccl"])
    ll128 = [c for f in TABLE_FUNCTIONS for c in nccltuning.compare(table, modelled, f)
             if c.protocol == "LL128" and c.logged[0]]
    assert len(ll128) == 10 and all(c.logged[1] == c.modelled[1] == 0.0 for c in ll128)
    rings = [c for f in TABLE_FUNCTIONS for c in nccltuning.compare(table, modelled, f)
             if c.algorithm == "Ring"]
    assert len(rings) == 15 and all(c.agrees for c in rings)
    # With its two sockets as two NICs (nics_per_gpu = 2) every cell NCCL prints agrees:
    # the trees' and PAT's too
    cells = [c for f in TABLE_FUNCTIONS for c in nccltuning.compare(table, modelled, f)]
    assert all(c.agrees for c in cells), [c for c in cells if not c.agrees]


@pytest.mark.parametrize("flags, named", [(["--sizes", "8B"], "--sizes"),
                                          (["--sizes", "8B..8GiB"], "--sizes"),
                                          (["--dtype", "half", "--gpus-per-process", "2"],
                                           "--dtype, --gpus-per-process"),
                                          (["--collective", "broadcast"], "--collective")])
def test_the_tuning_table_refuses_flags_it_would_ignore(capsys, flags, named):
    # NCCL's table holds every size, type and process layout at once: a flag that changes none
    # of it is refused rather than silently dropped (the default value given explicitly too)
    assert main(["predict", "--tuning", *flags]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"ringsim predict: error: --tuning prints NCCL's table for every collective, size, "
                   f"type and process layout at once: it takes no {named}"]
    assert main(["predict", *flags]) == 0  # without --tuning they are the table's columns


def test_a_log_line_nccl_would_not_print_is_left_out_and_said(tmp_path, capsys):
    # NCCL prints each cell with %8.1f/%6.1f from latencies and bandwidths of 0 and up, its
    # channel range low first, and chooses nothing for an empty call: a log with a negative or
    # non-number cell, a range the wrong way round or a 0-byte choice line is no log NCCL
    # wrote there, so those parts are left out, with a line saying how many cells.
    log = (DATA / "nccl_outputs" / "synthetic" / "h100_2node_half_network_tuning.log").read_text(
        encoding="utf-8").splitlines()
    table_row = next(i for i, line in enumerate(log) if line.rstrip().endswith("|")
                     and "AllReduce |" in line)
    cells = log[table_row].split("|")
    cells[1], cells[2] = "    -5.0/  -1.0 ", "     nan/   inf "
    log[table_row] = "|".join(cells)
    choice = next(i for i, line in enumerate(log) if "Bytes -> Algo" in line)
    log.insert(choice + 1, log[choice].replace("1073741824 Bytes", "0 Bytes"))
    log.insert(choice + 1, log[choice].replace("1073741824 Bytes", "2147483648 Bytes")
               .replace("{0..15}", "{15..0}"))
    path = tmp_path / "odd.log"
    path.write_text("\n".join(log) + "\n", encoding="utf-8")
    found = nccltuning_log.parse(Text("odd.log", tuple(log), 0))
    assert found.unread == 2 and ("AllReduce", "Tree", "LL") not in found.tables[0]
    assert {c.nbytes: c.channels for c in found.choices}[2147483648] is None
    assert main(["predict", "--tuning", "--nccl-log", str(path)]) == 0
    out = capsys.readouterr().out
    assert "2 cells of the log's tables are not two numbers from 0 up as NCCL prints them" in out
    assert "-5.0 us" not in out and "on -14" not in out
    assert "NCCL's choices in the log, beside the model's: 2 of 2 sizes the same algorithm and " \
           "protocol, 0 of those 1 on as many channels" in out
