"""Malformed lesson files are refused with the file, the line and the reason."""

from __future__ import annotations


import pytest

from ringsim import RingsimError
from ringsim.algorithms import ALGORITHMS
from ringsim.cost.nccl_tuner import versions_text
from ringsim.lessons import check_lessons, load_lessons

GOOD_FRONT = "---\ntitle: T\nalgorithm: ring\ngpus: 4\nelements: 8\nstops: 1\n---\n"
GOOD_BODY = "<!-- stop 1 -->\n{{sentences}}\n"

CASES = [
    # (file text, line, reason)
    ("Just text\n", 1, "a lesson must start with front matter: a '---' line, 'title: …' and so on, '---'"),
    ("---\ntitle: T\ngpus: 4\n", 1, "the front matter is not closed: add a '---' line after it"),
    ("---\ntitle: T\ngpus 4\n---\n", 3, "front matter lines are 'key: value', got 'gpus 4'"),
    ("---\ntitle: T\ncolour: red\n---\n", 3, "unknown front matter key 'colour'; known keys: "
                                            "title, algorithm, gpus, elements, master, chunks, channels, "
                                            "ring_order, nodes, gpus_per_node, tree_parents, stops"),
    ("---\ngpus: 4\nelements: 8\nstops:\n---\n", 1, "the front matter needs 'title:'"),
    ("---\ntitle: T\ngpus: four\nelements: 8\nstops:\n---\n", 3, "gpus must be a whole number, got 'four'"),
    ("---\ntitle: T\nalgorithm: bogus\ngpus: 4\nelements: 8\nstops:\n---\n", 3,
     f"unknown algorithm 'bogus'; choose one of: {', '.join(ALGORITHMS)}"),
    # scenario out of range
    ("---\ntitle: T\ngpus: 0\nelements: 8\nstops:\n---\n", 3, "the number of GPUs must be from 1 to 1,000,000, got 0"),
    ("---\ntitle: T\ngpus: 500\nelements: 8\nstops:\n---\n", 3,
     "a lesson's scenario runs beside the text, so gpus must be from 1 to 128, got 500 "
     "(placeholders may name larger scenarios: formula.total gpus=1000)"),
    ("---\ntitle: T\ngpus: 4\nelements: -1\nstops:\n---\n", 4,
     "the number of elements per GPU must be at least 0, got -1"),
    ("---\ntitle: T\nalgorithm: master\nmaster: 5\ngpus: 4\nelements: 8\nstops:\n---\n", 4,
     "'master:' must be from 1 to 4, got 5"),
    # the plan's words name the lesson's keys, not the command line's flags
    ("---\ntitle: T\nalgorithm: tree\nchunks: 0\ngpus: 4\nelements: 8\nstops:\n---\n", 4,
     "'chunks:' must be a whole number from 1 to 1,024, got 0"),
    ("---\ntitle: T\ngpus: 4\nelements: 8\nstops: 7\n---\n<!-- stop 7 -->\n", 5,
     "stop 7 is outside the run: this scenario has 6 steps, so stops are 0..6"),
    # with no stops listed, a marker beyond the run is refused at its own line
    ("---\ntitle: T\ngpus: 4\nelements: 8\n---\nText\n<!-- stop 9 -->\n", 7,
     "stop 9 is outside the run: this scenario has 6 steps, so stops are 0..6"),
    ("---\ntitle: T\ngpus: 4\nelements: 8\nstops: 1, x\n---\n", 5,
     "stops must be whole numbers (steps done), got 'x'"),
    # markers
    (GOOD_FRONT + "<!-- stop 2 -->\n", 8, "this marker says stop 2 but the front matter's next stop is 1"),
    (GOOD_FRONT + "text\n", 6, "stop 1 has no '<!-- stop 1 -->' marker in the text"),
    (GOOD_FRONT + GOOD_BODY + "<!-- stop 3 -->\n", 10, "stop 3 is not listed in the front matter's stops"),
    (GOOD_FRONT + "<!-- stop one -->\n", 8, "a stop marker is '<!-- stop N -->' with N the steps done "
                                            "(a whole number or an expression in G and N), "
                                            "got '<!-- stop one -->'"),
    # placeholders
    (GOOD_FRONT + GOOD_BODY + "Moved {{ledger.totl}}.\n", 10,
     "{{ledger.totl}}: unknown placeholder 'ledger.totl'; see docs/lessons.md for the vocabulary"),
    (GOOD_FRONT + GOOD_BODY + "GPU9 sent {{sent[9]}}.\n", 10,
     "{{sent[9]}}: GPU9 does not exist: the scenario has GPU1..GPU4"),
    (GOOD_FRONT + GOOD_BODY + "{{ledger.total colour=red}}\n", 10,
     "{{ledger.total colour=red}}: 'ledger.total' takes no option 'colour' "
     "(allowed: algorithm, gpus, elements, master, chunks, channels, ring_order, nodes, "
     "gpus_per_node, tree_parents, at)"),
    (GOOD_FRONT + GOOD_BODY + "{{ledger.total at=9}}\n", 10,
     "{{ledger.total at=9}}: at=9 is outside the run (0..6 steps)"),
    (GOOD_FRONT + GOOD_BODY + "{{formula.total gpus=0}}\n", 10,
     "{{formula.total gpus=0}}: the number of GPUs must be from 1 to 1,000,000, got 0"),
    (GOOD_FRONT + GOOD_BODY + "{{ledger.total gpus=5000}}\n", 10,
     "{{ledger.total gpus=5000}}: ledger figures of another scenario need at most 1,024 GPUs "
     "(got 5,000); use formula.* for larger ones"),
    (GOOD_FRONT + GOOD_BODY + "Moved {{ledger.total\n", 10, "a placeholder is not closed with '}}'"),
    (GOOD_FRONT + GOOD_BODY + "{{}}\n", 10, "{{}}: empty placeholder '{{}}'"),
    (GOOD_FRONT + GOOD_BODY + "{{nccl.time gpus=16 proto=Simpl}}\n", 10,
     "{{nccl.time gpus=16 proto=Simpl}}: proto: unknown protocol 'Simpl'; valid: LL, LL128, Simple"),
    (GOOD_FRONT + GOOD_BODY + "{{nccl.time algo=^Rings}}\n", 10,
     "{{nccl.time algo=^Rings}}: algo: unknown algorithm 'Rings'; valid: Tree, Ring, "
     "CollNetDirect, CollNetChain, NVLS, NVLSTree, PAT"),
    (GOOD_FRONT + GOOD_BODY + "{{nccl.measured system=[red]x}}\n", 10,
     "{{nccl.measured system=[red]x}}: unknown published system '[red]x' "
     "(ringsim/studies/published/measurements.toml)"),
    (GOOD_FRONT + GOOD_BODY + "{{nccl.time nccl=2.1}}\n", 10,
     "{{nccl.time nccl=2.1}}: ringsim has the tuning tables of NCCL " + versions_text()
     + ", not '2.1'"),
    # questions
    (GOOD_FRONT + GOOD_BODY + "```question\nHow many?\nanswer: 12\n```\n", 12,
     "answer '12' is typed by hand: write an engine expression such as sent[3] or ledger.total"),
    (GOOD_FRONT + GOOD_BODY + "```question\nHow many?\n```\n", 10,
     "the question has no 'answer: <expression>' line (an engine expression such as sent[3])"),
    (GOOD_FRONT + GOOD_BODY + "```question\nHow many?\nanswer: sent[7]\n```\n", 12,
     "answer 'sent[7]': GPU7 does not exist: the scenario has GPU1..GPU4"),
    (GOOD_FRONT + GOOD_BODY + "```question\nHow many?\nanswer: sent[1]\n", 10,
     "the question block is not closed with ```"),
]


