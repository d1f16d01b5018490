"""Candidates with evidence: every printed number and what is known about it.

Each printed number (:mod:`causalverify.extraction._printed`) collects *evidence*: weighted,
named facts from its label, its section heading, the coefficient table it sits in, the fit log
(which fit and term it equals, exactly or only by rounding), the constants the code sets, printed
arithmetic, its unit and what the code that printed it says. The sum of the weights ranks it;
:mod:`causalverify.extraction._decide` decides whether the ranking separates one estimate.

Weights are small numbers on one scale: a clear label naming the family's effect is about +4, a
coefficient-table row of the effect term +3, a fitted effect coefficient +2 to +4; a robustness,
placebo or first-stage context about -3 to -4; a setup constant or an operand of arithmetic -6.
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

from causalverify.designs import DESIGNS
from causalverify.extraction._constants import CodeConstants
from causalverify.extraction._fits import EffectCoef, effect_coefficients
from causalverify.extraction._printed import SHORT_TABLE, Printed
from causalverify.extraction._terms import (
    IV_CONTEXT,
    MAIN_CONTEXT,
    OLS_CONTEXT,
    SECONDARY,
    CodeHints,
)
from causalverify.families import Family
from causalverify.sandbox.base import FitEntry

#: a label word that names an estimate of an effect
EFFECT_WORDS: Final = re.compile(
    r"estimate|effect|impact|\bate\b|\batt\b|\blate\b|coefficient|\bcoef\b|\bdid\b|diff.?in.?diff"
    r"|difference[- ]in[- ]differences|2sls|tsls|\biv\b|discontinuity|\brdd?\b|jump|\bcaa?r\b"
    r"|\baa?r\b|abnormal|\bbeta_?hat\b|β̂|τ̂|elasticity|\bresult\b|twfe|two[- ]way|within"
    r"|\bgap\b|treatment|\bdelta\b|\bwald\b|\bsate\b|\bcate\b|\btau\b|τ|\best\b"
)
#: a label that names something other than an estimate (its last clause is read)
STRONG_STAT: Final = re.compile(
    r"\bse\b|\bstd|standard (error|dev)|s\.e\.|\berr(or)?\b|t[- ]?stat|t[- ]?val|\bt\b|\bz\b"
    r"|p[- ]?val|\bp\b|pr\(|\bci\b|conf|interval|lower|upper|\blo\b|\bhi\b|f[- ]?stat|\bf\b"
    r"|\bn\b|\bobs\b|observations|r[- ]?squared|r²|\br2\b|\bsd\b|variance|\bvar\b|\bdf\b"
    r"|degrees|rmse|\baic\b|\bbic\b|likelihood|hausman|sargan|significan|\bmse\b"
    r"|wald (test|stat|chi)|\bchi|statistic|fraction|proportion|share of|\bbias\b"
    r"|\b(pct|percent|%) ?(positive|negative|significant)|\b(positive|negative) (share|fraction)"
)
#: a label that names a setup quantity or a description of the data, unless it names an effect
STAT_WORDS: Final = re.compile(
    r"bandwidth|\bbw\b|\bh\b|cutoff|threshold|kernel|order|\bseed\b|\blevel\b|\bnumber\b"
    r"|\bcounts?\b|share of|proportion|\brows\b|\bcolumns\b|sample size|\bweights?\b"
    r"|window length|(control|treated|baseline|pre|outcome|dependent|group|sample|untreated)\s*"
    r"(group\s*)?mean|mean (of )?(the )?(y|outcome|dependent)|\bmin\b|\bmax\b|median|quantile"
    r"|power|\bsize\b|reject|\bk\b|\btests?\b|(?<!per )\b(days?|units?|stocks?|years?|periods?|firms?"
    r"|samples?)\b$|\bcorr"
)
#: naive or comparison estimates a script prints next to its own
_NAIVE: Final = re.compile(
    r"naive|pooled|simple (ols|regression|difference|comparison)|without (fixed|controls|fe)"
    r"|no (fixed|controls|fe)|biased|uncorrected|for comparison|comparison (estimate|model|ols)"
    r"|\braw (comparison|difference|gap|mean)|would (suggest|imply|give)|unadjusted"
    r"|benchmark ols"
)
#: an event window printed in a label: ``[-1,+1]``, ``(0, 10)``, ``[-10;-2]``
_WINDOW: Final = re.compile(r"[\[(]\s*([-+]?\d{1,3})\s*[,;:]\s*([-+]?\d{1,3})\s*[\])]")
_PARENS: Final = re.compile(r"\([^()]*\)|\[[^\[\]]*\]")


@dataclass
class Candidate:
    """A printed number and the evidence about it."""

    printed: Printed
    evidence: list[tuple[float, str]] = field(default_factory=list)
    #: the kind of each piece of evidence (None for context), parallel to ``evidence``
    kind_of: list[str | None] = field(default_factory=list)
    #: kinds of positive evidence that name it an effect (label, table, fit, vector, bare, ...)
    kinds: set[str] = field(default_factory=set)
    veto: str | None = None  # a reason it is never the estimate
    #: in a table column that names an estimate (a row marked main there is a result)
    effect_column: bool = False
    #: its own label says it is not the effect (robustness, naive, another quantity)
    label_against: bool = False

    @property
    def score(self) -> float:
        return sum(w for w, _ in self.evidence)

    @property
    def value(self) -> float:
        return self.printed.value

    def weighted_kinds(self) -> list[tuple[float, str, str]]:
        """(weight, why, kind) of the evidence that names a kind."""
        return [(w, y, k) for (w, y), k in zip(self.evidence, self.kind_of, strict=True) if k]

    def add(self, weight: float, why: str, kind: str | None = None) -> None:
        self.evidence.append((weight, why))
        self.kind_of.append(kind)
        if kind is not None:
            self.kinds.add(kind)


def _last_clause(label: str) -> str:
    """The words nearest the number: the label's last clause, parentheses removed."""
    bare = _PARENS.sub(" ", label.lower())
    parts = re.split(r"[|;:,=]", bare)
    for part in reversed(parts):
        if re.search(r"[a-zβτ]", part):
            return part.strip(" *-#>")
    return ""


