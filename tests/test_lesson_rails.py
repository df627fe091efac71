"""Lesson 10 sets NCCL's ring layout (one ring per NIC) beside the textbook schedules on dgx-h100,
with the figures compare and sweep compute."""

from __future__ import annotations

import re

from ringsim.core.units import format_bandwidth, format_seconds
from ringsim.cost.model import CostModel
from ringsim.cost.topology import load
from ringsim.lessons import load_lessons
from ringsim.studies.compare import compare
from ringsim.studies.sweep import sweep

DGX = CostModel(load("dgx-h100"), 4)
GIB, MIB32 = 2**28, 2**23  # float32 elements per GPU: 1 GiB and 32 MiB


def _text() -> str:
    (lesson,) = [lesson for lesson in load_lessons() if lesson.number == 10]
    return "\n".join(section.text for section in lesson.sections())


def _rows(elements: int) -> dict:
    rows = {("rails" if r.as_nccl else r.algorithm): r for r in compare(64, elements, DGX)}
    return {name: r.timing for name, r in rows.items() if r.timing}


def test_the_rails_paragraph_quotes_compares_figures():
    text = " ".join(_text().split("NCCL applies the same idea")[1].split("## algbw")[0].split())
    big, small = _rows(GIB), _rows(MIB32)
    steps = compare(64, GIB, DGX)[-1].steps
    expected = (f"Still {steps} steps, but at 1 GiB {format_seconds(big['rails'].estimate.seconds, digits=1)} "
                f"(busbw {format_bandwidth(big['rails'].busbw)}): faster still than hierarchical and "
                f"than halving-doubling (`ringsim compare`, below, prints all three to the hundredth "
                f"of a millisecond). At 32 MiB its many steps still cost more: "
                f"{format_seconds(small['rails'].estimate.seconds, digits=1)} against halving-doubling's "
                f"{format_seconds(small['halving-doubling'].estimate.seconds, digits=1)}.")
    assert expected in text, text
    # What "faster still" claims, at the precision compare prints.
    assert big["rails"].estimate.seconds < min(big["hierarchical"].estimate.seconds,
                                               big["halving-doubling"].estimate.seconds)
    assert (steps, format_seconds(big["rails"].estimate.seconds, digits=1)) == (126, "5.9 ms")
    # What the paragraph claims, in the library's numbers: first at 1 GiB, not at 32 MiB.
    assert big["rails"].rank == 1 and big["rails"].estimate.seconds < big["hierarchical"].estimate.seconds
    assert small["rails"].estimate.seconds > small["halving-doubling"].estimate.seconds


def test_the_lessons_dgx_sweep_names_the_rails_ring_as_the_sweep_does():
    block = _text().split("G = 64, dgx-h100")[1].split("```")[0]
    result = sweep(64, [1 << 10, 1 << 15, 1 << 20, 1 << 25, 1 << 30], DGX)
    top = result.points[-1]
    row = re.search(r"^\s+1GiB\s+(.+?)\s{2,}(\S+ \S+)\s+(\S+ \S+)\s+(\S+ \S+)$", block, re.M)
    assert row, block
    assert row.groups() == (top.best, format_seconds(top.estimates[top.best].seconds, digits=1),
                            format_bandwidth(top.busbw(top.best, 64)),
                            format_seconds(top.estimates["ring"].seconds, digits=1))
    # The plain ring keeps its own column: one ring waiting on one NIC per node boundary.
    assert row.group(4) == "43.6 ms" and top.best == "ring rails:8"
    last = result.crossovers[-1]
    assert f"  {last.after} overtakes {last.before} from {last.nbytes:,} bytes per GPU" in block


def test_the_rails_figures_are_placeholders_that_refuse_a_machine_without_nodes(tmp_path):
    from ringsim.lessons import check_lessons
    from ringsim.lessons.costs import RAILS_KEY, cost_rows, model_of
    (row,) = cost_rows(64, GIB, model_of("dgx-h100"), only=RAILS_KEY)
    assert row.seconds == _rows(GIB)["rails"].estimate.seconds and row.label == "ring rails:8"
    assert cost_rows(64, GIB, model_of(), only=RAILS_KEY) == []  # flat: one level, one ring
    front = "---\ntitle: Rails\ngpus: 4\nelements: 8\n---\n"
    (tmp_path / "01-rails.md").write_text(
        front + "{{latency.ring_rails gpus=64 elements=268435456 topology=dgx-h100}} "
        "{{busbw.ring_rails gpus=64 elements=268435456 topology=dgx-h100}}\n", encoding="utf-8")
    (lesson,) = load_lessons(tmp_path)
    assert lesson.sections()[0].text.strip() == (f"{format_seconds(row.seconds, digits=1)} "
                                                 f"{format_bandwidth(row.busbw)}")
    (tmp_path / "01-rails.md").write_text(front + "{{latency.ring_rails gpus=64}}\n", encoding="utf-8")
    _, problems = check_lessons(tmp_path)
    assert len(problems) == 1 and "ring_rails does not apply at G = 64 on flat" in problems[0].reason
