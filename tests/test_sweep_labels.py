"""A sweep's chart names each pipelined schedule's chunk count, the one it was priced with."""

from __future__ import annotations

import re

from ringsim.algorithms import ALGORITHMS, option_names
from ringsim.algorithms.timing import estimate
from ringsim.studies.sweep import sweep


def test_labels_give_the_chunks_each_schedule_was_priced_with():
    result = sweep(8, [2 ** k for k in range(10, 31, 4)])
    pipelined = [n for n in result.algorithms if "chunks" in option_names(n)]
    assert pipelined  # the registry has schedules cut in chunks, and the sweep prices them
    for name in result.algorithms:
        label = result.label(name)
        found = re.search(r"C=([\d,]+)\)$", label)
        assert bool(found) == (name in pipelined), label
        title = ALGORITHMS[name].title
        # One pair of brackets at most: 'NCCL tree (chain + 2 trees; C=1)', not '(…) (C=1)'.
        assert label == title if not found else label.count("(") == max(1, title.count("(")), label
        if found:
            chunks = int(found.group(1).replace(",", ""))
            # The count in the label prices every point as the sweep did: it says what was drawn.
            for point in result.points:
                again = estimate(name, 8, point.elements, result.model, **{**result.options(name),
                                                                           "chunks": chunks})
                assert again.seconds == point.estimates[name].seconds, (label, point.nbytes)


def test_the_chart_legend_shows_the_labels():
    result = sweep(8, [2 ** k for k in range(10, 31, 4)])
    svg = result._repr_svg_()
    for name in result.algorithms:
        assert result.label(name).replace("&", "&amp;") in svg
    assert "(C=1)" in svg


def test_the_rails_ring_is_labelled_as_the_ring_with_its_order_as_compare_labels_it():
    from ringsim.cost.model import CostModel
    from ringsim.cost.topology import load
    from ringsim.studies.compare import compare
    model = CostModel(load("dgx-h100"), 4)
    result = sweep(16, [2 ** k for k in range(10, 31, 4)], model)
    (row,) = [r for r in compare(16, 1024, model) if r.as_nccl]
    assert result.columns[-1] == "ring rails:8" and result.label("ring rails:8") == row.label
    assert row.label == "Ring all-reduce (ring order rails:8)"
    # The chart draws it under that label, beside the one ring's own line.
    svg = result._repr_svg_()
    assert row.label in svg and ">Ring all-reduce<" in svg
    for point in result.points:
        again = estimate("ring", 16, point.elements, model, **result.options("ring rails:8"))
        assert again.seconds == point.estimates["ring rails:8"].seconds
