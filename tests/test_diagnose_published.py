"""diagnose reads every published run as nccl-tests would print it (tests/diagnose_published.py)."""

from __future__ import annotations

from diagnose_published import counts, runs


def test_every_published_run_is_diagnosed_and_counted_by_its_health():
    tally = counts()
    assert sum(tally.values()) == len(runs())
    assert {health for health, _, _ in tally} == {"healthy", "reported slow", "unverified"}
    # What docs/cost.md reports, held as floors: diagnose may come to agree with the sources
    # more often, never less.
    assert tally[("healthy", "all-reduce", False)] >= 57  # of 69 called healthy
    assert tally[("reported slow", "all-reduce", True)] >= 7  # of 9 called short
    assert tally[("healthy", "all-reduce", False)] + tally[("healthy", "all-reduce", True)] == 69
