"""Deterministic extraction of the treatment effect: candidates with evidence, then a decision.

1. ``estimate_marker`` — the protocol's ``ESTIMATE: <number>`` line is the script's own
   statement: the last one printed outside a robustness or placebo section wins.
2. ``declared`` — the number the model named when asked which printed number is its estimate
   (accepted only when that token is printed in stdout).
3. Otherwise every printed number is a *candidate* and collects evidence
   (:mod:`causalverify.extraction._evidence`): its label and unit, its section heading, the
   coefficient table row it sits in, the fitted coefficient it equals (exactly, or only by
   rounding; of the design's estimator or not), the constants the code sets, printed arithmetic,
   and what the code that printed it says. Candidates that print the same estimate (beyond
   rounding and units) are grouped; the best group is the estimate **only when its evidence
   separates it** from the next (:data:`MARGIN`). Otherwise the record is ``undecided`` and
   lists the ranked candidates; scoring decides such a cell only when every candidate passes or
   every one fails.

The extractor reports what is printed (a percent or basis points turned into a number): it does
not rescale per-day and cumulative effects (the scoring profile's business). The rationale names
the evidence that decided.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from causalverify.designs import DESIGNS
from causalverify.extraction._code import CodeLines, FitSites, Origins
from causalverify.extraction._constants import code_constants
from causalverify.extraction._evidence import (
    Candidate,
    FitIndex,
    family_bad,
    fit_evidence,
    heading_evidence,
    label_evidence,
    shape_evidence,
)
from causalverify.extraction._fits import SECOND_STAGE_TERM, effect_coefficients
from causalverify.extraction._headings import headings, sections
from causalverify.extraction._inference import Inference, read_inference
from causalverify.extraction._labels import find_markers
from causalverify.extraction._layout import LineMarks, line_marks
from causalverify.extraction._numbers import normalize_line
from causalverify.extraction._printed import Printed, read_line, read_stdout
from causalverify.extraction._tables import (
    TableRow,
    find_regression_table_rows,
    find_table_rows,
)
from causalverify.extraction._terms import (
    MAIN_CONTEXT,
    SECONDARY,
    CodeHints,
    code_hints,
    context_score,
    spec_score,
    term_score,
)
from causalverify.extraction._vectors import find_bare_number, find_vectors
from causalverify.families import Family
from causalverify.records import ExtractionCandidate, ExtractionRecord, OutputOrigin
from causalverify.sandbox.base import FitEntry
from causalverify.sandbox.outputs import origins_by_line

#: the best estimate must lead the next distinct one by this much evidence to be chosen
MARGIN: Final = 2.0
_CUMULATIVE: Final = re.compile(r"\bc(a|umulative )?ar\b|cumulative|\bsum\b|\btotal\b")
#: names of a design's other coefficients (a named vector's entry that is not the effect)
_OTHER_TERM: Final = re.compile(
    r"intercept|^const|^z$|^controls?$|mkt|market|running|^rc$|^post$|^treated$|^\(|first"
)
#: the best candidates grouped (the rest cannot change the decision)
MAX_GROUPED: Final = 300
#: candidates listed in a record
MAX_LISTED: Final = 6


def extract_estimate(
    *,
    code: str,
    stdout: str,
    family: Family,
    fits: Sequence[FitEntry] = (),
    declared: str | None = None,
    outputs: Sequence[OutputOrigin] = (),
) -> ExtractionRecord:
    """Extract the treatment-effect estimate a script printed.

    Parameters
    ----------
    code
        The executed script (names, comments and constants: never a source of values).
    stdout
        What the script printed.
    family
        The design family, which decides which coefficient is the effect.
    fits
        The script's fit log (``ExecResult.fits``): which printed number is a fitted
        coefficient; never a source of values.
    declared
        The number the model declared as its estimate, as printed (see ``declare``).
    outputs
        The output provenance (``ExecResult.outputs``): which code line printed each stdout
        line; its names and comments are evidence, never a source of values.

    Returns
    -------
    ExtractionRecord
        ``method="deterministic"``: the value and its line, or ``undecided`` with ranked
        candidates, or no value; the rationale names the evidence.
    """
    marker = _best_marker(stdout)
    if marker is not None:
        value, line = marker
        rec = _record(value, "estimate_marker", line, f"ESTIMATE line -> {value!r}")
        return _with_inference(rec, read_inference(None, (), stdout, marker=True))
    if declared is not None:
        found = _declared(stdout, declared)
        if found is not None:
            value, line = found
            rec = _record(value, "declared", line, f"the model declared {declared!r} -> {value!r}")
            on_line = read_line(stdout.splitlines()[line - 1], line)
            match = next((p for p in on_line if abs(p.value - value) <= 1e-12), None)
            return _with_inference(rec, read_inference(match, on_line, stdout, marker=True))
    candidates = collect_candidates(
        code=code, stdout=stdout, family=family, fits=fits, outputs=outputs
    )
    rec = decide(candidates, stdout, family)
    if rec.value is None or rec.line is None:
        return rec
    chosen = next(
        (c.printed for c in candidates if c.printed.line == rec.line and c.value == rec.value),
        None,
    )
    printed = [c.printed for c in candidates if c.printed.line == rec.line]
    return _with_inference(rec, read_inference(chosen, printed, stdout, marker=False))


def _with_inference(rec: ExtractionRecord, found: Inference) -> ExtractionRecord:
    """The record with the SE and interval read for its estimate (when any was)."""
    if found.source is None:
        return rec
    return rec.model_copy(update={"se": found.se, "ci": found.ci, "se_source": found.source})


def collect_candidates(
    *,
    code: str,
    stdout: str,
    family: Family,
    fits: Sequence[FitEntry] = (),
    outputs: Sequence[OutputOrigin] = (),
) -> list[Candidate]:
    """Every printed number with its evidence (see the module docstring)."""
    hints = code_hints(code, family)
    printed = read_stdout(stdout)
    by_line: dict[int, list[Candidate]] = {}
    cands = [Candidate(p) for p in printed]
    for c in cands:
        by_line.setdefault(c.printed.line, []).append(c)
    heads = sections(stdout)
    constants = code_constants(code)
    index = FitIndex(fits, family, hints)
    code_lines = CodeLines(code)
    sites = FitSites(code_lines, [f.function for f in fits])
    origins = Origins(code_lines, origins_by_line(stdout, outputs))
    for c in cands:
        if not c.printed.missing:
            fitted = fit_evidence(c, index)
            if fitted is not None:
                sites.evidence(c, fitted, family)
            shape_evidence(c, constants, "fit" in c.kinds)
        label_evidence(c, family, heads[c.printed.line - 1])
        if c.printed.line in origins.origins:
            origins.evidence(c, family)
        elif "label" in c.kinds:
            code_lines.evidence(c, family)
    _table_evidence(by_line, stdout, family, hints, heads)
    _vector_evidence(by_line, code, stdout, family, hints)
    main_sections = {h for h in heads if MAIN_CONTEXT.search(h) and not SECONDARY.search(h)}
    for c in cands:  # a table's caption already counted for its rows
        if not c.kinds or c.veto is not None:
            continue
        heading = heads[c.printed.line - 1]
        if not c.kinds & {"table", "spec"}:
            heading_evidence(c, family, heading)
        if main_sections and heading not in main_sections:
            c.add(-1.5, "printed outside the section the output marks main")
    _mark_evidence(cands, line_marks(stdout))
    return cands


def _mark_evidence(cands: Sequence[Candidate], marks: LineMarks) -> None:
    """What a line's tail, a footnote symbol or an enclosing record says (see ``_layout``)."""
    for c in cands:
        if c.veto is not None or not (c.kinds or c.effect_column):
            continue
        at = c.printed.line - 1
        if marks.main[at]:
            c.add(2.5, marks.main[at], "column" if c.effect_column else None)
        if marks.secondary[at]:
            c.add(-3.0, marks.secondary[at])
        if marks.not_main[at]:
            c.add(-1.5, marks.not_main[at])


