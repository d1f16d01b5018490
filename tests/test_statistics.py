"""Scenario-clustered intervals, paired tests, Holm's adjustment and the minimum detectable
difference, checked against independent implementations (statsmodels, scipy, brute force)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from scipy import stats
from scipy.stats import binomtest
from statsmodels.stats.multitest import multipletests

from analysis_helpers import cell, ranked_panel
from causalverify.analysis import (
    IntervalSettings,
    add_unit,
    analyze_cells,
    clustered_rate,
    holm,
    minimum_detectable_difference,
    paired_difference,
    pairwise_comparisons,
    prepare_cells,
    rank_intervals,
    sign_flip_p,
)


def _clustered_sample(seed: int, n_clusters: int = 30) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 6, n_clusters)
    clusters = np.repeat(np.arange(n_clusters), sizes)
    difficulty = rng.random(n_clusters)[clusters]  # shared within a scenario
    values = (rng.random(len(clusters)) < difficulty).astype(float)
    return values, clusters


@pytest.mark.parametrize("seed", range(5))
def test_clustered_interval_is_statsmodels_cluster_robust_mean(seed: int) -> None:
    values, clusters = _clustered_sample(seed)
    rate = clustered_rate(values, [f"s{c}" for c in clusters])
    fit = sm.OLS(values, np.ones(len(values))).fit(
        cov_type="cluster", cov_kwds={"groups": clusters}, use_t=True
    )
    lo, hi = fit.conf_int(alpha=0.05)[0]
    assert rate.method == "cluster"
    assert rate.rate == pytest.approx(fit.params[0])
    assert rate.se == pytest.approx(fit.bse[0])
    assert (rate.lo, rate.hi) == (pytest.approx(max(lo, 0.0)), pytest.approx(min(hi, 1.0)))
    assert rate.clusters == 30 and rate.n == len(values)


def test_clustering_widens_the_interval_when_scenarios_share_their_difficulty() -> None:
    clusters = np.repeat(np.arange(20), 5)
    values = (clusters % 2).astype(float)  # a scenario's five cells all pass or all fail
    clustered = clustered_rate(values, clusters)
    wilson = clustered_rate(values, clusters, settings=IntervalSettings(method="wilson"))
    assert clustered.hi - clustered.lo > 1.8 * (wilson.hi - wilson.lo)


def test_no_variation_falls_back_to_wilson_on_scenarios() -> None:
    rate = clustered_rate(np.ones(40), np.repeat(np.arange(10), 4))
    assert rate.method == "cluster-wilson" and rate.se == 0.0
    lo, hi = sm.stats.proportion_confint(10, 10, method="wilson")
    assert (rate.lo, rate.hi) == (pytest.approx(lo), pytest.approx(hi))


def test_bootstrap_is_seeded_and_close_to_the_clustered_interval() -> None:
    values, clusters = _clustered_sample(7, n_clusters=80)
    boot = IntervalSettings(method="bootstrap", seed=3, n_resamples=2000)
    a = clustered_rate(values, clusters, settings=boot, salt="x")
    b = clustered_rate(values, clusters, settings=boot, salt="x")
    c = clustered_rate(values, clusters, settings=IntervalSettings(method="bootstrap", seed=4))
    analytic = clustered_rate(values, clusters)
    assert (a.lo, a.hi) == (b.lo, b.hi) and (a.lo, a.hi) != (c.lo, c.hi)
    assert a.method == "bootstrap"
    assert a.lo == pytest.approx(analytic.lo, abs=0.03)
    assert a.hi == pytest.approx(analytic.hi, abs=0.03)


def test_undecided_cells_enter_as_bounds() -> None:
    values, clusters = _clustered_sample(2)
    decided = clustered_rate(values, clusters)
    with_undecided = values.copy()
    with_undecided[:6] = np.nan
    bounded = clustered_rate(
        with_undecided, clusters, lower=np.zeros(len(values)), upper=np.ones(len(values))
    )
    low = clustered_rate(np.where(np.isnan(with_undecided), 0.0, values), clusters)
    high = clustered_rate(np.where(np.isnan(with_undecided), 1.0, values), clusters)
    assert bounded.undecided == 6
    assert (bounded.lo, bounded.hi) == (low.lo, high.hi)
    assert bounded.rate == low.rate and bounded.rate_upper == high.rate
    assert bounded.lo <= decided.lo and bounded.hi >= decided.hi


def test_undecided_bounds_in_the_frame_widen_the_l2b_plus_interval() -> None:
    rows = [cell(f"s{i}", "A", layers="1111" if i % 3 else "1110") for i in range(30)]
    frame = pd.DataFrame(rows)
    plain = analyze_cells(frame, n_resamples=10)["rates_detail"]["A"]["L2b_plus"]
    frame["L2b_plus_lower"] = np.nan
    frame["L2b_plus_upper"] = np.nan
    frame.loc[[0, 3], ["L2b_plus_lower", "L2b_plus_upper"]] = [0.0, 1.0]  # two failing cells
    bounded = analyze_cells(frame, n_resamples=10)["rates_detail"]["A"]["L2b_plus"]
    assert bounded["undecided"] == 2 and bounded["k"] == plain["k"]
    assert bounded["k_upper"] == plain["k"] + 2
    assert bounded["lo"] == plain["lo"] and bounded["hi"] > plain["hi"]


@pytest.mark.parametrize(("b", "c"), [(0, 5), (3, 9), (7, 7), (12, 2), (1, 0), (20, 8)])
def test_sign_flip_with_one_pair_per_scenario_is_exact_mcnemar(b: int, c: int) -> None:
    sums = [-1] * b + [1] * c + [0] * 11
    assert sign_flip_p(sums) == pytest.approx(binomtest(min(b, c), b + c, 0.5).pvalue)


@pytest.mark.parametrize("seed", range(6))
def test_sign_flip_is_the_brute_force_permutation_test(seed: int) -> None:
    rng = np.random.default_rng(seed)
    sums = rng.integers(-3, 4, size=9)
    observed = abs(sums.sum())
    flips = [
        abs(int(np.dot(signs, sums))) >= observed
        for signs in itertools.product((-1, 1), repeat=len(sums))
    ]
    assert sign_flip_p(sums) == pytest.approx(sum(flips) / len(flips))


def test_paired_difference_interval_is_statsmodels_on_the_differences() -> None:
    rng = np.random.default_rng(11)
    clusters = np.repeat(np.arange(40), 2)  # two languages per scenario
    skill = rng.random(40)[clusters]
    a = (rng.random(80) < skill).astype(float)
    b = (rng.random(80) < skill + 0.15).astype(float)
    diff = paired_difference(a, b, clusters)
    fit = sm.OLS(b - a, np.ones(80)).fit(
        cov_type="cluster", cov_kwds={"groups": clusters}, use_t=True
    )
    lo, hi = fit.conf_int()[0]
    assert diff.diff == pytest.approx(fit.params[0])
    assert diff.se == pytest.approx(fit.bse[0])
    assert (diff.lo, diff.hi) == (pytest.approx(lo), pytest.approx(hi))
    sums = np.bincount(clusters, weights=b - a).astype(int)
    assert diff.p == pytest.approx(sign_flip_p(sums))
    assert diff.a_only == int(((a == 1) & (b == 0)).sum())


def test_holm_matches_statsmodels() -> None:
    p = [0.01, 0.04, 0.03, 0.2, 0.005, 0.04]
    assert holm(p) == pytest.approx(list(multipletests(p, method="holm")[1]))
    assert math.isnan(holm([0.1, math.nan])[1]) and holm([0.1, math.nan])[0] == 0.1


def test_minimum_detectable_difference_formula() -> None:
    se = 0.05
    expected = (stats.t.ppf(0.975, 99) + stats.t.ppf(0.8, 99)) * se
    assert minimum_detectable_difference(se, 100) == pytest.approx(expected)
    assert math.isnan(minimum_detectable_difference(se, 1))


def test_power_moves_with_the_number_of_scenarios() -> None:
    summary = analyze_cells(ranked_panel([0.9, 0.8, 0.5], n_scenarios=100), n_resamples=50)
    power = summary["power"]
    assert power["basis"] == "observed" and power["scenarios"] == 100
    by = power["mde_by_scenarios"]
    assert by["100"] == pytest.approx(power["mde"])
    assert by["25"] > by["50"] > by["100"] > by["200"] > by["400"]
    assert by["400"] == pytest.approx(by["100"] / 2, rel=0.05)  # ~ 1 / sqrt(scenarios)


def test_a_clearly_better_model_is_distinguishable_and_ranked_first() -> None:
    cells = add_unit(prepare_cells(ranked_panel([0.95, 0.9, 0.3], n_scenarios=120)), "model")
    result = pairwise_comparisons(cells, ["m0", "m1", "m2"])
    pairs = {(e["a"], e["b"]): e for e in result["pairs"]}
    assert pairs[("m0", "m2")]["p_holm"] < 0.001 and pairs[("m0", "m2")]["lo"] > 0
    assert result["tied_with_leader"][0] == "m0" and "m2" not in result["tied_with_leader"]
    raw = [e["p"] for e in result["pairs"]]
    assert [e["p_holm"] for e in result["pairs"]] == pytest.approx(
        list(multipletests(raw, method="holm")[1])
    )
    ranks = rank_intervals(cells, settings=IntervalSettings(n_resamples=300))
    assert ranks["m2"] == [3, 3]
    assert ranks["m0"][0] == 1


def test_identical_models_are_tied_with_the_leader() -> None:
    frame = ranked_panel([0.7], n_scenarios=30)
    twin = frame.assign(model="twin")
    summary = analyze_cells(pd.concat([frame, twin]), n_resamples=50)
    assert sorted(summary["pairwise"]["tied_with_leader"]) == ["m0", "twin"]
    assert summary["pairwise"]["pairs"][0]["p"] == 1.0


def test_analyze_records_the_interval_method_and_seed() -> None:
    frame = ranked_panel([0.8, 0.4], n_scenarios=40)
    boot = analyze_cells(frame, ci="bootstrap", seed=5, n_resamples=200)
    again = analyze_cells(frame, ci="bootstrap", seed=5, n_resamples=200)
    assert boot["intervals"] == {
        "method": "bootstrap",
        "confidence": 0.95,
        "cluster": "scenario",
        "seed": 5,
        "n_resamples": 200,
    }
    assert boot["rates_detail"] == again["rates_detail"]
    assert boot["rates_detail"]["m0"]["L2b_plus"]["method"] == "bootstrap"
    family = boot["rates_by_family"]["m0"]["DID"]["L2b_plus"]
    assert family["clusters"] == 10 and family["lo"] <= family["rate"] <= family["hi"]
    wilson = analyze_cells(frame, ci="wilson", n_resamples=10)["rates_detail"]["m1"]["L2b_plus"]
    lo, hi = sm.stats.proportion_confint(wilson["k"], wilson["n"], method="wilson")
    assert (wilson["lo"], wilson["hi"]) == (
        pytest.approx(lo, abs=1e-6),
        pytest.approx(hi, abs=1e-6),
    )


def test_a_difference_never_seen_is_not_claimed_to_be_exactly_zero() -> None:
    same = np.repeat([1.0, 0.0], 20)
    diff = paired_difference(same, same, np.arange(40))
    lo, hi = sm.stats.proportion_confint(0, 40, method="wilson")
    assert diff.method == "cluster-wilson" and diff.diff == 0 and diff.p == 1.0
    assert (diff.lo, diff.hi) == (pytest.approx(-hi), pytest.approx(hi))
    everywhere = paired_difference(np.zeros(40), np.ones(40), np.arange(40))
    lo, hi = sm.stats.proportion_confint(40, 40, method="wilson")
    assert (everywhere.lo, everywhere.hi) == (pytest.approx(lo), pytest.approx(hi))
