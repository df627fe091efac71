"""What an nccl-tests paste is and what diagnose needs beyond it: the run's GPUs and nodes, the
preset its GPU names, the test it ran, its rows, and the notes on how one process drove its GPUs
and which NCCL release ran it; each gap the paste leaves is a one-line error saying what to give.
"""

from __future__ import annotations

import re

from ..core.errors import RingsimError
from ..core.naming import article, plural
from ..core.units import format_bytes, format_seconds
from . import peers
from .nccltests import DTYPES, MAX_ROWS, PERF, ROOTED, Output, Row, bus_factor
from .nccltests_counts import (RANKS_FROM_FACTOR, count_fits, other_test, ranks_from_busbw,
                               share_count, share_of, test_from_rows, whole_count)

# Below this size every NCCL all-reduce is dominated by its per-call cost (LL's range); a paste
# that starts above it does not show the latency.
SMALLEST_FOR_LATENCY = 64 * 1024
# GPU model names as nccl-tests prints them (cudaDeviceProp.name: "NVIDIA H100 80GB HBM3",
# "NVIDIA A100-SXM4-80GB") → the preset of the 8-GPU NVSwitch server they come in, matched as
# whole words: a GH200 (Grace Hopper) is no DGX H200. PCIe and NVL cards sit in servers of
# every shape, so those names pick no preset.
GPU_PRESETS = (("H200", "dgx-h200"), ("H100", "dgx-h100"), ("A100", "dgx-a100"))
NOT_SXM = ("PCIE", "NVL")
# The collectives NCCL's model prices (studies.predict), and the nccl-tests binary of each test.
PRICED = ("all-reduce", "all-gather", "reduce-scatter", "broadcast", "reduce")


def preset_for(gpu: str | None, nodes: int, available: list[str]) -> tuple[str, str]:
    """The preset that models the header's GPU, and why; a one-line error when none fits."""
    found = _preset(gpu, available)
    if found is not None:
        return found, f"the header's GPU is {gpu}: preset {found}"
    named = f"the header's GPU ({gpu})" if gpu else "the output names no GPU (no '# Rank' lines), so it"
    raise RingsimError(f"{named} matches no topology preset ({', '.join(available)}): "
                       + _topology_request(gpu))


def _preset(gpu: str | None, available: list[str]) -> str | None:
    """The preset that models a GPU of this name, None where none does."""
    name = (gpu or "").upper()
    for key, preset in GPU_PRESETS:
        whole = re.search(rf"(?<![A-Z0-9]){key}(?![A-Z0-9])", name)
        if whole and not any(word in name for word in NOT_SXM) and preset in available:
            return preset
    return None


def _topology_request(gpu: str | None) -> str:
    """What to give in place of a preset: --topology, and where the published system files are."""
    # The PCIe presets model PCIe cards without NVLink bridges; the published files, pairs with.
    pcie = ("; PCIe cards without NVLink bridges: --topology pcie-gen4 (one PCIe switch) or "
            "pcie-switches (two, joined through the CPU)" if "PCIE" in (gpu or "").upper() else "")
    return ("give --topology NAME or a .toml file describing the machine (`ringsim mpi "
            f"--calibrate --write-topology FILE` measures one){pcie}; " + _published_hint(gpu))


def check_inputs(output: Output, gpus: int | None, topology_given: bool, available: list[str],
                 collective: str | None = None) -> None:
    """Refuse in one line a run that lacks both its number of GPUs (given, in the header, or
    implied by its columns: implied_gpus) and its machine: both are known missing from the
    parse, so both are asked for at once (one missing alone is asked for by `scenario` or
    `preset_for`)."""
    gpu = output.gpu_names[0] if output.gpu_names else None
    if gpus is not None or output.gpus is not None or topology_given \
            or _preset(gpu, available) is not None or implied_gpus(output, collective):
        return
    _collective_without_gpus(output, collective)
    named = f"its GPU ({gpu})" if gpu else "it names no GPU either, so it"
    raise RingsimError(f"{output.name} has no '# Rank … on HOST device …' lines, so the number "
                       f"of GPUs is unknown: give --gpus G (and --nodes M); {named} matches no "
                       f"topology preset ({', '.join(available)}): " + _topology_request(gpu))


