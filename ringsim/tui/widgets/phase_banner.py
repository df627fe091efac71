"""The phase banner: the scenario, where the run is, whether autoplay is on, and the clock."""

from __future__ import annotations

import re

from rich.cells import cell_len
from rich.text import Text
from textual import events

from ...sim.simulation import Simulation
from ..clock import Reading
from .lines import TextLines

GAP = "   "  # between the phase and the clock
SHORT_GAP = "  "  # the same on narrow terminals, with the short phase


def short_phase(banner: str) -> str:
    """'Reduce-scatter · iteration 2 of 3' → 'Reduce-scatter · 2 of 3', 'Start: every GPU holds
    only its own gradient' → 'Start' (for narrow terminals)."""
    return re.sub(r" · iteration (\d+ of \d+)", r" · \1", banner.split(":")[0])


def shortest_phase(banner: str) -> str:
    """The short phase with its level in fewer words: 'Reduce-scatter in node · 1 of 3'."""
    head, sep, tail = short_phase(banner).partition(" · ")
    return head.replace(" inside each node", " in node").replace(" across nodes", " across") + sep + tail


def phase_line(banner: str, clock: Reading | str | None, width: int | None) -> tuple[str, str, str]:
    """The phase and the clock's wording for a line of `width` columns: the full phase with
    the longest wording that sets NCCL's time beside the clock and keeps the step's, else the
    short (or shortest) phase with the longest that sets NCCL's time beside it; where none
    fits, the full phase with the longest plain wording that fits, else the short phase with
    the longest that fits (else the shortest of all, which the banner cuts with an ellipsis)."""
    if not isinstance(clock, Reading):
        return banner, GAP, clock or ""
    wordings = clock.plain_wordings()
    if width is None:
        return banner, GAP, clock.wordings()[0]
    short, shortest = short_phase(banner), shortest_phase(banner)
    # Setting NCCL's time beside the textbook clock is worth the phase's longer words, once
    # the wordings that keep the step's own time do not fit beside them.
    nccl = clock.nccl_wordings()
    tries = ([(banner, GAP, w) for w in nccl[:3]] + [(short, SHORT_GAP, w) for w in nccl]
             + [(shortest, SHORT_GAP, w) for w in nccl[-2:]]
             + [(banner, GAP, w) for w in wordings[:-2] or wordings[:1]]
             + [(short, SHORT_GAP, w) for w in wordings]
             + [(shortest, SHORT_GAP, w) for w in wordings[-2:]])
    return next((t for t in tries if sum(map(len, t)) <= width), tries[-1])


def title_line(title: str, where: str, play: tuple[str, str], width: int | None) -> tuple[str, str]:
    """The title and 'step 3 of 6 · ■ paused' for a line of `width` columns: the step and the
    play state always show whole; the speed goes first, then the title's last parts whole
    ('· 8 elements per GPU'), then its end at a word (with '…')."""
    for state in (where + play[0], where + play[1]):
        if width is None or cell_len(title + state) <= width:
            return title, state
    room = max(width - cell_len(state), 0)
    parts = title.split(" · ")
    while len(parts) > 1:
        parts.pop()
        if cell_len(" · ".join(parts)) <= room:
            return " · ".join(parts), state
    cut = title[:max(room - 1, 0)]
    if " " in cut.strip():
        cut = cut.rstrip().rsplit(" ", 1)[0]
    return (cut.rstrip() + "…" if room > 1 else ""), state


class PhaseBanner(TextLines):
    """'Ring all-reduce · 4 GPUs · …' over 'Reduce-scatter · iteration 2 of 3   time: step … · so far … · end …'.

    The clock takes the longest wording that fits beside the phase (`time: step 5.00 µs · so
    far …` on wide terminals, `step 5.00 µs · 5.00 µs of 30.00 µs · flat` at 80 columns)."""

    _shown: tuple | None = None

    def show(self, sim: Simulation, playing: bool = False, delay: float = 1.0,
             clock: Reading | str | None = None) -> None:
        """Show the simulation's title and banner; the class says start, running or done."""
        state = "-done" if sim.done and sim.position else "-start" if sim.position == 0 else "-running"
        for name in ("-done", "-start", "-running"):
            self.set_class(name == state, name)
        play = (f" · ▶ playing · {delay:g} s per iteration", " · ▶ playing") if playing else (" · ■ paused",) * 2
        self._shown = (sim.title, f"   step {sim.position} of {len(sim.plan)}", play, sim.banner, clock)
        self._draw()

    def on_resize(self, event: events.Resize) -> None:
        """Draw again: another width may take another wording of the clock."""
        self._draw()  # another width may take another wording of the clock

    def _draw(self) -> None:
        if self._shown is None:
            return
        title, where, play, banner, clock = self._shown
        width = self.content_region.width or None
        # A slide (`ringsim export`) is never playing or paused: no such words on it.
        title, state = title_line(title, where, ("", "") if self.screen.has_class("-slide") else play, width)
        text = Text()
        text.append(title, style="bold")
        text.append(state + "\n", style="dim")
        phase, gap, clock = phase_line(banner, clock, width)
        text.append(phase, style="bold")
        if clock:
            text.append(gap + clock)
        self.show_text(text)  # two lines: only a changed one is drawn again
