"""Reading one lesson file's text: its front matter (title, scenario, stops), its body cut at
stop and pause markers into drafts, the branches of if-markers that hold for its G and N, and
its question blocks, each checked. A problem is handed to `refuse(line, reason)`; load.py
fills the placeholders and collects the problems.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..algorithms import (ALGORITHMS, OPTION_ORDER, algorithms_taking, make_plan,
                          option_names, whole_number_options)
from ..core.checks import check_elements, check_gpus
from ..core.arguments import argument, naming
from ..core.errors import RingsimError
from ..core.files import Wording, read_text
from ..core.textout import clip
from ..sim.simulation import SYMBOLIC_MAX_GPUS
from .expr import evaluate
from .model import Scenario
from .text import clean, one_of, plural

MAX_ELEMENTS = 100_000  # a lesson's own scenario runs beside the reader, labels and all
# The scenario's keys, each algorithm's options among them (accepted with an algorithm that
# takes them), and the stops
FRONT_KEYS = ("title", "algorithm", "gpus", "elements") + OPTION_ORDER + ("stops",)
_STOP = re.compile(r"^\s*<!--\s*stop\b(.*?)-->\s*$")
_PAUSE = re.compile(r"^\s*<!--\s*pause\s*-->\s*$")
_IF = re.compile(r"^\s*<!--\s*(if|elif)\b(.*?)-->\s*$")
_ELSE = re.compile(r"^\s*<!--\s*(else|end)\s*-->\s*$")
MAX_TITLE = 100
MAX_FILE_BYTES = 256 * 1024  # the longest shipped lesson is 5 KB; reading stops past this
_FENCE = re.compile(r"^\s*(```+|~~~+)\s*(\w*)\s*$")


@dataclass
class Draft:
    """One part of a lesson's body as read: the stop it shows (None: no new stop), its first
    line, its text lines and its question blocks, placeholders not yet computed."""

    stop: int | None
    line: int
    lines: list[tuple[int, str]] = field(default_factory=list)
    questions: list[tuple[int, list[tuple[int, str]]]] = field(default_factory=list)


def read_lesson(path: Path, refuse, gpus: int | None, elements: int | None):
    """A lesson file's title, scenario, stops and sections, its placeholders not yet computed."""
    lines = _text(path, refuse).splitlines()
    front, body_start = _front_matter(lines, refuse)
    scenario, title, stops = _settings(front, refuse)
    own = gpus is None and elements is None
    if not own:
        scenario = _override(scenario, gpus, elements)
    drafts = _sections(lines, body_start, scenario, refuse)
    marked = [d.stop for d in drafts if d.stop is not None]
    if stops is None or not own:
        stops = marked
    _check_stops(drafts, stops, front, len(scenario.plan()), refuse)
    return title, scenario, stops, drafts


# A lesson's refusals are prefixed with 'FILE:1:' by refuse(), so they do not name the file.
_WORDING = Wording(
    unreadable="cannot read the file: {reason}", missing="cannot read the file: {reason}",
    folder="not a regular file", special="not a regular file",
    too_big="the file holds more than {limit_kib} KiB; a lesson is at most that long",
    grew="the file holds more than {limit_kib} KiB; a lesson is at most that long",
    not_utf8="cannot read the file: {reason}")


def _text(path: Path, refuse) -> str:
    """The file's text, cleaned; refused when it is not a regular file or holds more than MAX_FILE_BYTES."""
    try:
        return clean(read_text(path, "lesson", MAX_FILE_BYTES, wording=_WORDING))
    except RingsimError as error:
        refuse(1, str(error))


def _override(scenario: Scenario, gpus: int | None, elements: int | None) -> Scenario:
    """The lesson's scenario on another G and N, with the limits the front matter has."""
    if gpus is not None:
        check_gpus(gpus)
        if gpus < 2:
            raise RingsimError(f"a lesson needs at least 2 GPUs ({argument('gpus', 2)} or more): "
                               "one GPU has nothing to synchronise")
        if gpus > SYMBOLIC_MAX_GPUS:
            raise RingsimError(f"a lesson's scenario runs beside the text, so {argument('gpus')} "
                               f"must be from 2 to {SYMBOLIC_MAX_GPUS}, got {gpus:,}")
        scenario = scenario.with_gpus(gpus)
    if elements is not None:
        check_elements(elements)
        if elements > MAX_ELEMENTS:
            raise RingsimError(f"a lesson's scenario runs beside the text, so "
                               f"{argument('elements')} must be from 0 to {MAX_ELEMENTS:,}, got {elements:,}")
        scenario = replace(scenario, elements=elements)
    return scenario


