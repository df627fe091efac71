"""NCCL's own tuning output in an NCCL_DEBUG=INFO log: its tables and its choices, read.

At init rank 0 prints what its model computed (ncclTopoTuneModel, src/graph/tuning.cc, with
NCCL_DEBUG_SUBSYS=TUNING or ALL), in blocks of three algorithms, the same form from 2.18 on:

      Algorithm   |              Tree               |  Ring  …
      Protocol    |       LL |    LL128 |   Simple  |  …
     Max NThreads |      512 |      640 |      512  |  …
        AllReduce |  25.2/ 19.5 | 48.5/ 146.8 | …        (latency µs / algorithm bandwidth GB/s)

Releases before 2.18 printed one header, `Latency/AlgBw |    Tree/    LL | …`. And for each
call rank 0 says what it chose: `AllReduce: 16777216 Bytes -> Algo TREE proto LL128
channel{Lo..Hi}={0..15}` (src/enqueue.cc, 2.2x), or with TRACE builds `1024 Bytes -> Algo 0
proto 0 time 25.207382`. These are NCCL's model's numbers on the machine itself;
nccltuning.py sets ringsim's model beside them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# NCCL's algorithms in its own order, the numbers TRACE builds print for them.
from ..cost.nccl_tuner import ALGORITHMS
from .textfile import DIGITS, LINE_PREFIX, NCCL_VERSION, Text

FUNCS = ("Broadcast", "Reduce", "AllGather", "ReduceScatter", "AllReduce")
PROTOS = ("LL", "LL128", "Simple")
# ncclAlgoToString / ncclProtoToString (src/collectives.cc) to NCCL_ALGO's spelling.
_CHOICE_ALGOS = {"TREE": "Tree", "RING": "Ring", "COLLNET_DIRECT": "CollNetDirect",
                 "COLLNET_CHAIN": "CollNetChain", "NVLS": "NVLS", "NVLS_TREE": "NVLSTree",
                 "PAT": "PAT"}
_CHOICE_PROTOS = {"LL": "LL", "LL128": "LL128", "SIMPLE": "Simple"}
# The printed cell: "%8.1f/%6.1f |" (latency, bandwidth); a cell past its width still parses.
_CELL = re.compile(r"\s*(-?\d+(?:\.\d+)?)\s*/\s*(-?\d+(?:\.\d+)?)\s*")
# NCCL prints each cell with %8.1f/%6.1f: a latency or bandwidth past these, or below 0, is no
# cell NCCL printed (a mangled line), and is read as no cell at all.
MAX_CELL_US, MAX_CELL_GBPS = 1e9, 1e7
_BODY = re.compile(r"NCCL INFO\s+(.*)$")
_CHOICE = re.compile(rf"NCCL INFO (Broadcast|Reduce|AllGather|ReduceScatter|AllReduce): ({DIGITS}) "
                     r"Bytes -> Algo (\w+) proto (\w+)"
                     r"(?: channel\{Lo\.\.Hi\}=\{(\d{1,4})\.\.(\d{1,4})\})?")
_TRACE = re.compile(rf"({DIGITS}) Bytes -> Algo ({DIGITS}) proto ({DIGITS}) time (\d+(?:\.\d+)?)")
MAX_TABLES = 64  # a log with more communicators than this is cut to its first tables
MAX_SIZES = 4096  # distinct call sizes kept (NCCL logs one line per call, thousands a run)
MAX_DIGITS = 18  # a byte count longer than this is no call NCCL made

Cell = tuple[float, float]  # (latency µs, algorithm bandwidth GB/s)


@dataclass(frozen=True)
class Choice:
    """One call as NCCL's rank 0 logged it: function, bytes, algorithm, protocol, channels."""

    func: str
    nbytes: int
    algorithm: str
    protocol: str
    channels: int | None = None
    time_us: float | None = None  # TRACE builds print their model's time


@dataclass
class Tuning:
    """The tuning tables (one per communicator, in log order) and call choices of a log."""

    tables: list[dict[tuple[str, str, str], Cell]] = field(default_factory=list)
    threads: list[dict[tuple[str, str], int]] = field(default_factory=list)
    choices: list[Choice] = field(default_factory=list)
    version: str | None = None
    old_form: bool = False  # the one-header form of releases before 2.18
    unread: int = 0  # table cells that are not two numbers as NCCL prints them


def _columns(text: str) -> list[str]:
    return [part.strip() for part in text.split("|")[1:-1]]


def parse_all(texts) -> Tuning:
    """Every tuning table and choice line in several texts (a paste and its log), in order."""
    found = Tuning()
    for text in texts:
        one = parse(text)
        found.tables += one.tables
        found.threads += one.threads
        found.choices += one.choices
        found.version = found.version or one.version
        found.old_form = found.old_form or one.old_form
        found.unread += one.unread
    return found