def _find(by_line: dict[int, list[Candidate]], line: int, value: float) -> Candidate | None:
    for c in by_line.get(line, []):
        if c.printed.factor == 1.0 and abs(c.printed.printed - value) <= 1e-12 * max(1, abs(value)):
            return c
    return None


def _table_evidence(
    by_line: dict[int, list[Candidate]],
    stdout: str,
    family: Family,
    hints: CodeHints,
    heads: list[str],
) -> None:
    rows = find_table_rows(stdout) + find_regression_table_rows(stdout)
    for row in rows:
        cand = _find(by_line, row.line, row.value)
        if cand is None:
            continue
        if row.spec:
            _spec_row(cand, row, family)
            continue
        term = row.term
        if not term and len(hints.row_terms) == 1:
            term = next(iter(hints.row_terms))
        score = term_score(term, family, hints) if term else None
        if score is None:
            cand.add(-3.0, f"coefficient-table row of {row.term!r}, not the effect term")
            continue
        where = f"column {row.column!r} of the row of {term!r} in a coefficient table"
        cand.add(1.0 + score, where, "table")
        _context(cand, row.context, family, second_stage=bool(SECOND_STAGE_TERM.search(term)))


def _context(cand: Candidate, context: str, family: Family, *, second_stage: bool = False) -> None:
    ctx = context_score(context, family)
    if second_stage:  # a hand-made second stage is an OLS fit on purpose
        ctx = max(ctx, 0)
    if ctx:
        cand.add(float(ctx), f"the text before the table ({'+' if ctx > 0 else '-'})")
    if family_bad(context, family):
        cand.add(-2.0, f"the text before the table names a quantity other than the {family} effect")


