"""Deterministic extraction of the treatment effect from a cell's code and stdout.

Rules, in order (the first that yields a value wins):

1. ``estimate_marker`` — an ``ESTIMATE: <number>`` line; if several are printed the **last** one
   wins (a script that refines its answer prints the final one last).
1b. ``fit_match`` — with the fit log (the models the script fitted, recorded in the sandbox): a
   printed number that equals, at its printed precision, a fit's coefficient on the family's
   effect term, whatever the print style. Preferred: a number not printed in a robustness or
   placebo context, from a fit of the family's design (an IV estimator for IV, an RD estimator
   for RDD), from the **last** such fit, printed with the most digits. The printed value is
   returned, never the logged one. When the script also prints a labelled effect line (rule 2)
   with another number, the script's own statement wins (it may be hand-computed).
2. ``labelled_line`` — a number printed after a label that names an effect estimate for the
   family (``DiD estimate: -0.23``, ``IV (2SLS) effect = 0.41``, ``Average AR per day: 0.002``).
   Labels naming a standard error, statistic, p-value, interval, sample size, first stage, OLS
   (for IV), a slope (for RDD) or the market model (for event studies) are ignored. Labels and
   section headings that mark a robustness, placebo or sensitivity result are demoted. Among the
   best-scoring labels the **first** wins (the headline is printed before its variants; a closing
   summary repeats it). A number followed by ``%`` is divided by 100 (``labelled_line_percent``).
3. ``coef_table`` — the estimate column of a coefficient table, row = the family's effect term
   (the treated×post interaction; the post-event indicator; the instrumented regressor; treated
   at the cutoff). Tables printed under a robustness/placebo/first-stage heading are demoted; for
   IV a table printed as an IV/2SLS fit is preferred to one printed as OLS. Among the best the
   **last** wins (scripts progress from naive models to the preferred one).
4. ``spec_table`` — a table of specifications (``spec``/``model`` label column) with no row named
   by the effect term: its main row (the first of the best; never a robustness/placebo row).
5. ``coef_vector`` — a named coefficient vector (R ``coef(fit)``, ``print(fit)``, a pandas
   ``params`` Series).
6. ``bare_number`` — stdout is one unlabelled number and the code picks exactly one coefficient,
   the effect term, by name and touches no SE, statistic, p-value or interval.

The extractor reports what is printed: it does not rescale (per-day vs cumulative effects are the
scoring profile's business).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from causalverify.extraction._fits import (
    FitMatch,
    best_fit_match,
    effect_coefficients,
    find_fit_matches,
)
from causalverify.extraction._headings import headings
from causalverify.extraction._labels import Labelled, find_labelled, find_markers
from causalverify.extraction._numbers import NUMBER, decimals_of, normalize_line, parse_number
from causalverify.extraction._tables import (
    TableRow,
    find_regression_table_rows,
    find_table_rows,
)
from causalverify.extraction._terms import (
    SECONDARY,
    CodeHints,
    code_hints,
    context_score,
    spec_score,
    term_score,
)
from causalverify.extraction._vectors import (
    VectorEntry,
    find_bare_number,
    find_vectors,
)
from causalverify.families import Family
from causalverify.records import ExtractionCandidate, ExtractionRecord
from causalverify.sandbox.base import FitEntry


def extract_estimate(
    *, code: str, stdout: str, family: Family, fits: Sequence[FitEntry] = ()
) -> ExtractionRecord:
    """Extract the treatment-effect estimate a script printed.

    Parameters
    ----------
    code
        The executed script (used only for variable-name hints, never for values).
    stdout
        What the script printed.
    family
        The design family, which decides which coefficient is the effect.
    fits
        The script's fit log (``ExecResult.fits``): identifies which printed number is a fitted
        effect coefficient; never a source of values.

    Returns
    -------
    ExtractionRecord
        ``method="deterministic"``, the value (or None), the rule, the 1-based stdout line and
        a rationale naming both.
    """
    marker = _best_marker(stdout)
    if marker is not None:
        value, line = marker
        return _record(value, "estimate_marker", line, f"ESTIMATE line -> {value!r}")
    hints = code_hints(code, family)
    labelled = _best_labelled(stdout, family)
    positive = _from_label(labelled) if labelled is not None and labelled.score > 0 else None
    demoted = _from_label(labelled) if labelled is not None and positive is None else None
    best_fit, rival_fits = _fit_candidates(stdout, fits, family, hints)
    chain: list[ExtractionRecord | None] = []
    if best_fit is not None and (
        positive is None or _same_number(positive, _from_fit(best_fit), stdout)
    ):
        chain += [_from_fit(best_fit), positive]
    else:  # the script's own labelled statement of another number wins over a recognised one
        chain += [positive, _from_fit(best_fit) if best_fit is not None else None]
    rows = sorted(find_table_rows(stdout) + find_regression_table_rows(stdout), key=_line_of)
    row = _best_row(rows, family, hints)
    table = _from_table(row, hints)
    if table is None:
        row = _best_spec_row(rows, family)
        table = _from_spec(row)
    vector = _from_vector(_best_vector(find_vectors(code, stdout), family, hints))
    bare = _from_bare(find_bare_number(code, stdout, family, hints))
    # a demoted label (naive, robustness) comes after every positive rule
    chain += [table, vector, bare, demoted]
    chosen = next((rec for rec in chain if rec is not None), None)
    if chosen is None:
        return ExtractionRecord(
            method="deterministic",
            value=None,
            rule="none",
            line=None,
            rationale=(
                f"no ESTIMATE line, no labelled {family} effect line and no coefficient-table "
                f"row matching the {family} effect term in {len(stdout.splitlines())} stdout lines"
            ),
        )
    main_row = table if row is not None and context_score(row.context, family) >= 0 else None
    plausible = [
        rec
        for rec in (*chain[:2], *(_from_fit(m) for m in rival_fits), main_row, vector, bare)
        if rec is not None
    ]
    return _with_ambiguity(chosen, plausible, stdout)


def _fit_candidates(
    stdout: str, fits: Sequence[FitEntry], family: Family, hints: CodeHints
) -> tuple[FitMatch | None, list[FitMatch]]:
    """The best fit match, and the equally good matches of *other* fits (rival estimates)."""
    if not fits:
        return None, []
    matches = find_fit_matches(stdout, fits, family, hints, headings(stdout))
    best = best_fit_match(matches)
    if best is None:
        return None, []
    rivals = [m for m in matches if m.key[0] == best.key[0] and m.coef.fit != best.coef.fit]
    return best, rivals


def _from_vector(entry: VectorEntry | None) -> ExtractionRecord | None:
    if entry is None:
        return None
    return _record(
        entry.value, "coef_vector", entry.line, f"named coefficient {entry.term!r} -> {entry.token}"
    )


def _from_bare(bare: VectorEntry | None) -> ExtractionRecord | None:
    if bare is None:
        return None
    return _record(
        bare.value,
        "bare_number",
        bare.line,
        f"the only printed value, {bare.token}, is the code's coefficient {bare.term!r}",
    )


def _half_unit(stdout: str, rec: ExtractionRecord) -> float:
    """Half a unit in the last printed digit of the number ``rec`` was read from."""
    if rec.line is None or rec.value is None:
        return 0.0
    lines = stdout.splitlines()
    if not 0 < rec.line <= len(lines):
        return 0.0
    best = 0.0
    for token in re.findall(NUMBER, normalize_line(lines[rec.line - 1])):
        value = parse_number(token)
        if value is None:
            continue
        for scale in (1.0, 100.0):
            if abs(value - rec.value * scale) <= 1e-9 * max(1.0, abs(value)):
                best = max(best, 0.5 * 10.0 ** (-decimals_of(token)) / scale)
    return best


def _same_number(a: ExtractionRecord, b: ExtractionRecord, stdout: str) -> bool:
    """Two readings print the same number: they differ by no more than rounding of each."""
    if a.value is None or b.value is None:
        return a.value is b.value
    tol = _half_unit(stdout, a) + _half_unit(stdout, b) + 1e-12 * max(1.0, abs(a.value))
    return abs(a.value - b.value) <= tol


def _with_ambiguity(
    chosen: ExtractionRecord, plausible: list[ExtractionRecord], stdout: str
) -> ExtractionRecord:
    """Flag the record when plausible candidates print different numbers (beyond rounding)."""
    distinct: list[ExtractionRecord] = []
    for rec in [chosen, *plausible]:
        assert rec.value is not None
        if not any(_same_number(rec, d, stdout) for d in distinct):
            distinct.append(rec)
    if len(distinct) < 2:
        return chosen
    candidates = [
        ExtractionCandidate(value=d.value, rule=d.rule, line=d.line)
        for d in distinct
        if d.value is not None
    ]
    listed = "; ".join(f"{c.value!r} ({c.rule}, line {c.line})" for c in candidates)
    return chosen.model_copy(
        update={
            "ambiguous": True,
            "candidates": candidates,
            "rationale": f"{chosen.rationale}; AMBIGUOUS, other plausible estimates: {listed}",
        }
    )


def fitted_effects(*, code: str, family: Family, fits: Sequence[FitEntry]) -> list[float]:
    """Every fitted coefficient on the family's effect term (for the diagnosis of a cell)."""
    hints = code_hints(code, family)
    return [c.estimate for c in effect_coefficients(fits, family, hints)]


