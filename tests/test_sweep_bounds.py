"""ringsim sweep at a million GPUs: the same figures from work that does not grow with G, and a
refusal, in one line before any work, where a column still costs O(G) per size."""

import numpy as np
import pytest

from ringsim.algorithms import ring
from ringsim.cli import main
from ringsim.cost.model import CostModel
from ringsim.cost.topology import load
from ringsim.cost.topology_model import Level, Topology
from ringsim.core.errors import RingsimError
from ringsim.studies import sweep as sweep_module
from ringsim.studies.sweep import MAX_PRICING_SECONDS, sweep

# Each size's (fastest, ring, hierarchical, bidirectional ring seconds) and the crossover,
# as the sweep gave them when it priced every GPU of every step.
BEFORE = {
    "ethernet-100g": ({4: ("recursive-doubling", 5.4006425993519995, 5.400642599352, 5.400642599352),
                       1 << 30: ("halving-doubling", 5.574306425688, 5.574306425688002,
                                 10.974301025687998)}, 79708),
    "dgx-h100": ({4: ("recursive-doubling", 1.4975360218266667, 0.6750216345317173,
                      1.4975360218266667),
                  1 << 30: ("halving-doubling", 5.4440127378, 0.6855437622444445,
                            5.4220854869999995)}, 185632),
}


@pytest.mark.parametrize("topology", sorted(BEFORE))
def test_a_million_gpus_give_the_same_figures(topology):
    rows, crossover = BEFORE[topology]
    result = sweep(1_000_000, [4, 1024, 2**20, 2**30, 2**32], CostModel(load(topology)))
    for point in result.points:
        if point.nbytes in rows:
            best, *seconds = rows[point.nbytes]
            assert point.best == best
            for name, value in zip(("ring", "hierarchical", "bidirectional-ring"), seconds):
                # Equal steps are summed as count × seconds: the same to the last bits or so.
                assert point.estimates[name].seconds == pytest.approx(value, rel=1e-12)
    assert [(c.before, c.after, c.nbytes) for c in result.crossovers] == [
        ("recursive-doubling", "halving-doubling", crossover)]


def test_too_many_sizes_at_a_million_gpus_refused_in_one_line(capsys):
    sizes = ",".join(str(4 * k) for k in range(1, 200))
    assert main(["sweep", "--topology", "ethernet-100g", "-g", "1000000", "--sizes", sizes]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err == ("ringsim sweep: error: sweep would price the bidirectional ring step by step at 199 "
                   "sizes × 1,000,000 GPUs (about 7.96 s before any crossover is bisected); the "
                   "limit is 2.00 s: use at most 50 sizes at 1,000,000 GPUs, or fewer GPUs\n")


def test_the_estimate_refuses_before_any_size_is_priced(monkeypatch):
    def priced(*args):
        raise AssertionError("a size was priced before the refusal")
    monkeypatch.setattr(sweep_module, "_point", priced)
    count = round(MAX_PRICING_SECONDS / (1_000_000 * 4e-8)) + 1  # the bidirectional ring's 40 ns a GPU
    with pytest.raises(RingsimError, match=f"at {count} sizes × 1,000,000 GPUs"):
        sweep(1_000_000, [4 * k for k in range(1, count + 1)], CostModel(load("dgx-h100")))
    # On one level every column is O(1) per size: nothing to refuse.
    with pytest.raises(AssertionError, match="before the refusal"):
        sweep(1_000_000, [4 * k for k in range(1, count + 1)], CostModel.flat())


def _cases_by_every_step(gpus, per, r, first):
    """ring._cases counted step by step over every GPU."""
    k = np.arange(gpus)
    crosses = (k % per == per - 1) | (k == gpus - 1)
    counts = {}
    for s in range(gpus - 1):
        d = s if first == 0 else (gpus - 1 if s == 0 else s - 1)
        window = (d + np.arange(r)) % gpus
        key = (bool((~crosses[window]).any()), bool(crosses[window].any()))
        counts[key] = counts.get(key, 0) + 1
    return counts


@pytest.mark.parametrize("per", [1, 2, 3, 8])
def test_ring_steps_counted_from_a_few(per):
    """The ring across nodes counts its steps' cases from O(P) steps: as every step counted."""
    for gpus in range(per + 1, per + 30):
        for r in sorted({0, 1, 2, 3, per - 1, per, per + 1, gpus // 2, gpus - 1} - {-1}):
            if not 0 <= r < gpus:
                continue
            for first in (0, gpus - 1):
                got = {(i, a): n for (i, a, _, _), n in ring._cases(gpus, per, r, first).items() if n}
                assert got == _cases_by_every_step(gpus, per, r, first), (gpus, r, first)


def test_hierarchical_on_the_machines_nodes_costs_one_step_per_phase():
    """Nodes that are the topology's: each phase is its steps × one price, inside or across."""
    model = CostModel(Topology("t", "t", 4, {"inside": Level("inside", "i", 1e-6, 1e11),
                                             "across": Level("across", "x", 3e-6, 2e10)}, 1e12), 4)
    gpus, elements = 4 * 1000, 4 * 1000 * 5   # 1,000 nodes of 4, N = 5·G
    got = sweep_module.estimate("hierarchical", gpus, elements, model, nodes=1000)
    inside = 2 * 3 * (1e-6 + 5 * 1000 * 4 / 1e11) + 3 * 5 * 1000 * 4 / 1e12
    across = 2 * 999 * (3e-6 + 5 * 4 / 2e10) + 999 * 5 * 4 / 1e12
    assert got.seconds == pytest.approx(inside + across, rel=1e-12)
    assert got.level == "across"


def test_the_hierarchical_ring_is_budgeted_where_it_lays_out_its_rings():
    # A prime G has one group of all G GPUs: one ring, priced as the ring all-reduce prices
    # it in O(P) (a sweep of 49 sizes at 999,983 GPUs took 28 s here before). Where its groups
    # are not the machine's nodes (999,982 = 158 × 6,329 on nodes of 8) it lays out sampled
    # rings of L GPUs, which the sweep's budget counts; on the machine's own nodes, nothing.
    from ringsim.algorithms import ALGORITHMS, hierarchical, ring
    model = CostModel(load("dgx-h100"))
    spec = ALGORITHMS["hierarchical"]
    assert spec.seconds_cost(999_983, model) == 0.0
    assert hierarchical.seconds(999_983, 10**9, model).seconds == pytest.approx(
        ring.seconds(999_983, 10**9, model).seconds, rel=1e-12)
    assert spec.seconds_cost(999_982, model) == pytest.approx((8 * 6_329 + 17 * 158) * 3e-7)
    assert spec.seconds_cost(1_000_000, model, nodes=125_000) == 0.0
    assert spec.seconds_cost(1_000_000, CostModel.flat()) == 0.0
    with pytest.raises(RingsimError, match=r"at 200 sizes × 999,982 GPUs \(about 11\.\d+ s"):
        sweep(999_982, [4 * k for k in range(1, 201)], model)
