"""NCCL's channel settings as a paste shows them, and what the model does with them.

NCCL reads NCCL_MIN_NCHANNELS and NCCL_MAX_NCHANNELS, or their older names NCCL_MIN_NRINGS and
NCCL_MAX_NRINGS, which the newer ones override whatever their order (src/graph/connect.cc,
ncclMinNchannels); NCCL_MIN_CTAS and NCCL_MAX_CTAS bound the same count and NVLS's channels
too (src/init.cc), which cost/nccl_ctas.py applies. A value is read as C's strtoll reads it
(src/misc/param.cc): 010 is eight, 0x4 is four; NCCL then echoes it in decimal
(`NCCL_MAX_NCHANNELS set by environment to 4.`).
"""

from __future__ import annotations

import re

from ..core.errors import RingsimError

# strtoll stops at the first character that is not a digit (4.5 is 4); a value too long for it
# is an error, after which NCCL keeps its default, so it is not read here either
_SETTING = re.compile(r"\bNCCL_((?:MIN|MAX)_(?:NCHANNELS|NRINGS|CTAS)|NVLS_ENABLE|NVLS_NCHANNELS"
                      r"|(?:LL128_)?NTHREADS|BUFFSIZE)"
                      r"(?:=| set by environment to )[\"']?"
                      r"([-+]?(?:0[xX][0-9a-fA-F]{1,15}|\d{1,18}))(?![0-9a-fA-F]*\d)")
NVLS_ENABLE = "NCCL_NVLS_ENABLE"
# limits()'s keys and the NCCL settings they stand for
NAMES = {"min_channels": "NCCL_MIN_NCHANNELS", "max_channels": "NCCL_MAX_NCHANNELS",
         "nvls_channels": "NCCL_NVLS_NCHANNELS", "min_ctas": "NCCL_MIN_CTAS",
         "max_ctas": "NCCL_MAX_CTAS", "nthreads": "NCCL_NTHREADS",
         "ll128_nthreads": "NCCL_LL128_NTHREADS", "buffsize": "NCCL_BUFFSIZE"}


def c_integer(text: str) -> int:
    """`text` as C's strtoll(text, NULL, 0) reads it: 0x… hexadecimal, 0… octal up to the
    first digit that is not octal, else decimal."""
    sign = -1 if text.startswith("-") else 1
    digits = text.lstrip("+-")
    if digits[:2].lower() == "0x":
        return sign * int(digits[2:], 16)
    if digits.startswith("0"):
        octal = re.match(r"[0-7]*", digits).group()
        return sign * int(octal, 8)
    return sign * int(digits)


def read(line: str, number: int, found: dict[str, dict[int, int]]) -> None:
    """Add the settings `line` (line `number` of a paste) makes to `found`: by name, each value
    seen and the first line that set it."""
    for name, text in _SETTING.findall(line):
        found.setdefault(f"NCCL_{name}", {}).setdefault(c_integer(text), number)


def nvls_setting(found: dict[str, dict[int, int]], source: str) -> str | None:
    """'NCCL_NVLS_ENABLE=0' where the paste turns NVLS off (any value NCCL reads as 0: 0x0,
    -0), None where it does not say; a paste that sets it both off and on is refused."""
    values = found.get(NVLS_ENABLE, {})
    off = [line for value, line in values.items() if value == 0]
    on = [line for value, line in values.items() if value != 0]
    if off and on:
        raise RingsimError(f"{source} sets {NVLS_ENABLE} to 0 (line {min(off):,}) and to another "
                           f"value (line {min(on):,}): pass one run's output")
    return f"{NVLS_ENABLE}=0" if off else None


def nvls_unset_below(release: str) -> int | None:
    """The least NCCL_NVLS_NCHANNELS NCCL `release` takes as a setting (below it, NCCL keeps
    its own count); None where every value is one, held to 1: up to 2.24.3 any value is
    clamped (transport/nvls.cc), 2.25.1 and 2.26 drop a negative one, and from 2.27.3 the
    config takes only a positive one (init.cc)."""
    version = tuple(int(part) for part in release.split(".")[:3])
    return None if version < (2, 25, 1) else 0 if version < (2, 27) else 1


