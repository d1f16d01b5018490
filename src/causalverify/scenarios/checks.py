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

import numpy as np
import pandas as pd

from causalverify.designs import rdd
from causalverify.designs.event_study import CONVERSIONS as ES_CONVERSIONS
from causalverify.designs.fuzzy_rdd import BANDWIDTH as FUZZY_BANDWIDTH
from causalverify.designs.fuzzy_rdd import CUTOFF as FUZZY_CUTOFF
from causalverify.designs.fuzzy_rdd import fuzzy_flags
from causalverify.scenarios.dgp import COLUMNS, rdd_flags
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


def _stated(pattern: str, text: str) -> tuple[str, ...] | None:
    match = re.search(pattern, text)
    return None if match is None else match.groups()


def _check_did(s: Scenario, d: pd.DataFrame) -> list[str]:
    out: list[str] = []
    n, t, start = (int(str(s.facts[k])) for k in ("n_units", "n_periods", "treat_start"))
    if d["unit_id"].nunique() != n or d["period"].nunique() != t or len(d) != n * t:
        out.append(f"{s.id}: data are not a balanced panel of {n} units x {t} periods")
    if d.groupby("unit_id")["period"].nunique().ne(t).any():
        out.append(f"{s.id}: some unit is not observed in every period")
    stated = _stated(r"first treated period is period (\d+)", s.data_description)
    if stated is None or int(stated[0]) != start:
        out.append(f"{s.id}: text does not state the first treated period {start}")
    treated_post = d.loc[d["treat_x_post"] == 1, "period"]
    if treated_post.empty or int(treated_post.min()) != start:
        out.append(f"{s.id}: first treated period in the data is not {start}")
    if not (d["post"] == (d["period"] >= start).astype(int)).all():
        out.append(f"{s.id}: post does not switch on at period {start}")
    if not (d["treat_x_post"] == d["treated"] * d["post"]).all():
        out.append(f"{s.id}: treat_x_post is not treated x post")
    below = _stated(r"with `unit_id` below (\d+)", s.data_description)
    if below is None or s.facts.get("treated_units") != f"unit_id < {below[0]}":
        out.append(f"{s.id}: text does not state which units are treated as in the facts")
    elif not (d["treated"] == (d["unit_id"] < int(below[0])).astype(int)).all():
        out.append(f"{s.id}: treated units in the data are not unit_id < {below[0]}")
    return out


def _check_event_study(s: Scenario, d: pd.DataFrame) -> list[str]:
    out: list[str] = []
    lo, hi = (int(v) for v in s.facts["event_window"])  # type: ignore[attr-defined]
    e_lo, e_hi = (int(v) for v in s.facts["effect_window"])  # type: ignore[attr-defined]
    for label, window in (("Event", (lo, hi)), ("Effect", (e_lo, e_hi))):
        stated = _stated(rf"{label} window: days (-?\d+) to \+?(-?\d+)", s.data_description)
        if stated is None or (int(stated[0]), int(stated[1])) != window:
            out.append(f"{s.id}: text does not state the {label.lower()} window {window}")
    n_days = hi - lo + 1
    grid = d.sort_values(["stock_id", "event_day"])["event_day"].to_numpy()
    expected = np.tile(np.arange(lo, hi + 1), max(d["stock_id"].nunique(), 1))
    if len(d) != d["stock_id"].nunique() * n_days or not np.array_equal(grid, expected):
        out.append(f"{s.id}: not every stock is observed on days {lo}..{hi}")
    if d["stock_id"].nunique() != int(str(s.facts["n_stocks"])):
        out.append(f"{s.id}: number of stocks differs from the facts")
    if s.conversions != ES_CONVERSIONS:
        out.append(f"{s.id}: conversions {s.conversions} are not {ES_CONVERSIONS}")
    return out


def _check_iv(s: Scenario, d: pd.DataFrame) -> list[str]:
    out: list[str] = []
    coding = str(s.facts.get("instrument_coding", ""))
    stated = _stated(r"Coding of `z`: (z = 1 if .+?, 0 otherwise)\.", s.data_description)
    if stated is None or stated[0] != coding:
        out.append(f"{s.id}: text does not state the coding of z as in the facts")
    if set(np.unique(d["z"])) != {0, 1}:
        out.append(f"{s.id}: z is not coded 0/1 with both values present")
    if len(d) != int(str(s.facts["n"])):
        out.append(f"{s.id}: number of rows differs from the facts")
    return out


