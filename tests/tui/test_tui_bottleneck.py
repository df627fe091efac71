""""Bottleneck GPUk" is shown only where one GPU's port really is busier than the others':
never for a ring step, whose ports are all loaded alike (the tie rule's GPU1 is no bottleneck)."""

import pytest

from ringsim import Simulation
from ringsim.algorithms import ALGORITHMS
from ringsim.cost.model import CostModel
from ringsim.cost.ports import bottleneck_gpus, busiest_gpus
from ringsim.tui.app import RingsimApp
from ringsim.tui.widgets.gpu_panel import GpuPanel

from .test_tui_transfers_shown import screen

WIDE = (140, 45)


def test_busiest_gpus_of_a_ring_step_are_all_gpus_and_of_a_gather_the_master():
    flat = CostModel.of("flat")
    ring = [0, 1, 2, 3], [1, 2, 3, 0]
    assert busiest_gpus(flat, *ring, [2, 2, 2, 2], True).tolist() == [0, 1, 2, 3]
    assert busiest_gpus(flat, [1, 2, 3], [0, 0, 0], [8, 8, 8], True).tolist() == [0]
    assert busiest_gpus(flat, *ring, [2, 2, 5, 2], False).tolist() == [2, 3]  # GPU3 out, GPU4 in
    assert busiest_gpus(flat, *ring, [2, 2, 5, 2], True).tolist() == [3]  # + the add on GPU4 in
    assert busiest_gpus(flat, [], [], [], True).tolist() == []


async def test_a_symmetric_ring_shows_no_bottleneck_at_any_step():
    app = RingsimApp()
    async with app.run_test(size=WIDE) as pilot:
        for _ in range(len(app.sim.plan)):
            await pilot.press("n")
            await pilot.pause()
            text = screen(app)
            assert "ports evenly loaded" in text
            assert "bottleneck" not in text and "●" not in text
            assert app.clock.bottleneck(app.sim.plan, 8, app.sim.position) is None


def test_a_switch_is_no_gpu_and_so_never_the_bottleneck():
    # NVLS: every GPU sends its share to the switch (participant G = 4), which adds at line
    # rate; only the GPUs' sides are charged, all alike, so no GPU holds the step up.
    flat = CostModel.of("flat")
    up = [0, 1, 2, 3], [4, 4, 4, 4]
    assert busiest_gpus(flat, *up, [8, 8, 8, 8], True, gpus=4).tolist() == [0, 1, 2, 3]
    assert bottleneck_gpus(flat, *up, [8, 8, 8, 8], True, gpus=4) == ()
    assert bottleneck_gpus(flat, *up, [8, 8, 16, 8], True, gpus=4) == (2,)
    assert bottleneck_gpus(flat, [0, 1, 2, 3], [1, 2, 3, 0], [2, 2, 2, 2], True) == ()
    # Two of four transfers move data: their receivers (they also add) are the bottleneck.
    assert bottleneck_gpus(flat, [0, 1, 2, 3], [1, 2, 3, 0], [2, 0, 2, 0], True) == (1, 3)


def test_a_switch_has_no_cells_to_mark():
    from ringsim.tui.marks import cell_masks, cell_peers
    step = Simulation.create("nvls", 4, 8).plan.steps[0]  # every GPU → the switch (4)
    sent, got = cell_masks(step, 4, 1)
    assert sent.tolist() == [[True]] * 4 and got.tolist() == [[False]] * 4
    sent_to, came_from = cell_peers(step, 4, 1)
    assert sent_to == [[[4]]] * 4 and came_from == [[[]]] * 4


async def test_nvls_marks_no_gpu_and_names_no_switch():
    app = RingsimApp(Simulation.create("nvls", 4, 8))
    async with app.run_test(size=WIDE) as pilot:
        for position in range(1, len(app.sim.plan) + 1):
            await pilot.press("n")
            await pilot.pause()
            assert app.clock.bottlenecks(app.sim.plan, 8, position) == ()
            titles = [str(p.border_title) for p in app.screen.query(GpuPanel)]
            assert not any(t.endswith("●") for t in titles), titles
            assert "bottleneck" not in screen(app)


async def test_the_master_is_the_bottleneck_of_its_gather():
    app = RingsimApp(Simulation.create("master", 4, 8))
    async with app.run_test(size=WIDE) as pilot:
        await pilot.press("n")
        await pilot.pause()
        assert "bottleneck GPU1" in screen(app)
        titles = [str(p.border_title) for p in app.screen.query(GpuPanel)]
        assert titles[0].endswith("●") and not any(t.endswith("●") for t in titles[1:])


async def test_two_parents_of_a_tree_share_the_bottleneck():
    app = RingsimApp(Simulation.create("tree", 8, 8))
    async with app.run_test(size=WIDE) as pilot:
        await pilot.press("n")
        await pilot.pause()
        # GPU3 and GPU7 each receive from two children; the other GPUs' ports do half as much.
        assert app.clock.bottlenecks(app.sim.plan, 8, 1) == (2, 6)
        assert app.clock.bottleneck(app.sim.plan, 8, 1) is None
        assert "bottleneck GPU3, GPU7" in screen(app)
        titles = [str(p.border_title) for p in app.screen.query(GpuPanel)]
        assert [t.endswith("●") for t in titles] == [False, False, True, False, False, False, True, False]


@pytest.mark.parametrize("name", list(ALGORITHMS))
def test_a_marked_bottleneck_is_the_only_gpu_at_the_busiest_ports_time(name):
    from ringsim.tui.clock import Clock
    from ringsim.cost.model import price_step
    from ringsim.core.layout import Layout
    plan = Simulation.create(name, 4, 8).plan
    clock = Clock()
    for position in range(1, len(plan) + 1):
        marked = clock.bottleneck(plan, 8, position)
        assert (marked is None) == (len(clock.bottlenecks(plan, 8, position)) != 1)
        step = plan.steps[position - 1]
        tied = busiest_gpus(clock.model, step.src, step.dst,
                            Layout(plan.segments, 8).spans(step.first, step.last), step.reduces,
                            plan.gpus if plan.switches else None)
        if marked is None:
            assert len(tied) != 1, (name, position)
        else:
            assert tied.tolist() == [marked]
            assert price_step(step, Layout(plan.segments, 8), clock.model).port.gpu == marked
