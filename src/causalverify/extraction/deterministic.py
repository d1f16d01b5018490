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
from causalverify.extraction._labels import Labelled, find_labelled, find_marker
from causalverify.extraction._numbers import decimals_of
from causalverify.extraction._tables import (
    TableRow,
    find_regression_table_rows,
    find_table_rows,
)
from causalverify.extraction._terms import (
    CodeHints,
    code_hints,
    context_score,
    spec_score,
    term_score,
)
from causalverify.extraction._vectors import VectorEntry, find_bare_number, find_vectors
from causalverify.families import Family
from causalverify.sandbox.base import FitEntry
from causalverify.store.records import ExtractionRecord

_DECORATED = re.compile(r"^\s*[=#\-*~]{2,}|[=#\-*~]{3,}\s*$")
_CAPS_HEADING = re.compile(r"^\s*[A-Z][A-Z0-9 ,:()/&-]{4,}\s*$")
_COLON_HEADING = re.compile(r"^\s*[^:]{3,60}:\s*$")
_DECIMAL = re.compile(r"\d\.\d")


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
    marker = find_marker(stdout)
    if marker is not None:
        value, line = marker
        return _record(value, "estimate_marker", line, f"ESTIMATE line -> {value!r}")
    hints = code_hints(code, family)
    labelled = _best_labelled(stdout, family)
    if fits:
        match = best_fit_match(find_fit_matches(stdout, fits, family, hints, _headings(stdout)))
        if match is not None and (
            labelled is None or labelled.score <= 0 or _agree(labelled, match)
        ):
            return _from_fit(match)
    if labelled is not None and labelled.score > 0:
        return _from_label(labelled)
    rows = sorted(find_table_rows(stdout) + find_regression_table_rows(stdout), key=_line_of)
    from_table = _from_table(_best_row(rows, family, hints), hints)
    if from_table is None:
        from_table = _from_spec(_best_spec_row(rows, family))
    if from_table is not None:
        return from_table
    if labelled is not None:
        return _from_label(labelled)
    entry = _best_vector(find_vectors(code, stdout), family, hints)
    if entry is not None:
        return _record(
            entry.value,
            "coef_vector",
            entry.line,
            f"named coefficient {entry.term!r} -> {entry.token}",
        )
    bare = find_bare_number(code, stdout, family, hints)
    if bare is not None:
        return _record(
            bare.value,
            "bare_number",
            bare.line,
            f"the only printed value, {bare.token}, is the code's coefficient {bare.term!r}",
        )
    return ExtractionRecord(
        method="deterministic",
        value=None,
        rule="none",
        line=None,
        rationale=(
            f"no ESTIMATE line, no labelled {family} effect line and no coefficient-table row "
            f"matching the {family} effect term in {len(stdout.splitlines())} stdout lines"
        ),
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


def _agree(lab: Labelled, match: FitMatch) -> bool:
    """The labelled line and the fit match print the same number (at the coarser precision)."""
    value = lab.value / 100.0 if lab.percent else lab.value
    return abs(value - match.value) <= 0.5 * 10.0 ** (-max(0, _decimals_printed(match))) * 1.000001


def _decimals_printed(match: FitMatch) -> int:
    token = match.token
    decimals = decimals_of(token)
    return decimals + 2 if match.value != float(token) else decimals


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


def _headings(stdout: str) -> list[str]:
    """For each line, the closest heading printed before it (lower-cased)."""
    current = ""
    out: list[str] = []
    for raw in stdout.splitlines():
        out.append(current)
        if _is_heading(raw):
            current = raw.lower()
    return out


def _is_heading(raw: str) -> bool:
    """A section heading: a decorated line (``=== Robustness (h = 0.15) ===``, ``## IV``, a rule
    of dashes), an upper-case title, or a short line ending in a colon (``2SLS (preferred):``).

    A heading may hold a number or two (a bandwidth, a model number), but not a result: a
    decorated line with more than two decimals and a colon line with any are not headings.
    """
    decimals = len(_DECIMAL.findall(raw))
    if _DECORATED.search(raw):
        return decimals <= 2
    if _CAPS_HEADING.match(raw):
        return decimals == 0
    return (
        bool(_COLON_HEADING.match(raw))
        and decimals == 0
        and re.search(r"[A-Za-z]", raw) is not None
    )


def _best_labelled(stdout: str, family: Family) -> Labelled | None:
    heads = _headings(stdout)
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
