"""The shipped course: every lesson loads, runs to its end, and states the engine's numbers."""

from __future__ import annotations

import io
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from ringsim import closed_form
from ringsim.lessons import Question, default_directory, load_lessons
from ringsim.lessons.runner import listing, run_lesson
from ringsim.lessons.text import plain, wrap

REPO = Path(__file__).resolve().parents[2]

SEED_ITERATION_1 = [
    "GPU1 sends a₁ to GPU2, where it is added to b₁",
    "GPU2 sends b₂ to GPU3, where it is added to c₂",
    "GPU3 sends c₃ to GPU4, where it is added to d₃",
    "GPU4 sends d₄ to GPU1, where it is added to a₄",
]
SEED_ITERATION_2 = [
    "GPU1 sends (d₄+a₄) to GPU2, where it is added to b₄",
    "GPU2 sends (a₁+b₁) to GPU3, where it is added to c₁",
    "GPU3 sends (b₂+c₂) to GPU4, where it is added to d₂",
    "GPU4 sends (c₃+d₃) to GPU1, where it is added to a₃",
]
TITLES = ["Why GPUs must talk", "The interview", "Naive all-to-all", "Why cut the gradient",
          "Ring, phase 1", "Ring, phase 2", "Same total, different load",
          "Four strategies for multi-GPU training", "Beyond the ring", "Latency or bandwidth?",
          "The tree, step by step", "Halving-doubling, step by step", "The last bits",
          "One slow link", "Overlap", "ZeRO and FSDP", "In-network reduction",
          "Protocols: why small messages are slow", "What you can do now"]


@pytest.fixture(scope="module")
def lessons():
    return load_lessons()


def by_number(lessons, number):
    return next(l for l in lessons if l.number == number)


def test_the_shipped_course_is_the_default(lessons):
    # From a checkout (editable install) it is <repo>/lessons; installed, ringsim/_lessons,
    # which must hold exactly the checkout's files.
    folder = default_directory()
    checkout = sorted((REPO / "lessons").glob("*.md"))
    assert [p.name for p in sorted(folder.glob("*.md"))] == [p.name for p in checkout]
    assert all((folder / p.name).read_bytes() == p.read_bytes() for p in checkout)
    assert [l.number for l in lessons] == list(range(1, 20))
    for lesson, title in zip(lessons, TITLES):
        assert lesson.title.startswith(title)
        assert lesson.path.parent == folder


def test_every_lesson_runs_to_its_end_with_every_placeholder_filled(lessons):
    for lesson in lessons:
        out = io.StringIO()
        assert run_lesson(lesson, out) == 0
        text = out.getvalue()
        assert "{{" not in text and "}}" not in text, lesson.path
        assert text.startswith(f"Lesson {lesson.number} · {lesson.title}\n")
        assert text.rstrip().endswith(f"End of lesson {lesson.number}.")
        for section in lesson.sections():
            assert plain(section.text) in text
        assert len(lesson.questions) >= 1
        flat = " ".join(text.split())
        for question in lesson.questions:
            assert " ".join(f"Question: {question.prompt} Answer: {question.answer} Why: ".split()) in flat


def test_stops_are_positions_of_the_lessons_own_run(lessons):
    for lesson in lessons:
        steps = len(lesson.scenario.plan())
        stops = [s.stop for s in lesson.sections() if s.stop is not None]
        assert stops == lesson.stops
        assert all(0 <= s <= steps for s in stops)
    assert by_number(lessons, 5).stops == [0, 1, 2, 3, 3, 3]
    assert by_number(lessons, 6).stops == [3, 4, 6]


def test_lesson_5_holds_the_seeds_sentences_at_their_stops(lessons):
    sections = first_at_each_stop(by_number(lessons, 5))
    for sentence in SEED_ITERATION_1:
        assert f"- {sentence}\n" in sections[1].text + "\n"
    for sentence in SEED_ITERATION_2:
        assert f"- {sentence}\n" in sections[2].text + "\n"
    # Iteration 3 ends phase 1 with each GPU holding one complete segment.
    assert "GPU1 holds\na₂+b₂+c₂+d₂ and GPU4 holds a₁+b₁+c₁+d₁" in sections[3].text


