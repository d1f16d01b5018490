"""The defects table of an imported suite: what code can tell is wrong with a published scenario.

An import never refuses a scenario for these; it records them in ``defects.csv`` so a user can see
which published cells test something other than what the benchmark intends. Kinds:

``design_name``          the text shown to the model names the design or its estimator
``data_layout``          the CSV's columns differ from the family's published layout
``column_not_in_data``   the text names a variable (backticked or snake_case) the CSV lacks
``column_not_described`` a CSV column is never named in the text
``text_contradicts_data`` a number the text states (cutoff, band, periods, counts, window) does
                         not hold in the data
``canonical_sign``       the canonical estimate has the opposite sign to the DGP effect
``canonical_near_zero``  the canonical is below a quarter of the DGP effect (or ~0): relative
                         error against it is close to meaningless
``dgp_direction``        ``dgp_truth.direction`` disagrees with the sign of ``dgp_truth.effect``
``fix_note``             the release carries a ``_fix_notes`` entry for the scenario
"""

from __future__ import annotations

import csv
import io
import math
import re
from collections.abc import Callable, Iterable
from dataclasses import astuple, dataclass, fields
from typing import Final

import numpy as np
import pandas as pd

from causalverify.designs.rdd import CUTOFF
from causalverify.families import Family
from causalverify.published._release import PublishedScenario
from causalverify.published._text import NUMBER, mentions, named_identifiers, stated_numbers
from causalverify.scenarios.checks import MIN_CANONICAL_RATIO, find_design_names
from causalverify.scenarios.dgp import COLUMNS

#: below this absolute value a canonical estimate cannot be scored at all
UNSCOREABLE_ABS: Final[float] = 1e-9
_TEXT_FIELDS: Final[tuple[str, ...]] = ("title", "research_question", "data_description")
_UNIT_NOUNS = (
    r"units|firms|companies|counties|states|regions|schools|districts|hospitals|municipalities"
    r"|cities|stores|plants|villages|provinces|countries|branches|clinics|farms|stocks|securities"
)
_PEOPLE_NOUNS = (
    r"individuals|students|workers|households|respondents|people|participants|applicants"
    r"|patients|customers|borrowers|voters|children|observations|rows"
)
_COUNT = r"(\d[\d,]*)\s+(?:(?!treated|control|untreated|comparison)[A-Za-z-]+\s+){0,2}"


@dataclass(frozen=True)
class Defect:
    """One defect of one published scenario."""

    scenario_id: str
    family: str
    kind: str
    field: str
    detail: str


DEFECT_COLUMNS: Final[tuple[str, ...]] = tuple(f.name for f in fields(Defect))


