"""compare --time: NCCL's model's pick beside the textbook rows, who runs each schedule, options."""

import json

import pytest

from ringsim.algorithms import ALGORITHMS, option_names
from ringsim.studies.whose import runs_line
from ringsim.algorithms.timing import estimate
from ringsim.cli import main
from ringsim.core.naming import plural
from ringsim.core.units import format_bytes, format_seconds
from ringsim.cost.model import CostModel
from ringsim.cost.nccl import nccl_choice


def _json(capsys, *argv):
    assert main(["compare", "--json", *argv]) == 0
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


@pytest.mark.parametrize("topology, gpus, size, nbytes", [
    ("dgx-h100", 16, "1GiB", 2**30), ("dgx-h100", 16, "64KiB", 2**16),
    ("dgx-a100", 8, "1MiB", 2**20), ("ethernet-100g", 32, "256MiB", 2**28)])
def test_the_nccl_record_is_nccl_choice(capsys, topology, gpus, size, nbytes):
    rows = _json(capsys, "--topology", topology, "--gpus", str(gpus), "--size", size)
    nccl = [r for r in rows if r.get("model") == "nccl"]
    assert len(nccl) == 1
    assert rows[-1] is nccl[0] and "algorithm" not in nccl[0]  # apart from ringsim's names
    want, got = nccl_choice(topology, gpus, nbytes), nccl[0]["nccl"]
    assert (got["algorithm"], got["protocol"], got["channels"]) == \
        (want.algorithm, want.protocol, want.channels)
    assert got["seconds"] == want.seconds
    assert got["algbw"] == pytest.approx(nbytes / want.seconds, rel=1e-12)
    assert got["busbw"] == pytest.approx(nbytes / want.seconds * 2 * (gpus - 1) / gpus,
                                         rel=1e-12)
    assert all(r["model"] == "textbook" for r in rows if r is not nccl[0])


def test_the_text_names_nccls_pick_and_labels_both_models(capsys):
    assert main(["compare", "--time", "--topology", "dgx-h100", "--nodes", "2",
                 "--size", "64KiB"]) == 0
    out = capsys.readouterr().out
    flat = " ".join(out.split())
    want = nccl_choice("dgx-h100", 16, 2**16)
    assert (f"NCCL would run {want.algorithm}, protocol {want.protocol}, on {plural(want.channels, 'channel')}: "
            f"{format_seconds(want.seconds)}") in flat
    assert "Textbook α-β-γ model" in out
    # which textbook row is NCCL's schedule, and its time beside NCCL's model's
    same = [s for s in ALGORITHMS.values() if s.nccl_name == want.algorithm]
    if same:
        assert f"NCCL's {want.algorithm} in the textbook model is" in flat


def test_who_runs_each_row_comes_from_its_spec(capsys):
    rows = _json(capsys, "--topology", "dgx-h100", "--nodes", "2", "--size", "1MiB")
    textbook = [r for r in rows if r.get("model") == "textbook"]
    assert {r["algorithm"] for r in textbook} == set(ALGORITHMS)
    for r in textbook:
        spec = ALGORITHMS[r["algorithm"]]
        assert r["nccl_name"] == spec.nccl_name
        assert [tuple(i.values()) for i in r["mpi_implementations"]] == \
            [tuple(i) for i in spec.mpi_implementations]
    assert main(["compare", "--time", "--topology", "dgx-h100", "--nodes", "2",
                 "--size", "1MiB"]) == 0
    table = capsys.readouterr().out.split("Textbook α-β-γ model")[1]
    header = next(line for line in table.splitlines() if line.startswith("algorithm "))
    at = header.index("NCCL's name")
    for r in (r for r in textbook if r["seconds"] is not None):  # untimed rows are told below it
        spec = ALGORITHMS[r["algorithm"]]
        line = next(line for line in table.splitlines() if line.startswith(spec.title + " "))
        assert line[at:].split("  ")[0].strip() == (spec.nccl_name or "none")
    # the sentence under the table: who runs each schedule NCCL lacks, grouped by library
    flat = " ".join(table.split())
    sentence = flat[flat.index("Not in NCCL: ") + len("Not in NCCL: "):flat.index(" (their source")]
    groups = {}
    for part in sentence.split("; "):
        if part.startswith("neither MPICH nor Open MPI has "):
            groups[""] = part[len("neither MPICH nor Open MPI has "):]
        else:
            who, _, titles = part.partition(" run ") if " run " in part else part.partition(" runs ")
            groups[who] = titles
    for spec in ALGORITHMS.values():
        if spec.nccl_name is None:
            who = " and ".join(dict.fromkeys(i.library for i in spec.mpi_implementations))
            assert spec.title in groups[who]