def test_lesson_6_is_the_all_gather_of_the_same_ring(lessons):
    text = "\n".join(s.text for s in by_number(lessons, 6).sections())
    assert "GPU1 sends (a₂+b₂+c₂+d₂) to GPU2, where it replaces b₂" in text
    assert "GPU4 sends (a₃+b₃+c₃+d₃) to GPU1, where it replaces (c₃+d₃+a₃)" in text
    assert "2·(G−1)·N = 48" in text


def first_at_each_stop(lesson) -> dict:
    sections = {}
    for section in lesson.sections():
        sections.setdefault(section.stop, section)
    return sections


def _answers(lesson) -> dict[str, str]:
    return {q.prompt: q.answer for q in lesson.questions}


def test_answers_match_the_engine(lessons):
    # Independent references: the seed's formulas and its labels, not the plan code.
    answers2 = _answers(by_number(lessons, 2))
    assert answers2["Predict: in step 1, how many elements will GPU1 receive in all (N = 8)?"] == \
        str(3 * 8)                                             # (G−1)·N
    assert answers2["Apply it: with 16 GPUs and the same N, how many elements does the server receive?"] == \
        str(15 * 8)
    answers3 = _answers(by_number(lessons, 3))
    assert answers3["Apply it: with 8 GPUs and N = 8, how many elements move in all?"] == str(8 * 7 * 8)
    answers5 = _answers(by_number(lessons, 5))
    assert answers5["Predict: after iteration 1, what will GPU1's segment 4 hold?"] == "d₄+a₄"
    assert answers5["Predict: iteration 2 forwards the partial sums just built. What will GPU3 hold "
                    "in segment 1 after it?"] == "a₁+b₁+c₁"
    assert answers5["Predict: after the last iteration of phase 1, which complete sum will GPU1 "
                    "hold?"] == "a₂+b₂+c₂+d₂"
    assert answers5["Apply it: with G = 8 and N = 40, how many elements does each GPU send in "
                    "phase 1?"] == str(7 * 5)                  # (G−1)·N/G
    answers7 = _answers(by_number(lessons, 7))
    assert answers7["Apply it: at 1,000 GPUs and a model of 7 billion parameters, how many times more does "
                    "the server carry than one "
                    "ring GPU?"] == "500"
    assert answers7["Predict: at G = 4, N = 8, how many elements does the server (GPU1) send plus "
                    "receive?"] == "48"
    answers9 = _answers(by_number(lessons, 9))
    assert answers9["Predict: how many steps, each paying α, does the ring need at 1,000 GPUs?"] == "1,998"
    assert answers9["Predict: how many steps does halving-doubling take at G = 1,000, not a power of "
                    "two?"] == str(2 * 9 + 2)            # MPICH: 2·⌊lg G⌋ + fold in + hand back
    answers10 = _answers(by_number(lessons, 10))
    # Flat, α = 5 µs, 100 GB/s, G = 64: a few α beat everything at 1 KiB (lg 64 = 6 steps, against
    # the ring's 126); at 1 GiB only bytes count and halving-doubling sends the ring's 2·(G−1)/G·S
    # in 12 steps (Thakur et al. 2005).
    assert answers10["64 GPUs, 1 KiB per GPU (256 float32): which all-reduce is fastest?"] == \
        "recursive-doubling"
    assert answers10["64 GPUs, 1 GiB per GPU: which all-reduce is fastest?"] == "halving-doubling"
    # Hierarchical on 8 nodes of 8: 2·(8−1) steps inside + 2·(8−1) across = 28.
    assert answers10[next(q for q in answers10 if q.startswith("Now dgx-h100"))] == "28"
    answers11 = _answers(by_number(lessons, 11))
    # NCCL's binary tree of 1,000 GPUs, unpipelined: 10 levels up, 10 down; an inner node with
    # two children sends N to its parent and N to each child: 3·N, at 8 GPUs of 16 elements 48.
    assert answers11[next(q for q in answers11 if q.startswith("The board has 4 GPUs. On 1,000 "
                                                                "GPUs the ring takes 1,998"))] == "20"
    assert answers11[next(q for q in answers11 if q.startswith("A GPU with two children"))] == "48"
    answers12 = _answers(by_number(lessons, 12))
    assert answers12["Predict: how many steps at G = 24, which is not a power of two?"] == str(2 * 4 + 2)
    assert answers12["At G = 8 and N = 16, how many elements does each GPU send in all?"] == \
        str(2 * 7 * 16 // 8)
    answers13 = _answers(by_number(lessons, 13))
    assert answers13[next(q for q in answers13 if q.startswith("At G = 64, the ring"))] == "63"


def test_a_wrong_answer_gets_the_why(lessons):
    questions = {q.answer: q for q in by_number(lessons, 2).questions}
    assert questions["120"].explain() == ("For Single-GPU master, what the busiest GPU receives is "
                                          "(G−1)·N; with G = 16 and N = 8 that is (16−1)·8 = 120.")
    held = by_number(lessons, 5).questions[0]
    assert held.explain().startswith("GPU1's segment 4 started as a₄; each reduce step adds")
    assert held.explain().endswith("Ring all-reduce, G = 4, N = 8, after step 1 of 6: it holds 2 of 4 "
                                   "terms, d₄+a₄.")
    sent = [q for q in by_number(lessons, 6).questions if "received over both" in q.prompt][0]
    assert sent.explain() == ("The ledger counts what GPU4 received (Ring all-reduce, G = 4, N = 8, "
                              "at the end): in each of steps 1 to 6, received 2 from GPU3. In all, "
                              "6 × 2 = 12.")


def test_the_why_of_a_count_names_who_sent_what(lessons):
    # "24 (step 1) = 24" explained nothing: the reason names the senders and the sizes.
    first, load = [q for q in by_number(lessons, 2).questions if q.answer in ("24", "48")]
    assert first.explain() == ("The ledger counts what GPU1 received (Single-GPU master on GPU1, "
                               "G = 4, N = 8, after step 1 of 2): in step 1, received 8 from each of "
                               "GPU2, GPU3 and GPU4 (3 × 8 = 24).")
    assert load.explain().endswith("in step 1, received 8 from each of GPU2, GPU3 and GPU4 (3 × 8 = "
                                   "24); in step 2, sent 8 to each of GPU2, GPU3 and GPU4 (3 × 8 = "
                                   "24). In all, 24 + 24 = 48.")
    for lesson in lessons:
        for question in lesson.questions:
            assert "(step 1)" not in question.explain(), (lesson.number, question.explain())


@pytest.mark.parametrize("reply", ["5", "5x", "5X", "5×", "5 ×", "5.0", "5 times", "5 times longer",
                                   " 5x. ", "5-fold"])
def test_a_ratio_is_accepted_as_people_write_it(lessons, reply):
    question = next(q for q in by_number(lessons, 14).questions if "fifth of its speed" in q.prompt)
    assert question.answer == "5"
    assert question.check(reply.replace("-", ""))
    assert not question.check(reply.replace("5", "4"))


def test_a_ratio_word_does_not_make_other_answers_match():
    from ringsim.lessons.model import Question
    assert Question("which sum?", "a₁+b₁").check("a1 + b1")
    assert not Question("which sum?", "a₁+b₁").check("a1x")
    assert not Question("how many?", "5").check("x")
    assert Question("how long?", "50 MiB").check("50")
    # A number with the word for what it counts is that number; a decimal prefix scales it,
    # right where the answer rounds to the reply's digits (the lessons print 1.9 GB).
    assert Question("q", "35").check("35 elements") and Question("q", "35").check("35 each")
    assert not Question("q", "35").check("36 elements") and not Question("q", "35").check("35 GB")
    assert Question("q", "1,875,000,000").check("1,875,000,000 bytes")
    assert Question("q", "1,875,000,000").check("1.9 GB") and Question("q", "1,875,000,000").check("1.875 GB")
    assert not Question("q", "1,875,000,000").check("2 GB")  # one digit says too little
    assert not Question("q", "1,875,000,000").check("1.8 GB")


def test_lesson_1_uses_the_training_demo(lessons):
    from ringsim.training.train import train
    lesson = by_number(lessons, 1)
    text = "\n".join(s.text for s in lesson.sections())
    run = train(4, "ring", 3)
    assert "Data-parallel logistic regression · 4 GPUs · Ring all-reduce" in text
    assert "Data-parallel logistic regression · 4 GPUs · no sync" in text
    answers = _answers(lesson)
    assert answers["Predict: the replicas sum their gradients before every update. After 3 epochs, "
                   "what is the largest difference between two replicas' weights?"] == "0"
    assert run.elements_moved == 48 * 2 * 3 * 9               # 48 syncs × 2·(G−1)·N, N = 9
    assert answers["Apply it: the model has 9 parameters and one sync moves 2·(G−1)·N elements with "
                   "the ring. How many elements would one sync move with 8 GPUs?"] == str(2 * 7 * 9)


def test_numbers_follow_the_scenario_not_the_text():
    """Lesson 5 at G = 5: every figure and sentence changes with it."""
    lesson = by_number(load_lessons(gpus=5, elements=10), 5)
    assert lesson.stops == [0, 1, 2, 4, 4, 4]
    sections = first_at_each_stop(lesson)
    assert "- GPU5 sends e₅ to GPU1, where it is added to a₅" in sections[1].text
    assert "So far 10 elements have moved, 2 sent by each GPU." in sections[1].text
    assert "Iteration 3 repeats the pattern, one more term per sum." in sections[2].text
    assert _answers(lesson)["Predict: after iteration 1, what will GPU1's segment 5 hold?"] == "e₅+a₅"


def test_segment_sizes_are_the_lessons_own_algorithms():
    """The tree keeps its whole gradient as one segment: N elements, not the ring's N/G."""
    for elements in (8, 12):
        sections = by_number(load_lessons(elements=elements), 11).sections()
        text = next(s.text for s in sections if s.stop == 0)  # read beside the start's board
        assert f"its whole gradient ({elements} elements)" in " ".join(text.split())


def test_lesson_9_points_to_where_ringsim_models_in_network_reduction(lessons):
    text = " ".join("\n".join(s.text for s in by_number(lessons, 9).sections()).split())
    assert "does not model" not in text
    assert "`ringsim walk -a nvls`, lesson 17" in text and "`ringsim predict` prices NVLS" in text
    assert by_number(lessons, 17).scenario.algorithm == "nvls"


def test_lesson_17_gives_c_before_asking_for_nvls_steps(lessons):
    from ringsim.lessons.costs import TREE_CHUNK_BYTES, TREE_MAX_CHUNKS
    chunks = min(TREE_MAX_CHUNKS, -(-(1 << 30) // TREE_CHUNK_BYTES))
    (question,) = [q for q in by_number(lessons, 17).questions if "How many steps will NVLS" in q.prompt]
    assert f"cut into C = {chunks} chunks" in question.prompt
    assert question.answer == str(closed_form("nvls", 8, 1 << 28, chunks=chunks).steps.value) == "65"


def test_a_number_that_starts_a_line_does_not_start_a_list_in_plain_text(lessons):
    # "… where the ring takes\n6. It moved …": a placeholder's value, not an ordered list.
    text = ("the ring takes\n6. It moved 48 elements in all, as the ring does, but not evenly: "
            "its busiest GPU sent 24, the leaves N = 8 each.")
    assert plain(text) == wrap(text)
    assert plain("Steps:\n\n1. one\n2. two") == "Steps:\n\n1. one\n2. two"
    words = "one, two, three, four, five, six, seven, eight, nine, ten, eleven, twelve, thirteen"
    assert plain(f"Steps:\n1. {words}").endswith("\n   thirteen")  # "1." may, as in CommonMark
    out = io.StringIO()
    run_lesson(by_number(lessons, 11), out)
    assert "\n   " not in out.getvalue().split("The whole run")[1].split("Pipelining")[0]


def test_the_why_of_iterations_says_what_is_counted(lessons):
    (question,) = [q for q in by_number(lessons, 13).questions if "additions in a row" in q.prompt]
    assert question.answer == "63"
    assert question.explain() == ("Reduce-scatter of Ring all-reduce at G = 64 runs 63 iterations one "
                                  "after another (the engine's plan); in each, the copy that arrives "
                                  "is added to a partial sum.")


def test_question_check_accepts_the_answer_in_the_learners_spelling():
    assert Question("q", "1,998").check(" 1998 ")
    assert Question("q", "GPU1").check("gpu1") and Question("q", "GPU1").check("1")
    assert Question("q", "a₁+b₁").check("a₁ + b₁")
    assert Question("q", "d₄+a₄").check("a4+d4") and Question("q", "d₄+a₄").check("(d₄+a₄)")
    assert not Question("q", "d₄+a₄").check("a₄+b₄")
    assert Question("q", "0").check("0.0")
    assert not Question("q", "12").check("13")
    assert not Question("q", "GPU1").check("GPU2")


def test_interactive_run_waits_asks_and_quits(lessons):
    lesson = by_number(lessons, 5)
    # First question right, Enter, second question wrong, then input runs out.
    replies = io.StringIO("\na4 + d4\n\nwrong\n")  # Enter after the objectives first
    out = io.StringIO()
    assert run_lesson(lesson, out, replies) == 0
    text = out.getvalue()
    assert "Right: d₄+a₄." in text
    assert "Not quite: the engine says a₁+b₁+c₁." in text
    assert "Why: GPU3's segment 1 started as c₁" in text
    # Input ran out: the rest prints straight through with the answer shown.
    assert "Answer: a₂+b₂+c₂+d₂" in text
    quit_out = io.StringIO()
    run_lesson(lesson, quit_out, io.StringIO("\n\nq\n"))  # past the objectives and a question
    assert "Stopped." in quit_out.getvalue() and "Iteration 1" not in quit_out.getvalue()


def test_terminal_shows_the_simulator_state_at_each_stop(lessons):
    out = io.StringIO()
    run_lesson(by_number(lessons, 5), out)
    text = out.getvalue()
    assert "─── Reduce-scatter · iteration 1 of 3 (after step 1 of 6) ───" in text
    assert re.search(r"GPU1  a₁ +│ a₂ +│ a₃ +│ d₄\+a₄\n", text)


def test_listing_names_every_lesson(lessons):
    lines = listing(lessons)
    assert len(lines) == 19
    assert lines[4].split()[0] == "5" and "ring, G=4, N=8, 7 parts, 4 questions" in lines[4]
    # Lessons without stops still have parts and questions: the list never says "0 stops".
    assert "ring, G=4, N=8, 7 parts, 4 questions" in lines[13]
    assert not any(" 0 " in line for line in lines)


def test_the_quick_listing_counts_what_loading_counts(lessons):
    from ringsim.lessons import outline_lessons
    outlines = outline_lessons()
    assert [(o.number, o.title, o.parts, o.question_count) for o in outlines] == \
           [(l.number, l.title, l.parts, l.question_count) for l in lessons]
    assert listing(outlines) == listing(lessons)


def test_a_board_that_has_not_changed_is_printed_once(lessons):
    # Lesson 5 stays at its last stop for three sections: one board, then the text goes on.
    out = io.StringIO()
    run_lesson(by_number(lessons, 5), out)
    text = out.getvalue()
    assert text.count("─── Reduce-scatter · iteration 3 of 3 (after step 3 of 6) ───") == 1
    assert text.index("What each GPU sent") > text.index("iteration 3 of 3") and "Recap" in text
    for lesson in lessons:
        out = io.StringIO()
        run_lesson(lesson, out)
        boards = [line for line in out.getvalue().splitlines() if line.startswith("─── ")]
        assert all(a != b for a, b in zip(boards, boards[1:])), (lesson.number, boards)


def test_a_teachers_folder_can_hold_other_files(tmp_path):
    shutil.copy(REPO / "lessons" / "03-naive-all-to-all.md", tmp_path / "7-naive.md")
    (tmp_path / "README.md").write_text("notes for the teacher\n")
    lessons = load_lessons(tmp_path)
    assert [(l.number, l.title) for l in lessons] == [(7, "Naive all-to-all")]
    assert np.all(lessons[0].scenario.simulation().values() >= 0)


def test_the_teachers_reference_names_every_placeholder():
    from ringsim.lessons.placeholders import VOCABULARY
    doc = (REPO / "docs" / "lessons.md").read_text(encoding="utf-8")
    for name in VOCABULARY:
        spelled = name.replace("[][]", "[k][j]").replace("[]", "[k]")
        if name.startswith("formula."):
            spelled = name.split(".")[1]
        assert f"`{spelled}" in doc or spelled in doc, name


def test_the_example_in_the_teachers_reference_loads(tmp_path):
    doc = (REPO / "docs" / "lessons.md").read_text(encoding="utf-8")
    example = doc.split("~~~markdown\n", 1)[1].split("\n~~~", 1)[0]
    (tmp_path / "01-example.md").write_text(example + "\n", encoding="utf-8")
    (lesson,) = load_lessons(tmp_path)
    first, second, third = lesson.sections()
    assert (first.stop, second.stop, third.stop) == (0, 1, None)
    assert "splits its gradient into 4 segments of 2 elements" in first.text
    assert "So far 8 elements have moved." in second.text
    assert second.questions[0].answer == "2"


def test_a_wide_scenario_prints_counts_instead_of_a_grid(tmp_path):
    (tmp_path / "01-wide.md").write_text("---\ntitle: Wide\ngpus: 10\nelements: 10\nstops: 9\n---\n"
                                         "<!-- stop 9 -->\n{{held[1][3]}}\n", encoding="utf-8")
    out = io.StringIO()
    run_lesson(load_lessons(tmp_path)[0], out)
    # After reduce-scatter each GPU holds exactly one complete segment.
    assert "  complete segments per GPU (of 10): " + ", ".join(["1"] * 10) + "\n" in out.getvalue()


def test_the_machines_links_are_read_off_the_cost_model_never_typed(lessons):
    """A link's α or bandwidth in a lesson's words is a placeholder: were a preset's numbers to
    change, the prose would change with them."""
    from ringsim.cost.model import CostModel
    typed = re.compile(r"\d(?:[\d.,]*\d)? ?GB/s|α = (?!0\b)\d")  # a bandwidth, or an α that is not 0
    for path in sorted(default_directory().glob("*.md")):
        prose = re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.DOTALL)
        prose = re.sub(r"\{\{.*?\}\}", "", prose, flags=re.DOTALL)
        assert typed.findall(prose) == [], path.name
    text = " ".join(s.text for s in by_number(lessons, 10).sections())
    inside, across = CostModel.of("dgx-h100").topology.levels.values()
    assert (f"inside a node α = {inside.alpha * 1e6:g} µs, {inside.bandwidth / 1e9:g} GB/s; "
            f"across nodes α = {across.alpha * 1e6:g} µs, {across.bandwidth / 1e9:g} GB/s") in " ".join(text.split())
    assert f"passes the NIC's {across.bandwidth / 1e9:g} GB/s" in " ".join(text.split())
    text = " ".join(s.text for s in by_number(lessons, 17).sections())
    assert "on links with α = 0.5 µs, 450 GB/s per direction" in " ".join(text.split())
