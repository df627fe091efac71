"""Read nccl-tests output as people paste it: the rows of sizes and times, and who ran it.

nccl-tests (github.com/NVIDIA/nccl-tests, src/common.cu) prints a header — `# nThread …
nGpus …`, one `#  Rank  r Group g Pid p on HOST device d [bus] GPU NAME` line per rank (older
versions have no `Group`) — then one row per size: size (B), count, type, redop (not in
broadcast's old layout), root (from 2.10-era versions on), then time (µs), algbw, busbw and
`#wrong` (or `error`, a float, in older versions) for out-of-place and again for in-place.
Pastes add mpirun or srun prefixes (`[1,0]<stdout>:`, `[0] `), NCCL_DEBUG=INFO lines, `...`
where rows were left out, and rows cut mid-line. The parser reads every row it can and
counts what it could not.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from fractions import Fraction

from ..core.errors import RingsimError
from . import nccl_settings, nccl_unmodelled
from .textfile import DIGITS, LAUNCHER_PREFIX, NCCL_VERSION, Text, shown

DTYPES = {"int8": 1, "uint8": 1, "char": 1, "int32": 4, "uint32": 4, "int": 4, "int64": 8,
          "uint64": 8, "half": 2, "float16": 2, "float": 4, "float32": 4, "double": 8,
          "float64": 8, "bfloat16": 2, "f8e4m3": 1, "f8e5m2": 1, "fp8_e4m3": 1, "fp8_e5m2": 1}
# Other names a pasted type may carry, as NCCL's types: nccl-tests before NCCL 2.0 printed char
# and int; fp8_e4m3 and fp8_e5m2 are PyTorch's spelling of the 8-bit floats.
OTHER_NAMES = {"char": "int8", "int": "int32", "fp8_e4m3": "f8e4m3", "fp8_e5m2": "f8e5m2"}
REDOPS = {"sum", "prod", "max", "min", "avg", "mulsum", "none", "premulsum"}
# Which collective a test binary or `# Collective test starting:` line names.
TESTS = {"all_reduce": "all-reduce", "all_gather": "all-gather", "reduce_scatter": "reduce-scatter",
         "broadcast": "broadcast", "reduce": "reduce", "alltoall": "all-to-all",
         "sendrecv": "sendrecv", "gather": "gather", "scatter": "scatter", "hypercube": "hypercube"}
# The nccl-tests binary of each test.
PERF = {name: f"{binary}_perf" for binary, name in TESTS.items()}
PERF["gather"] = "gather_perf or scatter_perf"  # the rows of the two look alike
# The tests whose count column is each rank's share of the size (count x type size x ranks =
# size; the others print the count of the whole buffer), and the rooted ones, which print the
# root they ran (-r, 0 by default) where the others print -1 (nccltests_counts.test_from_rows).
SHARE_COUNT = ("all-gather", "reduce-scatter", "all-to-all", "gather", "scatter")
ROOTED = ("broadcast", "reduce", "gather", "scatter")
# nccl-tests prints about 30 rows for -b 8 -e 8G -f 2; even a linear sweep (-i) of every KiB
# to 8 MiB is 8,192. Past this many, rows are left out (and counted), so the model is priced
# for at most this many sizes.
MAX_ROWS = 10_000
# nccl-tests prints a time in µs with two decimals, so 0.01 µs is the least it can show; a time
# past a million seconds (ringsim's bound on every duration) is a garbled row, not a run.
MIN_TIME_US, MAX_TIME_US = 0.01, 1e12
# No GPU holds a petabyte: a larger size is a garbled row (and past what NCCL's model prices,
# ringsim.cost.nccl.MAX_BYTES), so it is counted with the rows that cannot be read.
MAX_SIZE = 1 << 50


def bus_factor(collective: str, gpus: int) -> Fraction:
    """nccl-tests' busbw / algbw for a collective on n ranks (doc/PERFORMANCE.md)."""
    n = gpus
    if collective == "all-reduce":
        return Fraction(2 * (n - 1), n)
    if collective in ("all-gather", "reduce-scatter", "all-to-all"):
        return Fraction(n - 1, n)
    return Fraction(1)