def defects_csv(defects: Iterable[Defect]) -> bytes:
    """The defects as CSV bytes (header :data:`DEFECT_COLUMNS`, LF line ends, input order)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(DEFECT_COLUMNS)
    writer.writerows(astuple(d) for d in defects)
    return buffer.getvalue().encode("utf-8")


def _texts(p: PublishedScenario) -> dict[str, str]:
    return {name: str(getattr(p, name)) for name in _TEXT_FIELDS}


def _word_defects(p: PublishedScenario, data: pd.DataFrame) -> list[tuple[str, str, str]]:
    out: list[tuple[str, str, str]] = []
    columns = [str(c) for c in data.columns]
    for name, text in _texts(p).items():
        names = find_design_names(text, modern=False)
        if names:
            out.append(("design_name", name, "names " + ", ".join(names)))
        for ident in named_identifiers(text):
            if ident not in columns:
                out.append(("column_not_in_data", name, f"names {ident!r}, not a column"))
    everything = "\n".join(_texts(p).values())
    for column in columns:
        if not mentions(everything, column):
            out.append(("column_not_described", "text", f"column {column!r} is never named"))
    return out


def _count_check(text: str, nouns: str, actual: int, what: str) -> list[tuple[str, str, str]]:
    stated = {int(v) for v in stated_numbers(text, rf"{_COUNT}(?:{nouns})\b")}
    return [
        ("text_contradicts_data", "text", f"text says {v} {what}; the data have {actual}")
        for v in sorted(stated)
        if v != actual
    ]


def _did_checks(text: str, d: pd.DataFrame) -> list[tuple[str, str, str]]:
    out = _count_check(text, _UNIT_NOUNS, int(d["unit_id"].nunique()), "units")
    out += _count_check(text, r"observations|rows", len(d), "rows")
    periods = sorted(int(v) for v in d["period"].unique())
    for v in {int(v) for v in stated_numbers(text, r"(\d+)\s+(?:time\s+)?periods\b")}:
        if v != len(periods):
            out.append(
                (
                    "text_contradicts_data",
                    "text",
                    f"text says {v} periods; data have {len(periods)}",
                )
            )
    treated_periods = d.loc[d["treat_x_post"] == 1, "period"]
    if treated_periods.empty:
        return out
    start = int(treated_periods.min())
    trigger = (
        r"(?:start|begin|took effect|takes effect|introduc|implement|adopt|from|since|onward)"
        r"\w*[^.]{0,40}?period\s+(\d+)"
    )
    stated = {int(v) for v in stated_numbers(text, trigger)}
    stated |= {int(v) + 1 for v in stated_numbers(text, r"after\s+period\s+(\d+)")}
    for v in sorted(stated):
        if v not in (start, periods[0]):
            out.append(
                (
                    "text_contradicts_data",
                    "text",
                    f"text puts the start at period {v}; "
                    f"treat_x_post switches on at period {start}",
                )
            )
    return out


def _event_study_checks(text: str, d: pd.DataFrame) -> list[tuple[str, str, str]]:
    out = _count_check(text, _UNIT_NOUNS, int(d["stock_id"].nunique()), "stocks")
    lo, hi = int(d["event_day"].min()), int(d["event_day"].max())
    window = (
        rf"(?:days?|window)\s*\[?\(?\s*{NUMBER}\s*(?:,|to|through|\u2013|\u2014|-|\.\.)\s*\+?(\d+)"
    )
    for match_lo, match_hi in _pairs(text, window):
        if match_lo < 0 and (match_lo, match_hi) != (lo, hi) and match_hi == abs(match_lo):
            out.append(
                (
                    "text_contradicts_data",
                    "text",
                    f"text states event days {match_lo}..{match_hi}; data cover {lo}..{hi}",
                )
            )
    return out


def _pairs(text: str, pattern: str) -> list[tuple[int, int]]:
    found: list[tuple[int, int]] = []
    for m in re.finditer(pattern, text, flags=re.IGNORECASE):
        try:
            found.append((int(float(m.group(1))), int(m.group(2))))
        except ValueError:
            continue
    return found


def _iv_checks(text: str, d: pd.DataFrame) -> list[tuple[str, str, str]]:
    out = _count_check(text, _PEOPLE_NOUNS + "|" + _UNIT_NOUNS, len(d), "observations")
    values = set(np.unique(d["z"]))
    if values != {0, 1}:
        out.append(("text_contradicts_data", "data", f"z takes values {sorted(values)}, not 0/1"))
    return out


def _rdd_checks(text: str, d: pd.DataFrame) -> list[tuple[str, str, str]]:
    out = _count_check(text, _PEOPLE_NOUNS + "|" + _UNIT_NOUNS, len(d), "observations")
    running, treated = d["running_var"].to_numpy(float), d["treated"].to_numpy(int)
    cutoffs = stated_numbers(
        text, rf"(?:cutoff|cut-off|threshold)\s+(?:of|at|is|=|value of)?\s*{NUMBER}"
    )
    for c in sorted(set(cutoffs)):
        rule = (running >= c).astype(int)
        if not np.array_equal(rule, treated):
            share = float(np.mean(rule != treated))
            out.append(
                (
                    "text_contradicts_data",
                    "text",
                    f"text states cutoff {c:g}; treated != "
                    f"(running_var >= {c:g}) in {share:.1%} of rows",
                )
            )
    cutoff = float(running[treated == 1].min()) if treated.any() else CUTOFF
    cutoff = CUTOFF if np.array_equal((running >= CUTOFF).astype(int), treated) else cutoff
    near = d["near_cutoff"].to_numpy(int)
    bands = stated_numbers(text, rf"(?:within|bandwidth of|bandwidth|band of)\s+\+?/?-?\s*{NUMBER}")
    for b in sorted({b for b in bands if 0 < b < 1}):
        rule = (np.abs(running - cutoff) <= b + 1e-9).astype(int)
        if not np.array_equal(rule, near):
            out.append(
                (
                    "text_contradicts_data",
                    "text",
                    f"text states a band of {b:g}; near_cutoff is "
                    f"not |running_var - {cutoff:g}| <= {b:g}",
                )
            )
    return out


_FAMILY_CHECKS: Final[dict[Family, Callable[[str, pd.DataFrame], list[tuple[str, str, str]]]]] = {
    "did": _did_checks,
    "event_study": _event_study_checks,
    "iv": _iv_checks,
    "rdd": _rdd_checks,
}


def _canonical_defects(p: PublishedScenario, canonical: float) -> list[tuple[str, str, str]]:
    beta = p.dgp_truth.effect
    out: list[tuple[str, str, str]] = []
    if not math.isfinite(canonical) or abs(canonical) < UNSCOREABLE_ABS:
        return [("canonical_near_zero", "canonical", f"canonical {canonical!r} is unscoreable")]
    if beta != 0 and (canonical > 0) != (beta > 0):
        out.append(
            (
                "canonical_sign",
                "canonical",
                f"canonical {canonical:.6g} has the opposite sign to the DGP effect {beta:g}",
            )
        )
    if abs(canonical) < MIN_CANONICAL_RATIO * abs(beta):
        out.append(
            (
                "canonical_near_zero",
                "canonical",
                f"|canonical| {abs(canonical):.6g} is below "
                f"{MIN_CANONICAL_RATIO:g} x |DGP effect| {abs(beta):g}",
            )
        )
    direction = p.dgp_truth.direction.strip().lower()
    if direction in ("positive", "negative") and (beta > 0) != (direction == "positive"):
        out.append(("dgp_direction", "dgp_truth", f"direction {direction!r} but effect {beta:g}"))
    return out


def find_defects(
    published: PublishedScenario, family: Family, data: pd.DataFrame, canonical: float
) -> list[Defect]:
    """Every defect code can tell in one published scenario.

    Parameters
    ----------
    published
        The scenario as published.
    family
        Its design family.
    data
        Its CSV as read from disk.
    canonical
        The ``paper``-profile canonical estimate on ``data``.

    Returns
    -------
    list of Defect
        In a fixed order: words and columns, text against data, canonical, fix notes.
    """
    found = _word_defects(published, data)
    if tuple(data.columns) != COLUMNS[family]:
        found.append(
            (
                "data_layout",
                "data",
                f"columns {list(data.columns)} differ from {list(COLUMNS[family])}",
            )
        )
    else:
        found += _FAMILY_CHECKS[family]("\n".join(_texts(published).values()), data)
    found += _canonical_defects(published, canonical)
    if published.fix_notes:
        note = " ".join(str(published.fix_notes).split())
        found.append(("fix_note", "_fix_notes", note[:300]))
    name = published.method_family
    return [
        Defect(published.scenario_id, name, kind, where, detail) for kind, where, detail in found
    ]