def _window_evidence(cand: Candidate, text: str, family: Family) -> None:
    """An event window that ends before the event is a placebo (``CAR[-10,-2]``), for the
    designs reported over event windows."""
    reported = DESIGNS[family].scales
    window = _WINDOW.search(text)
    if reported is not None and reported.event_windows and window and int(window.group(2)) < 0:
        cand.add(-3.0, f"the window {window.group(0)} lies before the event (a placebo)")


def column_evidence(cand: Candidate, family: Family) -> bool:
    """A number in a table column: the column says what it is, the row label which one.
    Returns False when the number is not in a column (the label is then read as a label)."""
    p = cand.printed
    if not p.column:
        return False
    column = (
        re.sub(r"(?<=[a-z])(?=[A-Z])", " ", p.column).lower().replace("_", " ").replace(".", " ")
    )
    if STRONG_STAT.search(column) or (
        STAT_WORDS.search(column) and not EFFECT_WORDS.search(column)
    ):
        cand.veto = cand.veto or f"column {p.column!r} holds a statistic, not an estimate"
        return True
    if re.fullmatch(r"estimates?|coef\.?|coefficients?|parameter", column.strip()):
        cand.effect_column = True  # a coefficient table's column: the table reader weighs it
    elif EFFECT_WORDS.search(column):
        short = 0 < p.rows <= SHORT_TABLE and "table" not in cand.kinds
        cand.add(1.5, f"in the column {p.column!r}", "column" if short else None)
        cand.effect_column = True
    row = unicodedata.normalize("NFKC", p.label).replace("_", " ").lower()
    if not row.strip():
        return True
    if MAIN_CONTEXT.search(row):
        cand.add(
            1.5,
            f"the row {p.label!r} says main/preferred",
            "column" if cand.effect_column else None,
        )
    if SECONDARY.search(row):
        cand.add(-4.0, f"the row {p.label!r} is a robustness, placebo or first-stage result")
    elif _NAIVE.search(row) or family_bad(row, family):
        cand.add(-3.0, f"the row {p.label!r} is a naive estimate or another quantity")
    if DESIGNS[family].instrumented and OLS_CONTEXT.search(row) and not IV_CONTEXT.search(row):
        cand.add(-2.0, f"the row {p.label!r} is an OLS result")
    if DESIGNS[family].label_good.search(row):
        cand.add(1.0, f"the row {p.label!r} names the {family} design")
    _window_evidence(cand, row, family)
    return True


