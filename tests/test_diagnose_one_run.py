"""`ringsim diagnose` reads one test of one run: rows of another test pasted below it, and a
number of GPUs that the rows' own busbw/algbw contradicts, are refused in one line."""

from __future__ import annotations

from dataclasses import replace

import pytest
from test_diagnose_cli import OUT

from ringsim.cli import main
from ringsim.core.errors import RingsimError
from ringsim.cost.topology import load
from ringsim.studies import diagnose as study
from ringsim.studies import nccltests, nccltests_counts
from ringsim.studies.textfile import read_text

predict = pytest.importorskip("ringsim.studies.predict",
                              reason="the NCCL model is not in this ringsim").predict

A3 = OUT / "a3mega_h100_2node_all_reduce.txt"  # all_reduce_perf, 16 ranks, float sum
GATHER = OUT / "nccl1435_all_gather_bf16_excerpt.txt"  # all_gather_perf, 2 ranks, bfloat16 none
# all_gather_perf's 48 MiB row of NVIDIA/nccl issue 1435
GATHER_ROW = ("    50331648      12582912  bfloat16    none      -1    237.9  211.57  105.78      0"
              "    200.0  251.62  125.81      0")
TAIL = ("; paste one test's output, of one type and one redop (nccl-tests' -d all and -o all "
        "print several)")