def parse(text: Text) -> Tuning:
    """Every tuning table and choice line in the log."""
    found = Tuning()
    seen: set[tuple[str, int]] = set()  # (function, bytes) of the choice lines kept
    columns: list[tuple[str, str]] = []  # the current block's (algorithm, protocol) columns
    block_algos: list[str] = []
    for raw in text.lines:
        line = LINE_PREFIX.sub("", raw)
        if "NCCL" not in line and "Bytes -> Algo" not in line:
            continue
        if found.version is None and (m := NCCL_VERSION.search(line)):
            found.version = m.group(1)
        if m := _CHOICE.search(line):
            lo, hi = m.group(5), m.group(6)
            if len(m.group(2)) > MAX_DIGITS or not _first(seen, m.group(1), m.group(2)):
                continue
            # NCCL prints channel{Lo..Hi} low first: a range the other way round is no count
            ranged = lo is not None and int(lo) <= int(hi)
            found.choices.append(Choice(m.group(1), int(m.group(2)),
                                        _CHOICE_ALGOS.get(m.group(3).upper(), m.group(3)),
                                        _CHOICE_PROTOS.get(m.group(4).upper(), m.group(4)),
                                        int(hi) - int(lo) + 1 if ranged else None))
            continue
        if m := _TRACE.search(line):
            a, p = int(m.group(2)[:3]), int(m.group(3)[:3])
            if (a < len(ALGORITHMS) and p < len(PROTOS) and len(m.group(1)) <= MAX_DIGITS
                    and _first(seen, "", m.group(1))):
                found.choices.append(Choice("AllReduce" if "AllReduce" in line else "",
                                            int(m.group(1)), ALGORITHMS[a], PROTOS[p],
                                            time_us=float(m.group(4))))
            continue
        body = _BODY.search(line)
        if not body:
            continue
        head, _, rest = body.group(1).partition("|")
        head = head.strip()
        if head == "Algorithm":
            block_algos = [a for a in _columns("|" + rest) if a]
            columns = []
            # A block of algorithms the last table already has starts the next communicator's.
            if not found.tables or any(k[1] in block_algos for k in found.tables[-1]):
                if not _new_table(found):
                    block_algos = []
        elif head == "Protocol" and block_algos:
            # NCCL prints the three protocols once per algorithm (and, in a last block of
            # one algorithm, still three times): the first three names are the protocols.
            protos = _columns("|" + rest)[:len(PROTOS)]
            columns = [(a, p) for a in block_algos for p in protos]
        elif head == "Latency/AlgBw":
            found.old_form = True
            columns = []
            for name in (_columns("|" + rest) if _new_table(found) else []):
                a, _, p = (part.strip() for part in name.partition("/"))
                columns.append((_CHOICE_ALGOS.get(a.upper(), a), _CHOICE_PROTOS.get(p.upper(), p)))
        elif head == "Max NThreads" and columns and found.threads:
            counts = [int(c) for c in _columns("|" + rest) if c.isascii() and c.isdigit() and len(c) <= 6]
            found.threads[-1].update(zip(columns, counts))
        elif head in FUNCS and columns and found.tables:
            for (a, p), cell in zip(columns, _cells(rest)):
                if cell is not None:
                    found.tables[-1][(head, a, p)] = cell
                else:
                    found.unread += 1
    return found


def _cells(rest: str) -> list[tuple[float, float] | None]:
    """A function's row of 'latency/ bandwidth |' cells, in order; None for a cell that is
    not two numbers as NCCL prints them."""
    found = []
    for text in rest.split("|")[:-1]:  # the text after the last '|' is no cell
        m = _CELL.fullmatch(text)
        cell = None if m is None else (float(m.group(1)), float(m.group(2)))
        found.append(cell if cell is not None and 0 <= cell[0] <= MAX_CELL_US
                     and 0 <= cell[1] <= MAX_CELL_GBPS else None)
    return found


def _first(seen: set, func: str, nbytes: str) -> bool:
    """Whether this is the first choice line of its function and size (and room is left)."""
    key = (func, int(nbytes))
    if key in seen or len(seen) >= MAX_SIZES:
        return False
    seen.add(key)
    return True


def _new_table(found: Tuning) -> bool:
    """Start the next table; False once MAX_TABLES are read (later ones are left out)."""
    if len(found.tables) >= MAX_TABLES:
        return False
    found.tables.append({})
    found.threads.append({})
    return True


def algorithms(table: dict) -> list[str]:
    """The algorithms a table has columns for, in NCCL's order."""
    present = {a for _, a, _ in table}
    return [a for a in ALGORITHMS if a in present]


def format_table(table: dict[tuple[str, str, str], Cell], funcs=FUNCS,
                 per: int = 3, threads: dict[tuple[str, str], int] | None = None) -> list[str]:
    """The table in NCCL's own layout (blocks of three algorithms, or `per`), for the
    functions given, with the 'Max NThreads' row where `threads` are given."""
    algos = algorithms(table)
    out = []
    for start in range(0, len(algos), per):
        block = algos[start:start + per]
        out.append("  Algorithm   |" + "".join(f" {'':>14}   {a:>14}   {'':>14} |" for a in block))
        # NCCL names the protocols three times in every block, a last short block too.
        out.append("  Protocol    |" + "".join(f" {p:>14} |" for _ in range(per) for p in PROTOS))
        if threads is not None:
            out.append(" Max NThreads |" + "".join(f" {threads.get((a, p), 0):>14} |"
                                                 for a in block for p in PROTOS))
        for func in funcs:
            if not any((func, a, p) in table for a in block for p in PROTOS):
                continue
            cells = "".join("%8.1f/%6.1f |" % table.get((func, a, p), (0.0, 0.0))
                            for a in block for p in PROTOS)
            out.append(f"{func:>13} |{cells}")
    return out