@pytest.mark.parametrize("text, line, reason", CASES, ids=[c[2][:40] for c in CASES])
def test_malformed_file_is_refused_with_file_line_and_reason(tmp_path, text, line, reason):
    path = tmp_path / "01-lesson.md"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(RingsimError) as info:
        load_lessons(tmp_path)
    assert str(info.value) == f"{path}:{line}: {reason}"


def test_the_good_template_loads(tmp_path):
    (tmp_path / "01-lesson.md").write_text(GOOD_FRONT + GOOD_BODY, encoding="utf-8")
    (lesson,) = load_lessons(tmp_path)
    assert lesson.sections()[0].text.splitlines()[0] == "- GPU1 sends a₁ to GPU2, where it is added to b₁"


def test_every_problem_of_a_file_is_collected(tmp_path):
    path = tmp_path / "03-many.md"
    path.write_text(GOOD_FRONT + GOOD_BODY + "{{nope}} and {{sent[0]}}\n{{busiest.load}}\n",
                    encoding="utf-8")
    lessons, problems = check_lessons(tmp_path)
    assert lessons == []
    assert [str(p) for p in problems] == [
        f"{path}:10: {{{{nope}}}}: unknown placeholder 'nope'; see docs/lessons.md for the vocabulary",
        f"{path}:10: {{{{sent[0]}}}}: GPU0 does not exist: the scenario has GPU1..GPU4",
    ]