def _line_of(row: TableRow) -> int:
    return row.line


def _record(value: float, rule: str, line: int, why: str) -> ExtractionRecord:
    return ExtractionRecord(
        method="deterministic",
        value=value,
        rule=rule,
        line=line,
        rationale=f"line {line}: {why} (rule {rule})",
    )


def _from_table(row: TableRow | None, hints: CodeHints) -> ExtractionRecord | None:
    if row is None:
        return None
    term = repr(row.term) if row.term else f"{next(iter(hints.row_terms))!r} (named by the code)"
    where = f"coefficient table {row.table + 1}" if row.table >= 0 else "regression table"
    return _record(
        row.value,
        "coef_table",
        row.line,
        f"{where}, term {term}, column {row.column!r} -> {row.token}",
    )


def _from_fit(match: FitMatch) -> ExtractionRecord:
    coef = match.coef
    return _record(
        match.value,
        "fit_match",
        match.line,
        f"printed {match.token}{'%' if match.value != float(match.token) else ''} is the "
        f"coefficient on {coef.term!r} of fit {coef.fit + 1} ({coef.function}), "
        f"{coef.estimate!r}, at its printed precision",
    )


def _from_spec(row: TableRow | None) -> ExtractionRecord | None:
    if row is None:
        return None
    return _record(
        row.value,
        "spec_table",
        row.line,
        f"specification table {row.table + 1}, main row {row.term!r}, column {row.column!r} "
        f"-> {row.token}",
    )


