"""The `$ ringsim …` examples of README.md and docs/*.md, run: what each prints now beside what
the page shows. `python tests/doc_examples.py` lists the examples that differ;
`--write` puts today's output into the pages (examples with an elided line, `…`, are left for
a person to update)."""

from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
# A line of only these stands for lines the page leaves out.
ELIDED = {"...", "…", "#   …"}
# The width the examples are run at: the widest ringsim allows (core/width.py), so that no
# line wraps, as in a pipe, while the terminal plots keep the width they were drawn at.
COLUMNS = "1000"


@dataclass
class Example:
    """One command of a page's fenced block and the lines the page shows after it."""

    page: Path
    line: int  # where the command is, 1-based
    command: str
    shown: list[str]

    @property
    def elided(self) -> bool:
        """Whether the page leaves some of the output out."""
        return any(s.strip() in ELIDED for s in self.shown)

    def __str__(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}: {self.command}"


def examples(pages: list[Path] = PAGES) -> list[Example]:
    """Every `$ ringsim` command in a fenced block of the pages, with the lines after it."""
    found: list[Example] = []
    for page in pages:
        lines = page.read_text(encoding="utf-8").splitlines()
        fenced = False
        current: Example | None = None
        for number, text in enumerate(lines, 1):
            if text.startswith("```"):
                fenced, current = not fenced, None
                continue
            if not fenced:
                continue
            if text.startswith("$ ringsim "):
                current = Example(page, number, text[2:], [])
                found.append(current)
            elif current is not None:
                current.shown.append(text)
    return found


def run(command: str) -> tuple[int, list[str]]:
    """Run one example in this process, from the repository's root; its exit status and lines."""
    from ringsim.cli import main

    out = io.StringIO()
    here = Path.cwd()
    os.chdir(ROOT)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            code = main(shlex.split(command)[1:])
    finally:
        os.chdir(here)
    return code, [line.rstrip() for line in out.getvalue().splitlines()]


def agrees(shown: list[str], printed: list[str]) -> bool:
    """Whether the page's lines are the printed ones, an elided line standing for any run."""
    shown = [s.rstrip() for s in shown]
    while shown and not shown[-1]:
        shown.pop()
    while printed and not printed[-1]:
        printed = printed[:-1]
    if not shown:
        return True  # the page shows the command only
    pattern = "".join(r"(?:[^\n]*\n)*?" if s.strip() in ELIDED else re.escape(s) + r"\n"
                      for s in shown)
    return re.fullmatch(pattern, "\n".join(printed) + "\n") is not None


def write(example: Example, printed: list[str]) -> None:
    """Put the printed lines into the page in place of the ones shown."""
    lines = example.page.read_text(encoding="utf-8").split("\n")
    start = example.line  # the line after the command (0-based index = line number)
    lines[start:start + len(example.shown)] = printed
    example.page.write_text("\n".join(lines), encoding="utf-8")


if __name__ == "__main__":
    os.environ["COLUMNS"] = COLUMNS
    for example in reversed(examples()):  # from the end, so earlier line numbers hold
        code, printed = run(example.command)
        if agrees(example.shown, printed):
            continue
        if "--write" in sys.argv[1:] and not example.elided and example.shown:
            write(example, printed)
            print(f"rewrote {example}")
        else:
            print(f"differs: {example}")