# mpirun's `[1,0]<stdout>:`, srun's `[0]` or `0:` at the start of a line, anywhere in srun rows
_PREFIX = re.compile(LAUNCHER_PREFIX)
_LEAD = re.compile(r"^\s*(?:\d+:\s)")
_RANK = re.compile(rf"#\s*Rank\s+({DIGITS})\s+(?:Group\s+({DIGITS})\s+)?Pid\s+({DIGITS})\s+on\s+"
                   rf"(?:(\S+)\s+)?device\s+({DIGITS})\s+\[([^\]]*)\]\s*(.*)$")
# nccl-tests -S 1 ends each row with the time it was printed ("%Y-%m-%d %H:%M:%S", util.cu).
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_CLOCK = re.compile(r"\d{2}:\d{2}:\d{2}")
# Fields of one half of a row under nccl-tests -I 1: time, algbw, busbw, #wrong, then the
# per-iteration i_min, i_max, i_p99 and i_cv% (util.cu, writePerIterReport).
PER_HALF = 8
# nccl-tests' first header line names the NCCL it was built with and the one that ran
# ("# nccl-tests version 2.19.6 nccl-headers=22807 nccl-library=22807", util.cu): the latter
# is the only word on the release where the paste has no NCCL INFO line.
_LIBRARY = re.compile(r"\bnccl-library=(\d{4,6})\b")
_NGPUS = re.compile(rf"#\s*nThread\s+({DIGITS})\s+nGpus\s+({DIGITS})")
# The table's column names (`#       size         count      type   redop …`), which nccl-tests
# prints once a run, however many -N cycles or sizes follow.
_COLUMNS = re.compile(r"#\s*size\s+count\s+type\b")
# The sizes the run was asked for, on the same line: -b, -e and -f (factor) or -i (bytes).
_ASKED = re.compile(rf"minBytes\s+({DIGITS})\s+maxBytes\s+({DIGITS})\s+step:\s*({DIGITS})\((factor|bytes)\)")
_TEST = re.compile(r"\b(all_reduce|all_gather|reduce_scatter|broadcast|reduce|alltoall|sendrecv|"
                   r"gather|scatter|hypercube)_perf")
_STARTING = re.compile(r"Collective test starting:\s*(\w+)")
_AVG = re.compile(r"#\s*Avg bus bandwidth\s*:\s*([0-9.]+)")
# NCCL_ALGO / NCCL_PROTO as a command line sets them, as NCCL reports them (`NCCL_PROTO set by
# environment to Simple`), or as the AWS OFI plugin does (`Setting NCCL_PROTO to "simple"`)
# or the per-collective form NCCL also takes (`allreduce:tree;allgather:ring`), kept whole;
# the shell's ';' that ends a command ('NCCL_ALGO=Ring; …', 'NCCL_ALGO=Tree;NCCL_PROTO=…') is
# not part of a value.
_ENV = re.compile(r"\b(NCCL_ALGO|NCCL_PROTO)(?:=| set by environment to |\s+to\s+)[\"']?"
                  r"([\^A-Za-z0-9_,:]+(?:;[\^A-Za-z0-9_,]+:[\^A-Za-z0-9_,:]+)*)")
# NCCL's own word that NVLS (and so NVLSTree) is off: its echo of the setting (src/misc/param.cc,
# `NCCL_NVLS_ENABLE set by environment to 0.`), the line ncclNvlsInit prints for every rank
# (src/transport/nvls.cc, `NVLS multicast support is not available on dev 0`), or a command
# line's `NCCL_NVLS_ENABLE=0`. Either way tuning.cc gives NVLS and NVLSTree no bandwidth.
_NVLS_OFF = re.compile(r"\bNCCL_NVLS_ENABLE(?: set by environment to |=)[\"']?0+(?![\w.]*\d)"
                       r"|\bNVLS multicast support is not available(?: on dev \d{1,4})?")


@dataclass(frozen=True)
class Row:
    """One size: bytes, elements, type and the out-of-place (and in-place) times in seconds."""

    bytes: int
    count: int
    dtype: str
    redop: str | None
    seconds: float
    algbw: float | None  # bytes/s as printed (2 decimals of GB/s, so 0 for small sizes)
    busbw: float | None
    wrong: float | None  # #wrong (the larger of out of place and in place), or older `error`
    in_place_seconds: float | None = None
    root: int | None = None  # the root column (-1: no root), where the layout has one


