"""The CLI's outputs held byte for byte to the golden corpus (tests/golden/).

The corpus was recorded before the package layout changed; a refactor must leave every
output as it was. A deliberate change of output is re-recorded with tests/golden/record.py.
"""

from __future__ import annotations

import difflib

import pytest

from golden.corpus import OUTPUTS, commands, output_name, run

CASES = [(output_name(n, c), c) for n, c in enumerate(commands(), 1)]


@pytest.mark.parametrize("name,command", CASES, ids=[name for name, _ in CASES])
def test_output_unchanged(name, command):
    kept = (OUTPUTS / name).read_text(encoding="utf-8")
    now = run(command)
    if now != kept:
        diff = "".join(difflib.unified_diff(kept.splitlines(True), now.splitlines(True),
                                            "recorded", "now", n=1))
        pytest.fail(f"`ringsim {command}` printed something else:\n{diff[:4000]}")


def test_corpus_covers_every_command_family():
    first_words = {c.split()[0] for c in commands()}
    assert {"walk", "compare", "sweep", "timeline", "zero", "overlap", "lesson", "train",
            "predict", "diagnose"} <= first_words
