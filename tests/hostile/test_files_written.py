"""Files written: whole or not at all (a temporary file beside it, then one rename), and a
file name that cannot be written is refused before any work, in one line."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from ringsim.core.errors import RingsimError
from ringsim.core.files import atomic_output, write_text

from .bounded import ROOT, _limits, cli, no_leftovers, refused

NCCL_OUTPUT = ROOT / "tests" / "data" / "nccl_outputs" / "a3mega_h100_2node_all_reduce.txt"


def test_two_runs_writing_one_trace_leave_one_whole_file(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for _ in range(3):
        runs = [subprocess.Popen([sys.executable, "-m", "ringsim", "timeline", "--gpus", str(g),
                                  "--trace", "same.json"], cwd=tmp_path, env=env,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                 preexec_fn=_limits) for g in (48, 64)]
        for run in runs:
            _, err = run.communicate(timeout=120)
            assert run.returncode == 0, err
        events = json.loads((tmp_path / "same.json").read_text())["traceEvents"]
        assert events  # one run's whole trace, never a mix
        no_leftovers(tmp_path, "same.json")


@pytest.mark.parametrize("args, words", [
    (("timeline", "--trace", ""), "needs a file name"),
    (("timeline", "--trace", "   "), "needs a file name"),
    (("overlap", "--trace", ""), "needs a file name"),
    (("sweep", "--svg", ""), "needs a file name"),
    (("diagnose", str(NCCL_OUTPUT), "--svg", ""), "needs a file name"),
    (("diagnose", str(NCCL_OUTPUT), "--svg", "z" * 300 + ".svg"), "at most 255 bytes"),
    (("timeline", "--trace", "x" * 300 + ".json"), "at most 255 bytes"),
    (("sweep", "--svg", "y" * 300 + ".svg"), "at most 255 bytes"),
    (("timeline", "--trace", "missing/t.json"), "does not exist"),
    (("sweep", "--svg", "."), "is a folder"),
    (("timeline", "--trace", "sub/"), "is a folder"),
    (("timeline", "--trace", "/" + "d/" * 2100 + "t.json"), "at most 4,096"),
])
def test_a_name_that_cannot_be_written_is_refused_first(tmp_path, args, words):
    (tmp_path / "sub").mkdir()
    ran = cli(*args, cwd=tmp_path)
    refused(ran, words)
    assert ran.out == ""
    no_leftovers(tmp_path, "sub")


def test_a_write_that_fails_leaves_the_old_file_and_no_temporary(tmp_path):
    target = tmp_path / "t.json"
    target.write_text("old")
    with pytest.raises(ZeroDivisionError):
        with atomic_output(target, "--trace") as out:
            out.write("half of a new file")
            1 / 0
    assert target.read_text() == "old"
    no_leftovers(tmp_path, "t.json")


def test_a_diagnose_svg_is_written_whole(tmp_path):
    ran = cli("diagnose", str(NCCL_OUTPUT), "--svg", "d.svg", cwd=tmp_path)
    assert ran.status == 0, ran.err
    assert (tmp_path / "d.svg").read_text().startswith("<svg")
    no_leftovers(tmp_path, "d.svg")


def test_a_full_disk_is_one_line_and_leaves_nothing(tmp_path):
    ran = cli("timeline", "--gpus", "4", "--trace", "/dev/full", cwd=tmp_path)
    # status 1: the disk failed, not the input (README: "a full disk ... status 1")
    assert ran.status == 1 and ran.out == "" and ran.err.count("\n") == 1, ran.err
    assert "No space left" in ran.err and "Traceback" not in ran.err
    no_leftovers(tmp_path)


def test_devices_and_links_are_written_through(tmp_path):
    ran = cli("timeline", "--gpus", "4", "--trace", "/dev/null", cwd=tmp_path)
    assert ran.status == 0 and os.path.exists("/dev/null") and not os.path.isfile("/dev/null")
    (tmp_path / "link.json").symlink_to("real.json")
    ran = cli("timeline", "--gpus", "4", "--trace", "link.json", cwd=tmp_path)
    assert ran.status == 0, ran.err
    assert (tmp_path / "link.json").is_symlink()
    assert json.loads((tmp_path / "real.json").read_text())["traceEvents"]
    no_leftovers(tmp_path, "link.json", "real.json")


def test_a_new_file_gets_the_mode_open_would_give(tmp_path):
    mask = os.umask(0o022)
    try:
        write_text(tmp_path / "a.svg", "--svg", "<svg/>")
    finally:
        os.umask(mask)
    assert (tmp_path / "a.svg").stat().st_mode & 0o777 == 0o644


def test_the_api_refuses_an_empty_name():
    with pytest.raises(RingsimError, match="needs a file name"):
        write_text("", "the file", "text")
    with pytest.raises(RingsimError, match="NUL"):
        write_text("a\0b", "the file", "text")


def test_a_link_that_loops_is_refused_and_left_as_it_was(tmp_path):
    # The shell's `> loop.json` fails here; replacing the link by a file would lose it.
    (tmp_path / "loop.json").symlink_to("back.json")
    (tmp_path / "back.json").symlink_to("loop.json")
    ran = cli("timeline", "--gpus", "4", "--trace", "loop.json", cwd=tmp_path)
    refused(ran, "cannot write --trace loop.json", "symbolic links")
    assert os.readlink(tmp_path / "loop.json") == "back.json"
    no_leftovers(tmp_path, "loop.json", "back.json")


def test_a_figure_never_writes_over_the_log_it_draws(tmp_path):
    # The log is read, then the picture would replace it: the user's only copy gone.
    log = ROOT / "tests" / "data" / "nccl_logs" / "deepspeed4715_2node_channel_hops_excerpt.log"
    text = log.read_bytes()
    (tmp_path / "run.svg").write_bytes(text)
    (tmp_path / "run.log").write_bytes(text)
    (tmp_path / "alias.png").symlink_to("run.log")
    for output, given in (("run.svg", "run.svg"), ("alias.png", "run.log")):
        ran = cli("figure", output, "--nccl-log", given, cwd=tmp_path)
        refused(ran, f"the figure {output} is the --nccl-log file, which figure reads")
    assert (tmp_path / "run.svg").read_bytes() == text == (tmp_path / "run.log").read_bytes()
    assert (tmp_path / "alias.png").is_symlink()


@pytest.mark.parametrize("command", ["timeline", "overlap"])
def test_a_trace_never_replaces_the_topology_file_it_read(tmp_path, command):
    topology = ROOT / "tests" / "data" / "topologies" / "a100-4hdr.toml"
    text = topology.read_bytes()
    (tmp_path / "t.toml").write_bytes(text)
    (tmp_path / "link.json").symlink_to("t.toml")
    for trace in ("t.toml", "link.json"):
        ran = cli(command, "--gpus", "16", "--topology", "t.toml", "--trace", trace, cwd=tmp_path)
        refused(ran, f"--trace {trace} is the --topology file, which {command} reads")
    assert (tmp_path / "t.toml").read_bytes() == text


@pytest.mark.parametrize("args", [("sweep", "--gpus", "16", "--no-plot"), ("diagnose", str(NCCL_OUTPUT))])
def test_an_svg_never_replaces_the_topology_file_it_read(tmp_path, args):
    # a name ending in .svg can still reach the TOML file through a link
    topology = ROOT / "tests" / "data" / "topologies" / "a100-4hdr.toml"
    text = topology.read_bytes()
    (tmp_path / "t.toml").write_bytes(text)
    (tmp_path / "link.svg").symlink_to("t.toml")
    ran = cli(*args, "--topology", "t.toml", "--svg", "link.svg", cwd=tmp_path)
    refused(ran, f"--svg link.svg is the --topology file, which {args[0]} reads")
    assert (tmp_path / "t.toml").read_bytes() == text