@dataclass(frozen=True)
class RankLine:
    """A `# Rank …` header line: who ran which rank where, and on which GPU."""

    rank: int
    host: str
    pid: int
    device: int
    gpu: str


@dataclass
class Output:
    """What a paste of nccl-tests output says."""

    name: str
    rows: list[Row] = field(default_factory=list)
    ranks: list[RankLine] = field(default_factory=list)
    collective: str | None = None
    gpus_per_process: int | None = None
    nccl_version: str | None = None
    avg_busbw: float | None = None
    # the header's minBytes, maxBytes, step and whether the step is a factor (-f) or bytes (-i)
    asked: tuple[int, int, int, bool] | None = None
    env: dict[str, str] = field(default_factory=dict)  # NCCL_ALGO / NCCL_PROTO the paste shows
    # NCCL's channel settings the paste shows: each value and the line that first set it
    channel_settings: dict[str, dict[int, int]] = field(default_factory=dict)
    # NCCL settings the paste shows that the model does not follow (nccl_unmodelled.py)
    unmodelled: dict[str, str] = field(default_factory=dict)
    # the header's agg iters, validation and graph (nccl-tests' -m, -c, -G)
    run_options: dict[str, int] = field(default_factory=dict)
    nvls_off: str | None = None  # the paste's line saying NVLS is off (nvls_off), as NCCL put it
    skipped: int = 0  # row-like lines cut or malformed
    first_skip: str = ""  # the first of them and why it was left out
    past_limit: int = 0  # rows after the first MAX_ROWS, left out
    cut_lines: int = 0
    # where a second table's column header follows rows ("line 67, after 31 rows"), if one does
    second_table: str = ""

    @property
    def gpus(self) -> int | None:
        """G: the number of ranks the header lists (None without rank lines)."""
        return len({r.rank for r in self.ranks}) or None

    @property
    def rank_numbers(self) -> list[int]:
        """The rank numbers the header lists, each once, in increasing order."""
        return sorted({r.rank for r in self.ranks})

    @property
    def ranks_numbered_in_order(self) -> bool:
        """Whether the header's rank lines are numbered 0 to n-1, as nccl-tests numbers them
        (False without rank lines): otherwise lines were left out of the paste or edited."""
        numbers = self.rank_numbers
        return numbers == list(range(len(numbers))) and bool(numbers)

    @property
    def hosts(self) -> list[str]:
        """Host names in the order the header first names them."""
        return list(dict.fromkeys(r.host for r in self.ranks))

    @property
    def gpu_names(self) -> list[str]:
        """The GPU models the header names, most common first."""
        counts: dict[str, int] = {}
        for r in self.ranks:
            counts[r.gpu] = counts.get(r.gpu, 0) + 1
        return sorted(counts, key=lambda name: -counts[name])


