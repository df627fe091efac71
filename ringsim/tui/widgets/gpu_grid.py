"""The detailed GPU view (up to 8 GPUs): one panel per GPU, one cell per segment."""

from __future__ import annotations

from textual.containers import Horizontal

from ...algorithms import plan_hub
from ...execute.backend import to_numpy
from ...core.naming import gpu_name, participant_name
from ...sim.simulation import Simulation
from ..cell import CellView
from ..marks import cell_peers
from ...execute.ledger import measure
from .gpu_panel import TITLE_FRAME, GpuPanel, fitting, load_wordings, title_wordings

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

    def load_row(self, sim: Simulation) -> bool:
        """Whether the panels put their load on a row of their own: the widest load line the
        run will reach (its last step's, the most moved) does not fit the narrowest panel's
        bottom edge. Decided for the whole run and every panel, so nothing jumps mid-run."""
        width = self.size.width or self.screen.size.width  # the screen's before the first layout
        gpus = sim.plan.gpus
        if not width or not gpus:
            return False
        key = (sim.plan, sim.layout.elements)  # the plan itself: its id could be reused
        if self._final_key is None or key[0] is not self._final_key[0] or key[1] != self._final_key[1]:
            final = measure(sim.plan, sim.layout)
            self._final_key = key
            self._widest = max(len(fitting(load_wordings(int(s), int(r)), 0))
                               for s, r in zip(final.sent, final.received))
        return self._widest > width // gpus - TITLE_FRAME

    _final_key: tuple | None = None
    _widest = 0
    _shown: tuple | None = None  # the last show's arguments, to redraw on a resize
    _load_row = False

    def on_resize(self) -> None:
        """A new width may fit the load lines in the panels' edges, or no longer fit them; and
        the narrowest panel, which sets every panel's label width, may have changed."""
        if self._shown is not None and self.load_row(self._shown[0]) != self._load_row:
            self.show(*self._shown)
        for panel in self.query(GpuPanel):
            panel.refresh()

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
        self._shown = (sim, values, present, bottlenecks, selected, slow, rows)
        slow = slow or {}
        gpus, segments = sim.plan.gpus, sim.plan.segments
        step = sim.current
        sent_to, came_from = cell_peers(step, gpus, segments)
        # A step may reduce some buffers and copy others (a pipelined tree): the op per cell.
        ops = {(t.dst, j): t.op for t in (step.transfers() if step is not None else ())
               for j in range(t.first, t.last + 1)}
        ledger = sim.ledger()
        load_row = self._load_row = self.load_row(sim)
        hub = plan_hub(sim.plan)  # drawn as the master: the GPU every transfer passes through
        numbers = to_numpy(sim.values()) if values else None
        offsets = [sim.layout.offset(j) for j in range(segments + 1)]
        max_terms = 0 if gpus <= 4 else 4
        for panel in self.query(GpuPanel):
            g = panel.gpu
            cells = []
            for j in range(segments):
                complete = sim.symbolic.is_complete(g, j)
                terms: tuple[str, ...] = ()
                if numbers is not None:
                    row = numbers[g, offsets[j]:offsets[j + 1]]
                    text = " ".join(str(v) for v in row[:NUMBERS_SHOWN].tolist()) or "(empty)"
                    if len(row) > NUMBERS_SHOWN:
                        text += " …"
                else:
                    text = sim.symbolic.label(g, j, max_terms=max_terms)
                    terms = sim.symbolic.terms(g, j)  # the panel shortens them to its width
                if complete:
                    text += " ✓"
                cells.append(CellView(text, _note(sent_to[g][j], came_from[g][j], ops.get((g, j), ""),
                                                        gpus, sim.plan.switches), complete,
                                      bool(sent_to[g][j]), bool(came_from[g][j]), terms, max_terms))
            title = title_wordings(g, selected=g == selected, slow=slow.get(g),
                                   master=g == hub, bottleneck=g in bottlenecks)
            panel.show(title, int(ledger.sent[g]), int(ledger.received[g]), cells,
                       master=g == hub, present=present, selected=g == selected, rows=rows,
                       load_row=load_row)