def label_evidence(cand: Candidate, family: Family, heading: str) -> None:
    """What the label and the section heading say about the number."""
    p = cand.printed
    if column_evidence(cand, family):
        return
    text = unicodedata.normalize("NFKC", p.label).replace("_", " ")
    label = text.lower()
    clause = _last_clause(text)
    if clause and STRONG_STAT.search(clause):
        cand.veto = cand.veto or f"label {p.label.strip()!r} names a statistic, not an estimate"
        return
    if clause and STAT_WORDS.search(clause) and not EFFECT_WORDS.search(clause):
        cand.veto = cand.veto or f"label {p.label.strip()!r} names a setup or data quantity"
        return
    near = label[-120:]
    if EFFECT_WORDS.search(near):
        kind = "column" if p.named_by_column else "label"
        cand.add(3.0, f"label {p.label.strip()[-80:]!r} names an estimate", kind)
        if DESIGNS[family].label_good.search(near):
            cand.add(2.0, f"the label names the {family} design")
        if MAIN_CONTEXT.search(near):
            cand.add(1.5, "the label says main/preferred")
    if SECONDARY.search(near):
        cand.add(-4.0, "the label marks a robustness, placebo or first-stage result")
        cand.label_against = True
    elif SECONDARY.search(p.prefix.lower()) or _NAIVE.search(p.prefix.lower()):
        cand.add(-3.0, f"the line begins {p.prefix[:50]!r}")
    key = unicodedata.normalize("NFKC", p.key).replace("_", " ").lower()
    if key.strip(" {}[]():=,") and (
        _NAIVE.search(key)
        or SECONDARY.search(key)
        or family_bad(key, family)
        or (DESIGNS[family].instrumented and OLS_CONTEXT.search(key) and not IV_CONTEXT.search(key))
    ):
        cand.add(-3.0, f"printed under the key {p.key.strip()[:40]!r}")
    if _NAIVE.search(near):
        cand.add(-3.0, "the label marks a naive or comparison estimate")
        cand.label_against = True
    if re.search(r"\bmedian\b", near):
        cand.add(-2.0, "the label names a median, not the mean effect")
    _window_evidence(cand, near, family)
    if DESIGNS[family].label_bad.search(near):
        cand.add(-3.0, f"the label names a quantity other than the {family} effect")
        cand.label_against = True
    if DESIGNS[family].instrumented and OLS_CONTEXT.search(near) and not IV_CONTEXT.search(near):
        cand.add(-2.0, "the label names an OLS result")
        cand.label_against = True


def heading_evidence(cand: Candidate, family: Family, heading: str) -> None:
    """What the closest section heading says (robustness, placebo, main, IV vs OLS)."""
    if not heading:
        return
    if SECONDARY.search(heading) or _NAIVE.search(heading):
        cand.add(-3.0, f"printed under the heading {heading.strip()[:60]!r}")
    elif MAIN_CONTEXT.search(heading):
        cand.add(1.5, f"printed under the heading {heading.strip()[:60]!r}")
    if DESIGNS[family].instrumented:
        if IV_CONTEXT.search(heading):
            cand.add(1.0, "printed in an IV section")
        elif OLS_CONTEXT.search(heading):
            cand.add(-2.0, "printed in an OLS section")
    if family_bad(heading, family):
        cand.add(-2.0, f"the heading names a quantity other than the {family} effect")


def family_bad(text: str, family: Family) -> bool:
    """The text names a quantity of the design other than its effect (and not the effect)."""
    return bool(DESIGNS[family].label_bad.search(text)) and not DESIGNS[family].label_good.search(
        text
    )


