"""Layer L2c per unit: right point and right inference, beside L2b+ (never in place of it).

Reads the inference columns of the per-cell table (``causalverify.store.table.INFERENCE_COLUMNS``,
docs/SCORING.md). Denominators:

- ``L2c``: the cells where it is defined (scoreable cells with a canonical inference; a cell that
  did not run fails it, as it fails L2b+); ``L2b_plus`` is the same cells' L2b+, so the two read
  side by side.
- ``L2c_given_L2b_plus``: of those cells with the right point, the share whose SE also matches a
  variant or is plausible.
- ``se_tier``: the share of ``matches``, ``plausible``, ``wrong`` and ``unread`` among the
  executed cells with a canonical inference (the cells that have a tier).
- ``ci_covers`` and ``significance_agrees``: the cells where they are defined (a reported interval;
  a reported SE or interval).

Every rate has the scenario-clustered interval of :func:`~causalverify.analysis._clustered.
clustered_rate`. An undecided cell's L2b+ counts as its lower bound (0) here.
"""

from __future__ import annotations

from typing import Any, Final

import pandas as pd

from causalverify.analysis._clustered import IntervalSettings, clustered_rate

TIERS: Final[tuple[str, ...]] = ("matches", "plausible", "wrong", "unread")
#: the per-cell flags whose rates are reported, each over the cells where it is defined
FLAGS: Final[tuple[str, ...]] = ("ci_covers", "significance_agrees")


def has_inference(cells: pd.DataFrame) -> bool:
    """Whether any cell of the table carries layer L2c."""
    return "L2c" in cells.columns and bool(cells["L2c"].notna().any())


def inference_summary(
    cells: pd.DataFrame, *, settings: IntervalSettings | None = None
) -> dict[str, Any] | None:
    """Layer L2c per unit (column ``unit``) and per unit and design family; None when no cell
    carries it (an older run, a published table).

    Returns
    -------
    dict or None
        ``{"layer": "L2c", "cells": n, "by_unit": {unit: entry}, "by_family": {unit: {family:
        entry}}}``; an entry holds ``L2c``, ``L2b_plus``, ``L2c_given_L2b_plus``,
        ``ci_covers``, ``significance_agrees`` (each a rate with its interval) and ``se_tier``
        (``n`` and, per tier, a rate with its interval); see docs/REPORT.md.
    """
    if not has_inference(cells):
        return None
    defined = cells[cells["L2c"].notna()]
    by_unit = {
        str(unit): _entry(group, settings, f"{unit}|L2c")
        for unit, group in defined.groupby("unit", sort=True)
    }
    by_family: dict[str, dict[str, Any]] = {}
    for (unit, family), group in defined.groupby(["unit", "method"], sort=True):
        by_family.setdefault(str(unit), {})[str(family)] = _entry(
            group, settings, f"{unit}|{family}|L2c"
        )
    return {"layer": "L2c", "cells": len(defined), "by_unit": by_unit, "by_family": by_family}


def _rate(
    values: pd.Series, scenarios: pd.Series, settings: IntervalSettings | None, salt: str
) -> dict[str, Any]:
    return clustered_rate(values.astype(float), scenarios, settings=settings, salt=salt).as_dict()


def _entry(group: pd.DataFrame, settings: IntervalSettings | None, salt: str) -> dict[str, Any]:
    scenarios = group["scenario_id"]
    plus = group["L2b_plus"].fillna(0.0)
    right = group[plus == 1]
    entry: dict[str, Any] = {
        "L2c": _rate(group["L2c"], scenarios, settings, salt),
        "L2b_plus": _rate(plus, scenarios, settings, salt + "|plus"),
        "L2c_given_L2b_plus": _rate(right["L2c"], right["scenario_id"], settings, salt + "|given"),
    }
    for flag in FLAGS:
        known = group[group[flag].notna()]
        entry[flag] = _rate(known[flag], known["scenario_id"], settings, f"{salt}|{flag}")
    tiers = group[group["se_tier"].isin(TIERS)]
    entry["se_tier"] = {"n": len(tiers)} | {
        tier: _rate(
            (tiers["se_tier"] == tier).astype(float),
            tiers["scenario_id"],
            settings,
            f"{salt}|{tier}",
        )
        for tier in TIERS
    }
    return entry
