"""Text as other tools and other places write it: byte-order marks, UTF-16 from PowerShell,
decimal commas, size letters in lower case, two GPU models in one header, a mangled NCCL
tuning table, standard input named twice. Each is read as meant or refused in one line."""

from __future__ import annotations

import io
import json
import sys

import pytest

from ringsim.cli import main
from ringsim.core.errors import RingsimError
from ringsim.core.naming import article
from ringsim.core.units import parse_size
from ringsim.cost.topology import load

from nccl_pastes import all_reduce_perf

TIMES = {1024: 10.0, 16384: 10.1, 262144: 10.9, 1 << 20: 20.5, 1 << 24: 110.0, 1 << 30: 4400.0}


def _diagnose(capsys, *args):
    code = main(["diagnose", "--no-plot", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def _paste(tmp_path, gpu="NVIDIA H100 80GB HBM3", hosts=("h1",) * 8):
    return all_reduce_perf(tmp_path / "run.txt", TIMES, gpu, list(hosts))


def test_a_byte_order_mark_keeps_every_row_and_utf16_is_read_as_text(tmp_path, capsys):
    plain = _paste(tmp_path)
    code, out, err = _diagnose(capsys, "--json", str(plain))
    assert code == 0, err
    sizes = [json.loads(line)["bytes"] for line in out.splitlines()[:-1]]
    assert sizes == sorted(TIMES)
    text = plain.read_text(encoding="utf-8")
    for name, data in (("bom.txt", b"\xef\xbb\xbf" + text.encode()),
                       ("utf16.txt", text.encode("utf-16")),  # PowerShell's `>`: a BOM first
                       ("rows-bom.txt", b"\xef\xbb\xbf" + "\n".join(
                           line for line in text.splitlines() if not line.startswith("#")).encode())):
        path = tmp_path / name
        path.write_bytes(data)
        args = ["--json", str(path)] + (["-g", "8", "--topology", "dgx-h100"]
                                        if name.startswith("rows") else [])
        code, out, err = _diagnose(capsys, *args)
        assert code == 0, (name, err)
        assert [json.loads(line)["bytes"] for line in out.splitlines()[:-1]] == sizes, name


def test_a_topology_file_with_a_byte_order_mark_is_read(tmp_path):
    text = 'gpus_per_node = 4\narch = "hopper"\n[inside]\nalpha = "1us"\nbandwidth = "100GB/s"\n'
    path = tmp_path / "win.toml"
    path.write_bytes(b"\xef\xbb\xbf" + text.encode())
    assert load(str(path)).gpus_per_node == 4


def test_a_decimal_comma_is_named_as_one(tmp_path, capsys):
    path = _paste(tmp_path)
    path.write_text(path.read_text().replace("4400.00", "4400,00").replace("10.00", "10,00")
                    .replace("10.10", "10,10").replace("10.90", "10,90").replace("20.50", "20,50")
                    .replace("110.00", "110,00"))
    code, out, err = _diagnose(capsys, str(path))
    assert code == 2 and out == ""
    assert "is not a finite number (a decimal comma? nccl-tests prints a point)" in err
    assert len(err.strip().splitlines()) == 1


def test_two_gpu_models_in_one_header_want_a_topology(tmp_path, capsys):
    path = all_reduce_perf(tmp_path / "mix.txt", TIMES, "NVIDIA H100 80GB HBM3", ["h1"] * 8)
    lines = path.read_text().splitlines()
    mixed = [line.replace("NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-80GB")
             if line.startswith("#  Rank") and int(line.split()[2]) >= 4 else line for line in lines]
    path.write_text("\n".join(mixed) + "\n")
    code, out, err = _diagnose(capsys, str(path))
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert ("mix.txt's header names 2 GPU models (NVIDIA H100 80GB HBM3 on 4, NVIDIA "
            "A100-SXM4-80GB on 4 ranks): no preset describes a mix, so give --topology") in err
    code, out, err = _diagnose(capsys, str(path), "--topology", "dgx-h100")
    assert code == 0 and "Note: the header names 2 GPU models" in out


def test_rank_lines_not_numbered_from_zero_are_noted(tmp_path, capsys):
    path = _paste(tmp_path)
    path.write_text("\n".join(
        line.replace(f"Rank {line.split()[2]:>2} ", f"Rank {int(line.split()[2]) * 1000} ", 1)
        if line.startswith("#  Rank") else line for line in path.read_text().splitlines()) + "\n")
    code, out, err = _diagnose(capsys, str(path))
    assert code == 0, err
    assert ("Note: the header's 8 rank lines are numbered 0 to 7,000, not 0 to 7: some may have "
            "been renumbered; the model takes 8 GPUs, as the rows' busbw of 1.750 × algbw "
            "implies for all_reduce_perf") in " ".join(out.split())


def test_standard_input_cannot_be_both_files(capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"# nothing\n")))
    code, out, err = _diagnose(capsys, "--nccl-log", "-", "-")
    assert code == 2 and out == ""
    assert "FILE and --nccl-log are both '-': standard input holds one of them" in err


