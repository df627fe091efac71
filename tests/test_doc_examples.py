"""Every `$ ringsim …` example in README.md and docs/*.md prints what the page shows
(`python tests/doc_examples.py --write` refreshes them)."""

from __future__ import annotations

import re

import pytest

from doc_examples import COLUMNS, agrees, examples, run

EXAMPLES = examples()


def test_the_pages_have_examples_to_check():
    pages = {e.page.name for e in EXAMPLES}
    assert {"README.md", "cost.md", "reading-your-numbers.md"} <= pages


@pytest.mark.parametrize("example", EXAMPLES, ids=str)
def test_an_example_prints_what_its_page_shows(example, monkeypatch):
    monkeypatch.setenv("COLUMNS", COLUMNS)
    code, printed = run(example.command)
    expected_error = any(re.match(r"ringsim( [a-z]+)?: error:", s) for s in example.shown)
    assert code == (2 if expected_error else 0), "\n".join(printed[-5:])
    assert agrees(example.shown, printed), (
        f"{example} prints something else now; run python tests/doc_examples.py --write\n"
        + "\n".join(printed))
