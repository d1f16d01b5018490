"""Failure taxonomy and relative-error profiles.

Every cell gets exactly one category, checked in this order:

``unscoreable`` · ``api_error`` · ``extraction_limit`` · ``harness_error`` (the harness could not
finish the cell: its estimate could not be read within the scoring budget, or a stage failed on
its data; each cell says why in ``status_reason``) · ``no_response`` (fails L1) · ``no_code`` ·
``parse_error``
(fail L2a) · ``exec:<kind>`` (fails L2b; kind is ``missing_package`` or the execution status such
as ``error``/``timeout``) · ``fitted_right_reported_wrong`` · ``no_estimate`` (ran, nothing
extracted) · ``wrong_sign`` · ``window_scale`` · ``other_wrong`` (wrong estimate) · ``correct``.

``fitted_right_reported_wrong``: the code ran and one of the models it fitted (the fit log) has an
effect coefficient within the tolerance of the canonical, but the reported value is missing or
outside it: the specification was right and the reporting was not. The other wrong categories are
then wrong specifications (or hand-computed estimates that no fit records). This category is
**self-reported**: the fit log is written by the script's own process, which can write to it too,
so it rests on the script's word (entries whose function the code does not call outside strings
and comments are ignored, see :func:`causalverify.scoring.corroborated_fits`); the score never
does. Reports label it :data:`SELF_REPORTED`.

A wrong estimate is ``wrong_sign`` when estimate and canonical have opposite signs;
``window_scale`` when the ratio estimate / canonical is within ``scale_tolerance`` (relative) of an
integer k in 2..21 (a cumulative window of k days), of 100 (a percent), or of 1/k; otherwise
``other_wrong`` (typically a different coefficient or specification).
"""

from __future__ import annotations

import math
from typing import Final

import numpy as np
import pandas as pd

SCALE_FACTORS: Final[tuple[float, ...]] = (
    *(float(k) for k in range(2, 22)),
    100.0,
    *(1.0 / k for k in range(2, 22)),
)
DEFAULT_SCALE_TOLERANCE: Final[float] = 0.05
QUANTILES: Final[tuple[float, ...]] = (0.10, 0.25, 0.50, 0.75, 0.90)
#: how reports qualify what rests on the script's fit log
SELF_REPORTED: Final = "per the script's fit log (self-reported)"
#: statuses of cells the harness could not finish, each its own category
_HARNESS: Final = frozenset({"extraction_limit", "harness_error"})


def wrong_kind(
    estimate: float, canonical: float, *, scale_tolerance: float = DEFAULT_SCALE_TOLERANCE
) -> str:
    """Classify a wrong estimate as ``wrong_sign``, ``window_scale`` or ``other_wrong``.

    Parameters
    ----------
    estimate, canonical
        The extracted estimate and the canonical estimate (non-zero).
    scale_tolerance
        Relative distance to a scale factor that still counts as that factor.
    """
    if math.isnan(estimate) or math.isnan(canonical) or canonical == 0:
        raise ValueError("wrong_kind needs a finite estimate and a non-zero canonical")
    ratio = estimate / canonical
    if ratio < 0:
        return "wrong_sign"
    if any(abs(ratio / k - 1) <= scale_tolerance for k in SCALE_FACTORS):
        return "window_scale"
    return "other_wrong"


def _exec_kind(row: pd.Series) -> str:
    if row["status"] == "missing_package" or row["missing_package"]:
        return "exec:missing_package"
    kind = row["exec_status"] if row["exec_status"] not in ("", "ok") else ""
    if not kind:
        kind = {"timeout": "timeout", "resource_limit": "resource_limit"}.get(
            row["status"], "error"
        )
    return f"exec:{kind}"