def test_the_mpi_libraries_are_named_with_their_files():
    for spec in ALGORITHMS.values():
        for impl in spec.mpi_implementations:
            assert impl.library in ("MPICH", "Open MPI")
            where = "src/mpi/coll/allreduce/" if impl.library == "MPICH" else "ompi/mca/coll/"
            assert impl.source.startswith(where) and impl.source.endswith(".c")
            assert impl.function.startswith("MPIR_Allreduce_intra_" if impl.library == "MPICH"
                                            else "ompi_coll_base_allreduce_intra_")
    assert runs_line("recursive-doubling") == \
        "Recursive doubling is not in NCCL (MPICH and Open MPI run it)"
    assert runs_line("ring") == "Ring all-reduce is NCCL's Ring; MPICH and Open MPI run it"
    assert runs_line("tree") == "Binary tree is not in NCCL (MPICH runs it)"


def test_chunks_pipeline_the_trees_and_only_them(capsys):
    rows = _json(capsys, "--topology", "dgx-h100", "--nodes", "2", "--size", "64MiB",
                 "--chunks", "8")
    model = CostModel.of("dgx-h100", "float32")
    takes = {r["algorithm"]: r for r in rows if r["model"] == "textbook"}
    pipelined = {name for name in ALGORITHMS if "chunks" in option_names(name)}
    assert {"tree", "double-tree"} <= pipelined
    for name in pipelined:
        assert takes[name]["options"] == {"chunks": 8}
        if takes[name]["seconds"] is None:  # NVLS: this machine's switches do not add
            continue
        assert takes[name]["seconds"] == estimate(name, 16, 2**24, model, chunks=8).seconds
    for name in ("tree", "double-tree"):
        assert takes[name]["seconds"] < estimate(name, 16, 2**24, model).seconds
    assert all("chunks" not in r["options"] for r in rows
               if r["model"] == "textbook" and r["algorithm"] not in pipelined)


@pytest.mark.parametrize("argv, message", [
    (["--chunks", "0"], "chunks"), (["--ring-order", "1,2"], "ring"),
    (["--channels", "-1"], "channels")])
def test_bad_options_are_one_line(capsys, argv, message):
    assert main(["compare", "--time", "--gpus", "4", *argv]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0]


