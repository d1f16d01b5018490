"""Paired comparisons of units over the scenarios they share: differences, tests, rank intervals,
and the minimum detectable difference of a design.

Two units' cells are paired on (scenario, language, sample); for L2b+ a pair counts only when
both cells are scoreable. The difference of two units is the mean over pairs of the difference
of their 0/1 outcomes, with the scenario-clustered interval of :func:`paired_difference` and the
exact scenario sign-flip test (McNemar's exact test when each scenario holds one pair).
p-values over all pairs of units are Holm-adjusted; a unit is *tied with #1* when its difference
from the leader is not significant after Holm's adjustment over the comparisons with the leader.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from itertools import combinations
from typing import Any, Final

import numpy as np
import pandas as pd

from causalverify.analysis._clustered import (
    Difference,
    IntervalSettings,
    cluster_codes,
    holm,
    minimum_detectable_difference,
    paired_difference,
)
from causalverify.analysis._rates import PLUS_BOUNDS

#: what pairs two cells of different units (or runs)
PAIR_KEYS: Final[tuple[str, ...]] = ("scenario_id", "language", "sample")
ALPHA: Final[float] = 0.05
POWER: Final[float] = 0.80
#: per-pair null variance assumed when a design has no observed discordance to go on (a 25%
#: chance that two models disagree on a cell)
ASSUMED_VARIANCE: Final[float] = 0.25
#: scenario counts at which ``power["mde_by_scenarios"]`` shows the minimum detectable difference
SCENARIO_COUNTS: Final[tuple[int, ...]] = (25, 50, 100, 200, 400)


def paired_outcomes(a: pd.DataFrame, b: pd.DataFrame, layer: str) -> pd.DataFrame:
    """A's and B's 0/1 outcomes on ``layer`` for the cells they share (columns ``a``, ``b`` and
    the :data:`PAIR_KEYS`), sorted by the keys. For L2b+ both cells must be scoreable; an
    undecided cell (bounds present) counts as its rule's choice, as in the point rate."""
    keys = list(PAIR_KEYS)
    left = a.loc[:, [*keys, layer, "unscoreable"]]
    right = b.loc[:, [*keys, layer, "unscoreable"]]
    both = left.merge(right, on=keys, suffixes=("_a", "_b"), validate="one_to_one")
    if layer == "L2b_plus":
        both = both[(both["unscoreable_a"] == 0) & (both["unscoreable_b"] == 0)]
    out = pd.DataFrame(
        {
            **{k: both[k] for k in keys},
            "a": both[f"{layer}_a"].astype(float).fillna(0.0),
            "b": both[f"{layer}_b"].astype(float).fillna(0.0),
        }
    )
    return out.sort_values(keys, kind="mergesort").reset_index(drop=True)


def compare_pair(
    a: pd.DataFrame,
    b: pd.DataFrame,
    layer: str,
    *,
    settings: IntervalSettings | None = None,
    salt: str = "",
) -> Difference:
    """B minus A on ``layer`` over their shared cells (see :func:`paired_outcomes`)."""
    pairs = paired_outcomes(a, b, layer)
    return paired_difference(
        pairs["a"], pairs["b"], pairs["scenario_id"], settings=settings, salt=salt
    )


def pairwise_comparisons(
    cells: pd.DataFrame,
    order: Sequence[str],
    *,
    settings: IntervalSettings | None = None,
    layer: str = "L2b_plus",
    alpha: float = ALPHA,
) -> dict[str, Any]:
    """Every pair of units in ``order`` (leaderboard order) compared on ``layer``.

    Returns
    -------
    dict
        ``{"layer", "alpha", "adjustment", "test", "pairs": [...], "leader", "tied_with_leader"}``.
        Each pair is ``{"a", "b", "difference" (a − b, a ranked above b), "lo", "hi", "p",
        "p_holm", "n", "clusters", "a_only", "b_only", "vs_leader", "p_holm_leader"}``;
        ``p_holm`` adjusts over all pairs, ``p_holm_leader`` over the comparisons with the leader
        only. ``tied_with_leader`` lists the leader and every unit not distinguishable from it.
    """
    groups = {str(u): g for u, g in cells.groupby("unit", sort=True)}
    units = [u for u in order if u in groups]
    entries: list[dict[str, Any]] = []
    for a, b in combinations(units, 2):
        # a is ranked above b: the difference is a − b (second argument minus first)
        diff = compare_pair(groups[b], groups[a], layer, settings=settings, salt=f"{a}|{b}")
        entries.append(
            {
                "a": a,
                "b": b,
                "difference": diff.diff,
                "lo": diff.lo,
                "hi": diff.hi,
                "p": diff.p,
                "n": diff.n,
                "clusters": diff.clusters,
                "a_only": diff.b_only,
                "b_only": diff.a_only,
                "null_se": diff.null_se,
                "vs_leader": a == units[0],
            }
        )
    for entry, adjusted in zip(entries, holm([e["p"] for e in entries]), strict=True):
        entry["p_holm"] = adjusted
    leader_entries = [e for e in entries if e["vs_leader"]]
    for entry, adjusted in zip(leader_entries, holm([e["p"] for e in leader_entries]), strict=True):
        entry["p_holm_leader"] = adjusted
    tied = [units[0]] if units else []
    tied += [
        e["b"]
        for e in leader_entries
        if e["n"] > 0 and not math.isnan(e["p_holm_leader"]) and e["p_holm_leader"] >= alpha
    ]
    return {
        "layer": layer,
        "alpha": alpha,
        "adjustment": "holm",
        "test": "exact scenario sign-flip (exact McNemar with one pair per scenario)",
        "pairs": entries,
        "leader": units[0] if units else None,
        "tied_with_leader": tied,
    }


