"""Closed pipes, full disks, a closed stdout and ASCII-only terminals, with real processes."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ringsim.core.textout import ascii_form

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH = pytest.param(["bench", "--quick", "--backend", "numpy"], marks=pytest.mark.slow)
COMMANDS = [["walk"], ["walk", "--json"], ["compare"], ["train", "--epochs", "1"], BENCH,
            ["--help"], ["walk", "--help"]]


def env(**extra):
    """The environment a user's shell gives: no PYTHONUNBUFFERED, ringsim from this tree."""
    base = {k: v for k, v in os.environ.items() if k not in ("PYTHONUNBUFFERED", "PYTHONIOENCODING")}
    return {**base, "PYTHONPATH": ROOT, **extra}


def ringsim(*argv):
    return [sys.executable, "-m", "ringsim", *argv]


@pytest.mark.parametrize("argv", COMMANDS, ids=lambda argv: " ".join(argv) if isinstance(argv, list) else None)
def test_a_reader_that_leaves_ends_the_command_quietly(argv):
    proc = subprocess.Popen(ringsim(*argv), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=env(), cwd=ROOT)
    proc.stdout.close()  # `| true`: the reader is gone before the first line is written
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 0
    assert err == ""


def test_a_reader_that_leaves_mid_output_ends_it_quietly_too():
    # walk --gpus 40 prints far more than a pipe's buffer: the write fails mid-run.
    script = "python -m ringsim walk --gpus 40 | head -1; echo ${PIPESTATUS[0]}"
    proc = subprocess.run(["bash", "-c", script], capture_output=True, text=True, env=env(),
                          cwd=ROOT, timeout=120)
    assert proc.stdout.splitlines() == ["Ring all-reduce · 40 GPUs · 40 elements per GPU", "0"]
    assert proc.stderr == ""


@pytest.mark.parametrize("argv", [["walk"], ["walk", "--gpus", "40"], ["compare"], ["--help"],
                                  ["--version"], ["walk", "--help"]], ids=" ".join)
def test_a_full_disk_is_one_line_and_a_failure(argv):
    with open("/dev/full", "w") as full:
        proc = subprocess.run(ringsim(*argv), stdout=full, stderr=subprocess.PIPE, text=True,
                              env=env(), cwd=ROOT, timeout=120)
    assert proc.returncode == 1
    said = "ringsim" if argv[0].startswith("-") else f"ringsim {argv[0]}"  # its command, if any
    assert proc.stderr == f"{said}: error: cannot write to standard output: No space left on device\n"


@pytest.mark.parametrize("argv", [[], ["walk"]], ids=lambda a: " ".join(a) or "bare")
def test_a_closed_stdout_is_one_line(argv):
    command = " ".join(["python -m ringsim", *argv]) + " >&-"
    proc = subprocess.run(["bash", "-c", command], capture_output=True, text=True, env=env(),
                          cwd=ROOT, timeout=120)
    assert proc.returncode == 2
    said = " ".join(["ringsim", *argv])
    assert proc.stderr.startswith(f"{said}: error: standard output is closed")
    assert len(proc.stderr.splitlines()) == 1


@pytest.mark.parametrize("argv", COMMANDS, ids=lambda argv: " ".join(argv) if isinstance(argv, list) else None)
def test_an_ascii_terminal_gets_ascii_forms(argv):
    proc = subprocess.run(ringsim(*argv), capture_output=True, env=env(PYTHONIOENCODING="ascii"),
                          cwd=ROOT, timeout=120)
    assert proc.returncode == 0, proc.stderr.decode("ascii", "replace")
    out = proc.stdout.decode("ascii")  # every byte is ASCII
    assert proc.stderr == b""
    if argv == ["walk"]:
        assert "GPU1 sends a1 to GPU2, where it is added to b1" in out
        assert "2*(G-1)*N = 48" in out
    if argv == ["walk", "--json"]:
        unicode = subprocess.run(ringsim(*argv), capture_output=True, env=env(), cwd=ROOT,
                                 timeout=120).stdout.decode()
        records = [json.loads(line) for line in out.splitlines()]
        assert records == [json.loads(line) for line in unicode.splitlines()]
        assert records[0]["transfers"][0]["label"] == "a₁"  # escaped, not rewritten