def _as_key(name: str, shown_flag: str | None, value: object) -> str:
    """An option as a lesson's front matter writes it: 'chunks:' (then its value, if given)."""
    return f"'{name}:'" if value is None else f"'{name}:' {value}"


def _front_matter(lines: list[str], refuse) -> tuple[dict, int]:
    """key: value pairs between the opening '---' and the next; returns them with their lines."""
    if not lines or lines[0].strip() != "---":
        refuse(1, "a lesson must start with front matter: a '---' line, 'title: …' and so on, '---'")
    front: dict[str, tuple[int, str]] = {}
    for index in range(1, len(lines)):
        line, number = lines[index], index + 1
        if line.strip() == "---":
            return front, index + 1
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        key, colon, value = line.partition(":")
        key = key.strip()
        if not colon:
            refuse(number, f"front matter lines are 'key: value', got {line.strip()!r}")
        if key not in FRONT_KEYS:
            refuse(number, f"unknown front matter key {key!r}; known keys: {', '.join(FRONT_KEYS)}")
        if key in front:
            refuse(number, f"front matter key {key!r} given twice")
        front[key] = (number, value.strip())
    refuse(1, "the front matter is not closed: add a '---' line after it")


def _settings(front: dict, refuse) -> tuple[Scenario, str, list[int]]:
    """Title, scenario and stops from the front matter, each checked."""
    for key in ("title", "gpus", "elements"):
        if key not in front:
            refuse(1, f"the front matter needs '{key}:'")
    line, title = front["title"]
    if not title:
        refuse(line, "the title is empty")
    if len(title) > MAX_TITLE:
        refuse(line, f"the title is {len(title):,} characters long; at most {MAX_TITLE}")
    line, algorithm = front.get("algorithm", (1, "ring"))
    if algorithm not in ALGORITHMS:
        refuse(line, f"unknown algorithm {algorithm!r}; choose one of: {', '.join(ALGORITHMS)}")
    gpus = _whole(front["gpus"], "gpus", refuse)
    elements = _whole(front["elements"], "elements", refuse)
    # Whole-number options are read as gpus is; ring orders and trees are text the algorithm reads.
    options = {key: _whole(front[key], key, refuse) if key in whole_number_options() else front[key][1]
               for key in OPTION_ORDER if key in front}
    try:
        check_gpus(gpus)
    except RingsimError as error:
        refuse(front["gpus"][0], str(error))
    if gpus > SYMBOLIC_MAX_GPUS:
        refuse(front["gpus"][0], f"a lesson's scenario runs beside the text, so gpus must be "
                                 f"from 1 to {SYMBOLIC_MAX_GPUS}, got {gpus} (placeholders may "
                                 f"name larger scenarios: formula.total gpus=1000)")
    try:
        check_elements(elements)
    except RingsimError as error:
        refuse(front["elements"][0], str(error))
    if elements > MAX_ELEMENTS:
        refuse(front["elements"][0], f"a lesson's scenario runs beside the text, so elements must "
                                     f"be from 0 to {MAX_ELEMENTS:,}, got {clip(f'{elements:,}')}")
    for key in options:
        if key not in option_names(algorithm):
            takes = one_of([f"'algorithm: {name}'" for name in algorithms_taking(key)])
            refuse(front[key][0], f"'{key}:' applies only to {takes}")
    try:
        with naming(_as_key):  # a lesson file writes its options as keys, not flags
            make_plan(algorithm, gpus, **options)
    except RingsimError as error:
        # The line of the first option given, where one is: the plan refuses what it holds.
        line = min((front[key][0] for key in options), default=front.get("algorithm", (1, ""))[0])
        refuse(line, str(error))
    stops = None
    if "stops" in front:
        line, value = front["stops"]
        stops = []
        for part in value.strip("[]").replace(",", " ").split():
            try:
                stops.append(int(part))
            except ValueError:
                refuse(line, f"stops must be whole numbers (steps done), got {clip(part)!r}")
    return Scenario(algorithm, gpus, elements, options), title, stops


def _whole(entry: tuple[int, str], key: str, refuse) -> int:
    line, value = entry
    try:
        return int(value.replace(",", "_"))
    except ValueError:
        refuse(line, f"{key} must be a whole number, got {clip(value)!r}")


