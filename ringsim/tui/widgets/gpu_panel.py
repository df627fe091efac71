"""One GPU as a panel: a column of its G segment cells, titled with its name and its load."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical

from ...naming import gpu_name
from .segment_cell import SegmentCell


class GpuPanel(Vertical):
    """GPU k's panel: segment cells top to bottom, elements sent/received so far underneath."""

    def __init__(self, gpu: int, gpus: int) -> None:
        super().__init__(id=f"gpu-{gpu + 1}", classes="gpu-panel")
        self.gpu = gpu
        self.gpus = gpus
        self.border_title = gpu_name(gpu)

    def compose(self) -> ComposeResult:
        for segment in range(self.gpus):
            yield SegmentCell(self.gpu, segment)

    @property
    def cells(self) -> list[SegmentCell]:
        """The panel's cells, segment 1 first."""
        return list(self.query(SegmentCell))

    def show_load(self, title: str, sent: int, received: int, *, master: bool) -> None:
        """Title (name, '· master') and elements sent and received so far."""
        self.border_title = title
        self.border_subtitle = f"↑{sent:,} ↓{received:,}"
        self.set_class(master, "-master")
