"""The TUI's clock prices the hierarchical ring on the machine's nodes, as compare does: after `t`
reaches a topology with nodes, and when the TUI starts with --topology."""

import math

from ringsim import Simulation
from ringsim.algorithms.timing import estimate, machine_options
from ringsim.cli import build_parser
from ringsim.cli._view_args import make_app
from ringsim.cost.model import CostModel
from ringsim.tui.app import RingsimApp

WIDE = (140, 45)


def _compare_seconds(gpus: int, elements: int, topology: str) -> float:
    """What compare, sweep and timeline price: the closed form on the machine's nodes."""
    model = CostModel.of(topology, "float32")
    options = machine_options("hierarchical", gpus, model)
    assert options == {"nodes": gpus // 8}
    return estimate("hierarchical", gpus, elements, model, **options).seconds


def _end(app: RingsimApp) -> float:
    plan, elements = app.sim.plan, app.sim.layout.elements
    return app.clock.reading(plan, elements, 0).end


async def test_t_puts_the_hierarchical_ring_on_the_machines_nodes():
    app = RingsimApp(Simulation.create("hierarchical", 16, 16))
    async with app.run_test(size=WIDE) as pilot:
        first = app.state.scenario.option("nodes")
        assert first == 4  # the default √G nodes of 4 GPUs
        while app.state.topology != "dgx-h100":
            await pilot.press("t")
            await pilot.pause()
        assert app.state.scenario.option("nodes") == 2  # 2 nodes of 8 GPUs, as on the machine
        assert math.isclose(_end(app), _compare_seconds(16, 16, "dgx-h100"), rel_tol=1e-9)


def test_the_tui_started_on_a_topology_takes_its_nodes():
    args = build_parser().parse_args(["tui", "-a", "hierarchical", "-g", "16",
                                      "--topology", "dgx-h100"])
    app = make_app(args)
    assert app.state.scenario.option("nodes") == 2 and app.state.topology == "dgx-h100"
    assert math.isclose(_end(app), _compare_seconds(16, 16, "dgx-h100"), rel_tol=1e-9)
    # --nodes given by hand is the user's: kept
    args = build_parser().parse_args(["tui", "-a", "hierarchical", "-g", "16", "--nodes", "4",
                                      "--topology", "dgx-h100"])
    assert make_app(args).state.scenario.option("nodes") == 4