def _sections(lines: list[str], start: int, scenario: Scenario, refuse) -> list[Draft]:
    """Split the body at stop and pause markers; keep the branches of if-markers that hold
    for the scenario's G and N; pull out question blocks."""
    drafts = [Draft(None, start + 1)]
    fence: str | None = None
    question: tuple[int, list] | None = None
    branches: list[list] = []  # per open if: [line, this branch holds, a branch was taken]
    g, n = scenario.gpus, scenario.elements

    def condition(text: str, number: int) -> bool:
        try:
            return bool(evaluate(text, g, n))
        except RingsimError as error:
            refuse(number, f"condition {clip(text.strip())!r}: {error}")

    for index in range(start, len(lines)):
        line, number = lines[index], index + 1
        active = all(b[1] for b in branches)
        match = _FENCE.match(line)
        if question is not None:
            if match and not match.group(2) and line.strip().startswith(fence):
                drafts[-1].questions.append(question)
                question, fence = None, None
            else:
                question[1].append((number, line))
            continue
        if fence is not None:
            if match and not match.group(2) and line.strip().startswith(fence):
                fence = None
            if active:
                drafts[-1].lines.append((number, line))
            continue
        if match:
            fence = match.group(1)
            if not active:
                continue
            if match.group(2) == "question":
                question = (number, [])
                continue
            drafts[-1].lines.append((number, line))
            continue
        branch = _IF.match(line)
        if branch:
            if branch.group(1) == "if":
                outer = active
                holds = outer and condition(branch.group(2), number)
                branches.append([number, holds, holds])
            else:
                if not branches:
                    refuse(number, "'<!-- elif -->' without an '<!-- if -->' above it")
                top = branches[-1]
                outer = all(b[1] for b in branches[:-1])
                holds = outer and not top[2] and condition(branch.group(2), number)
                top[1], top[2] = holds, top[2] or holds
            continue
        other = _ELSE.match(line)
        if other:
            if not branches:
                refuse(number, f"'<!-- {other.group(1)} -->' without an '<!-- if -->' above it")
            if other.group(1) == "end":
                branches.pop()
            else:
                top = branches[-1]
                outer = all(b[1] for b in branches[:-1])
                top[1], top[2] = outer and not top[2], True
            continue
        if not active:
            continue
        stop = _STOP.match(line)
        if stop:
            value = stop.group(1).strip()
            try:
                drafts.append(Draft(evaluate(value, g, n), number))
            except RingsimError:
                refuse(number, f"a stop marker is '<!-- stop N -->' with N the steps done (a whole "
                               f"number or an expression in G and N), got {clip(line.strip())!r}")
            continue
        if _PAUSE.match(line):
            drafts.append(Draft(None, number))
            continue
        if "<!--" in line and re.search(r"<!--\s*(stop|pause|if|elif|else|end)\b", line):
            refuse(number, f"a marker must stand alone on its line: {clip(line.strip())!r}")
        drafts[-1].lines.append((number, line))
    if question is not None:
        refuse(question[0], "the question block is not closed with ```")
    if fence is not None:
        refuse(len(lines), "a code block is not closed")
    if branches:
        refuse(branches[-1][0], "this '<!-- if -->' is not closed with '<!-- end -->'")
    return drafts


def _check_stops(drafts: list[Draft], stops: list[int], front: dict, steps: int, refuse) -> None:
    """The markers must be the front matter's stops (when it lists them), in order, each within the run."""
    line = front.get("stops", (1, ""))[0]
    # the front matter's list where it has one, else each marker at its own line
    for stop in stops if "stops" in front else ():
        if not 0 <= stop <= steps:
            refuse(line, f"stop {stop} is outside the run: this scenario has "
                         f"{plural(steps, 'step')}, "
                         f"so stops are 0..{steps}")
    for draft in drafts:
        if draft.stop is not None and not 0 <= draft.stop <= steps:
            refuse(draft.line, f"stop {draft.stop} is outside the run: this scenario has "
                               f"{plural(steps, 'step')}, so stops are 0..{steps}")
    if any(b < a for a, b in zip(stops, stops[1:])):
        refuse(line, "stops must be in order")
    marked = [d for d in drafts if d.stop is not None]
    for draft, stop in zip(marked, stops):
        if draft.stop != stop:
            refuse(draft.line, f"this marker says stop {draft.stop} but the front matter's next "
                               f"stop is {stop}")
    if len(marked) > len(stops):
        extra = marked[len(stops)]
        refuse(extra.line, f"stop {extra.stop} is not listed in the front matter's stops")
    if len(marked) < len(stops):
        refuse(line, f"stop {stops[len(marked)]} has no '<!-- stop {stops[len(marked)]} -->' "
                     f"marker in the text")
