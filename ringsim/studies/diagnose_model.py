"""NCCL's model held to the run a paste shows, for diagnose: the release that prices it, the
GPUs each process drove, the channel, thread and buffer settings, the reduction, NVLS as the
run had it, and the paste's NCCL_ALGO / NCCL_PROTO where the model can follow them, each said
in a note where it changes the model. diagnose.py sets its prices beside the measured sizes.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Callable

from ..core.errors import RingsimError
from . import diagnose_inputs as inputs
from . import nccl_settings
from .ncclrun import no_nvls, run_release
from .nccltests import Output

PREDICT_AT_ONCE = 1000  # predict prices at most this many sizes a call


@dataclass(frozen=True)
class RunModel:
    """NCCL's model as the run ran: `price` (predict over any number of sizes, held to the
    release, the GPUs per process and NVLS as the run had them), its rows for the paste's
    sizes, and the settings it was held to."""

    price: Callable[..., list]
    predicted: list
    algo: str | None
    proto: str | None
    per_process: int
    nvls_off: str | None
    release_note: str | None
    limits: dict  # min_channels / max_channels, where the model was held to them
    settings: tuple[str, ...]  # the settings that held it, as set (Report.settings)
    redop: str  # the reduction it priced


def run_model(output: Output, topology, predict, gpus: int, nodes: int, collective: str,
              rows: list, dtype: str, notes: list[str], algo: str | None, proto: str | None,
              nccl: str | None, ran: str | None, nvls_off: str | None, given: dict) -> RunModel:
    """The model priced at the paste's sizes as the run ran (diagnose's arguments), with its
    notes: the release, the processes, a far NIC or slow links, and what became of the
    paste's NCCL_ALGO / NCCL_PROTO and NVLS, said where the notes on the paste end."""
    pasted = {name: output.env[name] for name, given in (("NCCL_ALGO", algo), ("NCCL_PROTO", proto))
              if given is None and name in output.env}
    algo = algo if algo is not None else pasted.get("NCCL_ALGO")
    proto = proto if proto is not None else pasted.get("NCCL_PROTO")
    held = len(notes)  # what the paste's NCCL_ALGO/NCCL_PROTO did is said here, once priced
    release_note = inputs.release_note(output.nccl_version or ran, nccl)
    if release_note:
        notes.append(release_note)
    if nccl:
        predict = functools.partial(predict, nccl=nccl)
    per_process = inputs.per_process(output, topology, gpus, nodes, notes)
    if per_process > 1:
        predict = functools.partial(predict, gpus_per_process=per_process)
    nvls_off = output.nvls_off or nvls_off
    limits, settings = _channel_limits(output, topology, gpus, collective, dtype, nccl, ran,
                                       nvls_off, given, notes)
    if limits:
        predict = functools.partial(predict, **limits)
    redop = _redop(rows, collective, dtype, notes)
    if redop != "sum":
        predict = functools.partial(predict, redop=redop)
    predict = functools.partial(_all_sizes, predict)
    if nvls_off:
        # NCCL gives NVLS and NVLSTree no bandwidth once NVLS is off, whatever NCCL_ALGO says
        # (tuning.cc), so every call the model prices leaves them out too.
        predict = functools.partial(no_nvls, predict)
    predicted, algo, proto = _held(lambda a, p: predict(topology, gpus, [r.bytes for r in rows],
                                                        collective=collective, algo=a, proto=p,
                                                        dtype=dtype),
                                   algo, proto, pasted)
    kept = {"NCCL_ALGO": algo, "NCCL_PROTO": proto}
    from ..cost.nccl_notes import fallback_note, path_note  # imported once the paste has passed
    # what a NIC far from its GPU, or links too slow for NCCL's search, do to the model, said
    # where the table is read
    notes += [note for note in (path_note(topology, gpus, nccl), fallback_note(topology, gpus, nccl))
              if note]
    notes[held:held] = [_held_note(name, value, kept[name] is not None, f"{collective} on {topology.name}")
                        for name, value in pasted.items()]
    if nvls_off:
        where = "the paste" if output.nvls_off else "the NCCL log"
        notes.insert(held, f"{nvls_off} in {where}: NCCL ran without NVLS and NVLSTree, and so "
                           "does the model")
    return RunModel(predict, predicted, algo, proto, per_process, nvls_off, release_note, limits,
                  settings, redop)