def parse(text: Text) -> Output:
    """The rows and header of nccl-tests output in `text`; RingsimError when it holds no row."""
    out = Output(text.name, cut_lines=text.cut_lines)
    seen_ranks: dict[int, RankLine] = {}
    started: list[str] = []  # the tests whose "# Collective test starting:" line was read
    headers = 0  # `# nThread …` lines: each run prints one, before its rank lines and rows
    for number, raw in enumerate(text.lines, 1):
        line = _LEAD.sub("", _PREFIX.sub(" ", raw)).strip()
        if not line:
            continue
        if "NCCL_ALGO" in line or "NCCL_PROTO" in line:
            for name, value in _ENV.findall(line):
                out.env.setdefault(name, shown(value, 40))
        if out.nvls_off is None and "NVLS" in line:
            out.nvls_off = nvls_off([line])
        if "NCCL_M" in line or "NCCL_NVLS_" in line or "NTHREADS" in line or "BUFFSIZE" in line:
            nccl_settings.read(line, number, out.channel_settings)
        if "NCCL_" in line:
            nccl_unmodelled.read(line, out.unmodelled)
        if line.startswith("#"):
            if m := _STARTING.search(line):
                started.append(m.group(1))
                if len(started) > 1:
                    # One file of several runs (a script that runs each test in turn): the
                    # later headers list the same ranks again, so it is refused as what it is.
                    runs = " then ".join(shown(name, 30) for name in started)
                    raise RingsimError(f"{text.name} holds more than one nccl-tests run, one after "
                                       f"another ({runs}, at line {number:,}): pass one run's "
                                       "output, from its '# Collective test starting' line to "
                                       "the next")
            if _NGPUS.search(line):
                headers += 1
                if headers > 1 and out.rows:
                    # Older nccl-tests print no "Collective test starting" line, so two runs
                    # pasted one after the other show as a second header after the first's rows.
                    raise RingsimError(f"{text.name} holds more than one nccl-tests run, one after "
                                       f"another (a second '# nThread' header at line {number:,}, "
                                       f"after {len(out.rows):,} rows): pass one run's output, "
                                       "from its '# nThread' line to the next")
            if "cputime" in line.split() and _COLUMNS.match(line):
                # nccl-tests -C 1: the timer is read before the calls complete (common.cu),
                # so these times are launches, while algbw and busbw are the whole calls'.
                raise RingsimError(f"{text.name}'s time columns are nccl-tests' cputime (-C 1, "
                                   f"line {number:,}): the host's time to launch each call, not "
                                   "the call's; run it again without -C to diagnose it")
            if out.rows and not out.second_table and _COLUMNS.match(line):
                # A second table pasted without its run's header: its rows would be read as
                # more sizes (or repeats) of the first run's (diagnose_inputs.check_one_test).
                out.second_table = f"line {number:,}, after {len(out.rows):,} rows"
            _header(line, out, seen_ranks)
            continue
        if out.collective is None and (m := _TEST.search(line)):
            out.collective = TESTS[m.group(1)]
        if out.nccl_version is None and (m := NCCL_VERSION.search(line)):
            out.nccl_version = m.group(1)
        if "NCCL INFO" in line or "NCCL WARN" in line:
            continue
        tokens = line.split()
        if len(tokens) < 4 or not _whole(tokens[0]):
            continue
        row = _row(tokens)
        if isinstance(row, str):
            out.skipped += 1
            out.first_skip = out.first_skip or f"line {number}: {row}"
        elif len(out.rows) < MAX_ROWS:
            out.rows.append(row)
        else:
            out.past_limit += 1
    out.ranks = sorted(seen_ranks.values(), key=lambda r: r.rank)
    # a value NCCL reads as 0 that NCCL's own words above missed (0x0, -0); both 0 and not: refused
    stated = nccl_settings.nvls_setting(out.channel_settings, text.name)
    if out.nvls_off is None and stated is not None:
        out.nvls_off = stated
    if not out.rows and out.skipped:
        raise RingsimError(f"{text.name} holds {out.skipped:,} row{'s' * (out.skipped > 1)} of "
                           f"nccl-tests' layout, none readable (at {out.first_skip})")
    if not out.rows:
        what = ("its header, but no rows of sizes and times" if out.ranks or out.gpus_per_process
                else "no nccl-tests rows (lines of size, count, type, … time, algbw, busbw)")
        raise RingsimError(f"{text.name} holds {what}: paste the whole table printed by "
                           "all_reduce_perf (or another nccl-tests binary)")
    return out


def nvls_off(lines) -> str | None:
    """The first line that says NCCL ran without NVLS, in NCCL's words (_NVLS_OFF); None where
    none does."""
    for line in lines:
        if "NVLS" in line and (m := _NVLS_OFF.search(line)):
            return re.sub(r"[\"'.]", "", m.group(0))
    return None


