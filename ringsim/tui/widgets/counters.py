"""The counters: elements moved so far per GPU (bars) and in total, against their closed forms."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from ...formula import format_number
from ...naming import gpu_name
from ...simulation import Simulation
from ..sized import update_sized

BAR = 12  # characters per bar
SENT = "#ff9f1c"
RECEIVED = "#e056fd"


class Counters(Static):
    """Totals, the busiest GPU, messages and steps beside their formulas; a bar pair per GPU."""

    def show(self, sim: Simulation) -> None:
        """Show the Simulation's ledger so far and its closed-form figures."""
        ledger, formulas = sim.ledger(), sim.closed_form()
        busiest = gpu_name(ledger.busiest())
        rows = [
            ("moved so far", ledger.total, formulas.total),
            (f"busiest {busiest} sent", ledger.sent[ledger.busiest()], formulas.busiest_sent),
            (f"busiest {busiest} received", ledger.received[ledger.busiest()], formulas.busiest_received),
            ("messages", ledger.messages, formulas.messages),
            ("steps", ledger.steps, formulas.steps),
        ]
        name_width = max(len(r[0]) for r in rows)
        numbers = [format_number(r[1]) for r in rows]
        number_width = max(len(n) for n in numbers)
        text = Text(no_wrap=True, overflow="ellipsis")
        for (name, _, formula), number in zip(rows, numbers):
            text.append(name.ljust(name_width) + " ", style="bold")
            text.append(number.rjust(number_width) + " ")
            text.append(f"of {formula}\n", style="cyan")

        # One scale for every bar, the busiest GPU's share at the end: the master's overload
        # and the ring's even spread show at a glance.
        scale = float(max(formulas.busiest_sent.value, formulas.busiest_received.value))
        sent, received = ledger.sent.tolist(), ledger.received.tolist()
        digits = max(len(f"{v:,}") for v in sent + received)
        label = len(gpu_name(sim.plan.gpus - 1))
        text.append(f"\n{'':{label}} {'sent':<{BAR + digits + 3}}received\n", style="dim")
        for g in range(sim.plan.gpus):
            text.append(gpu_name(g).ljust(label) + " ", style="bold")
            self._bar(text, sent[g], scale, digits, SENT)
            text.append("  ")
            self._bar(text, received[g], scale, digits, RECEIVED)
            text.append("\n")
        text.right_crop(1)
        update_sized(self, text, sim.plan.gpus)

    @staticmethod
    def _bar(text: Text, value: int, scale: float, digits: int, colour: str) -> None:
        """A bar of BAR characters filled in proportion to value/scale, then the number."""
        filled = 0 if scale <= 0 else min(BAR, round(BAR * value / scale))
        # Coloured spaces rather than block glyphs: exact in exported SVGs as well as terminals.
        text.append(" " * filled, style=f"on {colour}")
        text.append(" " * (BAR - filled), style="on grey23")
        text.append(f" {value:>{digits},}")
