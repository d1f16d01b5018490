"""Reading printed numbers against the fit log: which printed number is a fitted effect coefficient.

A script may print its estimate in any style (a table, a data frame, a sentence, a list). The fit
log (:mod:`causalverify.sandbox.fitlog`) says which models it fitted and their coefficients; a
printed number that equals, at its printed precision, the coefficient of a fit's effect term
identifies the estimate. The value returned is always the *printed* number, never the logged
one, so a forged log cannot score better than printing an ``ESTIMATE:`` line would.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from causalverify.designs import DESIGNS
from causalverify.extraction._numbers import NUMBER
from causalverify.extraction._terms import CodeHints, normalize_term, term_score
from causalverify.families import Family
from causalverify.sandbox.base import FitEntry

#: a number that is not part of a name (``x1``, ``h2o``) nor of a longer number
_TOKEN: Final = re.compile(rf"(?<![\w.]){NUMBER}(?![\w.])(?P<pct>\s*%)?")
_THOUSANDS: Final = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
_IV_FUNCTION: Final = re.compile(r"ivreg|iv_robust|IV2SLS|IVLIML|IVGMM|tsls|2sls", re.IGNORECASE)
_RD_MAIN: Final = "conventional"
_RD_TERMS: Final = frozenset({"conventional", "bias-corrected", "robust"})
#: the regressor of a hand-made second stage (fitted values of the first stage)
SECOND_STAGE_TERM: Final = re.compile(
    r"^(predict|fitted)(\.values)?\(|x_?hat|^pred(icted)?_|_pred(icted)?$|^fitted_|_fitted$"
)
#: a term that names a placebo or pre-trend variant of the effect (``treated:fake_post``)
_SECONDARY_TERM: Final = re.compile(r"fake|placebo|pseudo|falsif|\blead|pre_?trend")
#: printed numbers with fewer significant digits match coefficients by coincidence
MIN_SIGNIFICANT: Final = 2


@dataclass(frozen=True)
class EffectCoef:
    """The effect-term coefficient of one fit."""

    fit: int  # index in the log (0-based)
    function: str
    term: str
    estimate: float
    design: int  # how well the fit's estimator suits the family (higher is better)
    term_score: int


def _design(fit: FitEntry, family: Family) -> int:
    design = DESIGNS[family]
    if design.discontinuity == "fuzzy" and fit.rd and fit.fuzzy:
        return 2
    if design.instrumented:
        # linearmodels' IV classes also fit OLS (no endogenous regressor): their hook sets ``iv``
        named = _IV_FUNCTION.search(fit.function) and not fit.function.startswith("linearmodels.")
        if fit.iv or named:
            return 2
        # a hand-made second stage: OLS on the first stage's fitted values
        manual = any(SECOND_STAGE_TERM.search(normalize_term(t.term)) for t in fit.terms)
        return 2 if manual else 0
    if design.discontinuity == "sharp":
        return 2 if fit.rd else 1
    return 1


def _effect_score(fit: FitEntry, term: str, family: Family, hints: CodeHints) -> int | None:
    t = normalize_term(term)
    if fit.rd:
        # a sharp RD estimator for a sharp design, a fuzzy one (``rdrobust(fuzzy=)``) for a fuzzy
        wanted = "fuzzy" if fit.fuzzy else "sharp"
        if DESIGNS[family].discontinuity != wanted or t not in _RD_TERMS:
            return None
        return 4 if t == _RD_MAIN else 3
    if DESIGNS[family].instrumented and fit.iv:
        endog = {normalize_term(e) for e in fit.endogenous}
        # fixest names it fit_<x>, lfe's felm `x(fit)`
        if t in endog or t.removeprefix("fit_") in endog or t.removesuffix("(fit)") in endog:
            return 4
        if endog:  # an IV fit that names its endogenous regressors: other terms are controls
            return None
    return term_score(term, family, hints)


def effect_coefficients(
    fits: Sequence[FitEntry], family: Family, hints: CodeHints
) -> list[EffectCoef]:
    """Every fit's coefficient on a term that is the family's effect, in fitting order."""
    out: list[EffectCoef] = []
    for index, fit in enumerate(fits):
        design = _design(fit, family)
        for t in fit.terms:
            if t.estimate is None:
                continue
            score = _effect_score(fit, t.term, family, hints)
            if score is not None:
                out.append(EffectCoef(index, fit.function, t.term, t.estimate, design, score))
    return out