def assumed_network(topology, nodes: int) -> str:
    """What a preset guessed from the GPU's name takes the network to be, where the run
    crosses nodes ('' on one node): the GPU says nothing of the network, so it is said."""
    if nodes < 2 or "across" not in topology.levels:
        return ""
    across = topology.levels["across"]
    return (f", whose network is {across.name} for each GPU; give --topology if yours "
            "differs")


def _published_hint(gpu: str | None) -> str:
    """Where ringsim's published system files are, and how to pass one as --topology (the one
    named for the header's GPU, where there is one)."""
    import os
    from pathlib import Path
    folder = Path(str(peers.PUBLISHED.joinpath("systems")))
    files = sorted(p.name for p in folder.glob("*.toml"))
    relative = os.path.relpath(folder)
    shown = str(folder) if relative.startswith("..") else relative
    fits = [name for name in files if _names_gpu(name.split("-")[0], gpu)]
    if fits:
        return (f"ringsim's published system files include {', '.join(fits)} in {shown}: pass "
                f"one as --topology {os.path.join(shown, fits[0])}")
    return (f"ringsim's published system files, each named for its machine, are in {shown}: "
            f"pass one as --topology {os.path.join(shown, 'NAME.toml')}")


def _names_gpu(key: str, gpu: str | None) -> bool:
    """Whether a system file's first name part (a100, a100pcie) names this GPU: its model,
    with the card's form (PCIe, NVL) where the name has one, so a PCIe card is never given an
    SXM server's file."""
    words = re.findall(r"[a-z0-9]+", (gpu or "").lower())
    names = set(words) | {a + b for a, b in zip(words, words[1:])}
    forms = [form.lower() for form in NOT_SXM if form in (gpu or "").upper()]
    return key in names and all(form in key for form in forms)


def scenario(output: Output, gpus: int | None, nodes: int | None,
             collective: str | None = None) -> tuple[int, int | None, list[str]]:
    """G and M from the header (or --gpus/--nodes, which must agree with it; without either, G
    as the rows' busbw/algbw implies it: implied_gpus), and notes. M is None where neither
    the output nor --nodes says it: the topology places the GPUs then."""
    notes = []
    seen_gpus, hosts = output.gpus, output.hosts
    if output.ranks and not output.ranks_numbered_in_order:
        return _partial_header(output, collective, gpus, nodes, output.rank_numbers)
    implied = implied_gpus(output, collective) if gpus is None and seen_gpus is None else None
    if implied:
        gpus, (ratio, test) = implied
        formula = RANKS_FROM_FACTOR[test][0]
        notes.append(f"no '# Rank' lines: {gpus} GPUs, as the rows' busbw of {ratio:.3f} × algbw "
                     f"is {formula} for n = {gpus} in {PERF[test]} (give --gpus G)")
    if gpus is None:
        if seen_gpus is None:
            _collective_without_gpus(output, collective)
            raise RingsimError(f"{output.name} has no '# Rank … on HOST device …' lines, so the "
                               "number of GPUs is unknown: give --gpus G (and --nodes M)")
        gpus = seen_gpus
    elif seen_gpus is not None and gpus < seen_gpus:
        raise RingsimError(f"--gpus {gpus} disagrees with the {seen_gpus} ranks the header lists")
    elif seen_gpus is not None and gpus > seen_gpus:
        # A paste whose rank list was cut after its first lines: the user says how many ran,
        # and the hosts it names are not all of them either.
        notes.append(f"the header lists {plural(seen_gpus, 'rank line')} (0 to {seen_gpus - 1:,}); "
                     f"--gpus {gpus:,} takes the others as left out of the paste")
        hosts = []
    if nodes is None:
        nodes = len(hosts) if hosts else None
    elif hosts and nodes != len(hosts):
        raise RingsimError(f"--nodes {nodes} disagrees with the {plural(len(hosts), 'host')} the "
                           "header names")
    if gpus < 2:
        raise RingsimError(f"{output.name} ran on {gpus} GPU: a collective needs at least 2")
    return gpus, nodes, notes


