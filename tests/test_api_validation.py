"""The API refuses what it cannot sum with a RingsimError that says what was expected."""

import numpy as np
import pytest

from ringsim import Layout, RingsimError, Simulation, allreduce, closed_form, demo_gradients

pytestmark = pytest.mark.filterwarnings("ignore:the matrix subclass:PendingDeprecationWarning")


@pytest.mark.parametrize("call, message", [
    (lambda: allreduce({1: np.ones(3)}), "a list or tuple with one array per GPU, got a dict"),
    (lambda: allreduce({np.float64(1)}), "got a set"),
    (lambda: allreduce("ab"), "got a str"),
    (lambda: allreduce(np.float64(3)), "got a float64"),
    (lambda: allreduce([[1, 2], [3]]), r"same shape: GPU1 has \(2,\), GPU2 has \(1,\)"),
    (lambda: allreduce([[1, [2, 3]], [3, 4]]), "GPU1's array must be a regular array of numbers"),
    (lambda: allreduce([np.matrix([[1, 2]])] * 2), "not np.matrix"),
    (lambda: allreduce([np.array([{}]), np.array([{}])]), "must be numeric .* got object"),
    (lambda: allreduce([np.ones(2, bool)] * 2), "must be numeric .* got bool"),
    (lambda: Simulation.create("ring", 2, 2, gradients=np.array([["a", "b"], ["c", "d"]])),
     "gradients must be numeric .* got <U1"),
    (lambda: Simulation.create("ring", 2, 2, gradients=np.ones((2, 2), bool)),
     "gradients must be numeric .* got bool"),
    (lambda: Simulation.create("ring", 2, 2, gradients=np.array([[None, 1], [2, 3]])),
     "gradients must be numeric .* got object"),
    (lambda: Simulation.create("ring", 2, 2, gradients=[[1, 2], [3]]),
     "gradients must be a regular array of numbers"),
    (lambda: Simulation.create("ring", 2, 2, gradients=np.matrix([[1, 2], [3, 4]])),
     "not np.matrix"),
    (lambda: Simulation.create().goto("3"), "the step must be a whole number, got '3'"),
    (lambda: Simulation.create().goto(2.5), "the step must be a whole number, got 2.5"),
    (lambda: Simulation.create().goto(7), "the step must be from 0 to 6, got 7"),
    (lambda: closed_form("ring", 0, 8), "the number of GPUs must be from 1"),
    (lambda: closed_form("ring", 4, -1), "elements per GPU must be at least 0, got -1"),
    (lambda: demo_gradients(-1, 4), "the number of GPUs must be from 1 to 1,000,000, got -1"),
    (lambda: demo_gradients(True, 4), "the number of GPUs must be a whole number, got True"),
    (lambda: demo_gradients(4, 4.5), "elements per GPU must be a whole number, got 4.5"),
    (lambda: demo_gradients(4, 4, seed=-1), "the seed must be from 0 to"),
    # Refused by its size before a byte is allocated (8 TB here).
    (lambda: demo_gradients(10**6, 10**6), "demo gradients of 1,000,000 GPUs with 1,000,000 "
                                           "elements each would need about 8.0 TB of memory"),
])
def test_bad_api_input_is_a_ringsim_error(call, message):
    with pytest.raises(RingsimError, match=message):
        call()


def test_what_is_accepted_still_works():
    sim = Simulation.create("ring", 2, 2, gradients=[[1, 2], [3, 4]])
    sim.goto(2.0)  # a whole float is a whole number
    assert sim.done and sim.values().tolist() == [[4, 6], [4, 6]]
    assert [o.tolist() for o in allreduce([[1, 2], [3, 4]]).outputs] == [[4, 6], [4, 6]]
    assert [o.tolist() for o in allreduce(np.array([[1, 2], [3, 4]])).outputs] == [[4, 6], [4, 6]]


def test_reduce_scatter_and_all_gather_are_bounded_as_allreduce_is():
    # The ring's halves count their transfers before building them, and every run checks its
    # memory against ringsim's limit, as allreduce does, before it allocates.
    from ringsim import all_gather, reduce_scatter
    huge = [np.broadcast_to(np.zeros(1, np.float32), (4_000_000_000,))] * 4
    for run in (reduce_scatter, all_gather):
        with pytest.raises(RingsimError, match="would need about .* of memory"):
            run(huge)
        with pytest.raises(RingsimError, match="plan for 3,000 GPUs holds 8,997,000 transfers"):
            run([np.ones(1)] * 3000)
    assert [o.tolist() for o in reduce_scatter([np.arange(6.0)] * 3).outputs] == [[0, 3], [6, 9], [12, 15]]


def test_a_simulation_of_something_not_a_plan_says_so():
    with pytest.raises(RingsimError, match=r"expected a Plan .* got str; Simulation.create"):
        Simulation("ring", 8)


def test_a_layout_past_int64_is_refused_where_arrays_would_count_it():
    from ringsim import Layout, make_plan, measure
    with pytest.raises(RingsimError, match="more than an int64 array counts"):
        measure(make_plan("ring", 8), Layout(8, 10**21))


def test_layout_distinct_sizes_are_the_listed_ones_without_listing_them():
    for segments, elements in [(4, 10), (4, 2), (4, 8), (7, 0), (1, 5), (12, 100)]:
        layout = Layout(segments, elements)
        assert layout.distinct_sizes() == sorted(set(layout.sizes()))
    # 10^30 segments: the sizes come from N and S alone, and listing them is refused at once.
    assert Layout(10**30, 5).distinct_sizes() == [0, 1]
    with pytest.raises(RingsimError, match="too many to list"):
        Layout(10**30, 5).sizes()


@pytest.mark.parametrize("xp", [None, "numpyy", 5, True, np.ones(3), np])
def test_xp_must_be_an_array_module(xp):
    # not an AttributeError from deep inside ('int' object has no attribute 'asarray')
    for call in (lambda: Simulation.create("ring", 2, 2, xp=xp), lambda: demo_gradients(2, 2, xp)):
        if xp is np:
            call()
            continue
        with pytest.raises(RingsimError, match="xp must be an array module"):
            call()


def test_xp_may_be_named_as_backend_is():
    sim = Simulation.create("ring", 2, 2, xp="numpy")
    sim.run()
    assert sim.xp is np and sim.correct()
    assert type(demo_gradients(2, 2, "numpy")) is np.ndarray


def test_integer_sums_wrap_round_as_the_readme_says():
    # the README's Python API section: the sum keeps the element type, as NCCL's does
    import numpy as np
    import ringsim
    wide = ringsim.allreduce([np.full(4, 2**31 - 1, np.int32)] * 2, "ring").outputs[0]
    assert wide.dtype == np.int32 and (wide == -2).all()
    small = ringsim.allreduce([np.full(4, 200, np.uint8)] * 2, "ring").outputs[0]
    assert small.dtype == np.uint8 and (small == 144).all()
