"""Rankings of units per layer and their agreement with the L2b+ ranking.

A unit's rank is its position by rate, highest first (rank 1), ties sharing the average rank.
Correlations are computed on the rates (Kendall τ-b and Spearman ρ are rank statistics, so this
is the same as on the ranks). A statistic that is undefined (fewer than two units, or a layer
where every unit has the same rate) is ``nan`` and is written as ``null``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from causalverify.analysis._frame import COMPARED_LAYERS, LAYERS


@dataclass(frozen=True, kw_only=True)
class RankComparison:
    """Agreement between one layer's ranking and the reference (L2b+) ranking."""

    kendall_tau: float
    kendall_p: float
    spearman_rho: float
    spearman_p: float
    pairwise_accuracy: float
    top1_match: bool
    #: ``None`` when a tie at the boundary makes a top-two or bottom-two set ambiguous
    top2_match: bool | None
    bottom2_match: bool | None


def ordered_units(rates: Mapping[str, float]) -> list[str]:
    """Units from best to worst: rate descending, then name ascending (NaN rates last)."""
    return sorted(rates, key=lambda u: (math.isnan(rates[u]), -_nan0(rates[u]), u))


def _nan0(x: float) -> float:
    return 0.0 if math.isnan(x) else x


def rank_units(rates: Mapping[str, float]) -> dict[str, float]:
    """Average ranks, 1 = highest rate; tied units share the mean of their positions."""
    units = sorted(rates)
    values = np.array([-_nan0(rates[u]) for u in units])
    from scipy import stats

    ranks = stats.rankdata(values, method="average")
    return {u: float(r) for u, r in zip(units, ranks, strict=True)}


def _defined(x: np.ndarray, y: np.ndarray) -> bool:
    ok = ~(np.isnan(x) | np.isnan(y))
    return bool(ok.all()) and len(x) >= 2 and np.ptp(x) > 0 and np.ptp(y) > 0


def kendall_spearman(x: np.ndarray, y: np.ndarray) -> tuple[float, float, float, float]:
    """Kendall τ-b with p and Spearman ρ with p (scipy); all ``nan`` when undefined."""
    if not _defined(x, y):
        return (math.nan, math.nan, math.nan, math.nan)
    from scipy import stats

    tau = stats.kendalltau(x, y)
    rho = stats.spearmanr(x, y)
    return (float(tau.statistic), float(tau.pvalue), float(rho.statistic), float(rho.pvalue))


def pairwise_accuracy(x: np.ndarray, y: np.ndarray) -> float:
    """Share of unit pairs ordered as in ``y``, over pairs not tied in ``y``.

    A pair tied in ``x`` but not in ``y`` counts one half. ``nan`` when every pair is tied in
    ``y`` or there are fewer than two units.
    """
    i, j = np.triu_indices(len(x), k=1)
    dy = np.sign(y[i] - y[j])
    dx = np.sign(x[i] - x[j])
    keep = dy != 0
    if not keep.any():
        return math.nan
    score = np.where(dx[keep] == dy[keep], 1.0, np.where(dx[keep] == 0, 0.5, 0.0))
    return float(score.mean())


def top_set(rates: Mapping[str, float], k: int) -> frozenset[str] | None:
    """The ``k`` best units, or ``None`` when a tie at the boundary makes the set ambiguous."""
    return _edge_set(ordered_units(rates), rates, k)


def bottom_set(rates: Mapping[str, float], k: int) -> frozenset[str] | None:
    """The ``k`` worst units, or ``None`` when a tie at the boundary makes the set ambiguous."""
    return _edge_set(ordered_units(rates)[::-1], rates, k)


def _edge_set(order: Sequence[str], rates: Mapping[str, float], k: int) -> frozenset[str] | None:
    if k <= 0 or k > len(order):
        return None
    if k < len(order) and rates[order[k - 1]] == rates[order[k]]:
        return None
    if any(math.isnan(rates[u]) for u in order[:k]):
        return None
    return frozenset(order[:k])


def sets_match(a: frozenset[str] | None, b: frozenset[str] | None) -> bool | None:
    """``a == b``, or ``None`` when either set is ambiguous."""
    return None if a is None or b is None else a == b


