"""Rank stability: leave one unit out, drop one design family, and the tolerance sweep."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Final

import numpy as np
import pandas as pd

from causalverify.analysis._frame import COMPARED_LAYERS
from causalverify.analysis._ranking import (
    bottom_set,
    kendall_spearman,
    rank_units,
    sets_match,
    top_set,
)
from causalverify.analysis._rates import rates_by_unit
from causalverify.records import DEFAULT_TOLERANCE

TOLERANCES: Final[tuple[float, ...]] = (0.10, 0.25, 0.50, 0.75, 1.00)


def _layer_rates(cells: pd.DataFrame) -> dict[str, dict[str, float]]:
    """``layer -> unit -> rate``."""
    rates = rates_by_unit(cells)
    layers = next(iter(rates.values())).keys() if rates else ()
    return {layer: {u: rates[u][layer].rate for u in rates} for layer in layers}


def _vectors(a: Mapping[str, float], b: Mapping[str, float]) -> tuple[np.ndarray, np.ndarray]:
    units = sorted(set(a) & set(b))
    return np.array([a[u] for u in units]), np.array([b[u] for u in units])


def _tau(a: Mapping[str, float], b: Mapping[str, float]) -> float:
    return kendall_spearman(*_vectors(a, b))[0]


def set_agreement(
    reduced: Mapping[str, float], full: Mapping[str, float]
) -> dict[str, bool | float | None]:
    """Whether a reduced ranking keeps the full ranking's order, top-two and bottom-two sets.

    Only units present in both are compared. ``ranking_identical`` compares average ranks, so
    ties must also agree; a set comparison is ``None`` when a boundary tie makes a set ambiguous.
    """
    common = sorted(set(reduced) & set(full))
    r = {u: reduced[u] for u in common}
    f = {u: full[u] for u in common}
    k = min(2, len(common))
    tau, _, rho, _ = kendall_spearman(*_vectors(r, f))
    return {
        "kendall_tau": tau,
        "spearman_rho": rho,
        "ranking_identical": rank_units(r) == rank_units(f),
        "top2_preserved": sets_match(top_set(r, k), top_set(f, k)),
        "bottom2_preserved": sets_match(bottom_set(r, k), bottom_set(f, k)),
    }


def leave_one_unit_out(
    cells: pd.DataFrame, *, layers: Sequence[str] = COMPARED_LAYERS
) -> dict[str, dict[str, float]]:
    """``layer -> dropped unit -> τ(layer, L2b+)`` over the remaining units."""
    rates = _layer_rates(cells)
    units = sorted(rates.get("L2b_plus", {}))
    out: dict[str, dict[str, float]] = {}
    for layer in layers:
        out[layer] = {}
        for dropped in units:
            keep = [u for u in units if u != dropped]
            a = {u: rates[layer][u] for u in keep}
            b = {u: rates["L2b_plus"][u] for u in keep}
            out[layer][dropped] = _tau(a, b)
    return out


def drop_one_family(cells: pd.DataFrame) -> dict[str, dict[str, bool | float | None]]:
    """For each design family, the L2b+ ranking without it against the full L2b+ ranking.

    Also reports τ(L2b, L2b+) within the reduced panel as ``L2b_kendall_tau``.
    """
    full = _layer_rates(cells)["L2b_plus"]
    out: dict[str, dict[str, bool | float | None]] = {}
    for family in sorted(cells["method"].unique()):
        rest = cells[cells["method"] != family]
        if rest.empty:
            continue
        reduced = _layer_rates(rest)
        entry = set_agreement(reduced["L2b_plus"], full)
        entry["L2b_kendall_tau"] = _tau(reduced["L2b"], reduced["L2b_plus"])
        out[str(family)] = entry
    return out


def passes_at(cells: pd.DataFrame, tolerance: float) -> pd.Series:
    """L2b+ recomputed at ``tolerance`` from ``rel_error`` (1/0; NaN for unscoreable cells).

    A cell passes when it executed and its relative error (already on the matched scale for event
    studies) is at most ``tolerance``; a missing error is a fail.
    """
    ok = (cells["L2b"] == 1) & (cells["rel_error"] <= tolerance + 1e-12)
    return ok.astype(float).where(cells["unscoreable"] == 0, np.nan)


def tolerance_sweep(
    cells: pd.DataFrame, *, tolerances: Sequence[float] = TOLERANCES
) -> dict[str, dict[str, object]]:
    """Pass counts per unit, executed-but-wrong count and rank stability at each tolerance.

    Returns
    -------
    dict
        ``tolerance label -> {"passes": {unit: n}, "rates": {unit: rate}, "executed_wrong": n,
        "executed": n, "ranking_identical", "top2_preserved", "bottom2_preserved",
        "kendall_tau_vs_default"}``, each compared with the ranking at the default 0.50.
    """
    scored = cells["unscoreable"] == 0
    executed = int(((cells["L2b"] == 1) & scored).sum())
    base_cells = cells.assign(L2b_plus=passes_at(cells, DEFAULT_TOLERANCE))
    base = _layer_rates(base_cells)["L2b_plus"]
    out: dict[str, dict[str, object]] = {}
    for tol in tolerances:
        at = cells.assign(L2b_plus=passes_at(cells, tol))
        rates = _layer_rates(at)["L2b_plus"]
        passes = at.groupby("unit", sort=True)["L2b_plus"].sum()
        agreement = set_agreement(rates, base)
        out[tolerance_label(tol)] = {
            "passes": {str(u): int(v) for u, v in passes.items()},
            "rates": rates,
            "executed": executed,
            "executed_wrong": int(((at["L2b"] == 1) & scored & (at["L2b_plus"] == 0)).sum()),
            "ranking_identical": agreement["ranking_identical"],
            "top2_preserved": agreement["top2_preserved"],
            "bottom2_preserved": agreement["bottom2_preserved"],
            "kendall_tau_vs_default": agreement["kendall_tau"],
        }
    return out


def tolerance_label(tolerance: float) -> str:
    """The JSON key of a tolerance: ``0.1``, ``0.25``, ``0.5``, ``0.75``, ``1.0``."""
    if math.isnan(tolerance) or tolerance < 0:
        raise ValueError(f"tolerance must be a non-negative number, got {tolerance}")
    return repr(float(tolerance))
