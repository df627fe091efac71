"""Issue 8's lesson items: hostile lesson files, closed or piped streams, budgets, wording."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ringsim import RingsimError
from ringsim.cli import main
from ringsim.lessons import check_lessons, load_lessons
from ringsim.lessons.runner import listing, run_lesson
from ringsim.core.textout import clip
from ringsim.lessons.text import clean, plain, plural

REPO = Path(__file__).resolve().parents[2]
FRONT = "---\ntitle: T\ngpus: 4\nelements: 8\n---\n"
HOSTILE = "\x1b[2J\x1b]0;PWNED\x07\x9b31m\u202e"


def _write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def _no_controls(text: str) -> None:
    assert not any(c in text for c in "\x1b\x07\x9b\u202e"), repr(text)


def test_control_characters_in_a_lesson_never_reach_the_terminal(tmp_path, capsys):
    _write(tmp_path, "01-x.md", f"---\ntitle: Evil{HOSTILE} title\ngpus: 2\nelements: 2\n---\n"
                                f"Body {HOSTILE}text {{{{G}}}}\n```question\nQ{HOSTILE}?\nanswer: G\n```\n")
    (lesson,) = load_lessons(tmp_path)
    assert lesson.title == "Evil title"
    out = io.StringIO()
    run_lesson(lesson, out)
    _no_controls(out.getvalue())
    assert "Body text 2" in out.getvalue() and "Question: Q?" in out.getvalue()
    _no_controls("\n".join(listing([lesson])))
    assert main(["lesson", "1", "--lessons-dir", str(tmp_path), "--no-pause"]) == 0
    _no_controls(capsys.readouterr().out)


def test_control_characters_in_a_file_name_and_in_errors_are_removed(tmp_path, capsys):
    _write(tmp_path, f"01-{HOSTILE}.md", FRONT + f"{{{{nope{HOSTILE}}}}}\n")
    assert main(["lesson", "--check", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    _no_controls(err)
    assert err.count("\n") == 1


def test_clean_keeps_text_tabs_and_newlines():
    assert clean("a\tb\nc\r\nd\x00e\x1b[1mf\x1b]8;;http://x\x1b\\g") == "a\tb\nc\ndefg"


def test_lesson_with_stdin_closed_prints_through():
    proc = subprocess.run([sys.executable, "-m", "ringsim", "lesson", "5"], cwd=REPO,
                          preexec_fn=lambda: os.close(0), capture_output=True, text=True,
                          encoding="utf-8", timeout=120, env={**os.environ, "PYTHONIOENCODING": "utf-8"})
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr and "End of lesson 5." in proc.stdout
    assert "[Enter" not in proc.stdout


def test_stdin_at_a_terminal_but_stdout_to_a_file_does_not_wait(tmp_path):
    # Only a terminal on both ends gets questions: here stdout is a file, so nothing waits.
    pytest.importorskip("pty")
    import pty
    leader, follower = pty.openpty()
    try:
        proc = subprocess.run([sys.executable, "-m", "ringsim", "lesson", "6"], cwd=REPO,
                              stdin=follower, capture_output=True, text=True, encoding="utf-8",
                              timeout=120, env={**os.environ, "PYTHONIOENCODING": "utf-8"})
    finally:
        os.close(leader)
        os.close(follower)
    assert proc.returncode == 0 and "[Enter" not in proc.stdout and "End of lesson 6." in proc.stdout


@pytest.mark.parametrize("placeholder, reason", [
    ("{{iterations gpus=1000000}}", "need at most 1,024 GPUs"),
    ("{{train.loss gpus=256 algorithm=naive epochs=50}}", "too much work for a lesson"),
    ("{{train.loss gpus=1000}}", "gpus must be at most 256"),
    ("{{ledger.total gpus=1000000}}", "need at most 1,024 GPUs"),
])
def test_costly_placeholders_are_refused_before_they_start(tmp_path, placeholder, reason):
    _write(tmp_path, "01-x.md", FRONT + placeholder + "\n")
    lessons, problems = check_lessons(tmp_path)
    assert len(problems) == 1 and reason in problems[0].reason


def test_one_figure_past_its_share_is_refused(tmp_path):
    # A 128-GPU simulation takes seconds: refused before it starts.
    _write(tmp_path, "01-x.md", FRONT + "{{held[1][1] gpus=128 elements=7812}}\n")
    lessons, problems = check_lessons(tmp_path)
    assert len(problems) == 1 and "too much work for a lesson" in problems[0].reason


def test_the_whole_check_has_a_budget(tmp_path, monkeypatch):
    # 40 distinct simulations: past the check's budget (made small here to keep the test
    # fast; the shipped limit is budget.CHECK_BUDGET_MS) the check stops, in one line.
    from ringsim.lessons import budget
    monkeypatch.setattr(budget, "CHECK_BUDGET_MS", 20)
    body = "".join(f"{{{{held[1][1] gpus={g}}}}}\n" for g in range(5, 45))
    _write(tmp_path, "01-x.md", FRONT + body)
    lessons, problems = check_lessons(tmp_path)
    refused = [p for p in problems if "work budget (0 s in all)" in p.reason]
    assert lessons == [] and len(problems) == len(refused) == 1
    assert 5 < refused[0].line < 40 and refused[0].reason.endswith("; the check stops here")


def test_long_values_are_cut_in_error_lines(tmp_path, capsys):
    _write(tmp_path, "01-x.md", "---\ntitle: T\ngpus: 4\nelements: " + "9" * 100_000 + "\n---\n")
    assert main(["lesson", "--check", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and len(err) < 400 and "100,000 characters" in err
    _write(tmp_path, "01-x.md", FRONT + "{{G gpus=" + "7" * 5000 + "}}\n")
    assert main(["lesson", "--check", str(tmp_path)]) == 2
    assert len(capsys.readouterr().err) < 400


def test_clip_and_plural():
    assert clip("x" * 10) == "xxxxxxxxxx"
    assert clip("9" * 1000).endswith("(1,000 characters)")
    assert [plural(1, "GPU"), plural(4, "GPU"), plural(1, "element"), plural(3, "segment")] == \
        ["1 GPU", "4 GPUs", "1 element", "3 segments"]


def test_one_gpu_one_element_reads_in_the_singular(tmp_path):
    body = "{{G unit=segment}} of {{segment.size unit=element}}\n"
    _write(tmp_path, "01-x.md", "---\ntitle: T\ngpus: 1\nelements: 1\n---\n" + body)
    out = io.StringIO()
    run_lesson(load_lessons(tmp_path)[0], out)
    assert "Scenario: Ring all-reduce · 1 GPU · 1 element per GPU" in out.getvalue()
    assert "1 segment of 1 element" in out.getvalue()
    out = io.StringIO()
    run_lesson(load_lessons(tmp_path, gpus=3, elements=3)[0], out)
    assert "3 segments of 1 element" in out.getvalue()
    with pytest.raises(RingsimError, match="a lesson needs at least 2 GPUs"):
        load_lessons(tmp_path, gpus=1)


def test_plain_text_when_piped_and_rich_markdown_on_a_terminal():
    (lesson,) = [l for l in load_lessons() if l.number == 5]
    piped = io.StringIO()
    run_lesson(lesson, piped)
    assert not any(line.startswith("#") for line in piped.getvalue().splitlines())
    assert "Ring, phase 1: reduce-scatter\n=====" in piped.getvalue()
    assert "**" not in piped.getvalue()
    rich = io.StringIO()
    run_lesson(lesson, rich, rich=True)
    text = rich.getvalue()
    assert "Ring, phase 1: reduce-scatter" in text
    assert not any(line.startswith(("# ", "## ")) for line in text.splitlines())


def test_plain_keeps_code_blocks_and_drops_emphasis():
    assert plain("# T\n\n**bold** and *it* and `code`\n```text\nx | y\n```") == \
        "T\n=\n\nbold and it and code\n  x | y"


def test_the_teachers_guide_says_elements_is_required():
    doc = (REPO / "docs" / "lessons.md").read_text(encoding="utf-8")
    assert "| `elements` | required" in doc


def test_overridden_scenarios_keep_the_front_matter_limits():
    with pytest.raises(RingsimError, match="so gpus must be from 2 to 128, got 500$"):
        load_lessons(gpus=500)
    with pytest.raises(RingsimError, match="so elements must be from 0 to 100,000, got 200,000$"):
        load_lessons(elements=200_000)


@pytest.mark.parametrize("value, reason", [
    ("1e999999", "exponents go from -30 to +30"), ("nan", "must be a non-negative number"),
    ("inf", "must be a non-negative number"), ("-1", "must be a non-negative number"),
    ("2e12", "from 0 to 1,000,000,000,000 µs"),
])
def test_link_numbers_in_a_lesson_are_read_by_the_shared_parser(tmp_path, value, reason):
    _write(tmp_path, "01-x.md", FRONT + f"{{{{latency.ring alpha_us={value}}}}}\n")
    lessons, problems = check_lessons(tmp_path)
    assert len(problems) == 1 and reason in problems[0].reason, problems


@pytest.mark.parametrize("value, reason", [
    ("0", "from 1e-09 to 1,000,000,000 GB/s"), ("1e10", "from 1e-09 to 1,000,000,000 GB/s"),
    ("1e-31", "exponents go from -30 to +30"), ("nan", "must be a positive number"),
])
def test_bandwidth_in_a_lesson_stays_in_the_stated_range(tmp_path, value, reason):
    _write(tmp_path, "01-x.md", FRONT + f"{{{{latency.ring gbps={value}}}}}\n")
    lessons, problems = check_lessons(tmp_path)
    assert len(problems) == 1 and reason in problems[0].reason, problems


def test_link_numbers_in_range_give_the_figure(tmp_path):
    _write(tmp_path, "01-x.md", FRONT + "{{latency.ring alpha_us=0 gbps=2.5e1}}\n")
    lessons, problems = check_lessons(tmp_path)
    assert problems == [] and len(lessons) == 1
