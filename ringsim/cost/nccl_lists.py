"""NCCL_ALGO and NCCL_PROTO as NCCL's parseList (src/graph/tuning.cc) reads them: a comma list
of names in any case, a leading '^' to exclude them, and from NCCL 2.24.3 entries for single
functions after ';' ('ring;allreduce:tree': Ring for every function, then Tree alone for
AllReduce). Each entry sets every name of the functions it covers, named or not, so a later
entry replaces what an earlier one gave them; a function no entry covers keeps its default.
"""

from __future__ import annotations

from ..core.checks import echo
from ..core.errors import RingsimError
from .nccl_tuner import TABLE_FUNCTIONS, names

PER_FUNCTION_FROM = (2, 24, 3)  # the first release whose parseList takes 'function:list'


def per_function(given: str, kind: str, flag: str,
                 release: str | None = None) -> dict[str, set[str] | None]:
    """NCCL_ALGO ('algorithms') or NCCL_PROTO ('protocols') for each of NCCL's functions: the
    names its entries leave on, or None where no entry covers the function (NCCL's default).
    `release` (None: the newest) refuses the per-function form before 2.24.3."""
    valid = names(kind)
    if not isinstance(given, str) or not given.strip():
        raise RingsimError(f"{flag}: give one of {', '.join(valid)} (or a comma list)")
    text = given.strip()
    entries = [e for e in text.split(";") if e.strip()]  # strtok skips empty tokens
    if (";" in text or ":" in text) and isinstance(release, str):
        parts = release.split(".")
        # a release ringsim does not carry is refused where its tables are looked up
        if all(x.isdigit() for x in parts) and tuple(map(int, parts)) < PER_FUNCTION_FROM:
            raise RingsimError(f"{flag} {echo(text)}: NCCL {release} reads one list for every "
                               "function; the per-function form ('allreduce:tree') came in 2.24.3")
    chosen: dict[str, set[str] | None] = dict.fromkeys(TABLE_FUNCTIONS)
    for i, entry in enumerate(entries):
        prefix, _, elems = entry.rpartition(":") if ":" in entry else ("", "", entry)
        prefix = prefix.strip()
        if ":" in prefix:
            raise RingsimError(f"{flag} {echo(text)}: an entry takes one ':' "
                               "(function:list)")
        if not prefix and i > 0:
            raise RingsimError(f"{flag} {echo(text)}: every entry after the first needs a "
                               f"function ({', '.join(TABLE_FUNCTIONS)}), as in NCCL")
        funcs = [f for f in TABLE_FUNCTIONS if not prefix or f.lower() == prefix.lower()]
        if not funcs:
            raise RingsimError(f"{flag}: unknown function {echo(prefix)}; NCCL's: "
                               f"{', '.join(TABLE_FUNCTIONS)}")
        picked = _names(elems.strip(), valid, kind, flag)
        for f in funcs:
            chosen[f] = picked
    return chosen


def _names(text: str, valid: list[str], kind: str, flag: str) -> set[str]:
    """One entry's list: the names it sets on, or with a leading '^' all but those."""
    exclude = text.startswith("^")
    # One leading ^ excludes, as parseList reads it; a second is part of a name.
    parts = [p.strip() for p in (text[1:] if exclude else text).split(",") if p.strip()]
    if not parts and not exclude:
        raise RingsimError(f"{flag}: give one of {', '.join(valid)} (or a comma list)")
    chosen = set()
    for part in parts:
        match = [v for v in valid if v.lower() == part.lower()]
        if not match:
            raise RingsimError(f"{flag}: unknown {kind[:-1]} {echo(part)}; "
                               f"valid: {', '.join(valid)}")
        chosen.add(match[0])
    return set(valid) - chosen if exclude else chosen