def _spec_row(cand: Candidate, row: TableRow, family: Family) -> None:
    score = spec_score(row.term, family) + context_score(row.context, family)
    if score < 0:
        cand.add(-3.0, f"specification {row.term!r} is a secondary or naive one")
    else:
        cand.add(2.0 + score, f"row {row.term!r} of a table of specifications", "spec")


def _vector_evidence(
    by_line: dict[int, list[Candidate]],
    code: str,
    stdout: str,
    family: Family,
    hints: CodeHints,
) -> None:
    for entry in find_vectors(code, stdout):
        cand = _find(by_line, entry.line, entry.value)
        if cand is None:
            continue
        score = term_score(entry.term, family, hints)
        if score is not None:
            cand.add(1.0 + score, f"named coefficient {entry.term!r}", "vector")
        elif _OTHER_TERM.search(entry.term.lower()):
            cand.add(-2.0, f"named coefficient {entry.term!r}, not the effect term")
    bare = find_bare_number(code, stdout, family, hints)
    if bare is not None:
        cand = _find(by_line, bare.line, bare.value)
        if cand is not None:
            cand.add(4.0, f"the only printed value is the code's coefficient {bare.term!r}", "bare")


@dataclass
class _Group:
    """Candidates that print the same estimate (beyond rounding and units)."""

    best: Candidate
    members: list[Candidate]

    @property
    def score(self) -> float:
        lines = {m.printed.line for m in self.members if m.kinds and m.veto is None}
        return self.best.score + 0.5 * min(2, len(lines) - 1)


def _half_unit(p: Printed) -> float:
    return 0.5 * 10.0 ** (-p.decimals) * abs(p.factor)


def _same(a: Candidate, b: Candidate, family: Family) -> bool:
    """The two print one estimate: equal beyond rounding, or (designs reported on several
    scales) a cumulative effect, one of the design's multiples k > 1 of the other (k = 2..11
    days for event studies), labelled as cumulative, and the per-period one, both printed with
    3 significant digits."""
    tol = _half_unit(a.printed) + _half_unit(b.printed) + 1e-12 * max(1.0, abs(a.value))
    if abs(a.value - b.value) <= tol:
        return True
    reported = DESIGNS[family].scales
    if reported is None or min(a.printed.significant, b.printed.significant) < 3:
        return False
    small, large = sorted((a, b), key=lambda c: abs(c.value))
    if small.value == 0 or (small.value > 0) != (large.value > 0):
        return False
    big, little = (x.printed.label.lower().replace("_", " ") for x in (large, small))
    if not _CUMULATIVE.search(big) or _CUMULATIVE.search(little):
        return False
    k = round(large.value / small.value)
    tol = _half_unit(large.printed) + k * _half_unit(small.printed)
    return k > 1 and k in reported.multiples and abs(large.value - k * small.value) <= tol