def shape_evidence(cand: Candidate, constants: CodeConstants, fitted: bool) -> None:
    """Facts of the number itself: an integer, an operand, a restatement, a setup constant."""
    p = cand.printed
    if p.operand:
        cand.add(-6.0, "an operand of printed arithmetic, not its result")
    elif p.result:
        cand.add(1.0, "the result of printed arithmetic", "result")
    if p.integer and not fitted:
        cand.add(-4.0, "printed as a whole number (a count, an order or an index)")
    if p.after_value:
        cand.add(-2.0, "in parentheses after another value (a standard error or restatement)")
    const = constants.equal(p.printed, p.decimals)
    if const is not None and not (fitted and p.significant >= 3):
        cand.add(-6.0, f"equals the constant {const!r} the code sets")
        cand.veto = cand.veto or f"equals the constant {const!r} the code sets"


@dataclass(frozen=True)
class _Coef:
    value: float
    fit: int
    function: str
    term: str
    effect: EffectCoef | None
    mean: bool = False  # the intercept of an intercept-only fit: a mean (a CAR, a difference)


class FitIndex:
    """The fit log's coefficients, sorted, to find which one a printed number prints."""

    def __init__(self, fits: Sequence[FitEntry], family: Family, hints: CodeHints) -> None:
        effects = {(c.fit, c.term): c for c in effect_coefficients(fits, family, hints)}
        coefs: list[_Coef] = []
        for index, fit in enumerate(fits):
            for t in fit.terms:
                if t.estimate is None:
                    continue
                eff = effects.get((index, t.term))
                mean = len(fit.terms) == 1
                coefs.append(_Coef(t.estimate, index, fit.function, t.term, eff, mean))
        coefs.sort(key=lambda c: c.value)
        self.coefs = coefs
        self.keys = [c.value for c in coefs]

    def matching(self, value: float, decimals: int) -> list[_Coef]:
        half = 0.5 * 10.0 ** (-decimals) * (1 + 1e-9) + 1e-15 * max(1.0, abs(value))
        lo = bisect.bisect_left(self.keys, value - half)
        hi = bisect.bisect_right(self.keys, value + half)
        return self.coefs[lo : min(hi, lo + 50)]


def fit_evidence(cand: Candidate, index: FitIndex) -> int | None:
    """Which fitted coefficient the number prints. Returns the fit's index when the number is
    an effect coefficient of exactly one fit (None otherwise; ``cand.kinds`` says if it is a
    fitted effect at all)."""
    p = cand.printed
    if p.significant < 2 or not index.coefs:
        return None
    decimals = p.decimals + (2 if p.factor == 0.01 else 4 if p.factor == 1e-4 else 0)
    hits = index.matching(p.value, decimals)
    effects = [h for h in hits if h.effect is not None]
    if effects:
        # the fit it prints most closely (ties: the design's estimator, then the first fit: a
        # coeftest of a model logs the same coefficient again, after the model)
        best = min(
            effects,
            key=lambda h: (abs(h.value - p.value), -(h.effect.design if h.effect else 0), h.fit),
        )
        same = [h for h in effects if h.value == best.value]
        best = min(same, key=lambda h: h.fit)
        eff = best.effect
        assert eff is not None
        how = "exactly" if p.significant >= 4 else "only by rounding"
        weight = 1.0 + eff.design
        weight += 1.0 if p.significant >= 4 else (-1.0 if p.significant <= 2 else 0.0)
        cand.add(
            weight,
            f"equals {how} the coefficient on {best.term!r} of fit {best.fit + 1} "
            f"({best.function})",
            "fit",
        )
        if re.search(r"fake|placebo|pseudo|falsif|\blead|pre_?trend", best.term.lower()):
            cand.add(-3.0, f"the fitted term {best.term!r} is a placebo")
        if len({h.value for h in effects}) > 1:
            return None  # it prints several fits alike: which one made it is unknown
        return best.fit
    hits = [h for h in hits if not h.mean]
    if hits and p.significant >= 3:
        other = hits[0]
        cand.add(
            -3.0,
            f"equals the coefficient on {other.term!r} of fit {other.fit + 1} "
            f"({other.function}), not the effect term",
        )
    return None
