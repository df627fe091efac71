"""Topology files: only regular files of a stated size are read, every field is checked by
type and range, and nothing from the file reaches the terminal raw."""

from __future__ import annotations

import os

import pytest

from ringsim.core.errors import RingsimError
from ringsim.cost.topology import LEVEL_FIELDS, TOPOLOGY_FIELDS, load

from .bounded import cli, refused

LEVEL = '[inside]\nalpha = "1us"\nbandwidth = "100GB/s"\n'


def _write(folder, name: str, text: str) -> str:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return str(path)


@pytest.fixture
def hostile(tmp_path):
    """A folder of hostile topology files, by name."""
    files = {}
    os.mkfifo(tmp_path / "fifo.toml")
    files["fifo"] = str(tmp_path / "fifo.toml")
    os.symlink("/dev/zero", tmp_path / "zero.toml")
    files["zero"] = str(tmp_path / "zero.toml")
    os.mkdir(tmp_path / "folder.toml")
    files["folder"] = str(tmp_path / "folder.toml")
    files["deep"] = _write(tmp_path, "deep.toml", "a = " + "[" * 100_000)
    files["deep-short-lines"] = _write(tmp_path, "deep2.toml", "".join(
        f"a{i} = " + "[" * 900 + "\n" for i in range(60)))
    files["dotted"] = _write(tmp_path, "dotted.toml", "a" + ".a" * 100_000 + " = 1\n")
    files["dotted-lines"] = _write(tmp_path, "dotted2.toml", "".join(
        "a" + ".a" * 490 + f".b{i} = 1\n" for i in range(60)))
    files["huge-per-node"] = _write(tmp_path, "huge.toml", f"gpus_per_node = {10**21}\n" + LEVEL)
    files["per-node-float"] = _write(tmp_path, "float.toml", "gpus_per_node = 8.0\n" + LEVEL)
    files["name-number"] = _write(tmp_path, "number.toml", "name = 5\n" + LEVEL)
    files["name-list"] = _write(tmp_path, "list.toml", 'title = ["a"]\n' + LEVEL)
    files["level-name-number"] = _write(tmp_path, "lnum.toml", LEVEL + "name = 7\n")
    files["unknown-in-level"] = _write(tmp_path, "unknown.toml", LEVEL + "speed = 3\n")
    files["unknown-top"] = _write(tmp_path, "unknown2.toml", "speed = 3\n" + LEVEL)
    files["alpha-number"] = _write(tmp_path, "anum.toml", LEVEL.replace('"1us"', "1"))
    files["level-not-table"] = _write(tmp_path, "lnt.toml", 'inside = "fast"\n')
    files["long-name"] = _write(tmp_path, "long.toml", f'name = "{"x" * 500}"\n' + LEVEL)
    files["not-utf8"] = str(tmp_path / "latin.toml")
    (tmp_path / "latin.toml").write_bytes(b'name = "caf\xe9"\n' + LEVEL.encode())
    files["big"] = _write(tmp_path, "big.toml", LEVEL + ("# padding\n" * 10_000))
    files["exponent"] = _write(tmp_path, "exp.toml", LEVEL.replace('"1us"', '"1e999999999s"'))
    return files


WORDS = {
    "fifo": "not a regular file", "zero": "not a regular file", "folder": "not a regular file",
    "deep": "at most 65,536", "deep-short-lines": "nested too deeply",
    "dotted": "at most 65,536", "dotted-lines": "unknown field 'a'",
    "huge-per-node": "from 1 to 1,000,000", "per-node-float": "whole number",
    "name-number": "must be text", "name-list": "must be text",
    "level-name-number": "must be text", "unknown-in-level": "unknown field 'speed'",
    "unknown-top": "unknown field 'speed'", "alpha-number": "text with a unit",
    "level-not-table": "must be a table", "long-name": "at most 100",
    "not-utf8": "not UTF-8", "big": "at most 65,536", "exponent": "exponents go from",
}


@pytest.mark.parametrize("case", sorted(WORDS))
def test_a_hostile_file_is_one_line(hostile, case):
    ran = cli("compare", "--time", "--topology", hostile[case], timeout=30)
    refused(ran, WORDS[case])
    assert ran.out == ""


def test_the_api_refuses_the_same_files(hostile):
    for case in ("fifo", "zero", "deep-short-lines", "unknown-in-level"):
        with pytest.raises(RingsimError):
            load(hostile[case])


def test_the_checks_come_from_one_table():
    # A new field is one line in a table: every key a file may hold has a checker there.
    assert {"name", "title", "gpus_per_node", "reduce_bandwidth", "sources", "measured"} <= set(TOPOLOGY_FIELDS)
    assert {"name", "alpha", "bandwidth"} <= set(LEVEL_FIELDS)
    assert all(callable(check) for check in (*TOPOLOGY_FIELDS.values(), *LEVEL_FIELDS.values()))


ESCAPES = (r'name = "\u001b[2J\u001b]0;pwned\u0007x\r\nY\u202e"' + "\n"
           r'title = "t\u001b[31mred\u009b2J"' + "\n" + LEVEL.replace(
               "[inside]", "[inside]\n" + r'name = "n\u001b[2Jq\u0085"'))


@pytest.mark.parametrize("args", [
    ("compare", "--time"), ("compare",), ("timeline", "--gpus", "4"), ("sweep", "--gpus", "4"),
    ("walk", "--time"), ("overlap", "--gpus", "4"), ("zero", "--params", "1B"),
    ("sweep", "--gpus", "4", "--json"), ("compare", "--time", "--json")])
def test_names_reach_the_terminal_without_control_characters(tmp_path, args):
    path = _write(tmp_path, "esc.toml", ESCAPES)
    ran = cli(*args, "--topology", path)
    assert ran.status == 0, ran.err
    for text in (ran.out, ran.err):
        assert not any(ord(c) < 32 and c not in "\n" or 0x7f <= ord(c) < 0xa0 or
                       0x202a <= ord(c) <= 0x202e for c in text), \
            [c for c in text if ord(c) < 32 and c != "\n"][:5]
    topo = load(path)
    assert topo.name == "x Y" and topo.title == "tred" and topo.level("inside").name == "nq"


def test_an_error_quoting_the_file_is_one_clean_line(tmp_path):
    path = _write(tmp_path, "bad\x1b[2J.toml", "[inside]\n" + r'alpha = "1 \u001b]0;x\u0007s"' + "\n")
    ran = cli("compare", "--time", "--topology", path)
    refused(ran)