def _eligible(c: Candidate) -> bool:
    """A candidate at all: evidence that it is an estimate and nothing that rules it out. A
    number the script states as its result stays one even when other evidence weighs against
    it (a naive or wrong-term estimate is still what the script reported, when nothing else is)."""
    if c.veto is not None or not c.kinds or c.printed.missing:
        return False
    return c.score > 0 or (bool(c.kinds & _STATED) and not c.label_against)


def _main_marked(c: Candidate) -> bool:
    return any(
        w > 0 and ("main" in why or "heading" in why or "preferred" in why) for w, why in c.evidence
    )


def _missing_headline(candidates: Sequence[Candidate], best: _Group) -> Candidate | None:
    """A missing value (``NA``) printed as the main result, when the best number is not itself
    marked main: the script's headline estimate is missing, and another number is no answer."""
    if _main_marked(best.best):
        return None
    return next(
        (
            c
            for c in candidates
            if c.printed.missing
            and c.veto is None
            and "label" in c.kinds
            and _main_marked(c)
            and c.score >= best.score - MARGIN
        ),
        None,
    )


def group_candidates(candidates: Sequence[Candidate], family: Family) -> list[_Group]:
    """Eligible candidates grouped by the estimate they print, best group first."""
    ranked = sorted(
        (c for c in candidates if _eligible(c)),
        key=lambda c: (-c.score, c.printed.line, c.printed.index),
    )[:MAX_GROUPED]
    groups: list[_Group] = []
    for c in ranked:
        for g in groups:
            if _same(g.best, c, family):
                g.members.append(c)
                if abs(c.value) < abs(g.best.value) and not _same(g.best, c, "did"):
                    g.best = c  # a per-day effect represents its cumulative restatement
                break
        else:
            groups.append(_Group(c, [c]))
    return sorted(groups, key=lambda g: -g.score)


def decide(candidates: Sequence[Candidate], stdout: str, family: Family) -> ExtractionRecord:
    """The estimate, when the evidence separates it; else undecided (or none)."""
    groups = group_candidates(candidates, family)
    n_lines = len(stdout.splitlines())
    if not groups:
        return ExtractionRecord(
            method="deterministic",
            value=None,
            rule="none",
            line=None,
            rationale=(
                f"no printed number in {n_lines} stdout lines has evidence of being the "
                f"{family} effect estimate"
            ),
        )
    listed = [_listed(g) for g in groups[:MAX_LISTED]]
    best = groups[0]
    contenders = [g for g in groups if best.score - g.score < MARGIN]
    why = _why(best.best)
    missing = _missing_headline(candidates, best)
    if missing is not None:
        return _undecided(
            contenders,
            f"undecided: the main result printed on line {missing.printed.line} is missing "
            f"({missing.printed.token}: {_why(missing)}); the best number printed, "
            f"{best.best.value!r} (line {best.best.printed.line}), is not marked main",
        )
    rival = _stated_rival(best, groups[1:])
    if rival is None and (len(groups) == 1 or best.score - groups[1].score >= MARGIN):
        p = best.best.printed
        rec = _record(p.value, _rule(best.best), p.line, why)
        if len(groups) > 1:
            others = "; ".join(f"{c.value!r} (score {c.score:.1f})" for c in listed[1:])
            rec = rec.model_copy(
                update={
                    "ambiguous": True,
                    "candidates": listed,
                    "rationale": f"{rec.rationale}; also printed, with less evidence: {others}",
                }
            )
        return rec
    runner = rival or groups[1]
    # the contenders: the groups the evidence does not separate from the best
    contenders = [g for g in groups if best.score - g.score < MARGIN or g is rival]
    return _undecided(
        contenders,
        f"undecided: {best.best.value!r} (line {best.best.printed.line}, score "
        f"{best.score:.1f}: {why}) and {runner.best.value!r} (line "
        f"{runner.best.printed.line}, score {runner.score:.1f}: {_why(runner.best)}) are "
        f"not separated by the evidence",
    )


