"""Checks that a scenario's text agrees with its data and never names its design.

The forbidden-word list
-----------------------
:data:`FORBIDDEN` is the one list of design and estimator names a scenario text (and, later, a
paper record's own-words fields) must not contain. A text that names the design tells the model
what to do, so the benchmark would no longer test whether it can choose the analysis from the
description of the data. The list has four kinds of entry:

1. design-family names: difference-in-differences / diff-in-diff, event study, instrumental
   variable(s) and the noun "instrument", regression discontinuity / discontinuity design,
   synthetic control;
2. acronyms, matched case-sensitively as whole words so ordinary English is not caught
   ("Did" is fine, "DiD" / "DID" / "DD" are not; likewise IV, RD, RDD, TWFE, 2SLS, TSLS);
3. estimator names that imply the design: two-stage least squares, first stage, fixed effects
   (two-way fixed effects is the textbook estimator of the panel design), market model and
   abnormal-return regression, local linear / local polynomial, and package functions
   (``ivreg``, ``iv_robust``, ``IV2SLS``, ``feols``, ``rdrobust``);
4. identifying assumptions whose names give the design away: parallel / common trends,
   pre-trends, exclusion restriction.

Deliberately allowed: "abnormal return" (it is the target quantity of the stock-return scenarios,
in the field's plain words), "cutoff", "threshold", "bandwidth", "event window", "treated",
"regression" and "OLS" — they describe the data or the target, not the design.

Phrases are matched case-insensitively with spaces or hyphens between words; no match may be
glued to a neighbouring letter or digit.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Final

import pandas as pd

from causalverify.designs import DESIGNS
from causalverify.scenarios.dgp import COLUMNS
from causalverify.scenarios.model import Scenario

#: A usable draw has |canonical| >= MIN_CANONICAL_RATIO * |beta| and the sign of beta.
MIN_CANONICAL_RATIO: Final[float] = 0.25


@dataclass(frozen=True)
class ForbiddenTerm:
    """One forbidden name: a label, its regular expression, and whether case matters."""

    label: str
    pattern: str
    case_sensitive: bool = False


_SEP = r"[\s-]+"

# fmt: off
FORBIDDEN: Final[tuple[ForbiddenTerm, ...]] = (
    # 1. design-family names
    ForbiddenTerm("difference-in-differences", rf"differences?{_SEP}in{_SEP}differences?"),
    ForbiddenTerm("diff-in-diff", rf"diff{_SEP}in{_SEP}diffs?"),
    ForbiddenTerm("event study", rf"event{_SEP}stud(?:y|ies)"),
    ForbiddenTerm("instrumental variable", rf"instrumental{_SEP}variables?"),
    ForbiddenTerm("instrument", r"instrument(?:s|ed|ing)?"),
    ForbiddenTerm("regression discontinuity", rf"regression{_SEP}discontinuit(?:y|ies)"),
    ForbiddenTerm("discontinuity design", rf"discontinuity{_SEP}designs?"),
    ForbiddenTerm("synthetic control", rf"synthetic{_SEP}controls?"),
    # 2. acronyms (case-sensitive whole words)
    ForbiddenTerm("DiD", r"D-?[iI]-?D", case_sensitive=True),
    ForbiddenTerm("DD", r"DD", case_sensitive=True),
    ForbiddenTerm("IV", r"IVs?", case_sensitive=True),
    ForbiddenTerm("RD", r"RDD?s?", case_sensitive=True),
    ForbiddenTerm("TWFE", r"TWFE", case_sensitive=True),
    ForbiddenTerm("2SLS", r"2SLS|TSLS"),
    # 3. estimator names and functions
    ForbiddenTerm("two-stage least squares", rf"(?:two|2){_SEP}stage{_SEP}least{_SEP}squares"),
    ForbiddenTerm("first stage", rf"first{_SEP}stages?"),
    ForbiddenTerm("fixed effects", rf"fixed{_SEP}effects?"),
    ForbiddenTerm("market model", rf"market{_SEP}models?"),
    ForbiddenTerm("abnormal return regression", rf"abnormal{_SEP}returns?{_SEP}regressions?"),
    ForbiddenTerm("local linear", rf"local{_SEP}(?:linear|polynomial)"),
    ForbiddenTerm("estimator function", r"ivreg\w*|iv_robust|IV2SLS|feols|rdrobust"),
    # 4. identifying assumptions that name the design
    ForbiddenTerm("parallel trends", rf"(?:parallel|common){_SEP}trends?"),
    ForbiddenTerm("pre-trends", r"pre[\s-]?trends?"),
    ForbiddenTerm("exclusion restriction", rf"exclusion{_SEP}restrictions?"),
)

#: the modern designs' names and their estimators' authors (scenario texts of every suite;
#: the paper corpus, which summarises real papers, is held to :data:`FORBIDDEN` only)
MODERN_FORBIDDEN: Final[tuple[ForbiddenTerm, ...]] = (
    ForbiddenTerm("staggered", r"stagger(?:ed|ing)?"),
    ForbiddenTerm("fuzzy", r"fuzzy"),
    ForbiddenTerm("local average treatment effect", rf"local{_SEP}average{_SEP}treatment{_SEP}effects?"),
    ForbiddenTerm("LATE", r"LATE", case_sensitive=True),
    ForbiddenTerm("complier", r"compli(?:er|ers|ance)"),
    ForbiddenTerm("intent to treat", rf"intent(?:ion)?{_SEP}to{_SEP}treat|ITT"),
    ForbiddenTerm("synthetic", r"synth\w*"),
    ForbiddenTerm("donor pool", rf"donors?(?:{_SEP}pool)?"),
    ForbiddenTerm("Callaway", r"Callaway"),
    ForbiddenTerm("Sant'Anna", r"Sant'?\s?Anna"),
    ForbiddenTerm("Sun and Abraham", rf"Sun{_SEP}(?:and|&){_SEP}Abraham"),
    ForbiddenTerm("Goodman-Bacon", rf"Goodman{_SEP}Bacon|Bacon{_SEP}decomposition"),
    ForbiddenTerm("de Chaisemartin", r"Chaisemartin|D'?Haultf(?:oe|œ)uille"),
    ForbiddenTerm("Borusyak", r"Borusyak|imputation estimator"),
    ForbiddenTerm("Abadie", r"Abadie"),
    ForbiddenTerm("event time", rf"event{_SEP}time"),
    ForbiddenTerm("group-time", rf"group{_SEP}time"),
)
# fmt: on

_EDGE_L, _EDGE_R = r"(?<![A-Za-z0-9])", r"(?![A-Za-z0-9])"


def _alternation(terms: tuple[ForbiddenTerm, ...], case_sensitive: bool) -> re.Pattern[str]:
    body = "|".join(f"(?:{t.pattern})" for t in terms if t.case_sensitive == case_sensitive)
    return re.compile(f"{_EDGE_L}(?:{body}){_EDGE_R}", 0 if case_sensitive else re.IGNORECASE)


# One pass per case mode; the patterns of each mode are alternatives of one expression.
_COMPILED: Final[tuple[re.Pattern[str], ...]] = (
    _alternation(FORBIDDEN, False),
    _alternation(FORBIDDEN, True),
)
_COMPILED_ALL: Final[tuple[re.Pattern[str], ...]] = (
    _alternation(FORBIDDEN + MODERN_FORBIDDEN, False),
    _alternation(FORBIDDEN + MODERN_FORBIDDEN, True),
)


def find_design_names(text: str, *, modern: bool = True) -> list[str]:
    """Return the forbidden design or estimator names found in ``text``.

    Parameters
    ----------
    text : str
        Any prose (scenario text, a paper record's own-words field ...).
    modern : bool
        Also look for :data:`MODERN_FORBIDDEN` (the modern designs' names and their estimators'
        authors); the paper corpus and the published texts are checked without them.

    Returns
    -------
    list of str
        The matched spans as written in ``text``, each once, in order of first appearance;
        empty when the text is clean.
    """
    hits: list[tuple[int, str]] = []
    for pattern in _COMPILED_ALL if modern else _COMPILED:
        hits.extend((m.start(), m.group(0)) for m in pattern.finditer(text))
    seen: list[str] = []
    for _, span in sorted(hits):
        if span not in seen:
            seen.append(span)
    return seen


def usable_canonical(estimate: float, beta: float) -> bool:
    """Whether a draw's canonical estimate can be scored against: same sign as ``beta`` and at
    least :data:`MIN_CANONICAL_RATIO` of its size."""
    if not math.isfinite(estimate) or beta == 0:
        return False
    same_sign = (estimate > 0) == (beta > 0)
    return same_sign and abs(estimate) >= MIN_CANONICAL_RATIO * abs(beta)


def _texts(s: Scenario) -> dict[str, str]:
    fields = {
        "title": s.title,
        "research_question": s.research_question,
        "data_description": s.data_description,
        "target": s.target,
    }
    fields.update({f"columns[{k}]": v for k, v in s.columns.items()})
    return fields


def _check_words(s: Scenario) -> list[str]:
    out = []
    for field, text in _texts(s).items():
        names = find_design_names(text)
        if names:
            out.append(f"{s.id}: {field} names the design: {', '.join(names)}")
    return out


def _check_columns(s: Scenario, data: pd.DataFrame) -> list[str]:
    out: list[str] = []
    actual = list(data.columns)
    if tuple(actual) != COLUMNS[s.family]:
        out.append(f"{s.id}: data columns {actual} differ from the {s.family} layout")
    for name in sorted(set(actual) - set(s.columns)):
        out.append(f"{s.id}: column {name!r} exists in the data but is not described")
    for name in sorted(set(s.columns) - set(actual)):
        out.append(f"{s.id}: column {name!r} is described but not in the data")
    for name in actual:
        if f"- `{name}`:" not in s.data_description:
            out.append(f"{s.id}: data description has no dictionary entry for {name!r}")
    for field, text in _texts(s).items():
        for name in sorted(set(re.findall(r"`([^`]+)`", text)) - set(actual)):
            out.append(f"{s.id}: {field} mentions {name!r}, which is not a column")
    return out


def check_scenario(scenario: Scenario, data: pd.DataFrame) -> list[str]:
    """Every violation of the suite rules by one scenario and its realised data.

    Parameters
    ----------
    scenario : Scenario
        The scenario record.
    data : pandas.DataFrame
        Its CSV as read from disk.

    Returns
    -------
    list of str
        Human-readable violations (each starts with the scenario id); empty when all hold.
    """
    out = _check_words(scenario) + _check_columns(scenario, data)
    if tuple(data.columns) == COLUMNS[scenario.family]:
        out += DESIGNS[scenario.family].check(scenario, data)
    if DESIGNS[scenario.family].scales is None and scenario.conversions:
        out.append(
            f"{scenario.id}: only scenarios of a design reported on several scales (event "
            "studies) declare conversions"
        )
    if scenario.data_file != f"data/{scenario.id}.csv":
        out.append(f"{scenario.id}: data_file is {scenario.data_file!r}, not data/<id>.csv")
    if not usable_canonical(scenario.canonical.estimate, scenario.beta):
        out.append(
            f"{scenario.id}: canonical {scenario.canonical.estimate:.6g} is unusable for "
            f"beta {scenario.beta:g} (sign differs or below {MIN_CANONICAL_RATIO}x)"
        )
    return out
