"""A sum's label cut to a cell's width: whole terms only, one ellipsis at most, the last term
kept while there is room ('a₁+b₁+…+h₁', 'a₁+…+h₁', 'a₁…h₁', '8 terms', 'Σ8'), and a complete
sum's ✓ kept to the end."""

from __future__ import annotations

from rich.cells import cell_len

MARK = "✓"  # a complete sum's mark, after its label


def sum_forms(terms: tuple[str, ...], *, max_terms: int = 0) -> tuple[str, ...]:
    """Every way a cell may write the sum of `terms` ('a₁', 'b₁', …), longest first.

    With max_terms > 0 a longer sum never shows more than its first two terms and its last
    ('a₁+b₁+…+h₁'), as `ringsim.core.naming.sum_label` writes it.
    """
    count = len(terms)
    if count == 0:
        return ("0",)
    if count == 1:
        return (terms[0], "…")
    capped = bool(max_terms) and count > max_terms
    forms = [] if capped else ["+".join(terms)]
    # The first k terms, the ellipsis, the last term: at least one term left out, so the
    # ellipsis always stands for something.
    heads = min(count - 2, 2) if capped else count - 2
    forms += ["+".join(terms[:k]) + "+…+" + terms[-1] for k in range(heads, 0, -1)]
    if count > 2:  # for two terms 'a₁…b₁' is no shorter than 'a₁+b₁', and reads as a range
        forms.append(f"{terms[0]}…{terms[-1]}")
    forms += [f"{count} terms", f"Σ{count}", "…"]
    return tuple(dict.fromkeys(forms))


def short_sum(terms: tuple[str, ...], room: int, *, complete: bool = False, max_terms: int = 0) -> str:
    """The longest form of the sum that fits `room` columns, with ' ✓' when it is complete.

    A complete sum drops the space before its mark rather than a term ('a₁+…+h₁✓' before
    'a₁…h₁ ✓', so it reads like the unfinished sums beside it), and keeps the mark alone
    where no form fits.
    """
    if room <= 0:
        return ""
    forms = sum_forms(tuple(terms), max_terms=max_terms)
    if not complete:
        return next((f for f in forms if cell_len(f) <= room), "")
    # A bare '…' says nothing a tick does not: it comes only where no real form fits.
    for form in forms[:-1] if forms[-1] == "…" else forms:
        for mark in (" " + MARK, MARK):
            if cell_len(form + mark) <= room:
                return form + mark
    return "…" + MARK if room >= 2 else MARK
