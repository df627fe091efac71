"""The sweep panel (key w) names the fastest and the crossovers as `ringsim sweep` does, the
ring laid out as NCCL's channels (one ring per NIC) included on several nodes."""

from ringsim.core.units import approx_bytes, format_seconds
from ringsim.cost.model import CostModel
from ringsim.studies.sweep import sweep
from ringsim.tui.sweeps import SIZES, sweep_view
from ringsim.tui.widgets.sweep_plot import SweepPanel


def test_the_panel_names_the_rails_ring_where_the_sweep_does():
    view = sweep_view(16, "dgx-h100", 4096)  # two DGX nodes, 16 KiB per GPU
    same = sweep(16, list(SIZES), CostModel.of("dgx-h100", "float32"))
    assert view.sweep.columns == same.columns and view.sweep.layouts == (("ring", {"ring_order": "rails:8"}),)
    assert [p.best for p in view.sweep.points] == [p.best for p in same.points]
    assert view.sweep.points[-1].best == "ring rails:8"  # 4 GiB per GPU
    legend = SweepPanel._legend(view, "time", "ring").plain
    last = same.crossovers[-1]
    assert (last.before, last.after) == ("halving-doubling", "ring rails:8")
    assert f"from {approx_bytes(last.nbytes)}: ring rails:8 beats halving-doubling" in legend
    here = view.here
    assert f"fastest there: {here.best} {format_seconds(here.estimates[here.best].seconds)}" in legend


def test_the_panel_draws_the_rails_ring_in_a_colour_of_its_own():
    from ringsim.tui.widgets.sweep_plot import COLOURS, series
    view = sweep_view(16, "dgx-h100", 4096)
    drawn = series(view, "time")
    assert list(drawn) == list(view.sweep.columns) and "ring rails:8" in drawn
    # its line is the sweep's figures, and its legend entry has a colour no other line has
    assert [y for _, y in drawn["ring rails:8"]] == [
        p.estimates["ring rails:8"].seconds for p in view.sweep.points]
    assert len(view.sweep.columns) <= len(COLOURS)
    legend = SweepPanel._legend(view, "time", "ring").plain
    assert "ring rails:8" in legend and "ring rails:8*" not in legend  # NCCL runs rings