def classify_cell(row: pd.Series, *, scale_tolerance: float = DEFAULT_SCALE_TOLERANCE) -> str:
    """The taxonomy category of one cell of the internal frame (see the module docstring)."""
    if row["unscoreable"] == 1:
        return "unscoreable"
    if row["status"] == "api_error":
        return "api_error"
    if row["status"] in _HARNESS:
        return str(row["status"])
    if row["L1"] == 0:
        return "no_response"
    if row["L2a"] == 0:
        return "parse_error" if row["status"] == "parse_error" else "no_code"
    if row["L2b"] == 0:
        return _exec_kind(row)
    if row["L2b_plus"] == 1:
        return "correct"
    if row.get("fitted_right", 0) == 1:
        return "fitted_right_reported_wrong"
    if math.isnan(row["estimated"]):
        return "no_estimate"
    return wrong_kind(row["estimated"], row["baseline_effect"], scale_tolerance=scale_tolerance)


def taxonomy(
    cells: pd.DataFrame, *, scale_tolerance: float = DEFAULT_SCALE_TOLERANCE
) -> dict[str, object]:
    """Category counts overall and per unit, and the missing packages named by failed runs.

    Returns
    -------
    dict
        ``{"overall": {category: n}, "by_unit": {unit: {category: n}}, "missing_packages":
        {package: n}}``; categories with zero cells are omitted.
    """
    categories = cells.apply(classify_cell, axis=1, scale_tolerance=scale_tolerance)
    categories = categories.astype(str) if len(cells) else pd.Series([], dtype=str)
    overall = categories.value_counts()
    by_unit: dict[str, dict[str, int]] = {}
    for unit, group in categories.groupby(cells["unit"], sort=True):
        counts = group.value_counts()
        by_unit[str(unit)] = {str(k): int(counts[k]) for k in sorted(counts.index)}
    missing = cells.loc[categories == "exec:missing_package", "missing_package"]
    missing = missing.replace("", "unknown").value_counts()
    return {
        "overall": {str(k): int(overall[k]) for k in sorted(overall.index)},
        "by_unit": by_unit,
        "missing_packages": {str(k): int(missing[k]) for k in sorted(missing.index)},
    }


def rel_error_profile(cells: pd.DataFrame) -> dict[str, dict[str, float | int]]:
    """Quantiles of the relative error per unit, over executed scoreable cells with an error.

    Returns
    -------
    dict
        ``unit -> {"n", "q10", "q25", "q50", "q75", "q90", "mean"}``; statistics are ``nan`` when
        ``n == 0``.
    """
    usable = cells[(cells["L2b"] == 1) & (cells["unscoreable"] == 0) & cells["rel_error"].notna()]
    out: dict[str, dict[str, float | int]] = {}
    for unit in sorted(cells["unit"].unique()):
        errs = usable.loc[usable["unit"] == unit, "rel_error"].to_numpy(dtype=float)
        entry: dict[str, float | int] = {"n": int(errs.size)}
        for q in QUANTILES:
            entry[f"q{round(q * 100):02d}"] = float(np.quantile(errs, q)) if errs.size else math.nan
        entry["mean"] = float(errs.mean()) if errs.size else math.nan
        out[str(unit)] = entry
    return out


def extraction_profile(cells: pd.DataFrame) -> dict[str, dict[str, int]]:
    """How much of each unit's score rides on extraction, over executed cells.

    Returns
    -------
    dict
        ``unit -> {"executed", "ambiguous", "fit_match", "fitted_right_reported_wrong"}``:
        executed cells, those whose plausible candidates printed different numbers, those whose
        estimate was recognised through the fit log, and those whose fitted effect was right
        while the reported value was not.
    """
    out: dict[str, dict[str, int]] = {}
    for unit in sorted(cells["unit"].unique()):
        group = cells[(cells["unit"] == unit) & (cells["L2b"] == 1)]
        fitted_wrong = (group["fitted_right"] == 1) & (group["L2b_plus"] != 1)
        fitted_wrong &= group["unscoreable"] == 0
        out[str(unit)] = {
            "executed": len(group),
            "ambiguous": int((group["extraction_ambiguous"] == 1).sum()),
            "fit_match": int((group["extraction_rule"] == "fit_match").sum()),
            "fitted_right_reported_wrong": int(fitted_wrong.sum()),
        }
    return out
