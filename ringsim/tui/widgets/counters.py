"""The counters: elements moved so far per GPU (bars) and in total, against the seed's formulas."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.widgets import Static

from ...formula import format_number
from ...naming import gpu_name
from ...simulation import Simulation

BAR = 12  # characters per bar


def _bar(value: int, scale: float, colour: str) -> Text:
    """A bar of BAR characters filled in proportion to value/scale, then the number."""
    filled = 0 if scale <= 0 else min(BAR, round(BAR * value / scale))
    text = Text("█" * filled, style=colour)
    text.append("░" * (BAR - filled), style="grey30")
    text.append(f" {value:,}")
    return text


class Counters(Static):
    """Totals, the busiest GPU, messages and steps beside their formulas; a bar pair per GPU."""

    def show(self, sim: Simulation) -> None:
        """Show the Simulation's ledger so far and its closed-form figures."""
        ledger, formulas = sim.ledger(), sim.closed_form()
        busiest = ledger.busiest()
        summary = Table.grid(padding=(0, 1))
        summary.add_column(style="bold")
        summary.add_column(justify="right")
        summary.add_column(style="cyan")
        summary.add_row("moved so far", format_number(ledger.total), f"of {formulas.total}")
        summary.add_row(f"busiest {gpu_name(busiest)} sent", format_number(ledger.sent[busiest]),
                        f"of {formulas.busiest_sent}")
        summary.add_row(f"busiest {gpu_name(busiest)} received", format_number(ledger.received[busiest]),
                        f"of {formulas.busiest_received}")
        summary.add_row("messages", format_number(ledger.messages), f"of {formulas.messages}")
        summary.add_row("steps", format_number(ledger.steps), f"of {formulas.steps}")

        # Bars share one scale, the busiest GPU's share at the end: the master's overload and
        # the ring's even spread are visible at a glance.
        scale = float(max(formulas.busiest_sent.value, formulas.busiest_received.value))
        bars = Table.grid(padding=(0, 1))
        bars.add_column(style="bold")
        bars.add_column()
        bars.add_column()
        bars.add_row("", Text("sent", style="dim"), Text("received", style="dim"))
        for g in range(sim.plan.gpus):
            bars.add_row(gpu_name(g), _bar(int(ledger.sent[g]), scale, "#ff9f1c"),
                         _bar(int(ledger.received[g]), scale, "#e056fd"))

        grid = Table.grid()
        grid.add_row(summary)
        grid.add_row("")
        grid.add_row(bars)
        self.update(grid)
