"""A command a lesson names prints the lesson's own numbers when a learner runs it."""

from __future__ import annotations

import re
import shlex

import pytest

from ringsim.cli import main


def _run(capsys, argv: list[str]) -> str:
    assert main(argv) == 0
    return capsys.readouterr().out


def _lesson(capsys, number: int) -> str:
    return _run(capsys, ["lesson", str(number), "--no-pause"])


def _named_command(text: str, program: str) -> list[str]:
    # Inline commands wrap with the prose; a command ends where the prose goes on (a verb).
    flat = " ".join(text.split())
    found = re.search(rf"ringsim {program}[-\w\s.:/=]*?(?= (?:runs|does|prints|prices)\b)", flat)
    assert found, f"no `ringsim {program}` command in the lesson"
    return shlex.split(found.group(0))[1:]


def _schedules(text: str) -> dict[str, tuple[str, str]]:
    rows = {}
    for line in text.splitlines():
        found = re.match(r"\s+(\S.*?)\s{2,}(\d\S* \S?s)\s+(\d\S* \S?s)\s+[\d.]+×$", line)
        if found:
            rows[found.group(1)] = found.group(2), found.group(3)
    return rows


def test_lesson_14_names_the_timeline_command_that_prints_its_table(capsys):
    lesson = _lesson(capsys, 14)
    line = next(line.strip() for line in lesson.splitlines() if line.strip().startswith("ringsim timeline"))
    table = _schedules(lesson)
    assert set(table) >= {"ring", "double binary tree, 16 chunks"}
    cli = _run(capsys, shlex.split(line)[1:])
    for label, (healthy, faulty) in table.items():
        row = next(row for row in cli.splitlines() if row.strip().startswith(label + " "))
        assert f"{healthy} healthy" in row and f"{faulty} with the faults" in row, (label, row)
    # The flags it names matter: the command line's own flat machine prints other numbers.
    default = _run(capsys, [word for word in shlex.split(line)[1:]
                            if word not in ("--reduce-bandwidth", "inf")])
    ring = next(row for row in default.splitlines() if row.strip().startswith("ring "))
    assert f"{table['ring'][0]} healthy" not in ring


def test_lesson_15_names_the_overlap_command_that_prints_its_sweep(capsys):
    lesson = _lesson(capsys, 15)
    sweep = lesson.split("prints the")[1]
    rows = re.findall(r"^\s+(\d+|one bucket)\s+(\d+)\s+([\d.]+ \S?s)\s+([\d.]+ \S?s)", sweep, re.M)
    assert len(rows) >= 5
    cli = _run(capsys, _named_command(lesson, "overlap --model resnet-50 --gpus 64"))
    for size, buckets, step, exposed in rows:
        unit = "" if size == "one bucket" else " MiB"
        assert re.search(rf"{size}{unit}\s+{buckets}\s+{re.escape(step)}\s+{re.escape(exposed)}", cli), size


def test_lesson_10_names_the_sweep_command_that_prints_its_times(capsys):
    lesson = _lesson(capsys, 10)
    command = _named_command(lesson.split("The sweep on the flat machine")[1], "sweep")
    cli = _run(capsys, command)
    table = lesson.split("The sweep on the flat machine")[1].split("At 1 KiB")[0]
    top = re.search(r"^\s+1GiB\s+(\S+)\s+([\d.]+) ms\s+([\d.]+ GB/s)\s+([\d.]+) ms", table, re.M)
    assert top, table
    best, seconds, busbw, ring = top.groups()
    row = next(row for row in cli.splitlines() if row.strip().startswith("1GiB") and "ms" in row)
    times = [float(t) for t in re.findall(r"([\d.]+) ms", row)]
    assert round(times[0], 1) == float(ring)        # the first column is the ring
    assert float(seconds) in [round(t, 1) for t in times] and busbw in row and best in row


def _rails_paragraph(lesson: str) -> str:
    return " ".join(lesson.split("NCCL applies the same idea")[1].split("algbw and busbw")[0].split())


def test_lesson_10_names_the_commands_that_print_the_rails_ring(capsys):
    lesson = _lesson(capsys, 10)
    text = _rails_paragraph(lesson)
    found = re.search(r"at 1 GiB ([\d.]+) ms \(busbw ([\d.]+ GB/s)\).*?At 32 MiB .*?: ([\d.]+) µs "
                      r"against halving-doubling's ([\d.]+) µs", text)
    assert found, text
    big, busbw, rails_32, hd_32 = found.groups()
    # The sweep it names: the 1GiB and 32MiB rows of the column 'ring rails:8'.
    cli = _run(capsys, _named_command(text, "sweep"))
    heads = re.split(r"\s{2,}", next(line for line in cli.splitlines()
                                     if line.lstrip().startswith("size") and "fastest" in line).strip())
    rows = {cells[0]: cells for cells in (re.split(r"\s{2,}", line.strip())
                                          for line in cli.splitlines() if "ms" in line or "µs" in line)}
    column = heads.index("ring rails:8")
    assert round(float(rows["1GiB"][column].split()[0]), 1) == float(big)
    assert rows["1GiB"][heads.index("fastest textbook")] == "ring rails:8"
    assert rows["1GiB"][heads.index("its busbw")] == busbw
    assert round(float(rows["32MiB"][column].split()[0]), 1) == float(rails_32)
    assert round(float(rows["32MiB"][heads.index("halving-doubling*")].split()[0]), 1) == float(hd_32)
    # The compare it names: its row 'Ring all-reduce (ring order rails:8)', ranked first.
    cli = _run(capsys, _named_command(text, "compare"))
    row = next(line for line in cli.splitlines() if line.startswith("Ring all-reduce (ring order rails:8) ")
               and "GB/s" in line)
    time, _, _, rank = re.search(r"  ([\d.]+) ms\s+([\d.]+ GB/s)\s+([\d.]+ GB/s)\s+(\d+)  ", row).groups()
    assert round(float(time), 1) == float(big) and busbw in row and rank == "1"


@pytest.mark.parametrize("argv, says, never", [
    (["-g", "12", "-n", "7"], "7 times less, not 12", "12 times less."),
    (["-g", "17", "-n", "1"], "cutting gains nothing until", "17 times less"),
    (["-g", "12", "-n", "13"], "13/2 times less", "12 times less"),
    (["-g", "4", "-n", "8"], "4 times less.", "not 4"),
])
def test_lesson_4_gives_the_gain_segments_really_bring(argv, says, never, capsys):
    # The gain is N / ⌈N/G⌉ (the largest segment sets a step's length): G only where G divides
    # N, and nothing at all with one element.
    assert main(["lesson", "4", "--no-pause", *argv]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert says in text and never not in text
