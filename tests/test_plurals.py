"""Numbers and their nouns agree everywhere: '1 GPU', '1 segment', never 'a₁…a₁'."""

from __future__ import annotations

import re

import pytest

from ringsim.cli import main
from ringsim.core.naming import plural, plural_word, segment_range

NOUNS = "GPUs|segments|elements|steps|transfers|messages|nodes|ranks|layers|buckets|lessons|chunks|channels|parts|questions|points|sizes"
WRONG = re.compile(rf"(?<![\d.,])1 (?:{NOUNS})\b|a₁…a₁")

COMMANDS = [
    ["walk", "-g", "1"], ["walk", "-g", "1", "-n", "1"], ["walk", "-g", "1", "--time"],
    ["walk", "-g", "2", "-n", "1", "--time"], ["compare", "-g", "1"], ["compare", "-g", "1", "--time"],
    ["compare", "--time", "--topology", "dgx-h100", "--nodes", "1"],
    ["timeline", "-g", "1", "-n", "1"], ["timeline", "-g", "2", "-n", "1"],
    ["train", "-g", "1", "-e", "1"], ["overlap", "--layers", "1M", "-g", "1"],
    ["zero", "--params", "1M", "-g", "1"], ["sweep", "--no-plot", "-g", "1", "--sizes", "1KiB..2KiB"],
]


def test_the_one_plural():
    assert plural(1, "GPU") == "1 GPU" and plural(4, "GPU") == "4 GPUs"
    assert plural(2_000, "element") == "2,000 elements" and plural(0, "step") == "0 steps"
    assert plural_word(2, "batch") == "batches" and plural_word(3, "copy") == "copies"
    assert segment_range("a", 1) == "a₁" and segment_range("a", 4) == "a₁…a₄"


@pytest.mark.parametrize("argv", COMMANDS, ids=" ".join)
def test_no_output_says_one_with_a_plural(argv, capsys):
    main(argv)
    out = capsys.readouterr()
    text = out.out + out.err
    assert not WRONG.findall(text), (WRONG.findall(text), text[:2000])


def test_every_install_hint_names_the_extra_from_a_clone():
    # One form for every extra: pip install '.[NAME]' (from a clone), never 'ringsim[NAME]'.
    from pathlib import Path
    root = Path(__file__).resolve().parents[1] / "ringsim"
    hints = []
    for path in root.rglob("*.py"):
        hints += [(path.name, m) for m in re.findall(r"pip install '[^']*'", path.read_text(encoding="utf-8"))]
    assert hints
    assert [h for h in hints if not re.fullmatch(r"pip install '\.\[\w+\]'", h[1])] == []


def test_help_that_cites_performance_md_says_whose_it_is():
    from pathlib import Path
    root = Path(__file__).resolve().parents[1] / "ringsim"
    for path in root.rglob("*.py"):
        for line in path.read_text(encoding="utf-8").splitlines():
            if "PERFORMANCE.md" in line:
                assert "nccl-tests" in line, (path.name, line)
