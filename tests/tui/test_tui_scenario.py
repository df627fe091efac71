"""The TUI's scenario from the command line is the one a lesson's front matter builds."""

from ringsim.cli import build_parser
from ringsim.cli._view_args import make_app
from ringsim.lessons import load_lessons
from ringsim.sim.scenario import Scenario
from ringsim.tui.widgets.lesson_panel import LessonPanel

SIZE = (160, 50)
MASTER_LESSON = ("---\ntitle: The master\nalgorithm: master\ngpus: 4\nelements: 8\nmaster: 2\n"
                 "stops: 1\n---\n<!-- stop 1 -->\n{{sentences}}\n")


def tui_app(*words):
    return make_app(build_parser().parse_args(["tui", *words]))


def master_lesson(tmp_path):
    (tmp_path / "01-master.md").write_text(MASTER_LESSON, encoding="utf-8")
    (lesson,) = load_lessons(tmp_path)
    return lesson


def test_tui_master_scenario_equals_the_lessons(tmp_path):
    lesson = master_lesson(tmp_path)
    assert tui_app("-a", "master", "--master", "2").state.scenario == lesson.scenario
    # Without --master the TUI's plan names GPU1, as a lesson without 'master:' leaves it.
    assert tui_app("-a", "master").state.scenario == Scenario("master", 4, 8)
    assert tui_app("-a", "master", "--master", "3").state.scenario != lesson.scenario


async def test_opening_the_lesson_of_the_same_scenario_jumps_to_its_stop(tmp_path):
    lesson = master_lesson(tmp_path)
    app = tui_app("-a", "master", "--master", "2")
    async with app.run_test(size=SIZE) as pilot:
        sim = app.sim
        section = lesson.sections()[0]
        app.post_message(LessonPanel.SectionShown(lesson, section))
        await pilot.pause()
        assert app.sim is sim and app.sim.position == section.stop == 1
