"""The counters: elements moved so far per GPU (bars) and in total, against their closed forms."""

from __future__ import annotations

from rich.text import Text
from textual.containers import VerticalScroll
from textual.widget import Widget

from ...algorithms import symbols
from ...core.formula import format_number
from ...core.naming import gpu_name
from ...core.width import wrap
from ...sim.simulation import Simulation
from .lines import TextLines

BAR = 12  # characters per bar
SENT = "#ff9f1c"
RECEIVED = "#e056fd"


class Counters(TextLines):
    """Totals, the busiest GPU, messages and steps beside their formulas; a bar pair per GPU.

    Compact (short terminals, GPU panels on screen): four rows, no bars, since each panel's
    bottom edge already shows its GPU's ↑ sent and ↓ received. A row whose formula would be
    cut shows the longest form of it that fits (Formula.forms: the exact expression alone,
    then the target alone, '36 of 264'), and the bars get shorter, so no figure is lost to
    the edge."""

    _shown: tuple[Simulation, bool] | None = None

    def show(self, sim: Simulation, compact: bool = False) -> None:
        """Show the Simulation's ledger so far and its closed-form figures."""
        self._shown = (sim, compact)
        self._draw()

    def on_resize(self) -> None:
        """Redraw the counters for the new width."""
        self.redraw()  # another width may need the short rows or shorter bars

    def redraw(self) -> None:
        """Draw again for the widget's width and the rows its box shows now."""
        self._draw()

    def _room(self) -> int | None:
        # The rows the box shows without scrolling (None before the first layout, and where
        # the box may scroll: only a projector's or a slide's counters give up rows to fit).
        screen = self.screen
        if not (screen.has_class("-present") or screen.has_class("-slide")):
            return None
        box = self.parent
        if not isinstance(box, VerticalScroll):
            return None
        rows = box.scrollable_content_region.height
        height, limit, column = box.styles.height, box.styles.max_height, box.parent
        if height is not None and height.is_auto and limit is not None and isinstance(column, Widget):
            # A box as tall as the counters (beside the heat map): the rows it may grow to,
            # not the rows the last text took.
            if not column.content_region.height:
                return None
            cap = int(limit.resolve(column.content_region.size, screen.size))
            rows = min(cap, column.content_region.height) - box.styles.gutter.height
        return max(rows, 0) or None

    def _draw(self) -> None:
        if self._shown is None:
            return
        sim, compact = self._shown
        room = self._room()
        for level in (0, 1, 2):
            text = self._rows_text(sim, compact, level)
            if room is None or compact or len(text.plain.split("\n")) <= room:
                break
        self.show_text(text)

    def _rows_text(self, sim: Simulation, compact: bool, level: int = 0) -> Text:
        """The counters as text; level 1 leaves out the blank row above the bars, level 2 also
        puts the busiest GPU's sent and received on one row when one formula gives both."""
        width = self.content_region.width or None
        ledger, formulas = sim.ledger(), sim.closed_form()
        g = sim.busiest_gpu()  # the GPU the targets belong to, not the busiest so far
        busiest = gpu_name(g)
        sent, received = format_number(ledger.sent[g]), format_number(ledger.received[g])
        if (compact or level >= 2) and formulas.busiest_sent == formulas.busiest_received:
            pair = [(f"busiest {busiest}", f"↑{sent} ↓{received}",
                     [f"{form} each" for form in formulas.busiest_sent.forms()])]
        else:
            pair = [(f"busiest {busiest} sent", sent, formulas.busiest_sent.forms()),
                    (f"busiest {busiest} received", received, formulas.busiest_received.forms())]
        rows = [
            ("moved so far", format_number(ledger.total), formulas.total.forms()),
            *pair,
            ("messages", format_number(ledger.messages), formulas.messages.forms()),
            ("steps", format_number(ledger.steps), formulas.steps.forms()),
        ]
        name_width = max(len(r[0]) for r in rows)
        number_width = max(len(r[1]) for r in rows)
        head = name_width + number_width + len("  of ")
        text = Text(no_wrap=True, overflow="ellipsis")
        for name, number, forms in rows:
            text.append(name.ljust(name_width) + " ", style="bold")
            text.append(number.rjust(number_width) + " ")
            # The longest form that fits: the formula, its exact part, or the target alone.
            shown = next((f for f in forms if width is None or head + len(f) <= width), forms[-1])
            text.append(f"of {shown}\n", style="cyan")
        if compact:
            text.right_crop(1)
            return text
        note = symbols(sim.plan.gpus, (form for _, _, forms in rows for form in forms),
                       sim.plan.options)
        if note and level == 0:  # a projector's short box gives up this line first
            text.append((wrap(f"({note})", width) if width else f"({note})") + "\n", style="dim")

        # One scale for every bar, the busiest GPU's share at the end: the master's overload
        # and the ring's even spread show at a glance.
        scale = float(max(formulas.busiest_sent.value, formulas.busiest_received.value))
        sent, received = ledger.sent.tolist(), ledger.received.tolist()
        digits = max(len(f"{v:,}") for v in sent + received)
        label = len(gpu_name(sim.plan.gpus - 1))
        # Each row: label, two bars with their numbers, two spaces between them.
        bar = BAR if width is None else max(1, min(BAR, (width - label - 1 - 2 * (digits + 1) - 2) // 2))
        text.append(("\n" if level == 0 else "") + f"{'':{label}} {'sent':<{bar + digits + 3}}received\n",
                    style="dim")
        for g in range(sim.plan.gpus):
            text.append(gpu_name(g).ljust(label) + " ", style="bold")
            self._bar(text, sent[g], scale, digits, SENT, bar)
            text.append("  ")
            self._bar(text, received[g], scale, digits, RECEIVED, bar)
            text.append("\n")
        text.right_crop(1)
        return text

    @staticmethod
    def _bar(text: Text, value: int, scale: float, digits: int, colour: str, bar: int = BAR) -> None:
        """A bar of `bar` characters filled in proportion to value/scale, then the number."""
        filled = 0 if scale <= 0 else min(bar, round(bar * value / scale))
        # Coloured spaces rather than block glyphs: exact in exported SVGs as well as terminals.
        text.append(" " * filled, style=f"on {colour}")
        text.append(" " * (bar - filled), style="on grey23")
        text.append(f" {value:>{digits},}")


class CountersBox(VerticalScroll):
    """The counters' box: when it grows or shrinks, the counters fit themselves to its rows."""

    def on_resize(self) -> None:
        """Redraw the counters inside when the box changes size."""
        for counters in self.query(Counters):
            counters.redraw()