def run(capsys, *argv):
    """diagnose's exit status, standard output and standard error."""
    code = main(["diagnose", "--no-plot", *map(str, argv)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def paste(tmp_path, *parts: str) -> str:
    path = tmp_path / "paste.txt"
    path.write_text("\n".join(parts) + "\n")
    return str(path)


def rows_of(path) -> list[str]:
    """The table's rows alone, as a paste without its header."""
    return [line for line in path.read_text().splitlines() if line[:1] == " " and line.split()[0].isdigit()]


def test_rows_of_another_test_below_the_table_are_refused_before_pricing(tmp_path, capsys):
    code, out, err = run(capsys, paste(tmp_path, A3.read_text(), GATHER_ROW))
    assert code == 2 and not out
    assert err == (f"ringsim diagnose: error: rows of different tests in {tmp_path / 'paste.txt'}: 48MiB is "
                   "bfloat16 with redop none where the rows before are float with redop sum" + TAIL + "\n")
    # the whole all_gather_perf excerpt pasted below: its first row is named
    code, out, err = run(capsys, paste(tmp_path, A3.read_text(), GATHER.read_text()))
    assert code == 2 and not out and "16MiB is bfloat16 with redop none where" in err
    assert len(err.splitlines()) == 1


def test_a_row_that_differs_only_in_redop_root_or_count_is_named_by_that(tmp_path, capsys):
    row = "  1073741824     268435456     float     max      -1   6778.1  158.41  297.03      0"
    code, _, err = run(capsys, paste(tmp_path, A3.read_text(), row))
    assert code == 2 and "1GiB has redop max where the rows before have redop sum;" in err
    # a broadcast_perf row (root 0) below an all_reduce_perf table
    row = "  1073741824     268435456     float     sum       0   6778.1  158.41  158.41      0"
    code, _, err = run(capsys, paste(tmp_path, A3.read_text(), row))
    assert code == 2 and "1GiB has root 0 where the rows before have root -1;" in err
    # reduce_scatter_perf prints the same type, redop and root: its count is each rank's share
    row = "  1073741824      16777216     float     sum      -1   6778.1  158.41  148.51      0"
    code, _, err = run(capsys, paste(tmp_path, A3.read_text(), row))
    assert code == 2 and ("1GiB has a count of part of the size where the rows before have "
                          "the whole size's count;") in err


def test_one_test_pasted_twice_or_over_every_root_is_still_one_test(tmp_path, capsys):
    # Two runs of the same test (a rerun below the first): the repeated sizes are left out.
    code, out, err = run(capsys, paste(tmp_path, A3.read_text(), *rows_of(A3)))
    assert code == 0, err
    assert "repeated sizes left out (the first row of each kept)" in out
    # broadcast_perf -r -1 runs every root in turn: the root's value does not name the test
    rows = [nccltests.Row(1 << 20, 1 << 18, "float", None, 1e-4, 1e10, 1e10, 0, root=root)
            for root in (0, 1, 2)]
    assert nccltests_counts.other_test(rows) is None
    assert nccltests_counts.other_test([*rows, replace(rows[0], root=-1)])[1:] == (["root -1"], ["root 0"])


def test_two_runs_of_an_older_nccl_tests_one_after_the_other_are_refused(tmp_path, capsys):
    # Before "# Collective test starting" lines, a second run shows as a second header.
    code, out, err = run(capsys, paste(tmp_path, A3.read_text(), A3.read_text()))
    assert code == 2 and not out
    assert "holds more than one nccl-tests run, one after another (a second '# nThread' header" in err
    assert len(err.splitlines()) == 1


def test_a_second_table_below_the_first_ones_rows_is_refused(tmp_path, capsys):
    # nccl-tests prints its column header once a run: a second one after rows starts another
    # run's table (an A100 run below an H100 one here), whose rows must not be read as the first's.
    a100 = OUT / "nccltests152_a100_2node_after_fix_partial.txt"
    path = paste(tmp_path, A3.read_text(), a100.read_text())
    code, out, err = run(capsys, path)
    # the A100 table's column header, the last of the two
    at = [n for n, line in enumerate(open(path).read().splitlines(), 1) if "size   " in line][-1]
    assert code == 2 and not out
    assert err == (f"ringsim diagnose: error: {path} holds more than one nccl-tests table, one after "
                   f"another (a second column header at line {at}, after 31 rows): pass one "
                   "run's output, from its '# nThread' line to the next\n")
    # the same table with its rows repeated but no second header is still one run read once
    code, out, err = run(capsys, paste(tmp_path, A3.read_text(), *rows_of(A3)))
    assert code == 0, err


def test_repeated_sizes_whose_times_disagree_say_by_how_much(tmp_path, capsys):
    # Rows alone cannot tell two runs from nccl-tests -N cycles: the first is read, and the
    # note says how far the others stand from it.
    slower = []
    for line in rows_of(A3):
        fields = line.split()
        fields[5] = f"{float(fields[5]) * 3:.1f}"  # the out-of-place time, three times longer
        slower.append("  ".join(fields))
    code, out, err = run(capsys, paste(tmp_path, A3.read_text(), *slower))
    assert code == 0, err
    said = " ".join(out.split())
    assert "repeated sizes left out (the first row of each kept); their times differ from the " \
           "first by up to 3.00×: rows of more than one run pasted together, or nccl-tests -N " \
           "cycles that disagree" in said


def test_wrong_results_lead_the_verdict_and_mark_their_row(tmp_path, capsys):
    lines = A3.read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if line.split()[:1] == ["1048576"])
    fields = lines[at].split()
    fields[8] = "237858"  # the out-of-place #wrong
    lines[at] = "  ".join(fields)
    code, out, err = run(capsys, paste(tmp_path, *lines))
    assert code == 0, err
    row = next(line for line in out.splitlines() if line.split()[:1] == ["1MiB"])
    assert row.endswith("✗")
    assert "✗ where nccl-tests counted wrong results (#wrong: 1MiB 237,858)" in " ".join(out.split())
    verdict = out.split("Verdict:\n", 1)[1].splitlines()[0]
    assert verdict.startswith("  The results were corrupted at 1 size (#wrong is not 0, from 1MiB)")


def test_wrong_results_point_at_the_paths_the_run_used(tmp_path, capsys):
    # Across nodes the network's GPUDirect RDMA is a suspect; inside one node it is not, and
    # peer-to-peer (ACS, the IOMMU) and NVLS are; each named with the setting that takes it out.
    from nccl_pastes import all_reduce_perf

    def next_steps(hosts):
        path = all_reduce_perf(tmp_path / "run.txt", {8: 20.0, 1 << 20: 60.0, 1 << 30: 5000.0},
                               "NVIDIA H100 80GB HBM3", hosts)
        lines = path.read_text().splitlines()
        fields = lines[-1].split()
        fields[8] = "1234"  # the out-of-place #wrong at 1 GiB
        lines[-1] = "  ".join(fields)
        code, out, err = run(capsys, paste(tmp_path, *lines))
        assert code == 0, err
        return " ".join(out.split("What to check next:", 1)[1].split())

    across = next_steps(["a"] * 8 + ["b"] * 8)
    assert "NCCL_NET_GDR_LEVEL=LOC" in across and "NCCL_P2P_DISABLE=1" in across
    inside = next_steps(["a"] * 8)
    assert "GPUDirect RDMA" not in inside and "NCCL_NET_GDR_LEVEL" not in inside
    assert "NCCL_P2P_DISABLE=1" in inside and "NCCL_NVLS_ENABLE=0" in inside
    assert "issue 133" not in across + inside


def test_a_run_that_stops_before_its_largest_size_is_said_to_have_stopped(tmp_path, capsys):
    # The header asks for 8 B to 8 GiB; the rows stop at 1 GiB and no footer follows: the run
    # hung, crashed or ran out of time there, or the paste is cut, and the reader is told.
    from nccl_pastes import all_reduce_perf
    sizes = {1 << k: 20.0 + (1 << k) / 250e3 for k in range(3, 31)}
    path = all_reduce_perf(tmp_path / "run.txt", sizes, "NVIDIA H100 80GB HBM3", ["a"] * 8)
    lines = path.read_text().replace("maxBytes 1073741824", "maxBytes 8589934592").splitlines()
    code, out, err = run(capsys, paste(tmp_path, *lines))
    assert code == 0, err
    said = " ".join(out.split())
    assert ("the rows stop at 1GiB, though the header asks for sizes up to 8GiB (maxBytes), and "
            "no '# Avg bus bandwidth' line follows them: the run stopped there") in said
    # The whole run, its footer printed, or a run whose last size is its maxBytes: no such note.
    whole = lines + ["# Out of bounds values : 0 OK", "# Avg bus bandwidth    : 100.0 "]
    code, out, err = run(capsys, paste(tmp_path, *whole))
    assert code == 0 and "the rows stop at" not in out
    code, out, err = run(capsys, str(path))
    assert code == 0 and "the rows stop at" not in out


def test_a_header_with_rank_lines_left_out_is_one_run_of_its_highest_rank_or_more(tmp_path, capsys):
    # A trimmed paste keeps ranks 0, 7, 8 and 15 of 16: the rows' busbw says 16 GPUs.
    import re
    kept = [line for line in A3.read_text().splitlines()
            if not (m := re.match(r"#\s+Rank\s+(\d+)", line)) or int(m.group(1)) in (0, 7, 8, 15)]
    path = paste(tmp_path, *kept)
    code, out, err = run(capsys, path)
    assert code == 0, err
    said = " ".join(out.split())
    assert ("the header's 4 rank lines are numbered 0 to 15, not 0 to 3: some were left out of "
            "the paste; the model takes 16 GPUs, as the rows' busbw of 1.875 × algbw implies for "
            "all_reduce_perf") in said
    assert "all-reduce, 16 GPUs on 2 nodes" in out
    code, out, err = run(capsys, path, "--gpus", 3)
    assert code == 2 and "--gpus 3 is fewer than the 4 ranks the header lists" in err


def test_a_rank_list_cut_after_its_first_lines_is_read_with_the_gpus_given(tmp_path, capsys):
    import re
    kept = [line for line in A3.read_text().splitlines()
            if not (m := re.match(r"#\s+Rank\s+(\d+)", line)) or int(m.group(1)) < 8]
    path = paste(tmp_path, *kept)
    code, out, err = run(capsys, path)  # the rows say 16, the header 8: which is asked
    assert code == 2 and "(or, where the header's rank list was cut short, give --gpus 16)" in err
    code, out, err = run(capsys, path, "--gpus", 16)
    assert code == 0, err
    said = " ".join(out.split())
    assert "all-reduce, 16 GPUs on 2 nodes" in out
    assert "the header lists 8 rank lines (0 to 7); --gpus 16 takes the others as left out" in said
    assert "the output names only some of its hosts: 2 nodes assumed" in said


def test_a_gpus_the_rows_busbw_contradicts_is_refused_naming_what_they_imply(tmp_path, capsys):
    # busbw 297.86 over algbw 158.86 at 1 GiB: 1.875 = 2(n-1)/n, so 16 GPUs, not 8
    rows = paste(tmp_path, *rows_of(A3))
    code, out, err = run(capsys, rows, "-g", "8", "--topology", "dgx-h100")
    assert code == 2 and not out
    assert err == (f"ringsim diagnose: error: {rows}'s rows print busbw = 1.875 × algbw, which is 2(n−1)/n "
                   "for n = 16 GPUs in all_reduce_perf, not for --gpus 8 (1.750): give --gpus 16\n")
    code, out, err = run(capsys, rows, "-g", "16", "--topology", "dgx-h100")
    assert code == 0, err
    # all_gather_perf on 2 GPUs: busbw is half its algbw, (n-1)/n with n = 2
    code, _, err = run(capsys, GATHER, "-g", "4", "--topology", "pcie-gen4", "--collective",
                       "all-gather")
    assert code == 2 and ("print busbw = 0.500 × algbw, which is (n−1)/n for n = 2 GPUs in "
                          "all_gather_perf, not for --gpus 4 (0.750): give --gpus 2") in err


def test_rows_that_contradict_their_own_header_are_refused():
    # the header lists 16 ranks; rows printed by an 8-rank run (busbw 1.75 × algbw) are not its
    output = nccltests.parse(read_text(str(A3), "nccl-tests output"))
    eight = replace(output, rows=[replace(r, busbw=r.algbw * 1.75 if r.algbw else r.busbw)
                                  for r in output.rows])
    with pytest.raises(RingsimError) as caught:
        study.diagnose(eight, load("dgx-h100"), predict)
    assert str(caught.value) == (
        f"{A3}'s rows print busbw = 1.750 × algbw, which is 2(n−1)/n for n = 8 GPUs in "
        "all_reduce_perf, not for the 16 ranks the header lists (1.875): the rows are not those "
        "of the run the header describes: paste one run's header and its rows")


def test_without_a_header_or_gpus_the_rows_busbw_gives_g(tmp_path, capsys):
    rows = paste(tmp_path, *rows_of(A3))
    code, out, err = run(capsys, rows, "--topology", "dgx-h100", "--nodes", "2")
    assert code == 0, err
    assert out.startswith(f"{rows}: all-reduce, 16 GPUs on 2 nodes")
    assert ("Note: no '# Rank' lines: 16 GPUs, as the rows' busbw of 1.875 × algbw is 2(n−1)/n "
            "for n = 16 in all_reduce_perf (give --gpus G)") in out
    # G known, only the machine is asked for
    code, out, err = run(capsys, rows)
    assert code == 2 and "number of GPUs" not in err and "matches no topology preset" in err
    # all_gather_perf's count column needs G to show its test: G is not guessed from the ratio
    code, _, err = run(capsys, GATHER, "--topology", "pcie-gen4")
    assert code == 2 and "the number of GPUs is unknown: give --gpus G" in err
    # unless the test is given
    code, out, err = run(capsys, GATHER, "--topology", "pcie-gen4", "--collective", "all-gather")
    assert code == 0 and "all-gather, 2 GPUs" in out, err


def test_the_busbw_ratio_of_every_fixture_fits_one_g_only():
    expected = {"a3mega_h100_2node_all_reduce.txt": 16, "nccl1453_h100_3node_bracket_prefix_excerpt.txt": 24,
                "nccltests152_a100_2node_after_fix_partial.txt": 16,
                "nccltests252_h100_2node_after_acs_fix_ring.txt": 8,
                "nccltests293_a100pcie_2node_after_nps4.txt": 2}
    for name, gpus in expected.items():
        rows = nccltests.parse(read_text(str(OUT / name), "nccl-tests output")).rows
        assert nccltests_counts.ranks_from_busbw(rows, "all-reduce")[1] == [(gpus, gpus)], name
        assert nccltests_counts.ranks_from_busbw(rows, "broadcast") is None  # busbw = algbw for any n


def test_busbw_equal_to_algbw_without_a_root_column_also_names_the_rooted_tests(tmp_path, capsys):
    # An older layout (no root column) of a reduce on 8 GPUs reads as an all-reduce; busbw =
    # algbw fits an all-reduce only on 2 GPUs, and a reduce or a broadcast on any number.
    row = "  {0:>10}  {1:>10}  float  sum  {2:.1f}  {3:.2f}  {3:.2f}  0e+00"
    rows = [row.format(n, n // 4, n / 5e3, 5.0 * k)
            for k, n in enumerate((1 << 20, 1 << 22, 1 << 24), 1)]
    code, _, err = run(capsys, paste(tmp_path, *rows), "-g", "8", "--topology", "dgx-h100")
    assert code == 2 and err.rstrip().endswith(
        "is 2(n−1)/n for n = 2 GPUs in all_reduce_perf, not for --gpus 8 (1.750): give --gpus 2, "
        "or --collective reduce or broadcast if it ran reduce_perf or broadcast_perf")
    code, _, err = run(capsys, paste(tmp_path, *rows), "-g", "8", "--topology", "dgx-h100",
                         "--collective", "reduce")
    assert code == 0, err


SCATTER = OUT / "nccltests128_reduce_scatter_2node_excerpt.txt"  # reduce_scatter_perf, 8 ranks


def test_rows_whose_count_fits_neither_the_whole_size_nor_the_headers_share_are_refused(
        tmp_path, capsys):
    # A3's 16-rank header over an 8-rank reduce_scatter_perf's rows: 128 B is 4 floats, which
    # is neither 128 B's 32 floats nor a 16th of them (2)
    header = [line for line in A3.read_text().splitlines() if line.startswith("#")]
    mixed = paste(tmp_path, *header, *rows_of(SCATTER))
    code, out, err = run(capsys, mixed)
    assert code == 2 and not out
    assert err == (f"ringsim diagnose: error: {mixed}: the count column of 128B (4 float elements) is "
                   "neither the whole size's nor a 16-rank share but a share of 8 ranks: the rows "
                   "are not those of the run the header describes; paste one run's header and "
                   "its rows\n")
    # without the header, --gpus 16 is refused likewise and the share's G is asked for
    rows = paste(tmp_path, *rows_of(SCATTER))
    code, out, err = run(capsys, rows, "-g", "16", "--topology", "dgx-h100")
    assert code == 2 and not out and err.rstrip().endswith(
        "is neither the whole size's nor a 16-rank share but a share of 8 ranks: give --gpus 8")
    code, out, err = run(capsys, rows, "-g", "8", "--topology", "dgx-h100")
    assert code == 0 and out.startswith(f"{rows}: reduce-scatter, 8 GPUs"), err
    # all_gather_perf's rows on 2 ranks, given 4: the count says so before a test is read
    gather = paste(tmp_path, *rows_of(GATHER))
    code, out, err = run(capsys, gather, "-g", "4", "--topology", "pcie-gen4")
    assert code == 2 and not out and err == (
        f"ringsim diagnose: error: {gather}: the count column of 16MiB (4,194,304 bfloat16 elements) is "
        "neither the whole size's nor a 4-rank share but a share of 2 ranks: give --gpus 2\n")


def test_a_count_nccl_tests_rounded_down_still_fits():
    row = nccltests.Row(1000, 15, "float", "sum", 1e-5, None, None, 0, root=-1)
    # 1000 B as a size to round: 250 floats, a 16th is 15 rounded down to 12 (16 B shares)
    assert not nccltests_counts.count_fits(row, 16)
    assert nccltests_counts.count_fits(replace(row, count=12), 16)
    assert nccltests_counts.count_fits(replace(row, count=250), 16)  # the whole size's count
    assert nccltests_counts.count_fits(replace(row, bytes=1002, count=250), 16)  # whole elements
    assert nccltests_counts.count_fits(replace(row, bytes=960, count=15), 16)  # as printed: 15×4×16


def test_every_fixture_s_count_fits_its_own_run():
    gpus = {"nccl1435_all_gather_bf16_excerpt.txt": 2, SCATTER.name: 8}
    for path in sorted(OUT.rglob("*.txt")):
        try:
            output = nccltests.parse(read_text(str(path), "nccl-tests output"))
        except RingsimError:
            continue  # a paste without rows, or of separate runs
        study_gpus = output.gpus or gpus.get(path.name, 16)
        assert any(nccltests_counts.count_fits(r, study_gpus) for r in output.rows if r.bytes), path.name


@pytest.mark.parametrize("collective", ["broadcast", "reduce", "reduce-scatter", "all-gather"])
def test_an_all_reduce_s_rows_refute_another_collective_before_g_is_asked_for(
        tmp_path, capsys, collective):
    # redop sum, root -1 and the whole size's count tell all_reduce_perf without G
    rows = paste(tmp_path, *rows_of(A3))
    perf = collective.replace("-", "_") + "_perf"
    said = (f"ringsim diagnose: error: {rows}'s rows (redop sum, root -1, the whole size's count) are "
            f"all_reduce_perf's, and --collective {collective} says {perf}: give the "
            "--collective that ran, or leave it out to take the one the rows show\n")
    code, out, err = run(capsys, rows, "--topology", "dgx-h100", "--collective", collective)
    assert code == 2 and not out and err == said
    code, out, err = run(capsys, rows, "--topology", "dgx-h100", "--collective", collective,
                         "-g", "16")
    assert code == 2 and not out and err == said
    # the library says the same, before G
    output = nccltests.parse(read_text(rows, "nccl-tests output"))
    with pytest.raises(RingsimError) as caught:
        study.diagnose(output, load("dgx-h100"), predict, collective=collective)
    assert f"{caught.value}\n" == said.removeprefix("ringsim diagnose: error: ")


def test_rows_that_need_g_to_show_their_count_are_refuted_by_their_root_first(capsys):
    # all_gather_perf's rows need G to show their count, and broadcast's busbw = algbw gives
    # none: their root -1 alone says they are no broadcast_perf's
    code, out, err = run(capsys, GATHER, "--topology", "pcie-gen4", "--collective", "broadcast")
    assert code == 2 and not out and err == (
        f"ringsim diagnose: error: {GATHER}'s rows (no reduction, root -1) are not broadcast_perf's, "
        "which --collective broadcast says: give the --collective that ran\n")
    # where the busbw gives G (2 ranks for reduce_scatter_perf), the count column is read too
    code, out, err = run(capsys, GATHER, "--topology", "pcie-gen4", "--collective",
                         "reduce-scatter")
    assert code == 2 and not out and (
        "'s rows (no reduction, root -1, a count of each rank's share (count x type size x 2 = "
        "size)) are all_gather_perf's, and --collective reduce-scatter says") in err