def _partial_header(output: Output, collective: str | None, gpus: int | None,
                    nodes: int | None, numbers: list[int]) -> tuple[int, int | None, list[str]]:
    """G, M and notes where the header's rank lines are not numbered 0 to n-1, as nccl-tests
    numbers them: lines left out of the paste (ranks 0, 7, 8 and 15 of 16) or numbers edited.
    --gpus decides where given; otherwise the rows' busbw/algbw, which tells the two apart
    (16 GPUs for the trimmed list, as many as the lines for edited numbers). Where neither
    settles G, it is asked for rather than guessed."""
    listed = (f"the header's {plural(len(numbers), 'rank line')} are numbered {numbers[0]:,} "
              f"to {numbers[-1]:,}, not 0 to {len(numbers) - 1:,}")
    if gpus is not None:
        if gpus < len(numbers):
            raise RingsimError(f"--gpus {gpus} is fewer than the {len(numbers):,} ranks the "
                               "header lists")
        why = "as --gpus gives"
    else:
        implied = implied_gpus(output, collective)
        if implied is None or implied[0] < len(numbers):
            raise RingsimError(f"{output.name}: {listed}, and the rows' busbw does not settle "
                               "how many ranks ran: give --gpus G")
        gpus, (ratio, test) = implied
        why = f"as the rows' busbw of {ratio:.3f} × algbw implies for {PERF[test]}"
    some = ("some were left out of the paste" if gpus > len(numbers) else
            "some may have been renumbered")
    hosts = output.hosts
    if nodes is None:
        nodes = len(hosts) if hosts else None
    elif nodes < len(hosts):
        raise RingsimError(f"--nodes {nodes} is fewer than the {plural(len(hosts), 'host')} the "
                           "header names")
    return gpus, nodes, [f"{listed}: {some}; the model takes {plural(gpus, 'GPU')}, {why}"]


def _collective_without_gpus(output: Output, collective: str | None) -> None:
    """Before G is asked for, refuse a --collective that the rows contradict in what they show
    without G (check_collective): G would not make them that test."""
    if collective is not None:
        check_collective(output, None, collective)


def implied_gpus(output: Output, collective: str | None) -> tuple[int, tuple[float, str]] | None:
    """G where the rows' busbw/algbw fits one number of ranks
    (nccltests_counts.ranks_from_busbw) for a test known without G: the one given or named, or
    all_reduce_perf where the rows show it (a reducing redop, root -1, the whole size's
    count); with the ratio and that test. None otherwise: an all_gather_perf's count column
    needs G before it tells the test."""
    test = collective or output.collective
    rows = [r for r in output.rows if r.bytes > 0]
    if test is None and rows and all(r.redop not in (None, "none") and r.root == -1
                                     and whole_count(r) for r in rows):
        test = "all-reduce"
    found = ranks_from_busbw(output.rows, test) if test else None
    if found is None or len(found[1]) != 1 or found[1][0][0] != found[1][0][1]:
        return None
    return found[1][0][0], (found[0], test)


def check_one_test(output: Output) -> None:
    """Refuse in one line a paste whose rows are of more than one test (or of one test over
    several types or redops, -d all and -o all): the first row that differs, and how
    (nccltests_counts.other_test); or a second table's rows read below the first's."""
    found = other_test(output.rows)
    if found is None and output.second_table:
        # nccl-tests prints its column header once a run, however many -N cycles follow
        raise RingsimError(f"{output.name} holds more than one nccl-tests table, one after "
                           f"another (a second column header at {output.second_table}): pass "
                           "one run's output, from its '# nThread' line to the next")
    if found is None:
        return
    row, mine, theirs = found
    size = format_bytes(row.bytes)
    if mine[0] == row.dtype:  # its type differs: "is bfloat16 with redop none"
        what = (f"{size} is {' with '.join(mine)} where the rows before are "
                f"{' with '.join(theirs)}")
    else:
        what = f"{size} has {' and '.join(mine)} where the rows before have {' and '.join(theirs)}"
    raise RingsimError(f"rows of different tests in {output.name}: {what}; paste one test's "
                       "output, of one type and one redop (nccl-tests' -d all and -o all print "
                       "several)")