def limits(found: dict[str, dict[int, int]], given: dict[str, int | None], source: str,
           most: int, notes: list[str], nvls_runs: bool = True,
           nvls_floor: int | None = None) -> dict[str, int]:
    """min_channels / max_channels / nvls_channels as predict takes them: as `given`, else as
    the paste set them (`found`, by read), held where NCCL holds them (a minimum below 1 is
    none, a maximum or NVLS's count at least 1, each at most `most`); the notes say what the
    model does with each. NCCL_NVLS_NCHANNELS below `nvls_floor` (nvls_unset_below) leaves
    NCCL's own count, and where NVLS does not run (`nvls_runs` False) changes nothing. Two
    values for one setting, with no flag to settle it, are refused in one line. The paste's
    NCCL_MIN_CTAS / NCCL_MAX_CTAS come back as min_ctas / max_ctas, for the caller to apply,
    NCCL_NTHREADS / NCCL_LL128_NTHREADS as nthreads / ll128_nthreads, and NCCL_BUFFSIZE as
    buffsize; each of them `given` settles what the paste says."""
    held = {key: value for key, value in given.items() if value is not None}
    # each setting, the least NCCL keeps, the older name it overrides, the least its release
    # takes as a setting
    for bound, low, older, floor in (("min", 0, "NCCL_MIN_NRINGS", None),
                                     ("max", 1, "NCCL_MAX_NRINGS", None),
                                     ("nvls", 1, None, nvls_floor)):
        key, name = f"{bound}_channels", f"NCCL_{bound.upper()}_NCHANNELS"
        flag = key in held
        if flag:
            value = held.pop(key)
            said = f"{name}={value} (--{bound}-channels)"
        else:
            value, said = _pasted(found, source, bound, (name, older), low, most, floor, notes)
        if value is None:
            continue
        if key == "nvls_channels" and not nvls_runs:
            notes.append(f"{said}: NCCL ran no NVLS here, so it changes nothing"
                         + (" the model prices" if flag else ""))
            continue
        held[key] = value
        notes.append(f"{said}: " + ("" if flag else "as in NCCL, ") + {
            "min": "the model's ring and tree calls run on at least that many channels",
            "max": "the model's ring and tree calls run on the first that many channels",
            "nvls": "the model's NVLS and NVLSTree calls run on that many channels"}[bound])
    for bound in ("min", "max"):
        # NCCL_MIN_CTAS / NCCL_MAX_CTAS: init.cc keeps its default for a value below 1; the
        # caller applies the rest as NCCL does (cost/nccl_ctas.py)
        if f"{bound}_ctas" in held:  # a flag: it settles what the paste says
            continue
        value, said = _pasted(found, source, bound, (f"NCCL_{bound.upper()}_CTAS",), 1, 1 << 30,
                              None, notes, reader="init.cc")
        if value is not None:
            held[f"{bound}_ctas"] = value
    if "buffsize" not in held:
        value, said = _pasted(found, source, "buffsize", ("NCCL_BUFFSIZE",), 8, 1 << 40, None,
                              notes, reader="init.cc, computeBuffSizes")
        if value is not None:
            held["buffsize"] = value
    for key in ("nthreads", "ll128_nthreads"):
        # NCCL_NTHREADS / NCCL_LL128_NTHREADS: getNthreads reads 0 or less as unset and holds
        # the rest itself (cost/nccl_channels.py), so the value goes on as the paste gives it
        if key in held:
            continue
        value, said = _pasted(found, source, key, (f"NCCL_{key.upper()}",), 1, 1 << 62, None,
                              notes, reader="graph/tuning.cc, getNthreads")
        if value is not None:
            held[key] = value
    return held


def _pasted(found: dict[str, dict[int, int]], source: str, bound: str, names: tuple,
            low: int, most: int, floor: int | None, notes: list[str],
            reader: str | None = None) -> tuple[int | None, str]:
    """A setting as the paste makes it under the first of `names` it uses, held where NCCL
    holds it, and its words; None for the value where it is unset, sets nothing (a note says
    so) or the release keeps its own count. `reader`: for a setting diagnose has no flag for,
    the NCCL source that reads it, where a value below `low` is unset."""
    shown = next((n for n in names if n in found), None)
    if shown is None:
        return None, ""
    values = found[shown]
    if len(values) > 1:
        (a, line_a), (b, line_b) = sorted(values.items(), key=lambda item: item[1])[:2]
        raise RingsimError(f"{source} sets {shown} to {a:,} (line {line_a:,}) and to {b:,} "
                           f"(line {line_b:,}): pass one run's output"
                           + ("" if reader else f", or give --{bound}-channels"))
    value = next(iter(values))
    said = f"{shown}={value:,} in the paste"
    if low == 0 and value <= 0:  # a minimum of 0 or less is none
        notes.append(f"{said} sets no minimum")
        return None, said
    if reader and value < low:
        notes.append(f"{said}: NCCL reads a value below {low} as unset ({reader})")
        return None, said
    if floor is not None and value < floor:
        notes.append(f"{said}: this release keeps its own NVLS channels below {floor}")
        return None, said
    kept = min(max(value, low), most)
    return kept, said + (f" (NCCL holds it to {kept})" if kept != value else "")