def _check_rdd(s: Scenario, d: pd.DataFrame) -> list[str]:
    out: list[str] = []
    cutoff, band = float(str(s.facts["cutoff"])), float(str(s.facts["bandwidth"]))
    stated = _stated(r"at or above the cutoff of ([0-9.]+) are treated", s.data_description)
    if s.facts.get("treated_side") != "above" or stated is None or float(stated[0]) != cutoff:
        out.append(f"{s.id}: text does not state that running_var >= {cutoff} is treated")
    width = _stated(r"within ([0-9.]+) of the cutoff", s.data_description)
    if width is None or float(width[0]) != band:
        out.append(f"{s.id}: text does not state the near_cutoff band {band}")
    treated, near = rdd_flags(d["running_var"].to_numpy())
    if cutoff != rdd.CUTOFF or band != rdd.BANDWIDTH:
        out.append(
            f"{s.id}: cutoff/band {cutoff}/{band} differ from the generator's "
            f"{rdd.CUTOFF}/{rdd.BANDWIDTH}"
        )
    if not np.array_equal(treated, d["treated"].to_numpy()):
        out.append(f"{s.id}: treated in the data is not running_var >= {cutoff}")
    if not np.array_equal(near, d["near_cutoff"].to_numpy()):
        out.append(f"{s.id}: near_cutoff in the data is not |running_var - {cutoff}| <= {band}")
    return out


def _check_staggered(s: Scenario, d: pd.DataFrame) -> list[str]:
    out: list[str] = []
    treated = (d["first_treat"] > 0) & (d["period"] >= d["first_treat"])
    if not np.array_equal(treated.astype(int).to_numpy(), d["treated"].to_numpy()):
        out.append(f"{s.id}: treated is not 1 exactly from first_treat on")
    stated = sorted(int(g) for g in d["first_treat"].unique() if g != 0)
    if stated != list(s.facts.get("adoption_periods", [])):  # type: ignore[call-overload]
        out.append(f"{s.id}: adoption periods in the text differ from the data's {stated}")
    if (d["first_treat"] == 0).sum() == 0:
        out.append(f"{s.id}: no never-treated units")
    if d.groupby("unit_id")["first_treat"].nunique().max() != 1:
        out.append(f"{s.id}: first_treat changes within a unit")
    return out


def _check_fuzzy(s: Scenario, d: pd.DataFrame) -> list[str]:
    out: list[str] = []
    eligible, near = fuzzy_flags(d["running_var"].to_numpy())
    if not np.array_equal(eligible, d["eligible"].to_numpy()):
        out.append(f"{s.id}: eligible in the data is not running_var >= {FUZZY_CUTOFF}")
    if not np.array_equal(near, d["near_cutoff"].to_numpy()):
        out.append(
            f"{s.id}: near_cutoff is not |running_var - {FUZZY_CUTOFF}| <= {FUZZY_BANDWIDTH}"
        )
    stated = _stated(r"at or above the cutoff of ([0-9.]+) were offered", s.data_description)
    if stated is None or float(stated[0]) != FUZZY_CUTOFF:
        out.append(f"{s.id}: text does not state the cutoff {FUZZY_CUTOFF}")
    if set(d["took_up"].unique()) - {0, 1}:
        out.append(f"{s.id}: took_up is not 0/1")
    return out


def _check_synth(s: Scenario, d: pd.DataFrame) -> list[str]:
    out: list[str] = []
    treated = d.loc[d["treated_unit"] == 1, "unit_id"].unique()
    if list(treated) != [s.facts.get("treated_unit_id")]:
        out.append(f"{s.id}: the treated unit in the data is {list(treated)}, not as stated")
    pre = int(str(s.facts.get("n_pre")))
    expected = (d["period"] > pre).astype(int).to_numpy()
    if not np.array_equal(expected, d["post"].to_numpy()):
        out.append(f"{s.id}: post is not 1 exactly after period {pre}")
    return out


_FAMILY_CHECKS = {
    "staggered_did": _check_staggered,
    "fuzzy_rdd": _check_fuzzy,
    "synthetic_control": _check_synth,
    "did": _check_did,
    "event_study": _check_event_study,
    "iv": _check_iv,
    "rdd": _check_rdd,
}


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
        out += _FAMILY_CHECKS[scenario.family](scenario, data)
    if scenario.family != "event_study" and scenario.conversions:
        out.append(f"{scenario.id}: only event-study scenarios declare conversions")
    if scenario.data_file != f"data/{scenario.id}.csv":
        out.append(f"{scenario.id}: data_file is {scenario.data_file!r}, not data/<id>.csv")
    if not usable_canonical(scenario.canonical.estimate, scenario.beta):
        out.append(
            f"{scenario.id}: canonical {scenario.canonical.estimate:.6g} is unusable for "
            f"beta {scenario.beta:g} (sign differs or below {MIN_CANONICAL_RATIO}x)"
        )
    return out