def _plus_values(cells: pd.DataFrame) -> np.ndarray:
    """L2b+ 0/1 per cell with undecided cells at their rule's choice; NaN for unscoreable."""
    values = cells["L2b_plus"].astype(float)
    if all(col in cells.columns for col in PLUS_BOUNDS):
        values = values.fillna(0.0).where(cells["unscoreable"] == 0, np.nan)
    return values.to_numpy()


def rank_intervals(
    cells: pd.DataFrame, *, settings: IntervalSettings | None = None
) -> dict[str, list[int]]:
    """Each unit's L2b+ rank interval from the scenario bootstrap.

    In each resample (scenarios drawn with replacement, seeded by ``settings``) every unit's L2b+
    rate is recomputed and ranked (1 = best; tied units share the best of their places); the
    interval is the percentile range of a unit's ranks, rounded outwards to whole places.
    """
    settings = settings or IntervalSettings()
    units = sorted(cells["unit"].unique())
    if not units:
        return {}
    codes, n_clusters = cluster_codes(cells["scenario_id"])
    u_idx = cells["unit"].map({u: i for i, u in enumerate(units)}).to_numpy()
    values = _plus_values(cells)
    counted = ~np.isnan(values)
    num = np.zeros((n_clusters, len(units)))
    den = np.zeros((n_clusters, len(units)))
    np.add.at(num, (codes[counted], u_idx[counted]), values[counted])
    np.add.at(den, (codes[counted], u_idx[counted]), 1.0)
    rng = settings.rng("ranks")
    draws = rng.integers(0, n_clusters, size=(settings.n_resamples, n_clusters))
    weights = np.zeros((settings.n_resamples, n_clusters))
    np.add.at(weights, (np.repeat(np.arange(settings.n_resamples), n_clusters), draws.ravel()), 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        rates = (weights @ num) / (weights @ den)
    rates = np.where(np.isnan(rates), -1.0, rates)  # a unit without cells in a resample is last
    ranks = 1 + (rates[:, None, :] > rates[:, :, None]).sum(axis=2)
    alpha = (1 - settings.confidence) / 2
    lo = np.floor(np.quantile(ranks, alpha, axis=0))
    hi = np.ceil(np.quantile(ranks, 1 - alpha, axis=0))
    return {u: [int(lo[i]), int(hi[i])] for i, u in enumerate(units)}


def design_power(
    cells: pd.DataFrame,
    pairs: Sequence[Mapping[str, Any]],
    *,
    alpha: float = ALPHA,
    power: float = POWER,
    scenario_counts: Sequence[int] = SCENARIO_COUNTS,
) -> dict[str, Any]:
    """The minimum detectable difference in L2b+ between two models for this run's design.

    A paired comparison over N pairs in C scenarios has, under the null of no difference, the
    standard error ``sqrt(v / N)``, where ``v = Σ_g D_g² / N`` is the null variance per pair
    (``D_g``: a scenario's summed difference; it includes the within-scenario correlation). ``v``
    is the median over the pairs of models next to each other in the leaderboard (the
    comparisons a ranking rests on; all pairs if no neighbours ever disagree) (``basis:
    "observed"``), or
    :data:`ASSUMED_VARIANCE` when the run has fewer than two models or no two disagree
    (``basis: "assumed"``). The minimum detectable difference is
    ``(t[1−α/2] + t[power]) · sqrt(v / N)`` on C−1 degrees of freedom; at other scenario counts
    the pairs per scenario are kept.
    """
    n_scenarios = int(cells["scenario_id"].nunique())

    def variances(entries: Sequence[Mapping[str, Any]]) -> list[float]:
        return [
            e["null_se"] ** 2 * e["n"]
            for e in entries
            if e["n"] and not math.isnan(e["null_se"]) and e["null_se"] > 0
        ]

    # the comparisons a ranking rests on: neighbours in the leaderboard (pairs arrive in
    # leaderboard order, so a neighbour pair is one whose b follows a directly)
    order = list(dict.fromkeys([e["a"] for e in pairs] + [e["b"] for e in pairs]))
    neighbours = [e for e in pairs if order.index(e["b"]) == order.index(e["a"]) + 1]
    observed_v = variances(neighbours) or variances(pairs)
    observed = bool(observed_v)
    v = float(np.median(observed_v)) if observed else ASSUMED_VARIANCE
    if pairs:
        sizes = [e["n"] / e["clusters"] for e in pairs if e["clusters"]]
        per_scenario = float(np.median(sizes)) if sizes else 1.0
    else:
        scoreable = cells[cells["unscoreable"] == 0]
        per_unit = scoreable.groupby("unit")["scenario_id"].agg(["size", "nunique"])
        per_scenario = (
            float((per_unit["size"] / per_unit["nunique"]).median()) if len(per_unit) else 1.0
        )

    def mde(scenarios: int) -> float:
        n_pairs = scenarios * per_scenario
        return minimum_detectable_difference(
            math.sqrt(v / n_pairs), scenarios, alpha=alpha, power=power
        )

    return {
        "alpha": alpha,
        "power": power,
        "scenarios": n_scenarios,
        "pairs_per_scenario": per_scenario,
        "variance_per_pair": v,
        "basis": "observed" if observed else "assumed",
        "mde": mde(n_scenarios) if n_scenarios >= 2 else math.nan,
        "mde_by_scenarios": {str(c): mde(c) for c in scenario_counts},
    }