def check_gpus(output: Output, gpus: int, collective: str, named: bool = True) -> None:
    """Refuse in one line a G (--gpus, or the header's ranks) that the rows' busbw/algbw
    contradicts, saying what it implies (nccltests_counts.ranks_from_busbw); `named`: whether the
    paste or --collective named the test, rather than its columns. Where no n fits, the ratio
    speaks of the test rather than of G, and G is left to the other checks."""
    found = ranks_from_busbw(output.rows, collective, rough=True)
    if found is None or not found[1] or any(lo <= gpus <= hi for lo, hi in found[1]):
        return
    ratio, fits = found
    formula = RANKS_FROM_FACTOR[collective][0]
    implied = " or ".join(f"{lo:,}" if lo == hi else f"{lo:,} to {hi:,}" for lo, hi in fits)
    given = (f"the {gpus:,} ranks the header lists" if output.gpus is not None
             else f"--gpus {gpus:,}")
    cut = (f" (or, where the header's rank list was cut short, give --gpus {fits[0][0]:,})"
           if len(fits) == 1 and fits[0][0] == fits[0][1] and fits[0][0] > gpus else "")
    advice = ("the rows are not those of the run the header describes: paste one run's header "
              "and its rows" + cut if output.gpus is not None else
              f"give --gpus {fits[0][0]:,}" if len(fits) == 1 and fits[0][0] == fits[0][1]
              else "give the --gpus that ran")
    if not named and collective == "all-reduce" and fits == [(2, 2)]:
        # busbw = algbw is also what reduce_perf and broadcast_perf print, on any n; a layout
        # without a root column cannot tell those from all_reduce_perf
        advice += ", or --collective reduce or broadcast if it ran reduce_perf or broadcast_perf"
    factor = float(bus_factor(collective, gpus))
    raise RingsimError(f"{output.name}'s rows print busbw = {ratio:.3f} × algbw, which is "
                       f"{formula} for n = {implied} GPUs in {PERF[collective]}, not for {given} "
                       f"({factor:.3f}): {advice}")


def check_count(output: Output, gpus: int) -> None:
    """Refuse in one line rows whose count column is, at every size, neither the whole size's
    count nor a share of the run's G ranks (nccltests_counts.count_fits), saying what share it is
    where it is one. Layouts with neither a redop nor a root column are not read (_columns)."""
    rows = [r for r in output.rows if r.bytes > 0]
    if not rows or all(r.redop is None and r.root is None for r in rows) \
            or any(count_fits(r, gpus) for r in rows):
        return
    first, n = rows[0], share_of(rows)
    but = f" but a share of {n:,} ranks" if n else ""
    what = (f"{output.name}: the count column of {format_bytes(first.bytes)} "
            f"({plural(first.count, first.dtype + ' element')}) is neither the whole size's "
            f"nor {article(gpus)} {gpus:,}-rank share{but}")
    if output.gpus is not None:
        advice = ("the rows are not those of the run the header describes; paste one run's "
                  "header and its rows")
    else:
        advice = f"give --gpus {n:,}" if n else "give the --gpus that ran"
    raise RingsimError(f"{what}: {advice}")


def measured_rows(output: Output) -> tuple[list[Row], list[str]]:
    """One row per size above 0 bytes (the first when a size repeats), and what was left out.

    A size printed again (nccl-tests -N prints every cycle; two runs' rows pasted together
    print each size twice) is left out; where its time differs from the first by more than
    25% the note says by how much, since the answer speaks for the first."""
    notes, seen, rows, first, apart = [], set(), [], {}, 1.0
    for row in output.rows:
        if row.bytes <= 0:
            continue
        key = (row.bytes, row.dtype, row.redop, row.root)
        kept = first.setdefault(key, row.seconds)
        apart = max(apart, row.seconds / kept, kept / row.seconds)
        if row.bytes in seen:
            continue
        seen.add(row.bytes)
        rows.append(row)
    repeated = sum(1 for r in output.rows if r.bytes > 0) - len(rows)
    if repeated:
        differ = (f"; their times differ from the first by up to {apart:.2f}×: rows of more than "
                  "one run pasted together, or nccl-tests -N cycles that disagree, which one "
                  "answer cannot speak for" if apart > 1.25 else "")
        notes.append(f"{repeated} repeated size{'s' * (repeated > 1)} left out (the first row of "
                     f"each kept){differ}")
    if output.skipped:
        notes.append(f"{output.skipped} row{'s' * (output.skipped > 1)} cut short or unreadable left out")
    if output.past_limit:
        notes.append(f"{output.past_limit:,} row{'s' * (output.past_limit > 1)} after the first "
                     f"{MAX_ROWS:,} left out (diagnose reads at most {MAX_ROWS:,})")
    if not rows:
        raise RingsimError(f"{output.name} has only 0-byte rows: nothing to compare")
    rows = sorted(rows, key=lambda r: r.bytes)
    stopped = _stopped_short(output, rows[-1].bytes)
    if stopped:
        notes.append(stopped)
    return rows, notes


