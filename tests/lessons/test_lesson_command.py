"""`ringsim lesson`: listing, running without pauses, --lessons-dir and --check."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ringsim.cli import main

REPO = Path(__file__).resolve().parents[2]


def test_lesson_lists_the_course(capsys):
    assert main(["lesson"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].split()[:2] == ["1", "Why"]
    assert sum(1 for line in out.splitlines() if line[:3].strip().isdigit()) == 19


def test_lesson_no_pause_prints_straight_through(capsys):
    assert main(["lesson", "5", "--no-pause"]) == 0
    out = capsys.readouterr().out
    assert "GPU1 sends (d₄+a₄) to GPU2, where it is added to b₄" in out
    assert "[Enter" not in out and out.rstrip().endswith("End of lesson 5.")


def test_lesson_through_a_pipe_does_not_wait():
    # stdin is a pipe that never sends anything: waiting would hang until the timeout.
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    proc = subprocess.Popen([sys.executable, "-m", "ringsim", "lesson", "6"], cwd=REPO, env=env,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, encoding="utf-8")
    try:
        out, err = proc.communicate(timeout=60)  # stdin stays open until communicate closes it
    finally:
        proc.kill()
    assert proc.returncode == 0, err
    assert "[Enter" not in out and "End of lesson 6." in out


def test_unknown_lesson_number(capsys):
    assert main(["lesson", "42"]) == 2
    err = capsys.readouterr().err
    assert err == "ringsim lesson: error: there is no lesson 42; the lessons are 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19\n"


def test_check_the_shipped_course(capsys):
    assert main(["lesson", "--check", str(REPO / "lessons")]) == 0
    assert capsys.readouterr().out == "19 lessons OK\n"


def test_check_reports_every_problem(tmp_path, capsys):
    (tmp_path / "01-good.md").write_text("---\ntitle: Good\ngpus: 2\nelements: 4\nstops:\n---\n"
                                         "{{ledger.total}} elements.\n", encoding="utf-8")
    (tmp_path / "02-bad.md").write_text("---\ntitle: Bad\ngpus: 2\nelements: 4\nstops:\n---\n"
                                        "Text\n{{nonsense}}\n", encoding="utf-8")
    (tmp_path / "03-worse.md").write_text("---\ntitle: Worse\ngpus: 2\nelements: 4\nstops: 3\n"
                                          "---\n", encoding="utf-8")
    assert main(["lesson", "--check", str(tmp_path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.splitlines() == [
        f"{tmp_path / '02-bad.md'}:8: {{{{nonsense}}}}: unknown placeholder 'nonsense'; "
        "see docs/lessons.md for the vocabulary",
        f"{tmp_path / '03-worse.md'}:5: stop 3 is outside the run: this scenario has 2 steps, "
        "so stops are 0..2",
    ]
    # Listing that folder reads only the files' structure: it refuses at the first malformed
    # file, in one line; running a lesson refuses at the first placeholder that fails.
    assert main(["lesson", "--lessons-dir", str(tmp_path)]) == 2
    assert capsys.readouterr().err.startswith(f"ringsim lesson: error: {tmp_path / '03-worse.md'}:5: ")
    assert main(["lesson", "1", "--lessons-dir", str(tmp_path)]) == 2
    assert capsys.readouterr().err.startswith(f"ringsim lesson: error: {tmp_path / '02-bad.md'}:8: ")


def test_lessons_dir_runs_a_teachers_lesson(tmp_path, capsys):
    (tmp_path / "01-mine.md").write_text(
        "---\ntitle: Mine\nalgorithm: master\nmaster: 2\ngpus: 3\nelements: 6\nstops: 2\n---\n"
        "<!-- stop 2 -->\nThe master sent {{sent[2]}}.\n", encoding="utf-8")
    assert main(["lesson", "1", "--lessons-dir", str(tmp_path), "--no-pause"]) == 0
    out = capsys.readouterr().out
    assert "Scenario: Single-GPU master (GPU2) · 3 GPUs · 6 elements per GPU" in out
    assert "The master sent 12." in out


@pytest.mark.parametrize("argv, message", [
    (["lesson", "--check", "/nonexistent/lessons"], "ringsim lesson: error: /nonexistent/lessons: no such lessons folder\n"),
    (["lesson", "3", "--check", "."], "ringsim lesson: error: --check takes a folder and no lesson number\n"),
])
def test_bad_lesson_invocations(argv, message, capsys):
    assert main(argv) == 2
    assert capsys.readouterr().err == message


@pytest.mark.parametrize("argv", [["lesson", "--check"], ["lesson", "--lessons-dir"],
                                  ["lesson", "1", "--lessons-dir"],
                                  ["lesson", "1", "--gpus", "3", "--lessons-dir"]])
def test_empty_folder(argv, tmp_path, capsys):
    # Checking, listing, the course as written and one lesson on another G all read the
    # folder the same way, so an empty folder gets the same one-line answer.
    assert main(argv + [str(tmp_path)]) == 2
    assert capsys.readouterr().err == (f"ringsim lesson: error: {tmp_path}: no lesson files "
                                       "(expected names like 01-intro.md)\n")


@pytest.mark.parametrize("argv", [["lesson", "--lessons-dir"], ["lesson", "1", "--gpus", "3", "--lessons-dir"]])
def test_missing_folder(argv, capsys):
    assert main(argv + ["/nonexistent/lessons"]) == 2
    assert capsys.readouterr().err == "ringsim lesson: error: /nonexistent/lessons: no such lessons folder\n"


def test_a_lesson_on_another_scenario(capsys):
    assert main(["lesson", "5", "--gpus", "3", "--elements", "8", "--no-pause"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "Scenario: Ring all-reduce · 3 GPUs · 8 elements per GPU" in out
    # G = 3 does not divide N = 8: the text says so, with the engine's uneven counts.
    assert "G = 3 does not divide N = 8, so segments hold 2 or 3 elements" in out
    assert "sent 5, 6 and 5" in out and "No GPU did more than any other" not in out


def test_check_defaults_to_the_course_and_takes_a_scenario(capsys):
    assert main(["lesson", "--check"]) == 0
    assert main(["lesson", "--check", "--gpus", "5", "--elements", "11"]) == 0
    assert capsys.readouterr().out == "19 lessons OK\n19 lessons OK\n"
    assert main(["lesson", "5", "--gpus", "1"]) == 2
    assert capsys.readouterr().err == ("ringsim lesson: error: a lesson needs at least 2 GPUs (--gpus 2 or "
                                       "more): one GPU has nothing to synchronise\n")


def test_lesson_help_gives_the_gpus_a_lesson_takes(capsys):
    from ringsim.cli import build_parser
    with pytest.raises(SystemExit):
        build_parser().parse_args(["lesson", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "instead of its own scenario (2..128)" in out
    assert main(["lesson", "5", "-g", "1", "--no-pause"]) == 2  # one GPU has nothing to sync
    assert main(["lesson", "5", "-g", "2", "--no-pause"]) == 0 and main(["lesson", "5", "-g", "128", "--no-pause"]) == 0


def test_a_lesson_file_given_for_its_folder_is_told_apart(tmp_path, capsys):
    lesson = tmp_path / "03-naive.md"
    lesson.write_text("---\ntitle: x\n---\n")
    for argv in (["lesson", "--check", str(lesson)], ["lesson", "1", "--lessons-dir", str(lesson)]):
        assert main(argv) == 2
        assert capsys.readouterr().err == (f"ringsim lesson: error: {lesson} is not a folder: give "
                                           "the folder that holds the lesson files\n")