def test_sweep_sets_nccls_pick_beside_the_textbook_columns(capsys):
    argv = ["sweep", "--topology", "dgx-h100", "--nodes", "2", "--sizes", "1KiB..1GiB:x32"]
    assert main([*argv, "--json"]) == 0
    sizes = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    sizes = [r for r in sizes if r["type"] == "size"]
    assert len(sizes) == 5
    for r in sizes:
        want = nccl_choice("dgx-h100", 16, r["bytes"])
        assert r["nccl"]["algorithm"] == want.algorithm and r["nccl"]["seconds"] == want.seconds
        assert r["nccl"]["busbw"] == pytest.approx(r["bytes"] / want.seconds * 30 / 16, rel=1e-12)
        for name, entry in r["algorithms"].items():
            # the rails column is the ring ('algorithm' in its entry), which NCCL runs
            assert entry["nccl_name"] == ALGORITHMS[entry.get("algorithm", name)].nccl_name
    assert main([*argv, "--no-plot"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    header = next(line for line in lines if line.lstrip().startswith("size") and "NCCL's pick" in line)
    for name, spec in ALGORITHMS.items():
        assert (f" {name}* " in header + " ") == (spec.nccl_name is None)
    for r in sizes:
        want = nccl_choice("dgx-h100", 16, r["bytes"])
        row = next(line for line in lines if line.split()[:1] == [format_bytes(r["bytes"])])
        assert row.split()[-4:] == [*format_seconds(want.seconds).split(),
                                    f"{want.algorithm}/{want.protocol}", f"×{want.channels}"]


@pytest.mark.parametrize("argv, gpus, nbytes, collective", [
    (["--topology", "dgx-h100", "--gpus", "16", "--size", "64KiB"], 16, 2**16, "all-reduce"),
    (["-a", "recursive-doubling", "--gpus", "8"], 8, 32, "all-reduce"),
    (["--collective", "all-gather", "--gpus", "8", "--size", "4KiB"], 8, 4096, "all-gather")])
def test_walk_time_says_what_nccl_would_run(capsys, argv, gpus, nbytes, collective):
    want = nccl_choice("dgx-h100" if "dgx-h100" in argv else "flat", gpus, nbytes, collective)
    assert main(["walk", "--time", *argv]) == 0
    out = capsys.readouterr().out
    assert "Modelled time (textbook α-β-γ): " in out
    assert (f"NCCL would run {want.algorithm}, protocol {want.protocol}, on {plural(want.channels, 'channel')}: "
            f"{format_seconds(want.seconds)}") in out
    if "recursive-doubling" in argv:
        assert "Recursive doubling is not in NCCL (MPICH and Open MPI run it)." in out
    assert main(["walk", "--time", "--json", *argv]) == 0
    summary = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert summary["nccl"] == want.to_json()


def test_the_tui_clock_and_sweep_panel_name_nccls_pick():
    from ringsim.algorithms import make_plan
    from ringsim.tui.clock import Clock
    from ringsim.tui.sweeps import sweep_view
    from ringsim.tui.widgets.sweep_plot import SweepPanel, nccl_series
    want = nccl_choice("dgx-h100", 16, 4096 * 4)
    which = f"{want.algorithm}/{want.protocol}"
    reading = Clock("dgx-h100").reading(make_plan("ring", 16), 4096, 3)
    words = reading.wordings()
    assert words[0].startswith("textbook α-β-γ: step ")
    assert words[0].endswith(f"NCCL's model: {which} ×{want.channels} "
                             f"{format_seconds(want.seconds)}")
    assert words[1].endswith(f"NCCL {which} {format_seconds(want.seconds)}")
    nccl = reading.nccl_wordings()
    assert nccl[-1].startswith("α-β-γ ") and nccl[-1].endswith(f" · NCCL {format_seconds(want.seconds)}")
    assert words[len(nccl):] == reading.plain_wordings() and all("NCCL" not in w for w in words[len(nccl):])
    view = sweep_view(16, "dgx-h100", 4096)
    legend = SweepPanel._legend(view, "time", "ring").plain
    assert f"NCCL's model there: {which} ×{want.channels} {format_seconds(want.seconds)}" in legend
    for name, spec in ALGORITHMS.items():
        assert (f"━━ {name}* " in legend) == (spec.nccl_name is None)
    line = nccl_series(view, "time")
    assert [y for _, y in line] == [nccl_choice("dgx-h100", 16, p.nbytes).seconds
                                    for p in view.sweep.points]


def test_nccls_ring_is_set_beside_the_rails_row(capsys):
    """Four DGX H100 nodes, 1 GiB: NCCL's model picks its ring; the textbook row for it is
    the ring laid out as NCCL's channels, not the single ring."""
    want = nccl_choice("dgx-h100", 32, 2**30)
    assert want.algorithm == "Ring"
    rails = estimate("ring", 32, 2**28, CostModel.of("dgx-h100", "float32"),
                     ring_order="rails:8").seconds
    assert main(["compare", "--time", "--topology", "dgx-h100", "--nodes", "4",
                 "--size", "1GiB"]) == 0
    flat = " ".join(capsys.readouterr().out.split())
    assert (f"NCCL's Ring in the textbook model is Ring all-reduce (ring order rails:8): "
            f"{format_seconds(rails)} (rank 1), against NCCL's model's "
            f"{format_seconds(want.seconds)}, which adds NCCL's fixed cost per call "
            f"({format_seconds(want.latency)})") in flat


def test_nccls_model_has_no_time_for_an_empty_call(capsys):
    # NCCL discards a call of 0 elements before choosing (src/enqueue.cc, taskAppend), as
    # predict and sweep say; compare and walk say the same.
    assert main(["compare", "--time", "--size", "0", "--topology", "dgx-h100", "-g", "8"]) == 0
    out = capsys.readouterr().out
    assert "NCCL would run" not in out and "an empty call, which NCCL discards" in out
    assert main(["walk", "--time", "-n", "0"]) == 0
    assert "no answer here: an empty call, which NCCL discards" in capsys.readouterr().out


def _predict_seconds(capsys, release, *argv):
    assert main(["predict", "--json", *argv] + (["--nccl", release] if release else [])) == 0
    (row,) = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    return row["seconds"]


@pytest.mark.parametrize("release", [None, "2.21.5", "2.18.3"])
def test_compare_and_sweep_price_nccls_row_with_the_release_predict_prices(capsys, release):
    # The same call priced three ways: predict's row, compare's NCCL record, sweep's NCCL cell.
    machine = ["--topology", "dgx-h100", "--nodes", "2"]
    given = ["--nccl", release] if release else []
    want = _predict_seconds(capsys, release, *machine, "--size", "1GiB")
    rows = _json(capsys, *machine, "--size", "1GiB", *given)
    (nccl,) = [r for r in rows if r.get("model") == "nccl"]
    assert nccl["nccl"]["seconds"] == want
    assert nccl["nccl_version"] == (release or "2.30.7")
    assert main(["sweep", "--json", *machine, "--sizes", "1GiB", *given]) == 0
    size = json.loads(capsys.readouterr().out.splitlines()[0])
    assert size["nccl"]["seconds"] == want and size["nccl_version"] == (release or "2.30.7")
    # and the release is what changes it: 2.21.5's tables price this call otherwise
    if release == "2.21.5":
        assert want != _predict_seconds(capsys, None, *machine, "--size", "1GiB")


def test_the_release_is_named_where_nccls_row_is_labelled(capsys):
    machine = ["--topology", "dgx-h100", "--nodes", "2"]
    assert main(["compare", "--time", *machine, "--size", "1GiB", "--nccl", "2.21.5"]) == 0
    flat = " ".join(capsys.readouterr().out.split())
    seconds = _predict_seconds(capsys, "2.21.5", *machine, "--size", "1GiB")
    assert (f"NCCL's model (NCCL 2.21.5's own tuning, docs/cost.md): NCCL would run NVLSTree, "
            f"protocol Simple, on 16 channels: {format_seconds(seconds)}") in flat
    assert "ringsim predict --nccl 2.21.5 shows it over sizes." in flat
    # NCCL's form of a release ('2.21.5-1+cuda12.4', as its logs print it) is the release
    assert main(["compare", "--time", *machine, "--size", "1GiB",
                 "--nccl", "2.21.5-1+cuda12.4"]) == 0
    assert "(NCCL 2.21.5's own tuning" in capsys.readouterr().out
    assert main(["sweep", "--no-plot", *machine, "--sizes", "1KiB,1GiB", "--nccl", "2.21.5"]) == 0
    lines = capsys.readouterr().out.splitlines()
    header = next(line for line in lines if "NCCL's pick" in line)
    assert header.split()[-5:] == ["NCCL", "2.21.5's", "model", "NCCL's", "pick"]
    row = next(line for line in lines if line.split()[:1] == ["1GiB"] and "×" in line)
    assert format_seconds(seconds) in row
    busbw = next(line for line in lines if line.lstrip().startswith("size") and
                 "NCCL's pick" not in line and "NCCL" in line)
    assert busbw.rstrip().endswith("NCCL 2.21.5's model")
    # without --nccl the labels name the model's own release
    assert main(["sweep", "--no-plot", *machine, "--sizes", "1GiB"]) == 0
    out = capsys.readouterr().out
    assert "NCCL 2.30.7" in out and "2.30.7-1" not in out and "2.21.5" not in out


@pytest.mark.parametrize("command", [["compare", "--time"], ["sweep", "--no-plot"],
                                     ["compare", "--collective", "all-gather", "--time"]])
def test_a_release_ringsim_lacks_is_one_line_as_predicts(capsys, command):
    assert main(["predict", "--nccl", "2.99.1"]) == 2
    (want,) = capsys.readouterr().err.strip().splitlines()
    assert main([*command, "--nccl", "2.99.1"]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith(f"ringsim {command[0]}: error: argument --nccl: ringsim has the "
                           "tuning tables of NCCL ")
    assert line.split(": error: ")[1] == want.split(": error: ")[1]


def test_the_one_algorithm_collectives_price_nccl_with_the_release_too(capsys):
    argv = ["--collective", "all-gather", "--topology", "dgx-h100", "-g", "8", "--size", "1MiB"]
    for release in ("2.21.5", None):
        given = ["--nccl", release] if release else []
        assert main(["compare", "--json", *argv, *given]) == 0
        record = json.loads(capsys.readouterr().out)
        want = nccl_choice("dgx-h100", 8, 2**20, "all-gather", nccl=release)
        assert record["nccl"]["seconds"] == want.seconds


def test_the_nccl_name_column_says_the_time_is_the_textbooks(capsys):
    # A textbook row that NCCL names (its Tree) keeps the textbook's time, not NCCL's model's.
    assert main(["compare", "--time", "--topology", "dgx-h100", "--nodes", "2",
                 "--size", "1GiB"]) == 0
    out = capsys.readouterr().out
    assert "in NCCL  " not in out
    flat = " ".join(out.split())
    assert ("NCCL's name: what NCCL calls the schedule, timed here by the textbook model "
            "(NCCL's own time is above):") in flat
    table = out.split("Textbook α-β-γ model")[1].splitlines()
    tree = next(line for line in table if line.startswith("NCCL tree (chain + 2 trees) "))
    from ringsim.algorithms.timing import machine_options
    model = CostModel.of("dgx-h100", "float32")
    textbook = estimate("nccl-tree", 16, 2**28, model, **machine_options("nccl-tree", 16, model))
    assert tree.split()[6:8] == format_seconds(textbook.seconds).split()
    assert " Tree " in tree


def _far_file(tmp_path, path: str, cpu: str | None = None):
    """dgx-h100's file with its NICs at `path` (nic_path) and, where given, another cpu."""
    from pathlib import Path

    import ringsim
    text = (Path(ringsim.__file__).parent / "cost" / "topologies" / "dgx-h100.toml").read_text()
    text = text.replace("[across]\n", f'[across]\nnic_path = "{path}"\n')
    if cpu:
        text = text.replace('cpu = "intel-sapphire-rapids"', f'cpu = "{cpu}"')
    file = tmp_path / f"far-{path}.toml"
    file.write_text(text)
    return str(file)


def test_compare_says_both_the_nics_rate_and_the_socket_links_cap(capsys, tmp_path):
    far = _far_file(tmp_path, "sys", "intel")
    assert main(["compare", "--time", "--topology", far, "--nodes", "2", "--size", "1GiB",
                 "--nccl", "2.22.3"]) == 0
    flat = " ".join(capsys.readouterr().out.split())
    assert ("across nodes: InfiniBand NDR 400 Gb/s, α = 2.70 µs, 50.00 GB/s per GPU per direction "
            "(the NIC's rate; NCCL's model: every channel of a node shares the 10.00 GB/s link "
            "between its CPU sockets, nic_path sys)") in flat
    assert ("Note: nic_path sys: each GPU's NIC is on the other CPU socket, so NCCL 2.22.3 turns "
            "LL128 off across nodes (src/graph/tuning.cc), and every channel of a node crosses "
            "the link between the sockets, which they share: 10 GB/s each way, NCCL 2.22.3's "
            "SKL_QPI_BW for cpu = \"intel\"") in flat
    # the preset's own CPU, Sapphire Rapids, at the model's release: 22 GB/s
    assert main(["compare", "--time", "--topology", _far_file(tmp_path, "sys"), "--nodes", "2",
                 "--size", "1GiB"]) == 0
    flat = " ".join(capsys.readouterr().out.split())
    assert "shares the 22.00 GB/s link between its CPU sockets" in flat
    assert "22 GB/s each way, NCCL 2.30.7's SRP_QPI_BW for cpu = \"intel-sapphire-rapids\"" in flat
    # behind the CPU: LL128 off, the NIC's rate kept, so the line claims no cap
    assert main(["compare", "--time", "--topology", _far_file(tmp_path, "phb"), "--nodes", "2",
                 "--size", "1GiB"]) == 0
    out = capsys.readouterr().out
    assert "50.00 GB/s per GPU per direction\n" in out and "CPU sockets" not in out
    assert "Note: nic_path phb: each GPU reaches its NIC through its CPU's root complex" in out
    # on the preset itself (NICs by the GPUs), none of it
    assert main(["compare", "--time", "--topology", "dgx-h100", "--nodes", "2"]) == 0
    assert "nic_path" not in capsys.readouterr().out


def test_predict_says_once_what_a_far_nic_does(capsys, tmp_path):
    far = _far_file(tmp_path, "sys")
    assert main(["predict", "--topology", far, "--nodes", "2", "--sizes", "1MiB"]) == 0
    lines = capsys.readouterr().out.splitlines()
    notes = [line for line in lines if "nic_path" in line]
    assert len(notes) == 1 and notes[0] == lines[1]
    assert notes[0] == ("# nic_path sys: each GPU's NIC is on the other CPU socket, so NCCL 2.30.7 "
                        "turns LL128 off across nodes (src/graph/tuning.cc), and every channel of "
                        "a node crosses the link between the sockets, which they share: 22 GB/s "
                        "each way, NCCL 2.30.7's SRP_QPI_BW for cpu = \"intel-sapphire-rapids\" "
                        "(src/graph/topo.cc, ncclTopoGetInterCpuBw)")
    # one node: no NIC, no note
    assert main(["predict", "--topology", far, "--sizes", "1MiB"]) == 0
    assert "nic_path" not in capsys.readouterr().out


def test_the_models_own_release_is_spelled_as_every_other_release(capsys):
    # 2.30.7 as predict, diagnose and --nccl write it, not its git tag's 2.30.7-1
    machine = ["--topology", "dgx-h100", "--nodes", "2", "--size", "1GiB"]
    assert main(["compare", "--time", *machine]) == 0
    out = capsys.readouterr().out
    assert "NCCL's model (NCCL 2.30.7's own tuning" in out and "2.30.7-1" not in out
    assert main(["predict", "--topology", "dgx-h100", "--nodes", "2", "--sizes", "1GiB"]) == 0
    assert "(NCCL 2.30.7's tuning tables)" in capsys.readouterr().out


def test_too_many_nodes_are_named_by_the_option_given(capsys):
    assert main(["predict", "--nodes", "125001"]) == 2
    assert capsys.readouterr().err == ("ringsim predict: error: --nodes 125,001 × 8 GPUs per node is "
                                       "1,000,008 GPUs; at most 1,000,000\n")
    assert main(["predict", "--nodes", "125000", "--sizes", "1GiB"]) == 0


@pytest.mark.parametrize("dtype, nccl_name", [("int8", "int8"), ("uint8", "uint8"),
                                              ("float8", "f8e4m3"), ("bfloat16", "bfloat16")])
def test_the_nccl_row_reads_the_element_type_as_predict_does(dtype, nccl_name):
    # NVLink SHARP adds no 8-bit type: on one DGX H100 node NCCL runs 16 MiB of int8 on its
    # rings, not NVLS, and compare's, walk's and sweep's NCCL row say what predict says.
    from ringsim.cost.model import CostModel
    from ringsim.cost.nccl import nccl_choice
    from ringsim.studies.sweep import sweep
    from ringsim.studies.whose import nccl_for
    model = CostModel.of("dgx-h100", dtype)
    want = nccl_choice("dgx-h100", 8, 16 << 20, dtype=nccl_name)
    assert nccl_for(model, 8, 16 << 20) == want
    assert sweep(8, [16 << 20], model).nccl[0] == want
    assert (want.algorithm == "NVLS") == (dtype == "bfloat16")
    # NCCL has no 16-bit integer: the row says so instead of pricing one
    assert "NCCL has no int16 type" in nccl_for(CostModel.of("dgx-h100", "int16"), 8, 16 << 20)


def test_the_textbook_nvls_is_not_timed_for_8_bit_elements(capsys):
    # The textbook NVLS needs a switch that adds; NVLink SHARP adds no 8-bit type, so with
    # int8 it is left out of the time table, named, as NCCL leaves NVLS out.
    from ringsim.algorithms.timing import timed_algorithms, unavailable
    for dtype in ("int8", "uint8", "float8"):
        model = CostModel.of("dgx-h100", dtype)
        assert "nvls" not in timed_algorithms(model, 8)
        assert "adds no 8-bit type" in unavailable("nvls", model, 8)
    assert "nvls" in timed_algorithms(CostModel.of("dgx-h100", "bfloat16"), 8)
    assert main(["compare", "--time", "--topology", "dgx-h100", "-g", "8", "--size", "16MiB",
                 "--dtype", "int8"]) == 0
    assert ("Not timed: NVLS (NVLink SHARP): the switch adds no 8-bit type, and these elements "
            "are int8.") in capsys.readouterr().out