def _stopped_short(output: Output, largest: int) -> str:
    """A note where the rows end a whole step before the largest size the header asked for
    and no footer follows them ('' otherwise): a run that hung or died there, or a cut paste."""
    if output.asked is None or output.avg_busbw is not None:
        return ""
    low, high, step, factor = output.asked
    if low < 1 or high < low or (factor and step < 2) or (not factor and step < 1):
        return ""
    # The largest size nccl-tests' loop reaches: low, low·f, low·f², … (or low + k·step) ≤ high.
    last = low + (high - low) // step * step if not factor else low
    while factor and last * step <= high:
        last *= step
    # A row is its size rounded down to whole elements (or ranks' shares), never a step short.
    short = largest * step <= last if factor else largest + step <= last
    if not short:
        return ""
    return (f"the rows stop at {format_bytes(largest)}, though the header asks for sizes up to "
            f"{format_bytes(last)} (maxBytes), and no '# Avg bus bandwidth' line follows them: the "
            "run stopped there (a hang, a crash or a time limit: NCCL_DEBUG=WARN says which) or "
            "the paste is cut")


# What each test's rows print (nccltests_counts.test_from_rows): whether its redop column reduces,
# whether its root column holds a rank, and whether its count is the whole size's.
SHOWS = {"all-reduce": (True, False, True), "all-gather": (False, False, False),
         "reduce-scatter": (True, False, False), "broadcast": (False, True, True),
         "reduce": (True, True, True)}


def _columns(output: Output, gpus: int | None) -> dict[str, tuple[bool, str]]:
    """What the rows' own columns show where every row agrees: 'redop' (reduces?), 'root'
    (a rank?) and 'count' (the whole size's?, read only beside a redop or root column, as
    nccl-tests has printed it since it added them), each with its words; a column the layout
    lacks, or whose rows disagree, shows nothing. Without G (None) the count shows only where
    it is the whole size's: whether it is a share needs G."""
    rows = [r for r in output.rows if r.bytes > 0]
    shown: dict[str, tuple[bool, str]] = {}
    redops = {r.redop for r in rows if r.redop is not None}
    if len(redops) == 1 or (redops and "none" not in redops):
        op = sorted(redops)[0]
        shown["redop"] = (op != "none", f"redop {op}" if op != "none" else "no reduction")
    roots = {r.root for r in rows if r.root is not None}
    if roots and len({root >= 0 for root in roots}) == 1:
        root = min(roots)
        shown["root"] = (root >= 0, f"root {root}")
    typed = [r for r in rows if r.dtype in DTYPES]
    if typed and shown:  # a layout with a redop or root column: today's count column
        whole = all(whole_count(r) for r in typed)
        share = gpus is not None and all(share_count(r, gpus) for r in typed)
        if whole != share:
            shown["count"] = (whole, "the whole size's count" if whole else
                              f"a count of each rank's share (count x type size x {gpus} = size)")
    return shown


def check_collective(output: Output, gpus: int | None, collective: str) -> None:
    """Refuse, in one line, a --collective that the paste itself contradicts: the test it
    names, or its redop, root and count columns (SHOWS), where they tell. A paste whose
    columns cannot tell (no root or redop column) takes the flag as it is. Without G (None)
    what the columns show without it is checked, so that a contradiction is said before G
    is asked for."""
    flag, perf = f"--collective {collective}", PERF[collective]
    named = output.collective
    if named is not None and named != collective:
        raise RingsimError(f"{output.name} is the output of {PERF.get(named, named)} and {flag} "
                           f"says {perf}: leave --collective out, or give the test that ran")
    shown = _columns(output, gpus)
    wants = dict(zip(("redop", "root", "count"), SHOWS[collective]))
    if all(value == wants[name] for name, (value, _) in shown.items()):
        return
    seen = test_from_rows(output.rows, gpus)
    said = ", ".join(words for _, words in shown.values())
    if seen is None:
        raise RingsimError(f"{output.name}'s rows ({said}) are not {perf}'s, which {flag} says: "
                           "give the --collective that ran")
    raise RingsimError(f"{output.name}'s rows ({said}) are {PERF.get(seen, seen)}'s, and {flag} "
                       f"says {perf}: give the --collective that ran, or leave it out to take "
                       "the one the rows show")