def _undecided(contenders: Sequence[_Group], rationale: str) -> ExtractionRecord:
    """An undecided record listing the contenders (best first)."""
    return ExtractionRecord(
        method="deterministic",
        value=None,
        rule="undecided",
        line=None,
        ambiguous=True,
        undecided=True,
        candidates=[_listed(g) for g in contenders[:MAX_LISTED]],
        rationale=rationale,
    )


_STATED: Final = frozenset({"label", "result", "bare"})


def _stated(c: Candidate) -> bool:
    """The script states this number as its effect: a label naming it, nothing against it."""
    return bool(c.kinds & _STATED) and all(w >= 0 for w, _ in c.evidence)


def _stated_rival(best: _Group, others: Sequence[_Group]) -> _Group | None:
    """A number the script states as its effect, when the best reading is only a table or fit
    row: the script's own statement and its printed fit disagree, so neither is certain."""
    if _stated(best.best):
        return None
    return next((g for g in others if _stated(g.best)), None)


def _listed(g: _Group) -> ExtractionCandidate:
    c = g.best
    return ExtractionCandidate(
        value=c.value,
        rule=_rule(c),
        line=c.printed.line,
        token=c.printed.token + ("%" if c.printed.unit == "%" else ""),
        score=round(g.score, 3),
        evidence=[f"{w:+.1f} {why}" for w, why in c.evidence],
    )


def _why(c: Candidate) -> str:
    pos = sorted(c.evidence, key=lambda e: -abs(e[0]))[:4]
    return ", ".join(f"{why} ({w:+.1f})" for w, why in pos)


_RULES: Final = {
    "bare": "bare_number",
    "label": "labelled_line",
    "table": "coef_table",
    "fit": "fit_match",
    "spec": "spec_table",
    "vector": "coef_vector",
    "result": "arithmetic_result",
    "column": "table_column",
    "code": "printing_code",
}


def _rule(c: Candidate) -> str:
    """The rule named after the strongest positive evidence of the candidate."""
    best: tuple[float, str] | None = None
    for weight, _why, kind in c.weighted_kinds():
        if kind in _RULES and (best is None or weight > best[0]):
            best = (weight, kind)
    if best is None:
        return "evidence"
    rule = _RULES[best[1]]
    if rule == "labelled_line" and c.printed.factor != 1.0:
        return "labelled_line_percent"
    return rule


def _record(value: float, rule: str, line: int, why: str) -> ExtractionRecord:
    return ExtractionRecord(
        method="deterministic",
        value=value,
        rule=rule,
        line=line,
        rationale=f"line {line}: {why} (rule {rule})",
    )


def _declared(stdout: str, declared: str) -> tuple[float, int] | None:
    """The declared token where stdout prints it (same digits; a percent is divided by 100)."""
    token = normalize_line(declared.strip()).rstrip(".")
    pct = token.endswith("%")
    token = token.rstrip("% ")
    try:
        value = float(token)
    except ValueError:
        return None
    pattern = re.compile(rf"(?<![\w.]){re.escape(token)}(?![\w.])")
    for no, raw in enumerate(stdout.splitlines(), start=1):
        if pattern.search(normalize_line(raw)):
            return (value / 100.0 if pct else value), no
    return None


def _best_marker(stdout: str) -> tuple[float, int] | None:
    """The last ``ESTIMATE:`` line not printed in a robustness or placebo section (the last one
    at all when every marker is)."""
    markers = find_markers(stdout)
    if len(markers) <= 1:
        return markers[0] if markers else None
    heads = headings(stdout)
    main = [m for m in markers if not SECONDARY.search(heads[m[1] - 1])]
    return (main or markers)[-1]


def fitted_effects(*, code: str, family: Family, fits: Sequence[FitEntry]) -> list[float]:
    """Every fitted coefficient on the family's effect term (for the diagnosis of a cell)."""
    hints = code_hints(code, family)
    return [c.estimate for c in effect_coefficients(fits, family, hints)]


__all__ = ["collect_candidates", "decide", "extract_estimate", "fitted_effects", "heading_evidence"]
