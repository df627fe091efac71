"""The compact view for many GPUs: a GPU × segment grid coloured by how much of the sum each holds."""

from __future__ import annotations

import numpy as np
from rich.style import Style
from rich.text import Text
from textual.widgets import Static

from ...simulation import Simulation
from ..marks import cell_masks

HALF_BLOCK_FROM = 25  # from this G on, two GPUs share a text row (upper/lower half blocks)

SENDING = "#ff9f1c"
RECEIVING = "#e056fd"
COMPLETE = "#2ecc71"
# Partial sums: from dim (own segment only) to bright (all but one GPU), in 8 shades.
SHADES = ["#3a3f4b", "#2b4c7e", "#2d5f9e", "#3274bd", "#3b89d6", "#4f9de8", "#6cb2f2", "#8fc6f7"]


class HeatMap(Static):
    """Rows: GPUs; columns: segments. Orange sent, magenta received, green complete."""

    def show(self, sim: Simulation) -> None:
        """Colour every cell from the Simulation's symbolic state and the last step's transfers."""
        gpus = sim.plan.gpus
        colours = self._colours(sim)
        text = Text(no_wrap=True)
        if gpus < HALF_BLOCK_FROM:
            text.append("seg   " + "".join(f"{j + 1:<2}" if j % 4 == 0 else "  " for j in range(gpus)) + "\n",
                        style="dim")
            for g in range(gpus):
                text.append(f"GPU{g + 1:<3}", style="bold")
                for j in range(gpus):
                    text.append("██", style=colours[g][j])
                text.append("\n")
        else:
            text.append("seg        " + "".join(f"{j + 1:<8}" for j in range(0, gpus, 8)) + "\n", style="dim")
            for g in range(0, gpus, 2):
                # Two GPUs per row: the upper half block is GPU g+1, the lower GPU g+2.
                text.append(f"GPU{g + 1:>2}/{g + 2:<2}".ljust(11) if g + 1 < gpus else f"GPU{g + 1:>2}".ljust(11),
                            style="bold")
                for j in range(gpus):
                    lower = colours[g + 1][j] if g + 1 < gpus else "black"
                    text.append("▀", style=Style(color=colours[g][j], bgcolor=lower))
                text.append("\n")
        text.append("\n")
        legend = ((SENDING, "sent"), (RECEIVING, "received"), (COMPLETE, "complete sum"), None,
                  (SHADES[0], "own segment only"), (SHADES[-1], "partial sum (brighter: more terms)"))
        for item in legend:
            if item is None:
                text.append("\n")
                continue
            text.append("██", style=item[0])
            text.append(f" {item[1]}  ")
        self.update(text)

    @staticmethod
    def _colours(sim: Simulation) -> list[list[str]]:
        gpus = sim.plan.gpus
        state = sim.symbolic
        sending, receiving = cell_masks(sim.current, gpus)
        held = np.array([[len(state.contributors(g, j)) for j in range(gpus)] for g in range(gpus)])
        shade = np.minimum((held - 1) * len(SHADES) // max(gpus - 1, 1), len(SHADES) - 1)
        colours = []
        for g in range(gpus):
            row = []
            for j in range(gpus):
                if sending[g, j]:
                    row.append(SENDING)
                elif receiving[g, j]:
                    row.append(RECEIVING)
                elif state.is_complete(g, j):
                    row.append(COMPLETE)
                else:
                    row.append(SHADES[shade[g, j]])
            colours.append(row)
        return colours