def root_notes(output: Output, gpus: int, collective: str) -> list[str]:
    """A note where a rooted test's root column names no rank of the run (0 to G-1)."""
    if collective not in ROOTED:
        return []
    roots = sorted({r.root for r in output.rows if r.root is not None and r.root >= gpus})
    if not roots:
        return []
    return [f"the rows' root {roots[0]:,} is not one of the run's {gpus:,} ranks (0 to "
            f"{gpus - 1:,}); every root is priced alike, as NCCL's model does"]


def which_test(output: Output, gpus: int, notes: list[str]) -> str:
    """The collective the output ran: the test it names, else the one its rows' columns show
    (nccltests_counts.test_from_rows), else all-reduce; a note says which was taken, and a test the
    model cannot price is a one-line error."""
    named = output.collective
    seen = None if named else test_from_rows(output.rows, gpus)
    test = named or seen
    if test is not None and test not in PRICED:
        first = output.rows[0]
        perf = PERF.get(test, test)
        what = (f"is the output of {perf}" if named else f"does not name its test, and its rows "
                f"(redop {first.redop}, root {first.root}) are {perf}'s")
        raise RingsimError(f"{output.name} {what}: NCCL's model prices "
                           f"{', '.join(PERF[c] for c in PRICED[:-1])} and {PERF[PRICED[-1]]} only")
    if named:
        return named
    if seen is None and output.rows and all(r.redop in (None, "none") for r in output.rows):
        # all_reduce_perf always reduces; nccl-tests prints "none" for the tests that do not
        # (all_gather_perf, broadcast_perf, alltoall_perf), so all-reduce cannot be assumed
        count = _columns(output, gpus).get("count")
        odd = ("" if count is not None else "; its count column fits neither the whole size nor "
               "a rank's share of it")
        raise RingsimError(f"{output.name} does not name its test and its rows' redop is "
                           f"'none', so it is not all_reduce_perf{odd}: give --collective")
    if seen in ("reduce-scatter", "all-gather"):
        also = "" if seen == "reduce-scatter" else "; alltoall_perf prints the same columns"
        notes.append(f"the output does not name its test: its count column is each rank's share "
                     f"of the size (count × type size × {gpus} ranks = size), so it is taken as "
                     f"{PERF[seen]}{also} (give --collective)")
        return seen
    if seen in ROOTED:
        # only the rooted tests print a root of 0 or more, and a reduce's redop tells it from a
        # broadcast (nccltests_counts.test_from_rows)
        first = output.rows[0]
        what = f"redop {first.redop}" if seen == "reduce" else "no reduction"
        notes.append(f"the output does not name its test: its rows have root {first.root}, the "
                     f"whole size's count and {what}, so it is taken as {PERF[seen]} (give "
                     "--collective)")
        return seen
    notes.append("the output does not name its test: taken as all_reduce_perf (give --collective)")
    return "all-reduce"


def per_process(output: Output, topology, gpus: int, nodes: int, notes: list[str]) -> int:
    """The GPUs one process drove (the header's nGpus) where they fit the run, else 1; a note says which."""
    from ..cost.nccl import check_per_process, host_seconds
    n = output.gpus_per_process or 1
    if n == 1:
        return 1
    try:
        check_per_process(topology, gpus, n)
    except RingsimError:
        notes.append(f"the header's nGpus {n} (GPUs one process drove) does not fit {gpus} GPUs "
                     f"in {plural(nodes, 'node')}: the host's time to issue each call is not modelled")
        return 1
    notes.append(f"one process drove {n} GPUs (nGpus {n}): one thread issues each call to all "
                 f"of them, so the model holds every call to at least "
                 f"{format_seconds(host_seconds(n))} ({format_seconds(host_seconds(1))} per GPU, "
                 "ringsim's estimate); one process per GPU (-g 1) shows the GPUs' own latency")
    return n


def release_note(version: str | None, nccl: str | None) -> str | None:
    """What the notes say of the release the paste ran, beside the tables the model used."""
    from ..cost.nccl_tuner import release, versions, versions_text
    known = versions()
    used = nccl or known[0]
    if not version:
        return f"the model uses NCCL {used}'s tuning tables" if nccl else None
    ran = release(version)
    if ran == used:
        return f"the run used NCCL {ran}; the model uses that release's tuning tables"
    if ran in known:
        return (f"the run used NCCL {ran}; the model uses NCCL {used}'s tuning tables "
                f"(--nccl {ran} prices it with its own)")
    return (f"the run used NCCL {ran}; ringsim has the tuning tables of NCCL "
            f"{versions_text()}, and the model uses {used}'s")