def _header(line: str, out: Output, seen: dict[int, RankLine]) -> None:
    if m := _RANK.search(line):
        rank, host = int(m.group(1)), shown(m.group(4) or "", 80)
        entry = RankLine(rank, host, int(m.group(3)), int(m.group(5)), shown(m.group(7).strip(), 80))
        if rank in seen and (seen[rank].host, seen[rank].pid) != (entry.host, entry.pid):
            raise RingsimError(
                f"the header lists rank {rank} twice (pid {seen[rank].pid} on "
                f"{seen[rank].host or 'a host'} and pid {entry.pid} on {entry.host or 'a host'}): "
                "these are separate one-rank runs, not one run over both; nccl-tests must be "
                "built with MPI=1 to run one test across processes")
        seen[rank] = entry
    elif m := _NGPUS.search(line):
        out.gpus_per_process = int(m.group(2))
        if a := _ASKED.search(line):
            out.asked = (int(a.group(1)), int(a.group(2)), int(a.group(3)), a.group(4) == "factor")
        nccl_unmodelled.read_header(line, out.run_options)
    elif m := _AVG.search(line):
        out.avg_busbw = float(m.group(1)) * 1e9
    elif out.nccl_version is None and (m := _LIBRARY.search(line)):
        out.nccl_version = _release_of(int(m.group(1)))
    if out.collective is None and (m := _TEST.search(line)):
        out.collective = TESTS[m.group(1)]


def _release_of(code: int) -> str:
    """The release an NCCL_VERSION_CODE stands for (src/nccl.h.in): X*10000 + Y*100 + Z from
    2.9 on, X*1000 + Y*100 + Z before."""
    if code < 10000:
        return f"{code // 1000}.{code // 100 % 10}.{code % 100}"
    return f"{code // 10000}.{code // 100 % 100}.{code % 100}"


def _number(token: str) -> float | None:
    try:
        value = float(token)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _whole(token: str) -> bool:
    """True for a size or count column: digits 0-9 only (str.isdigit also takes ², which int()
    refuses). int() reads no more than 18 of them here: past 4,300 it raises ValueError."""
    return token.isascii() and token.isdigit()


def _row(tokens: list[str]) -> Row | str:
    """A row from its tokens, or why it cannot be read (cut, or fitting no layout)."""
    if len(tokens) < 7 or not _whole(tokens[1]) or len(tokens[1]) > 18 or tokens[2] not in DTYPES:
        return "it is cut short or its type is not one nccl-tests prints"
    rest = tokens[3:]
    if len(rest) > 2 and _DATE.fullmatch(rest[-2]) and _CLOCK.fullmatch(rest[-1]):
        rest = rest[:-2]  # the time nccl-tests -S 1 printed the row at
    redop = None
    if rest and rest[0] in REDOPS:
        redop, rest = rest[0], rest[1:]
    # What follows is [root] time algbw busbw wrong, once or twice: 4 or 8 fields, +1 with root;
    # with -I 1 each half is followed by i_min i_max i_p99 i_cv%: 16 fields.
    root = None
    if len(rest) in (5, 9, 17):
        root = int(rest[0]) if re.fullmatch(rf"-?{DIGITS}", rest[0]) else None
        rest = rest[1:]
    if len(rest) == 2 * PER_HALF:
        rest = rest[:4] + rest[PER_HALF:PER_HALF + 4]
    if len(rest) not in (4, 8):
        return "its columns fit no nccl-tests layout"
    if len(tokens[0]) > 18 or int(tokens[0]) > MAX_SIZE:
        return f"its size {shown(tokens[0], 24)} is past 1 PiB"
    fields = [None if t == "N/A" else _number(t) for t in rest]
    time_us, alg, bus = fields[0], fields[1], fields[2]
    if time_us is None:
        comma = " (a decimal comma? nccl-tests prints a point)" if "," in rest[0] else ""
        return f"its time {shown(rest[0], 24)} is not a finite number{comma}"
    if not MIN_TIME_US <= time_us <= MAX_TIME_US:
        return f"its time {shown(rest[0], 24)} µs is not from {MIN_TIME_US} µs to 10^6 s"
    if any(v is not None and v < 0 for v in (alg, bus)):
        return "its algbw or busbw is negative"
    in_place = fields[4] if len(fields) == 8 and fields[4] and MIN_TIME_US <= fields[4] <= MAX_TIME_US else None
    # A wrong result in place is as wrong as one out of place: keep the larger count.
    wrong = max((w for w in (fields[3], fields[7] if len(fields) == 8 else None)
                 if w is not None), default=None)
    return Row(int(tokens[0]), int(tokens[1]), tokens[2], redop, time_us * 1e-6,
               None if alg is None else alg * 1e9, None if bus is None else bus * 1e9,
               wrong, None if in_place is None else in_place * 1e-6, root)
