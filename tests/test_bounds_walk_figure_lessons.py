"""walk, figure and the lesson check estimate their work before it starts and refuse, in one
line, what would run for minutes: the refusals and the estimates are asserted, never a wall
time."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ringsim.algorithms.collectives import collective
from ringsim.cli import main
from ringsim.cli import _walk_budget as walk_budget
from ringsim.core.errors import RingsimError
from ringsim.lessons import budget as lesson_budget
from ringsim.lessons import check_lessons, load_lessons, outline_lessons
from ringsim.sim import work as sim_work

ROOT = Path(__file__).resolve().parents[1]


def _one_line(capsys, command: str) -> str:
    """The single stderr line of a refusal, nothing on stdout."""
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert len(lines) == 1 and "Traceback" not in captured.err, captured.err
    assert lines[0].startswith(f"ringsim {command}: error: ")
    return lines[0]


# --- the counts every budget reads --------------------------------------------------------

@pytest.mark.parametrize("algorithm, options, collective_name", [
    ("ring", {}, "all-reduce"), ("ring", {"channels": 2}, "all-reduce"),
    ("naive", {}, "all-reduce"), ("tree", {"chunks": 3}, "all-reduce"),
    ("halving-doubling", {}, "all-reduce"), ("nvls", {"chunks": 2}, "all-reduce"),
    ("ring", {}, "all-gather"), ("ring", {}, "reduce-scatter"),
])
def test_the_counted_terms_are_the_terms_the_labels_name(algorithm, options, collective_name):
    # contributor_counts runs the plan on integers; the symbolic state runs it on tuples.
    c = collective(collective_name)
    plan = c.plan(6, algorithm, **options)
    state = c.initial_state(plan.gpus, plan.segments, plan.switches)
    held = c.holdings(plan.gpus, plan.segments)
    named = 0
    for step in plan.steps:
        for t in step.transfers():
            for gpu in (t.src, t.dst):
                for segment in sorted({t.first, t.last}):
                    named += len(state.held[gpu][segment])
        state.apply(step)
    run = sim_work.run_of(plan, 60, held)
    assert run.transfers == plan.transfer_count() and run.steps == len(plan)
    assert run.terms == named
    final = list(sim_work.contributor_counts(plan, held))[-1]
    assert final.tolist() == [[len(h) for h in row] for row in state.held]


# --- walk ---------------------------------------------------------------------------------

@pytest.mark.parametrize("argv, words", [
    (["-g", "128", "--channels", "64"],
     ["a walk of ring on 128 GPUs would take about", "2,080,768 transfers in 254 steps",
      "the limit is 15.00 s", "`ringsim compare --gpus 128 --elements 8192 --channels 64`"]),
    (["-g", "128", "--channels", "16"], ["520,192 transfers in 254 steps"]),
    (["-g", "128", "-a", "nccl-tree", "--chunks", "1024", "--gpus-per-node", "8"],
     ["a walk of nccl-tree on 128 GPUs", "in 1,051 steps", "--chunks 1024 --gpus-per-node 8"]),
    (["-g", "128", "-a", "double-tree", "--chunks", "1024"], ["a walk of double-tree on 128 GPUs"]),
    (["-g", "128", "--channels", "4", "--json"], ["130,048 transfers"]),
    (["-g", "128", "-a", "nccl-tree", "--chunks", "1024", "--time"],
     ["`ringsim compare --time --gpus 128"]),
])
def test_a_walk_past_its_budget_is_refused_in_one_line(capsys, argv, words):
    assert main(["walk", *argv]) == 2
    line = _one_line(capsys, "walk")
    for word in words:
        assert word in line, line


def test_the_walk_budget_counts_before_building_anything_large():
    # The audit's worst walks, estimated from the plan alone: past the limit, well past.
    c = collective("all-reduce")
    plan = c.plan(128, "ring", channels=64)
    work = walk_budget.estimate(plan, 8192, c.holdings(128, plan.segments))
    assert work.transfers == 2_080_768 and work.seconds > 5 * walk_budget.MAX_SECONDS
    # Printing --values and JSON Lines add to the same estimate.
    small = c.plan(8, "ring")
    plain = walk_budget.estimate(small, 100, c.holdings(8, 8))
    held = c.holdings(8, 8)
    assert walk_budget.estimate(small, 100, held, values=8 * 100 * 15).seconds > plain.seconds
    assert walk_budget.estimate(small, 100, held, as_json=True).seconds > plain.seconds


@pytest.mark.parametrize("algorithm, gpus, options", [
    ("ring", 128, {}), ("ring", 128, {"channels": 3}), ("bidirectional-ring", 128, {}),
    ("tree", 128, {"chunks": 256}), ("double-tree", 64, {"chunks": 512}), ("naive", 128, {}),
])
def test_walks_people_read_stay_under_the_budget(algorithm, gpus, options):
    c = collective("all-reduce")
    plan = c.plan(gpus, algorithm, **options)
    work = walk_budget.estimate(plan, max(8, plan.segments), c.holdings(gpus, plan.segments))
    assert work.seconds < walk_budget.MAX_SECONDS


def test_a_small_walk_still_prints_every_transfer(capsys):
    assert main(["walk", "-g", "8", "--channels", "2"]) == 0
    out = capsys.readouterr().out
    assert out.count(" sends ") == 2 * 7 * 8 * 2 and "Every GPU holds the sum: yes" in out


def test_a_hostile_nccl_log_of_64_rings_is_refused_at_once(tmp_path):
    rng = np.random.default_rng(0)
    lines = [f"h:1:1 [0] NCCL INFO Channel {c:02d}/64 : "
             + " ".join(map(str, rng.permutation(128))) for c in range(64)]
    log = tmp_path / "big64.log"
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    run = subprocess.run([sys.executable, "-m", "ringsim", "walk", "--nccl-log", str(log)],
                         capture_output=True, text=True, timeout=120, cwd=ROOT, check=False)
    assert run.returncode == 2 and run.stdout == "" and "Traceback" not in run.stderr
    line, = run.stderr.splitlines()
    assert line.startswith("ringsim walk: error: a walk of ring on 128 GPUs would take about")
    assert "2,080,768 transfers in 254 steps" in line


# --- figure -------------------------------------------------------------------------------

@pytest.mark.parametrize("argv, words", [
    (["a.gif", "-g", "16", "--channels", "8"],
     ["a .gif of 31 frames would take about", "2,048 segment buffers each", "3,840 transfers",
      "2,142 × 5,462 px each", "the limits are 2.0 GB and 15.00 s", "draw one step (--step K)",
      "--dimensions"]),
    (["b.gif", "-g", "16", "--channels", "32"],
     ["a .gif of 31 frames", "8,192 segment buffers each"]),
    (["a.html", "-a", "nvls", "-g", "64", "--chunks", "64"],
     ["an .html of 66 frames", "4,096 segment buffers each"]),
    (["a.pdf", "-g", "16", "-a", "double-tree", "--chunks", "64"], ["a .pdf of 72 frames"]),
    (["a.png", "-g", "16", "--channels", "32"],
     ["a .png of one frame", "6,204 × 41,644 px", "give --dimensions a smaller width"]),
])
def test_a_figure_past_its_budget_is_refused_before_drawing(capsys, tmp_path, argv, words):
    pytest.importorskip("drawsvg", reason="the figures extra (drawsvg) is not installed")
    argv = [str(tmp_path / argv[0]), *argv[1:]]
    assert main(["figure", *argv]) == 2
    line = _one_line(capsys, "figure")
    for word in words:
        assert word in line, line
    assert list(tmp_path.iterdir()) == []


def test_the_figure_budget_reads_the_pixels_asked_for():
    pytest.importorskip("drawsvg", reason="the figures extra (drawsvg) is not installed")
    from ringsim.figures.output import _check_work
    from ringsim.sim.simulation import Simulation
    c = collective("all-reduce")
    sim = Simulation(c.plan(16, "ring", channels=32), 512, collective=c)
    with pytest.raises(RingsimError, match="a .png of one frame"):
        _check_work(sim, ".png", 1, None)      # twice its natural size: 258 million pixels
    _check_work(sim, ".png", 1, (1000, 0))    # scaled to 1,000 px wide: drawn
    with pytest.raises(RingsimError, match="a .gif of 31 frames"):
        _check_work(sim, ".gif", None, None)
    _check_work(sim, ".svg", 5, None)


def test_small_figures_are_still_drawn(tmp_path, capsys):
    pytest.importorskip("drawsvg", reason="the figures extra (drawsvg) is not installed")
    target = tmp_path / "ring.gif"
    assert main(["figure", str(target)]) == 0
    assert target.stat().st_size > 1000 and "wrote" in capsys.readouterr().out


# --- lessons ------------------------------------------------------------------------------

FRONT = "---\ntitle: T\nalgorithm: {algorithm}\ngpus: {gpus}\nelements: {elements}\n---\n\n"


def _lesson(folder: Path, name: str, body: str, algorithm="ring", gpus=4, elements=8) -> None:
    (folder / name).write_text(FRONT.format(algorithm=algorithm, gpus=gpus, elements=elements)
                               + body, encoding="utf-8")


def test_each_lessons_own_scenario_is_charged_and_the_check_stops_in_one_line(tmp_path, monkeypatch,
                                                                               capsys):
    # Five lessons whose own runs each take most of the budget (made small here to keep the
    # test fast; the shipped limit is budget.CHECK_BUDGET_MS): the second one stops the check.
    plan = collective("all-reduce").plan(32, "bidirectional-ring")
    own = lesson_budget.own_simulation_cost(plan, 64)
    assert own > 20
    monkeypatch.setattr(lesson_budget, "CHECK_BUDGET_MS", own * 3 // 2)
    for k in range(1, 6):
        _lesson(tmp_path, f"{k:02d}-x.md", "# X\n\n{{banner}} {{sent.list}}\n",
                algorithm="bidirectional-ring", gpus=32, elements=64)
    lessons, problems = check_lessons(tmp_path)
    assert len(lessons) == 1 and len(problems) == 1
    assert problems[0].path.name == "02-x.md"
    assert "the lesson's own scenario (a simulation of 32 GPUs, 64 elements each) would pass" \
           in problems[0].reason
    assert problems[0].reason.endswith("the check stops here, 3 lesson files after it unchecked")
    assert main(["lesson", "--check", str(tmp_path)]) == 2
    captured = capsys.readouterr()
    assert len(captured.err.splitlines()) == 1 and "Traceback" not in captured.err


def test_the_audits_folder_of_large_lessons_fits_one_lesson_at_most():
    # G = 128 on the bidirectional ring to step 200, N = 100,000 (about 3 s in a real check):
    # one such run fits the shared budget, a third never starts (the audit's folder of 40
    # lessons stops at its third file).
    plan = collective("all-reduce").plan(128, "bidirectional-ring")
    cost = lesson_budget.own_simulation_cost(plan, 100_000, 200)
    assert cost < lesson_budget.CHECK_BUDGET_MS < 3 * cost


def test_thousands_of_cheap_placeholders_are_bounded_too(tmp_path, monkeypatch):
    monkeypatch.setattr(lesson_budget, "CHECK_BUDGET_MS", 100)
    _lesson(tmp_path, "01-x.md", "# X\n\n" + "{{G}} {{formula.total}}\n" * 200)
    lessons, problems = check_lessons(tmp_path)
    assert lessons == [] and len(problems) == 1
    assert "would pass the lesson check's work budget" in problems[0].reason
    assert problems[0].reason.endswith("; the check stops here")
    assert 10 < problems[0].line < 100


def test_going_back_in_the_own_run_is_charged_as_a_replay(tmp_path):
    from ringsim.lessons.placeholders import Context, parse
    from ringsim.lessons.model import Scenario
    spent = []

    class Recording(lesson_budget.Budget):
        def spend(self, cost, what, **kw):
            spent.append((cost, what))
            super().spend(cost, what, **kw)

    ctx = Context(Scenario("ring", 16, 64, ()), Recording())
    ctx.evaluate(parse("banner at=20"), None)
    forward = [c for c, w in spent if "own scenario" in w]
    ctx.evaluate(parse("banner at=2"), None)
    back = [c for c, w in spent if "own scenario" in w][len(forward):]
    assert forward and back and 0 < back[0] < forward[0]


def test_a_later_steps_sentences_are_charged_as_far_as_they_run(tmp_path):
    from ringsim.lessons.placeholders import Context, parse
    from ringsim.lessons.model import Scenario
    budget = lesson_budget.Budget()
    ctx = Context(Scenario("ring", 16, 64, ()), budget)
    ctx.evaluate(parse("sentences step=30"), 2)  # at stop 2: runs to step 30 and back
    plan = ctx.plan
    assert budget.total - budget.left >= lesson_budget.own_simulation_cost(plan, 64, 30)


def test_a_folder_of_more_than_100_lessons_is_refused_in_one_line(tmp_path, capsys):
    for k in range(1, lesson_budget.MAX_LESSON_FILES + 2):
        _lesson(tmp_path, f"{k:03d}-x.md", "# X\n")
    for load in (check_lessons, load_lessons, outline_lessons):
        with pytest.raises(RingsimError, match="101 lesson files; a course has at most 100"):
            load(tmp_path)
    assert main(["lesson", "--check", str(tmp_path)]) == 2
    assert "101 lesson files" in _one_line(capsys, "lesson")
    assert main(["lesson", "--lessons-dir", str(tmp_path)]) == 2
    assert "101 lesson files" in _one_line(capsys, "lesson")
    (tmp_path / "101-x.md").unlink()
    assert len(outline_lessons(tmp_path)) == 100


def test_the_shipped_course_still_checks_within_its_budget():
    lessons, problems = check_lessons()
    assert problems == [] and len(lessons) >= 17


def test_letters_of_a_million_gpus_make_only_the_letters_shown(tmp_path):
    _lesson(tmp_path, "01-x.md", "# X\n\n{{letters gpus=1000000}}\n")
    lessons, problems = check_lessons(tmp_path)
    assert problems == [] and "a + b + c + … + g1000000" in lessons[0].sections()[0].text
