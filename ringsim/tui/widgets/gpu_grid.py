"""The detailed GPU view (up to 8 GPUs): one panel per GPU, one cell per segment."""

from __future__ import annotations

from textual.containers import Horizontal

from ...execute.backend import to_numpy
from ...core.naming import gpu_name, participant_name
from ...sim.simulation import Simulation
from ..cell import CellView
from ..marks import cell_peers
from .gpu_panel import GpuPanel, title_wordings

NUMBERS_SHOWN = 16  # a cell shows at most this many of a segment's numbers, then "…"


def _note(sent_to: list[int], came_from: list[int], op: str, gpus: int = 0, switches: int = 0) -> str:
    """'→ GPU2', '← GPU1 +', '⇄ 3 GPUs', '→ the switch': who this cell sent to and received from."""
    def who(peers: list[int]) -> str:
        if len(peers) == 1:
            return participant_name(peers[0], gpus, switches) if switches else gpu_name(peers[0])
        return f"{len(peers)} GPUs"
    if sent_to and came_from:
        return f"⇄ {who(sent_to)}" if sent_to == came_from else f"→{who(sent_to)} ←{who(came_from)}"
    if sent_to:
        return f"→ {who(sent_to)}"
    if came_from:
        return f"← {who(came_from)} {'+' if op == 'reduce' else '='}"
    return ""


class GpuGrid(Horizontal):
    """GPU panels side by side, fed by the Simulation (labels, values, the last step's moves)."""

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.gpus = self.segments = 0  # no panels yet

    async def build(self, gpus: int, segments: int | None = None) -> None:
        """Replace the panels when G or S changes (stepping only updates cells)."""
        shape = (gpus, gpus if segments is None else segments)
        if shape == (self.gpus, self.segments):
            return
        await self.remove_children()
        self.gpus, self.segments = shape
        await self.mount_all([GpuPanel(g, self.segments) for g in range(gpus)])

    def show(self, sim: Simulation, values: bool, present: bool = False,
             bottlenecks: tuple[int, ...] = (), selected: int | None = None,
             slow: dict[int, float] | None = None, rows: int = 2) -> None:
        """Show every buffer as the Simulation holds it now, the step just carried out,
        (●) the GPUs whose ports the step waited on, (▸) the selected GPU and (×F) slow GPUs;
        `rows` per cell (1 where two would not fit the terminal)."""
        slow = slow or {}
        gpus, segments = sim.plan.gpus, sim.plan.segments
        step = sim.current
        sent_to, came_from = cell_peers(step, gpus, segments)
        # A step may reduce some buffers and copy others (a pipelined tree): the op per cell.
        ops = {(t.dst, j): t.op for t in (step.transfers() if step is not None else ())
               for j in range(t.first, t.last + 1)}
        ledger = sim.ledger()
        master = sim.plan.options.get("master")
        numbers = to_numpy(sim.values()) if values else None
        offsets = [sim.layout.offset(j) for j in range(segments + 1)]
        max_terms = 0 if gpus <= 4 else 4
        for panel in self.query(GpuPanel):
            g = panel.gpu
            cells = []
            for j in range(segments):
                complete = sim.symbolic.is_complete(g, j)
                if numbers is not None:
                    row = numbers[g, offsets[j]:offsets[j + 1]]
                    text = " ".join(str(v) for v in row[:NUMBERS_SHOWN].tolist()) or "(empty)"
                    if len(row) > NUMBERS_SHOWN:
                        text += " …"
                else:
                    text = sim.symbolic.label(g, j, max_terms=max_terms)
                if complete:
                    text += " ✓"
                cells.append(CellView(text, _note(sent_to[g][j], came_from[g][j], ops.get((g, j), ""),
                                                        gpus, sim.plan.switches), complete,
                                      bool(sent_to[g][j]), bool(came_from[g][j])))
            title = title_wordings(g, selected=g == selected, slow=slow.get(g),
                                   master=g == master, bottleneck=g in bottlenecks)
            panel.show(title, int(ledger.sent[g]), int(ledger.received[g]), cells,
                       master=g == master, present=present, selected=g == selected, rows=rows)
