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
        # One pair of brackets at most: 'NCCL tree (chain + 2 trees, C=1)', not '(…) (C=1)'.
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
