"""With one published run like it, diagnose sets a run beside it but clears no flag by it: the
published runs' own measure of trust (docs/cost.md, 12 of 166 healthy points over 1.3x their
median) counts only sizes that two or more of them measured (docs/reading-your-numbers.md)."""

from __future__ import annotations

from diagnose_published import diagnosis, runs


def test_one_published_run_clears_no_flag_even_where_this_run_is_as_fast(tmp_path):
    system, algo, proto, nccl, points = next(
        run for run in runs() if run[0]["id"] == "lambda-b200-2x8-ib" and not run[1] and not run[2])
    assert system["health"] == "healthy"
    found = diagnosis(system, algo, proto, nccl, points, tmp_path)
    summary = found["summary"]
    assert [p["id"] for p in summary["published_peers"]] == ["gcp-a4-b200-2x8-roce"]
    flagged = {r["bytes"] for r in found["sizes"] if r["flag"]}
    shared = [r for r in summary["published_sizes"] if r["bytes"] in flagged]
    # Flagged sizes the one published run measured, where this run is no slower than it ...
    assert len(shared) == 3 and all(r["published_systems"] == 1 for r in shared)
    assert all(r["over_median"] <= 1 for r in shared)
    # ... are still not cleared: the verdict gives the ratios and says nothing of the flags.
    (said,) = [v for v in summary["verdicts"] if v.startswith("Beside")]
    assert said.startswith("Beside 1 published healthy run on machines like this one")
    assert said.endswith("(the median of each)") and "flagged" not in said
