"""Faults as data: slow GPUs, slow links and late GPUs, parsed from 'K:F', 'A-B:F', 'K:T'.

GPU numbers are 1-based as users write them and 0-based inside. A factor F is the speed
kept: 0.5 is half speed, so what the fault touches takes 1/F as long.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..core.checks import echo, parse_count
from ..core.errors import RingsimError
from ..core.naming import gpu_name
from ..core.units import format_seconds, parse_seconds


@dataclass(frozen=True)
class Fault:
    """One fault: kind 'slow-gpu' (gpus = (k,)), 'slow-link' (gpus = (a, b)) or 'delay' (gpus = (k,)).

    `value` is the speed factor F (slow-gpu, slow-link) or the seconds late (delay).
    """

    kind: str
    gpus: tuple[int, ...]
    value: float

    def __str__(self) -> str:
        if self.kind == "slow-link":
            a, b = self.gpus
            return f"link {gpu_name(a)}–{gpu_name(b)} at {self.value:g}× speed"
        if self.kind == "slow-gpu":
            return f"{gpu_name(self.gpus[0])} at {self.value:g}× speed"
        return f"{gpu_name(self.gpus[0])} joins {format_seconds(self.value)} late"

    def flag(self) -> str:
        """The fault as the command line writes it: '--slow-link 1-2:0.5'."""
        if self.kind == "slow-link":
            where = f"{self.gpus[0] + 1}-{self.gpus[1] + 1}"
        else:
            where = f"{self.gpus[0] + 1}"
        if self.kind == "delay" and 0 <= self.value < float("inf"):  # a duration needs its unit
            scale, unit = next((m, u) for m, u in ((1e-6, "us"), (1e-3, "ms"), (1.0, "s"))
                               if self.value < m * 1000 or u == "s")
            return f"--delay {where}:{self.value / scale:.6g}{unit}"
        return f"--{self.kind} {where}:{self.value:g}"

    def check(self, gpus: int) -> None:
        """Refuse a fault naming a GPU outside 1..G, or with a factor or delay out of range."""
        if self.kind not in ("slow-gpu", "slow-link", "delay"):
            raise RingsimError(f"a fault is slow-gpu, slow-link or delay, got {self.kind!r}")
        why = _out_of_range(self.kind, float(self.value))
        if why:
            raise RingsimError(f"{self.flag()}: {why}")
        for g in self.gpus:
            if not 0 <= g < gpus:
                raise RingsimError(f"{self.flag()}: GPU {g + 1} is outside 1..{gpus}")


SPEED_FACTORS = (1e-6, 1e6)  # beyond a million× slower or faster no run means anything
MAX_DELAY = 1e6  # seconds


def _out_of_range(kind: str, value: float) -> str | None:
    """Why a fault's factor or delay is out of range, or None when it is not."""
    if kind == "delay":
        fine = math.isfinite(value) and 0 <= value <= MAX_DELAY
        return None if fine else "a delay must be from 0 to 1,000,000 s"
    fine = math.isfinite(value) and SPEED_FACTORS[0] <= value <= SPEED_FACTORS[1]
    return None if fine else "the speed factor must be from 0.000001 to 1,000,000 (0.5 = half speed)"


def _gpu(text: str, flag: str) -> int:
    try:
        number = parse_count(text, flag, minimum=None)
    except RingsimError:
        raise RingsimError(f"{flag}: expected a GPU number, got {text!r}") from None
    if number < 1:
        raise RingsimError(f"{flag}: GPU numbers start at 1, got {number}")
    return number - 1


def _factor(text: str, flag: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise RingsimError(f"{flag}: expected a speed factor such as 0.5, got {echo(text)}") from None
    why = _out_of_range("slow-gpu", value)
    if why:
        raise RingsimError(f"{flag}: {why}, got {text}")
    return value


def _split(text: str, flag: str, example: str) -> tuple[str, str]:
    where, sep, value = str(text).rpartition(":")
    if not sep or not where or not value:
        raise RingsimError(f"{flag}: expected {example}, got {text!r}")
    return where, value


def slow_gpu(text: str) -> Fault:
    """'K:F': GPU K computes and sends at F× speed."""
    where, value = _split(text, "--slow-gpu", "K:F such as 2:0.5")
    return Fault("slow-gpu", (_gpu(where, "--slow-gpu"),), _factor(value, "--slow-gpu"))


def slow_link(text: str) -> Fault:
    """'A-B:F': the link between GPUs A and B carries F× its bandwidth, both ways."""
    where, value = _split(text, "--slow-link", "A-B:F such as 1-2:0.5")
    a, sep, b = where.partition("-")
    if not sep:
        raise RingsimError(f"--slow-link: expected A-B:F such as 1-2:0.5, got {text!r}")
    ends = (_gpu(a, "--slow-link"), _gpu(b, "--slow-link"))
    if ends[0] == ends[1]:
        raise RingsimError(f"--slow-link: a link joins two different GPUs, got {text!r}")
    return Fault("slow-link", tuple(sorted(ends)), _factor(value, "--slow-link"))


def delay(text: str) -> Fault:
    """'K:T': GPU K joins T late (T with a unit: 10us, 2ms)."""
    where, value = _split(text, "--delay", "K:T such as 3:10us")
    seconds = parse_seconds(value, "--delay")
    return Fault("delay", (_gpu(where, "--delay"),), seconds)