def _top1(rates: Mapping[str, float]) -> set[str]:
    best = max((v for v in rates.values() if not math.isnan(v)), default=math.nan)
    return {u for u, v in rates.items() if v == best}


def compare_rankings(layer: Mapping[str, float], reference: Mapping[str, float]) -> RankComparison:
    """Compare a layer's rates with the reference rates over the same units.

    ``top1_match`` holds when the sets of best units (ties included) are equal; the top-two and
    bottom-two matches use :func:`top_set` and :func:`bottom_set` and are ``None`` when either set
    is ambiguous.
    """
    units = sorted(reference)
    x = np.array([layer[u] for u in units], dtype=float)
    y = np.array([reference[u] for u in units], dtype=float)
    tau, tau_p, rho, rho_p = kendall_spearman(x, y)
    k = min(2, len(units))
    return RankComparison(
        kendall_tau=tau,
        kendall_p=tau_p,
        spearman_rho=rho,
        spearman_p=rho_p,
        pairwise_accuracy=pairwise_accuracy(x, y),
        top1_match=_top1(layer) == _top1(reference),
        top2_match=sets_match(top_set(layer, k), top_set(reference, k)),
        bottom2_match=sets_match(bottom_set(layer, k), bottom_set(reference, k)),
    )


def _cluster_counts(
    cells: pd.DataFrame, units: Sequence[str]
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Per scenario × unit pass counts and denominators for each layer."""
    scen = sorted(cells["scenario_id"].unique())
    s_idx = cells["scenario_id"].map({s: i for i, s in enumerate(scen)}).to_numpy()
    u_idx = cells["unit"].map({u: i for i, u in enumerate(units)}).to_numpy()
    num: dict[str, np.ndarray] = {}
    den: dict[str, np.ndarray] = {}
    scoreable = (cells["unscoreable"] == 0).to_numpy()
    for layer in LAYERS:
        passes = (cells[layer] == 1).to_numpy().astype(float)
        counted = scoreable if layer == "L2b_plus" else np.ones(len(cells), dtype=bool)
        num[layer] = np.zeros((len(scen), len(units)))
        den[layer] = np.zeros((len(scen), len(units)))
        np.add.at(num[layer], (s_idx, u_idx), passes * counted)
        np.add.at(den[layer], (s_idx, u_idx), counted.astype(float))
    return num, den


def bootstrap_rank_ci(
    cells: pd.DataFrame,
    *,
    rng: np.random.Generator,
    n_resamples: int = 1000,
    layers: Sequence[str] = COMPARED_LAYERS,
    confidence: float = 0.95,
) -> dict[str, dict[str, object]]:
    """Scenario-clustered percentile bootstrap CIs for τ and ρ of each layer vs L2b+.

    Each resample draws scenarios with replacement (all cells of a drawn scenario come along),
    recomputes every unit's rates and the correlations. Resamples where a statistic is undefined
    are dropped and counted; the interval is ``(nan, nan)`` when none remain.
    """
    units = sorted(cells["unit"].unique())
    num, den = _cluster_counts(cells, units)
    n_scen = next(iter(num.values())).shape[0]
    draws = rng.integers(0, n_scen, size=(n_resamples, n_scen))
    weights = np.zeros((n_resamples, n_scen))
    np.add.at(weights, (np.repeat(np.arange(n_resamples), n_scen), draws.ravel()), 1.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        rates = {layer: (weights @ num[layer]) / (weights @ den[layer]) for layer in LAYERS}
    alpha = (1 - confidence) / 2
    out: dict[str, dict[str, object]] = {}
    for layer in layers:
        taus, rhos = [], []
        for b in range(n_resamples):
            tau, _, rho, _ = kendall_spearman(rates[layer][b], rates["L2b_plus"][b])
            taus.append(tau)
            rhos.append(rho)
        out[layer] = {
            "kendall_tau": _percentile(np.array(taus), alpha),
            "spearman_rho": _percentile(np.array(rhos), alpha),
            "n_valid": int(np.sum(~np.isnan(taus))),
            "n_resamples": n_resamples,
        }
    return out


def _percentile(values: np.ndarray, alpha: float) -> tuple[float, float]:
    valid = values[~np.isnan(values)]
    if valid.size == 0:
        return (math.nan, math.nan)
    lo, hi = np.quantile(valid, [alpha, 1 - alpha])
    return (float(lo), float(hi))