def test_errors_reach_an_ascii_terminal_too():
    proc = subprocess.run(ringsim("walk", "--gpus", "−3"), capture_output=True,
                          env=env(PYTHONIOENCODING="ascii"), cwd=ROOT, timeout=120)
    assert proc.returncode == 2 and b"Traceback" not in proc.stderr
    proc.stderr.decode("ascii")


@pytest.mark.parametrize("text, ascii", [
    ("GPU1 sends a₁₂ to GPU2", "GPU1 sends a12 to GPU2"), ("2·(G−1)·N/G", "2*(G-1)*N/G"),
    ("⌊N/G⌋", "floor(N/G)"), ("G² and 2¹⁰", "G^2 and 2^10"), ("a → b … c ≤ d", "a -> b ... c <= d"),
    ("naïve ☃", "naive ?"), ("plain", "plain"),
    # Past z a GPU's letter ends in digits: its subscript is set apart (g2727 reads two ways).
    ("g27₂₇ and (z₂₆+g27₂₆)", "g27_27 and (z26+g27_26)")])
def test_ascii_forms(text, ascii):
    assert ascii_form(text) == ascii


def test_an_ascii_terminal_sets_a_subscript_apart_from_the_digits_before_it():
    # The codec handler sees only the characters the stream cannot encode (₂₇), not the 7 of
    # g27 before them: it looks back one character.
    proc = subprocess.run([sys.executable, "-m", "ringsim", "walk", "-g", "28", "-n", "28"],
                          capture_output=True, timeout=120,
                          env={**os.environ, "PYTHONIOENCODING": "ascii"})
    assert proc.returncode == 0
    assert "GPU27 sends g27_27 to GPU28, where it is added to g28_27" in proc.stdout.decode("ascii")


def test_every_character_ringsim_prints_has_an_ascii_form():
    """No '?' on an ASCII terminal: each non-ASCII character in the lessons and the CLI's
    sources (the TUI draws on a real terminal and is left out) has a readable ASCII form."""
    root = Path(ROOT)
    sources = [*(root / "lessons").glob("*.md"),
               *(p for p in (root / "ringsim").rglob("*.py") if "tui" not in p.parts)]
    chars = {c for path in sources for c in path.read_text(encoding="utf-8") if not c.isascii()}
    missing = sorted(c for c in chars if "?" in ascii_form(c))
    assert missing == []


@pytest.mark.parametrize("argv", [["--help"], ["walk"], ["predict", "--sizes", "1MiB"],
                                  ["compare", "--time", "--topology", "dgx-h100", "--nodes", "2"],
                                  ["lesson", "18", "--no-pause"]],
                         ids=" ".join)
def test_a_plain_c_locale_reads_the_packaged_files_and_writes_ascii(argv):
    # The packaged tables (NCCL's constants, the presets) hold ×, α and µ: they are read as
    # UTF-8 whatever the locale, and what reaches an ASCII terminal is spelled in ASCII.
    result = subprocess.run(ringsim(*argv), capture_output=True, timeout=120, cwd=ROOT,
                            env=env(LANG="C", LC_ALL="C", PYTHONUTF8="0"))
    assert result.returncode == 0, result.stderr.decode(errors="replace")[-2000:]
    assert result.stderr == b""
    assert result.stdout.isascii() and result.stdout.strip()


def test_every_text_file_ringsim_reads_names_its_encoding():
    # Python's default encoding is the locale's: ASCII under LANG=C, Latin-1 on some hosts.
    import ast
    unnamed = []
    for path in sorted(Path(ROOT, "ringsim").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            name = getattr(node.func, "attr", getattr(node.func, "id", None))
            keywords = {k.arg for k in node.keywords}
            binary = any(isinstance(a, ast.Constant) and "b" in str(a.value) for a in node.args[1:2])
            method = isinstance(node.func, ast.Attribute)  # Path's; core.files' own take no encoding
            if method and name in ("read_text", "write_text") and "encoding" not in keywords:
                unnamed.append(f"{path.relative_to(ROOT)}:{node.lineno}")
            elif name == "open" and isinstance(node.func, ast.Name) and not binary \
                    and "encoding" not in keywords:
                unnamed.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert unnamed == []