def test_two_lessons_with_one_number(tmp_path):
    for name in ("02-a.md", "2-b.md"):
        (tmp_path / name).write_text(GOOD_FRONT + GOOD_BODY, encoding="utf-8")
    with pytest.raises(RingsimError) as info:
        load_lessons(tmp_path)
    assert str(info.value) in (f"{tmp_path / '2-b.md'}:1: lesson number 2 is already used by 02-a.md",
                               f"{tmp_path / '02-a.md'}:1: lesson number 2 is already used by 2-b.md")


def test_an_unreadable_file(tmp_path):
    path = tmp_path / "01-binary.md"
    path.write_bytes(b"\xc3\x28\x00bad")  # not UTF-8 (and no byte-order mark to say otherwise)
    with pytest.raises(RingsimError) as info:
        load_lessons(tmp_path)
    assert str(info.value).startswith(f"{path}:1: cannot read the file: ")


def test_a_published_run_is_read_at_a_size_it_printed(tmp_path):
    path = tmp_path / "01-lesson.md"
    path.write_text(GOOD_FRONT + GOOD_BODY + "{{nccl.measured system=gcp-a3mega-2x8-tcpxo bytes=8}} "
                    "{{nccl.measured.release system=gcp-a3mega-2x8-tcpxo}}\n", encoding="utf-8")
    (lesson,) = load_lessons(tmp_path)
    assert "135.80 µs 2.21.5" in lesson.sections()[0].text
    # asked as a question, its reason says it is read, and from where
    path.write_text(GOOD_FRONT + GOOD_BODY + "```question\nHow long?\nanswer: nccl.measured "
                    "system=gcp-a3mega-2x8-tcpxo bytes=8\n```\n", encoding="utf-8")
    (question,) = load_lessons(tmp_path)[0].questions
    assert question.answer == "135.80 µs"
    assert question.why.startswith("read, not computed: the published gcp-a3mega-2x8-tcpxo "
                                   "(https://github.com/lessizzmore/")
    assert question.why.endswith("16 GPUs, its 8B row.")
    path.write_text(GOOD_FRONT + GOOD_BODY + "{{nccl.measured system=gcp-a3mega-2x8-tcpxo bytes=7}}\n",
                    encoding="utf-8")
    lessons, problems = check_lessons(tmp_path)
    assert [str(p) for p in problems] == [
        f"{path}:10: {{{{nccl.measured system=gcp-a3mega-2x8-tcpxo bytes=7}}}}: published system "
        "'gcp-a3mega-2x8-tcpxo' has no points at 7 bytes: name a size it measured once"]
    # two points at one size (NCCL's choice and NVLS forced), a run that states no release, no system=
    for body, reason in (
            ("{{nccl.measured system=h100-8-nvswitch bytes=2147483648}}",
             "published system 'h100-8-nvswitch' has 2 points at 2147483648 bytes: name a size it "
             "measured once"),
            ("{{nccl.measured.release system=h100-8-nvswitch}}",
             "published system 'h100-8-nvswitch' states no NCCL release"),
            ("{{nccl.measured bytes=8}}",
             "name the published run with system=ID (an id of "
             "ringsim/studies/published/measurements.toml)")):
        path.write_text(GOOD_FRONT + GOOD_BODY + body + "\n", encoding="utf-8")
        lessons, problems = check_lessons(tmp_path)
        assert [str(p) for p in problems] == [f"{path}:10: {body}: {reason}"]


@pytest.mark.parametrize("index, words", [
    ("9" * 5000, "an index has at most 20 digits, got 99999"),  # past int()'s 4,300 digits
    ("²", "cannot read expression ²"),  # a digit to str.isdigit, not to int()
    ("٣", "cannot read expression ٣"),  # another script's three: 0-9 only, as everywhere
])
def test_an_index_is_digits_0_to_9_and_few_of_them(tmp_path, index, words):
    path = tmp_path / "01-lesson.md"
    path.write_text(GOOD_FRONT + GOOD_BODY + f"{{{{segments[{index}]}}}}\n", encoding="utf-8")
    with pytest.raises(RingsimError) as info:
        load_lessons(tmp_path)
    assert f"{path}:10: " in str(info.value) and words in str(info.value), str(info.value)[:300]