def test_size_letters_are_read_in_either_case_as_nccl_tests_does():
    # nccl-tests' parsesize: k, m and g in either case are powers of 1,024
    assert parse_size("8g") == parse_size("8G") == 8 << 30
    assert parse_size("1m") == parse_size("1M") == 1 << 20
    assert parse_size("64k") == parse_size("64K") == 64 << 10
    with pytest.raises(RingsimError, match="or a bare K, M, G, T, P for KiB to PiB"):
        parse_size("2mB")


def test_huge_sizes_are_said_as_powers_of_ten(capsys):
    assert main(["predict", "--sizes", "1e30"]) == 2
    assert capsys.readouterr().err.strip() == (
        "ringsim predict: error: --sizes: NCCL's model prices 0 B to 1PiB per GPU, got 1e+30 B")


def test_a_tuning_cell_nccl_could_not_print_is_not_read(tmp_path):
    from ringsim.studies.nccltuning_log import parse_all
    from ringsim.studies.textfile import Text
    row = ("x NCCL INFO     AllReduce |    25.2/  19.5 |   1e309/ 99999999999999999999999999.0 |"
           "    92.4/ 165.6 |")
    head = ("x NCCL INFO   Algorithm   |            Tree                  |\n"
            "x NCCL INFO   Protocol    |      LL |   LL128 |  Simple |")
    found = parse_all([Text("log", tuple((head + "\n" + row).splitlines()), 0)])
    table = found.tables[-1]
    assert table[("AllReduce", "Tree", "LL")] == (25.2, 19.5)
    assert ("AllReduce", "Tree", "LL128") not in table  # neither 309 µs nor 10^25 GB/s
    assert table[("AllReduce", "Tree", "Simple")] == (92.4, 165.6)


def test_articles_follow_the_spoken_number():
    assert [article(n) for n in (1, 8, 11, 16, 18, 80, 110, 800, 1100, 11000, 18000)] == [
        "a", "an", "an", "a", "an", "an", "a", "an", "a", "an", "an"]


def test_utf32_is_read_and_wide_text_without_a_mark_is_named(tmp_path, capsys):
    text = _paste(tmp_path).read_text(encoding="utf-8")
    marked = tmp_path / "utf32.txt"
    marked.write_bytes(text.encode("utf-32"))  # with its byte-order mark
    code, out, err = _diagnose(capsys, str(marked))
    assert code == 0, err
    bare = tmp_path / "utf16le.txt"
    bare.write_bytes(text.encode("utf-16-le"))  # no mark
    code, out, err = _diagnose(capsys, str(bare))
    assert code == 2 and err.strip() == (
        f"ringsim diagnose: error: {bare} looks like UTF-16 or UTF-32 text without a byte-order "
        "mark: save the nccl-tests output as UTF-8")


def test_a_file_of_several_runs_is_refused_as_such(tmp_path, capsys):
    one = _paste(tmp_path).read_text(encoding="utf-8")
    both = tmp_path / "both.txt"
    both.write_text("# Collective test starting: all_reduce_perf\n" + one
                    + "# Collective test starting: all_gather_perf\n" + one)
    code, out, err = _diagnose(capsys, str(both))
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert "holds more than one nccl-tests run, one after another (all_reduce_perf then " \
           "all_gather_perf, at line" in err