def _redop(rows: list, collective: str, dtype: str, notes: list[str]) -> str:
    """The reduction the rows' redop column shows (nccl-tests' -o), as predict takes it: sum
    where the column has none, the test reduces nothing or the name is not one ringsim knows;
    a note where it keeps NVLS from running (src/include/device.h, ncclNvlsSupported)."""
    from ..cost.nccl_graph import constants  # imported once the paste has passed
    types = constants()["types"]
    redop = rows[0].redop
    if collective not in ("all-reduce", "reduce-scatter", "reduce") or redop not in types["redops"]:
        return "sum"
    if redop != "sum" and dtype in types["nvls_sum"]:
        takes = redop in ("min", "max") and dtype in types["nvls_minmax"]
        if not takes:
            notes.append(f"redop {redop} in the paste: NVLink SHARP cannot take the {redop} of "
                         f"{dtype} (ncclNvlsSupported), so NCCL ran no NVLS or NVLSTree, and "
                         "neither does the model")
    return redop


def _channel_limits(output: Output, topology, gpus: int, collective: str, dtype: str,
                    nccl: str | None, ran: str | None, nvls_off: str | None, given: dict,
                    notes: list[str]) -> tuple[dict, tuple[str, ...]]:
    """The channel settings the model is held to (nccl_settings.limits), as the NCCL release
    that ran holds them where ringsim carries it, else the release pricing the run: its
    MAXCHANNELS (32 up to 2.24.3, 64 from 2.25.1), which NVLS_NCHANNELS it takes, and whether
    NVLS ran at all; and those settings as they were set ('NCCL_MAX_CTAS=4')."""
    from ..cost.nccl import channel_cap, runs_nvls  # imported once the paste has passed
    from ..cost.nccl_tuner import versions
    ran_release = run_release(output.nccl_version or ran) or nccl
    most = channel_cap(ran_release)
    asked = given.get("nvls_channels") is not None or "NCCL_NVLS_NCHANNELS" in output.channel_settings
    nvls_runs = asked and not nvls_off and runs_nvls(topology, gpus, collective, nccl, dtype)
    floor = nccl_settings.nvls_unset_below(ran_release or versions()[0])
    held = nccl_settings.limits(output.channel_settings, given, output.name, most, notes,
                                nvls_runs, floor)
    settings = tuple(f"{nccl_settings.NAMES[key]}={value}" for key, value in held.items())
    from ..cost.nccl_ctas import buffsize_note, ctas_note, threads_note, with_ctas

    def source(key: str) -> str:
        return f"(--{key.replace('_', '-')})" if given.get(key) is not None else "in the paste"
    for key in ("nthreads", "ll128_nthreads"):
        if key in held:
            notes.append(threads_note({key: held[key]}, source(key))[2:])
    if "buffsize" in held:
        notes.append(buffsize_note(held["buffsize"], source("buffsize"))[2:])
    ctas = {key: held.pop(key) for key in ("min_ctas", "max_ctas") if key in held}
    if not ctas:
        return held, settings
    bounded = with_ctas(topology, gpus, nccl, held, **ctas,
                        nvls=not nvls_off and runs_nvls(topology, gpus, collective, nccl, dtype))
    flags = {source(key) for key in ctas}
    notes.append(ctas_note(ctas.get("min_ctas"), ctas.get("max_ctas"), bounded,
                           flags.pop() if len(flags) == 1 else ""))
    return bounded, settings


def _all_sizes(predict, topology, gpus: int, sizes: list[int], **options) -> list:
    """predict over any number of sizes, PREDICT_AT_ONCE at a time."""
    return [row for start in range(0, len(sizes), PREDICT_AT_ONCE)
            for row in predict(topology, gpus, sizes[start:start + PREDICT_AT_ONCE], **options)]


def _held(price, algo, proto, pasted: dict[str, str]):
    """price(algo, proto) held to the NCCL_ALGO/NCCL_PROTO given or in the paste, and the
    algo and proto it was held to. A setting from the paste (`pasted`) that leaves NCCL no
    algorithm and protocol on the topology, or that ringsim cannot read, is dropped: the run
    finished, so NCCL ran its own choice, as the published runs that force NVLS on an A100
    are read (docs/cost.md). A setting the caller gave is never dropped."""
    tries = [(algo, proto)]
    if "NCCL_ALGO" in pasted:
        tries.append((None, proto))
    if "NCCL_PROTO" in pasted:
        tries += [(algo, None)] + ([(None, None)] if "NCCL_ALGO" in pasted else [])
    for i, (a, p) in enumerate(tries):
        try:
            return price(a, p), a, p
        except RingsimError:
            if i == len(tries) - 1:
                raise


def _held_note(name: str, value: str, kept: bool, what: str) -> str:
    """What became of an NCCL_ALGO or NCCL_PROTO the paste set (_held)."""
    if kept:
        return f"{name}={value} in the paste: the model is held to it too"
    return (f"{name}={value} in the paste leaves NCCL's model no algorithm and protocol for "
            f"{what} (or is a form ringsim does not read): the model takes NCCL's own choice instead")
