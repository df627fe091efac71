"""A Scenario holds the algorithm's options in one place, as users write them."""

from ringsim.sim.scenario import Scenario


def test_options_written_in_any_order_or_at_their_defaults_compare_equal():
    assert Scenario("ring", 4, 8, {"channels": 2, "ring_order": "1,3,2,4"}) == \
        Scenario("ring", 4, 8, (("ring_order", "1,3,2,4"), ("channels", 2)))
    assert Scenario("master", 4, 8, {"master": 1}) == Scenario("master", 4, 8) == \
        Scenario("master", 4, 8, {"master": None})
    assert Scenario("master", 4, 8, {"master": 2}) != Scenario("master", 4, 8)
    assert Scenario("master", 4, 8, {"master": 2}).option("master") == 2
    assert Scenario("master", 4, 8).option("master", 1) == 1


def test_the_plan_takes_the_master_one_based():
    assert Scenario("master", 4, 8, {"master": 3}).plan().options == {"master": 2}


def test_with_gpus_keeps_a_master_that_still_exists_and_drops_options_tied_to_g():
    master = Scenario("master", 4, 8, {"master": 3})
    assert master.with_gpus(3) == Scenario("master", 3, 8, {"master": 3})
    assert master.with_gpus(2) == Scenario("master", 2, 8)
    ring = Scenario("ring", 4, 8, {"ring_order": "1,3,2,4"})
    assert ring.with_gpus(5) == Scenario("ring", 5, 8)
    assert Scenario("hierarchical", 4, 8, {"nodes": 2}).with_gpus(6) == Scenario("hierarchical", 6, 8)


def test_next_algorithm_keeps_the_options_the_next_one_takes():
    assert Scenario("ring", 4, 8, {"channels": 2}).next_algorithm() == Scenario("master", 4, 8)
    assert Scenario("master", 4, 8, {"master": 2}).next_algorithm() == Scenario("naive", 4, 8)
    assert Scenario("tree", 4, 8, {"chunks": 3}).next_algorithm() == \
        Scenario("double-tree", 4, 8, {"chunks": 3})
