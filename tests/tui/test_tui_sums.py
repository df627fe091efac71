"""A sum's label shortened to a cell's width (ringsim.tui.sums): whole terms, one ellipsis, the
last term while there is room, a count after that, and a complete sum's ✓ to the end; and the
GPU panels showing it alike in every panel (8 GPUs on 130×40, the audit's case)."""

import re

import pytest
from rich.cells import cell_len

from ringsim import Simulation
from ringsim.core.naming import sum_label, term
from ringsim.tui.app import RingsimApp
from ringsim.tui.sums import short_sum, sum_forms
from ringsim.tui.widgets.gpu_panel import GpuPanel

WIDTHS = range(3, 21)
COUNTS = range(1, 17)


def terms_of(count: int, segment: int) -> tuple[str, ...]:
    """The sum a ring leaves in GPU `count`'s copy of `segment` (0-based): letters from the
    segment's own GPU on, as the ring adds them ('d₄', 'a₄', …)."""
    return tuple(term((segment + 1 + k) % 16, segment) for k in range(count))


def allowed(terms: tuple[str, ...]) -> set[str]:
    """Every correct short form of the sum, written out independently of the code under test."""
    n = len(terms)
    forms = {"+".join(terms), f"{n} terms", f"Σ{n}", "…"}
    forms |= {"+".join(terms[:k]) + "+…+" + terms[-1] for k in range(1, n - 1)}
    if n > 2:
        forms.add(f"{terms[0]}…{terms[-1]}")
    return forms


def split_mark(label: str) -> tuple[str, str]:
    """The label without its ✓, and the mark as written (' ✓', '✓' or '')."""
    for mark in (" ✓", "✓"):
        if label.endswith(mark):
            return label[: -len(mark)], mark
    return label, ""


@pytest.mark.parametrize("segment", [0, 11])  # one-digit subscripts (a₁) and two-digit ones (a₁₂)
@pytest.mark.parametrize("complete", [False, True])
def test_every_short_form_is_whole_terms_with_one_ellipsis(segment, complete):
    for count in COUNTS:
        terms = terms_of(count, segment)
        for room in WIDTHS:
            label = short_sum(terms, room, complete=complete)
            body, mark = split_mark(label)
            where = (count, room, label)
            assert 0 < cell_len(label) <= room, where
            assert body.count("…") <= 1, where
            # Never a letter without its subscript: each GPU letter is followed by digits
            # (the count form's 'terms' is a word, not a term).
            assert not re.search(r"[a-p](?![₀-₉])", body.replace(" terms", "")), where
            if complete:
                assert mark, where  # the ✓ stays, down to 3 columns
            else:
                assert not mark, where
            assert body in allowed(terms) or (complete and body in ("", "…")), where


@pytest.mark.parametrize("complete", [False, True])
def test_the_longest_correct_form_that_fits_is_chosen(complete):
    mark = "✓" if complete else ""  # the tightest mark: its space goes before any term does
    for count in COUNTS:
        terms = terms_of(count, 0)
        full = "+".join(terms)
        for room in WIDTHS:
            label = short_sum(terms, room, complete=complete)
            body, _ = split_mark(label)
            if cell_len(full + mark) <= room:
                assert body == full, (count, room)
                continue
            keeps_last = [f for f in allowed(terms) if "+…+" in f and cell_len(f + mark) <= room]
            if keeps_last:  # room for 'a₁+…+f₁': the last term is kept, with as many first ones as fit
                assert body == max(keeps_last, key=len), (count, room)
                assert body.endswith(terms[-1])
            elif count > 2 and cell_len(f"{terms[0]}…{terms[-1]}{mark}") <= room:
                assert body == f"{terms[0]}…{terms[-1]}", (count, room)
            if complete and body not in ("", "…"):  # the space before the ✓ where it fits
                assert label.endswith(" ✓") == (cell_len(body + " ✓") <= room), (count, room)