def _from_label(lab: Labelled) -> ExtractionRecord:
    if lab.percent:
        value = lab.value / 100.0
        return _record(
            value,
            "labelled_line_percent",
            lab.line,
            f"label {lab.label!r}, {lab.value!r}% -> {value!r}",
        )
    return _record(lab.value, "labelled_line", lab.line, f"label {lab.label!r} -> {lab.value!r}")


def _best_marker(stdout: str) -> tuple[float, int] | None:
    """The last ``ESTIMATE:`` line not printed in a robustness or placebo section (the last one
    at all when every marker is)."""
    markers = find_markers(stdout)
    if len(markers) <= 1:
        return markers[0] if markers else None
    heads = headings(stdout)
    main = [m for m in markers if not SECONDARY.search(heads[m[1] - 1])]
    return (main or markers)[-1]


def _best_labelled(stdout: str, family: Family) -> Labelled | None:
    heads = headings(stdout)
    best: Labelled | None = None
    best_score = -(10**6)
    for lab in find_labelled(stdout, family):
        score = lab.score + context_score(heads[lab.line - 1], family)
        if score > best_score:  # strict: the first of the best wins
            best, best_score = Labelled(lab.label, lab.value, lab.line, score, lab.percent), score
    return best


def _best_row(rows: list[TableRow], family: Family, hints: CodeHints) -> TableRow | None:
    best: TableRow | None = None
    best_score = -(10**6)
    for row in rows:
        term = row.term
        if not term:  # a row printed without its term: named by the code, when unambiguous
            if len(hints.row_terms) != 1:
                continue
            term = next(iter(hints.row_terms))
        base = term_score(term, family, hints)
        if base is None:
            continue
        score = base + context_score(row.context, family)
        if score >= best_score:  # the last of the best wins
            best, best_score = row, score
    return best


def _best_spec_row(rows: list[TableRow], family: Family) -> TableRow | None:
    """The main row of a table of specifications: the first of the best-scoring rows."""
    best: TableRow | None = None
    best_score = -1
    for row in rows:
        if not row.spec:
            continue
        score = spec_score(row.term, family) + context_score(row.context, family)
        if score > best_score:  # strict: the main specification is listed first
            best, best_score = row, score
    return best


def _best_vector(
    entries: list[VectorEntry], family: Family, hints: CodeHints
) -> VectorEntry | None:
    best: VectorEntry | None = None
    best_score = -(10**6)
    for entry in entries:
        score = term_score(entry.term, family, hints)
        if score is not None and score >= best_score:
            best, best_score = entry, score
    return best