def test_known_labels_at_the_widths_of_the_audit():
    six = tuple(term(g, 0) for g in range(6))  # a₁ … f₁
    eight = tuple(term(g, 0) for g in range(8))
    assert short_sum(six, 10) == "a₁+b₁+…+f₁"
    assert short_sum(six, 9) == "a₁+…+f₁"
    assert short_sum(six, 7) == "a₁+…+f₁"
    assert short_sum(six, 6) == "a₁…f₁"
    assert short_sum(six, 4) == "Σ6"
    # Long subscripts (many segments): the count is shorter than the first and last terms.
    many = tuple(term(g, 127) for g in range(6))  # a₁₂₈ … f₁₂₈
    assert short_sum(many, 8) == "6 terms" and short_sum(many, 9) == "a₁₂₈…f₁₂₈"
    assert short_sum(eight, 12, complete=True) == "a₁+b₁+…+h₁ ✓"
    assert short_sum(eight, 11, complete=True) == "a₁+b₁+…+h₁✓"
    assert short_sum(eight, 10, complete=True) == "a₁+…+h₁ ✓"
    assert short_sum(eight, 9, complete=True) == "a₁+…+h₁ ✓"
    assert short_sum(eight, 8, complete=True) == "a₁+…+h₁✓"  # the space goes before a term does
    assert short_sum(eight, 7, complete=True) == "a₁…h₁ ✓"
    assert short_sum(eight, 6, complete=True) == "a₁…h₁✓"
    assert short_sum(eight, 3, complete=True) == "Σ8✓"
    assert short_sum((term(0, 0),), 3, complete=True) == "a₁✓"  # one GPU: its own copy is the sum
    assert short_sum((term(0, 11),), 3, complete=True) == "…✓"  # a₁₂ ✓ has no room: no bare 'a'
    assert short_sum(("0",), 3) == "0"  # a buffer that holds nothing yet


def test_a_capped_sum_shows_its_first_two_terms_and_its_last_as_sum_label_does():
    # From 5 GPUs the panels cap a sum at 'a₁+b₁+…+h₁' however wide the cell.
    for count in range(1, 9):
        terms = tuple(term(g, 0) for g in range(count))
        assert short_sum(terms, 40, max_terms=4) == sum_label(tuple(range(count)), 0, max_terms=4)
        assert sum_forms(terms, max_terms=4)[0] == sum_label(tuple(range(count)), 0, max_terms=4)


def label_rows(app) -> list[list[str]]:
    """Each panel's label lines (the first row of every cell) as drawn, panel by panel."""
    rows = []
    for panel in app.screen.query(GpuPanel):
        rows.append([panel.render_line(j * panel.cell_height).text.strip()
                     for j in range(len(panel.cells))])
    return rows


async def test_8_gpus_on_130x40_read_alike_in_every_panel():
    app = RingsimApp(Simulation.create("ring", 8, 8))
    async with app.run_test(size=(130, 40)) as pilot:
        for _ in range(6):
            await pilot.press("n")
        await pilot.pause()
        widths = {p.content_region.width for p in app.screen.query(GpuPanel)}
        assert widths == {10, 11}  # the audit's alternating panels
        rows = label_rows(app)
        # Row by row (GPU1..GPU8) the ring holds sums of 1..7 terms; each shortened alike.
        assert rows[0] == ["a₁", "a₂", "c₃+…+a₃", "d₄+…+a₄", "e₅+…+a₅", "f₆+…+a₆", "g₇+h₇+a₇", "h₈+a₈"]
        assert rows[5][0] == "a₁+…+f₁" and rows[6][0] == "a₁+…+g₁"  # 6 and 7 terms: last kept
        for panel, labels in zip(app.screen.query(GpuPanel), rows):
            for cell, label in zip(panel.cells, labels):
                assert label in allowed(cell.terms), (panel.gpu, label)
        # One step before the end (7 complete sums a GPU): each keeps its ✓ in every panel.
        for _ in range(7):
            await pilot.press("n")
        await pilot.pause()
        rows = label_rows(app)
        complete = [label for labels in rows for label in labels if label.endswith("✓")]
        assert len(complete) == 8 * 7 and {c[-1] for c in complete} == {"✓"}
        assert {c for c in complete if c.startswith("a₁")} == {"a₁+…+h₁ ✓"}
